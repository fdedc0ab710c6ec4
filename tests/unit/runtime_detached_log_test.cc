// The detached box's log ring (runtime/detached/box_log.h): framing, wrap, eviction of the
// oldest, the size bound, tail and timestamps; and the socket's frames (wire.h).
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "runtime/detached/box_log.h"
#include "runtime/detached/box_names.h"
#include "runtime/detached/wire.h"
#include "runtime/registry.h"

namespace kern {
namespace {

struct Ring {
  std::vector<unsigned char> mem;
  explicit Ring(size_t cap) : mem(kLogHeaderSize + cap) { LogRing(mem.data(), mem.size(), true); }
  void add(LogStream s, const std::string& d) { LogRing(mem.data(), mem.size(), false).append(s, 7, d); }
  std::vector<LogRecord> records() const {
    auto r = parse_log(std::string_view(reinterpret_cast<const char*>(mem.data()), mem.size()));
    EXPECT_TRUE(r.has_value());
    return r ? *r : std::vector<LogRecord>{};
  }
  std::string text() const {
    std::string t;
    for (const auto& r : records()) t += r.data;
    return t;
  }
};

TEST(LogRing, RecordsKeepTheirStreamTimeAndOrder) {
  Ring r(4096);
  r.add(LogStream::out, "one\n");
  r.add(LogStream::err, "two\n");
  auto recs = r.records();
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].stream, LogStream::out);
  EXPECT_EQ(recs[0].data, "one\n");
  EXPECT_EQ(recs[1].stream, LogStream::err);
  EXPECT_EQ(recs[1].seq, 1u);
  EXPECT_EQ(recs[1].time_ns, 7u);
}

// Against a model (a deque trimmed to what fits), over many sizes: after every append the ring
// holds a suffix of what was written, ending with the newest record, within its capacity.
TEST(LogRing, WrapKeepsTheNewestSuffixWithinTheCapacity) {
  for (size_t cap : {256u, 300u, 1000u, 4096u}) {
    Ring r(cap);
    std::deque<std::string> model;
    for (int i = 0; i < 2000; ++i) {
      std::string d = "rec-" + std::to_string(i) + std::string(static_cast<size_t>(i * 7 % 40), 'x') + "\n";
      r.add(LogStream::out, d);
      model.push_back(d);
      auto recs = r.records();
      ASSERT_FALSE(recs.empty());
      ASSERT_EQ(recs.back().data, d) << "cap " << cap << " i " << i;
      size_t bytes = 0;
      for (size_t k = 0; k < recs.size(); ++k) {
        bytes += kLogFrameSize + recs[k].data.size();
        ASSERT_EQ(recs[k].data, model[model.size() - recs.size() + k]) << "cap " << cap << " i " << i;
        if (k) {
          ASSERT_EQ(recs[k].seq, recs[k - 1].seq + 1);
        }
      }
      ASSERT_LE(bytes, cap);
      // Never fewer than half the capacity's worth once that much was written (the wrap
      // gives up at most one frame's room at the end, the eviction one record at the front).
      ASSERT_GE(bytes + 2 * (kLogFrameSize + 47), std::min<size_t>(cap, (i + 1) * (kLogFrameSize + 5)));
    }
  }
}

TEST(LogRing, ABigWriteIsSplitAndKeepsItsEnd) {
  Ring r(1024);
  std::string big;
  for (int i = 0; i < 500; ++i) big += static_cast<char>('a' + i % 26);
  r.add(LogStream::out, big);
  r.add(LogStream::out, big);
  std::string t = r.text();
  ASSERT_FALSE(t.empty());
  EXPECT_TRUE((big + big).ends_with(t));
  EXPECT_GT(t.size(), 512u);
  EXPECT_LE(t.size(), 1024u);
}

// Every record knows how many bytes of output came before it, evicted ones included: a
// follower that comes back knows exactly how much it missed.
TEST(LogRing, OffsetsCountTheEvictedBytes) {
  Ring r(256);
  uint64_t written = 0;
  for (int i = 0; i < 300; ++i) {
    std::string d = "r" + std::to_string(i) + std::string(static_cast<size_t>(i % 30), '.') + "\n";
    r.add(LogStream::out, d);
    written += d.size();
    auto recs = r.records();
    ASSERT_FALSE(recs.empty());
    EXPECT_EQ(recs.back().offset + recs.back().data.size(), written) << i;
    for (size_t k = 1; k < recs.size(); ++k) EXPECT_EQ(recs[k].offset, recs[k - 1].offset + recs[k - 1].data.size());
  }
}

TEST(LogResume, SaysHowManyBytesFellOutBeforeTheyWereRead) {
  Ring r(256);
  std::vector<std::string> d;
  for (int i = 0; i < 40; ++i) d.push_back("rec-" + std::to_string(i) + "-" + std::string(20, 'x') + "\n");
  // The follower printed records 0..2, then fell behind while 3..39 were written.
  for (int i = 0; i < 3; ++i) r.add(LogStream::out, d[static_cast<size_t>(i)]);
  uint64_t printed = d[0].size() + d[1].size() + d[2].size();
  for (int i = 3; i < 40; ++i) r.add(LogStream::out, d[static_cast<size_t>(i)]);
  auto recs = r.records();
  ASSERT_GT(recs.front().seq, 3u);  // the ring lost some of what the follower had not read
  LogResume res = resume_log(recs, 3, printed, 38);
  uint64_t missed = 0;
  for (uint64_t s = 3; s < recs.front().seq; ++s) missed += d[s].size();
  EXPECT_EQ(res.lost_bytes, missed);
  ASSERT_FALSE(res.records.empty());
  EXPECT_EQ(res.records.front().seq, recs.front().seq);
  EXPECT_EQ(res.records.back().seq, 37u);
  EXPECT_EQ(res.below_offset, recs[recs.size() - 2].offset);  // record 38's
  // Caught up: nothing lost, and the offset at the end of the ring.
  LogResume rest = resume_log(recs, 38, res.below_offset, UINT64_MAX);
  EXPECT_EQ(rest.lost_bytes, 0u);
  ASSERT_EQ(rest.records.size(), 2u);
  EXPECT_EQ(rest.below_offset, recs.back().offset + recs.back().data.size());
  // Everything older than `from` is skipped without being counted as lost.
  EXPECT_EQ(resume_log(recs, 0, recs.front().offset, UINT64_MAX).lost_bytes, 0u);
  EXPECT_EQ(resume_log({}, 5, 100, UINT64_MAX).below_offset, 100u);
}

TEST(LogRing, ADamagedImageIsRefused) {
  Ring r(512);
  r.add(LogStream::out, "hello\n");
  r.mem[kLogHeaderSize + 4] = 9;  // the first frame's stream
  auto p = parse_log(std::string_view(reinterpret_cast<const char*>(r.mem.data()), r.mem.size()));
  EXPECT_FALSE(p.has_value());
  EXPECT_FALSE(parse_log("short").has_value());
}

std::string joined(const std::vector<LogRecord>& recs) {
  std::string t;
  for (const auto& r : recs) t += r.data;
  return t;
}

TEST(LogTail, LastLinesAcrossRecords) {
  std::vector<LogRecord> recs = {{LogStream::out, 0, 0, "a\nb"}, {LogStream::err, 1, 0, "c\nd\n"}};
  EXPECT_EQ(joined(tail_lines(recs, 1)), "d\n");
  EXPECT_EQ(joined(tail_lines(recs, 2)), "bc\nd\n");
  EXPECT_EQ(joined(tail_lines(recs, 3)), "a\nbc\nd\n");
  EXPECT_EQ(joined(tail_lines(recs, 10)), "a\nbc\nd\n");
  EXPECT_EQ(joined(tail_lines(recs, 0)), "");
  EXPECT_EQ(joined(tail_lines(recs, -1)), "a\nbc\nd\n");
  std::vector<LogRecord> open_line = {{LogStream::out, 0, 0, "x\ny"}};
  EXPECT_EQ(joined(tail_lines(open_line, 1)), "y");
}

TEST(LogTail, TimestampsAtEveryLineStart) {
  bool at = true;
  EXPECT_EQ(stamp_lines("a\nb", "T", &at), "T a\nT b");
  EXPECT_EQ(stamp_lines("c\n", "U", &at), "c\n");
  EXPECT_TRUE(at);
  EXPECT_EQ(rfc3339_ns(1700000000123456789ull), "2023-11-14T22:13:20.123456789Z");
}

TEST(BoxNames, ReadableAndValid) {
  for (uint64_t r : {0ull, 1ull, 41ull, 1234567ull, ~0ull}) {
    std::string n = readable_box_name(r);
    EXPECT_TRUE(valid_box_name(n)) << n;
    EXPECT_NE(n.find('-'), std::string::npos);
  }
  EXPECT_NE(readable_box_name(0), readable_box_name(1));
  EXPECT_NE(readable_box_name(0), readable_box_name(40));
}

TEST(Wire, FramesRoundTripAndBadOnesAreRefused) {
  std::string buf = encode_frame(WireType::out, 42, "hi") + encode_frame(WireType::exit, 43, "7");
  std::string part = buf.substr(0, 10);
  auto none = take_frame(part);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
  auto a = take_frame(buf);
  ASSERT_TRUE(a && *a);
  EXPECT_EQ((*a)->type, WireType::out);
  EXPECT_EQ((*a)->time_ns, 42u);
  EXPECT_EQ((*a)->payload, "hi");
  auto b = take_frame(buf);
  ASSERT_TRUE(b && *b);
  EXPECT_EQ((*b)->type, WireType::exit);
  EXPECT_TRUE(buf.empty());
  std::string bad = encode_frame(WireType::out, 0, "x");
  bad[0] = 9;
  EXPECT_FALSE(take_frame(bad).has_value());
}

}  // namespace
}  // namespace kern
