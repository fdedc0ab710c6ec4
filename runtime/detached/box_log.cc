// The log ring; see box_log.h. LogRing and the parsers are pure; LogFile runs in the box's
// supervisor, read_log in `kern logs`.
#include "runtime/detached/box_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "runtime/sys/fdio.h"

namespace kern {
namespace {

constexpr char kMagic[8] = {'K', 'E', 'R', 'N', 'L', 'O', 'G', '1'};
enum HeaderField : size_t { f_cap = 8, f_start = 16, f_end = 24, f_count = 32, f_seq = 40, f_dropped = 48 };

uint64_t get64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
void put64(unsigned char* p, uint64_t v) { std::memcpy(p, &v, 8); }

struct Frame {
  uint32_t len = 0;
  uint8_t stream = 0;
  uint64_t seq = 0, time_ns = 0;
};

Frame get_frame(const unsigned char* p) {
  Frame f;
  std::memcpy(&f.len, p, 4);
  f.stream = p[4];
  f.seq = get64(p + 8);
  f.time_ns = get64(p + 16);
  return f;
}

void put_frame(unsigned char* p, const Frame& f) {
  std::memset(p, 0, kLogFrameSize);
  std::memcpy(p, &f.len, 4);
  p[4] = f.stream;
  put64(p + 8, f.seq);
  put64(p + 16, f.time_ns);
}

// Where the record that follows at `pos` starts: 0 when a wrap marker stands there or no frame
// fits before the end of the data area.
uint64_t next_pos(const unsigned char* data, uint64_t cap, uint64_t pos) {
  if (pos + kLogFrameSize > cap) return 0;
  if (data[pos + 4] == 0) return 0;  // wrap marker
  return pos;
}

}  // namespace

LogRing::LogRing(unsigned char* mem, size_t size, bool init) : mem_(mem) {
  if (!init) return;
  std::memset(mem, 0, kLogHeaderSize);
  std::memcpy(mem, kMagic, 8);
  put64(mem + f_cap, size - kLogHeaderSize);
}

uint64_t LogRing::capacity() const { return get64(mem_ + f_cap); }
uint64_t LogRing::next_seq() const { return get64(mem_ + f_seq); }

void LogRing::evict_oldest() {
  unsigned char* data = mem_ + kLogHeaderSize;
  uint64_t cap = capacity(), start = get64(mem_ + f_start);
  Frame f = get_frame(data + start);
  start = next_pos(data, cap, start + kLogFrameSize + f.len);
  put64(mem_ + f_start, start);
  put64(mem_ + f_count, get64(mem_ + f_count) - 1);
  put64(mem_ + f_dropped, get64(mem_ + f_dropped) + f.len);
}

void LogRing::append_one(LogStream stream, uint64_t time_ns, std::string_view bytes) {
  unsigned char* data = mem_ + kLogHeaderSize;
  const uint64_t cap = capacity();
  const uint64_t need = kLogFrameSize + bytes.size();
  if (get64(mem_ + f_count) == 0) {
    put64(mem_ + f_start, 0);
    put64(mem_ + f_end, 0);
  }
  uint64_t end = get64(mem_ + f_end);
  auto count = [&] { return get64(mem_ + f_count); };
  auto start = [&] { return get64(mem_ + f_start); };
  if (end + need > cap) {
    // The live records lying past `end` (the ring has wrapped before) go first: the region up
    // to the end of the data area is given up.
    while (count() > 0 && start() >= end) evict_oldest();
    if (cap - end >= kLogFrameSize) put_frame(data + end, Frame{});
    end = 0;
  }
  // Then every record the new one would overwrite.
  while (count() > 0 && start() >= end && start() < end + need) evict_oldest();
  Frame f;
  f.len = static_cast<uint32_t>(bytes.size());
  f.stream = static_cast<uint8_t>(stream);
  f.seq = next_seq();
  f.time_ns = time_ns;
  put_frame(data + end, f);
  std::memcpy(data + end + kLogFrameSize, bytes.data(), bytes.size());
  end += need;
  put64(mem_ + f_end, end);
  put64(mem_ + f_count, count() + 1);
  put64(mem_ + f_seq, f.seq + 1);
}

void LogRing::append(LogStream stream, uint64_t time_ns, std::string_view data) {
  const size_t piece = static_cast<size_t>(capacity() / 4);
  while (!data.empty()) {
    size_t n = data.size() < piece ? data.size() : piece;
    append_one(stream, time_ns, data.substr(0, n));
    data.remove_prefix(n);
  }
}

Result<std::vector<LogRecord>> parse_log(std::string_view image) {
  auto bad = [](const std::string& why) { return fail(ErrorKind::internal, 0, "damaged log ring: " + why); };
  if (image.size() < kLogHeaderSize || std::memcmp(image.data(), kMagic, 8) != 0) return bad("no header");
  const auto* mem = reinterpret_cast<const unsigned char*>(image.data());
  uint64_t cap = get64(mem + f_cap), pos = get64(mem + f_start), count = get64(mem + f_count);
  if (cap != image.size() - kLogHeaderSize || pos >= cap) return bad("bad capacity or start");
  const unsigned char* data = mem + kLogHeaderSize;
  uint64_t offset = get64(mem + f_dropped);
  std::vector<LogRecord> out;
  for (uint64_t i = 0; i < count; ++i) {
    if (pos + kLogFrameSize > cap) return bad("frame past the end");
    Frame f = get_frame(data + pos);
    if ((f.stream != 1 && f.stream != 2) || pos + kLogFrameSize + f.len > cap) return bad("bad frame");
    out.push_back({static_cast<LogStream>(f.stream), f.seq, f.time_ns,
                   std::string(reinterpret_cast<const char*>(data + pos + kLogFrameSize), f.len), offset});
    offset += f.len;
    pos = next_pos(data, cap, pos + kLogFrameSize + f.len);
  }
  return out;
}

LogResume resume_log(std::vector<LogRecord> records, uint64_t from, uint64_t from_offset, uint64_t below) {
  LogResume r;
  r.below_offset = from_offset;
  if (!records.empty()) {
    const LogRecord& last = records.back();
    r.below_offset = std::max(from_offset, last.offset + last.data.size());
  }
  bool first = true;
  for (auto& rec : records) {
    if (rec.seq < from) continue;
    if (first && rec.offset > from_offset) r.lost_bytes = rec.offset - from_offset;
    first = false;
    if (rec.seq >= below) {
      r.below_offset = std::max(from_offset, rec.offset);
      break;
    }
    r.records.push_back(std::move(rec));
  }
  return r;
}

std::vector<LogRecord> tail_lines(std::vector<LogRecord> records, long lines) {
  if (lines < 0) return records;
  if (lines == 0) return {};
  // The N-th newline from the end (the output's final newline ends the last line and is not
  // counted) is where the last N lines start.
  long seen = 0;
  bool final_char = true;
  for (size_t i = records.size(); i-- > 0;) {
    const std::string& d = records[i].data;
    for (size_t j = d.size(); j-- > 0;) {
      bool skip = final_char;
      final_char = false;
      if (d[j] != '\n' || skip) continue;
      if (++seen == lines) {
        records[i].data.erase(0, j + 1);
        records.erase(records.begin(), records.begin() + static_cast<long>(i));
        return records;
      }
    }
  }
  return records;
}

std::string rfc3339_ns(uint64_t time_ns) {
  time_t secs = static_cast<time_t>(time_ns / 1000000000ull);
  struct tm tm;
  ::gmtime_r(&secs, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%09lluZ", static_cast<unsigned long long>(time_ns % 1000000000ull));
  return buf;
}

std::string stamp_lines(std::string_view data, const std::string& stamp, bool* at_line_start) {
  std::string out;
  for (char c : data) {
    if (*at_line_start) out += stamp + " ";
    out += c;
    *at_line_start = (c == '\n');
  }
  return out;
}

Result<LogFile> LogFile::create(const std::string& path, uint64_t capacity) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return fail_errno("create \"" + path + "\"");
  size_t size = kLogHeaderSize + capacity;
  // Every block now: a sparse file on a full file system would be a SIGBUS at the first write
  // into a hole, with the box's output and its supervisor lost without a word.
  if (int err = ::posix_fallocate(fd.get(), 0, static_cast<off_t>(size)); err != 0) {
    ::unlink(path.c_str());
    return fail(Error(ErrorKind::setup, err,
                      "posix_fallocate \"" + path + "\" (the box's log ring, " + std::to_string(size) + " bytes)")
                    .with_hint("free space in the runtime dir, or give a smaller --log-size"));
  }
  void* mem = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (mem == MAP_FAILED) {
    ::unlink(path.c_str());
    return fail_errno("mmap \"" + path + "\"");
  }
  LogRing ring(static_cast<unsigned char*>(mem), size, true);
  return LogFile(std::move(fd), static_cast<unsigned char*>(mem), size);
}

LogFile::LogFile(UniqueFd fd, unsigned char* mem, size_t size) : fd_(std::move(fd)), mem_(mem), size_(size) {}
LogFile::LogFile(LogFile&& o) noexcept : fd_(std::move(o.fd_)), mem_(o.mem_), size_(o.size_) { o.mem_ = nullptr; }
LogFile::~LogFile() {
  if (mem_) ::munmap(mem_, size_);
}

void LogFile::append(LogStream stream, uint64_t time_ns, std::string_view data) {
  // Readers copy the ring under a shared lock; this keeps them from seeing half an append.
  while (::flock(fd_.get(), LOCK_EX) != 0 && errno == EINTR) {
  }
  LogRing(mem_, size_, false).append(stream, time_ns, data);
  ::flock(fd_.get(), LOCK_UN);
}

uint64_t LogFile::next_seq() const { return LogRing(mem_, size_, false).next_seq(); }

Result<std::vector<LogRecord>> read_log(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return fail_errno("open \"" + path + "\"");
  while (::flock(fd.get(), LOCK_SH) != 0 && errno == EINTR) {
  }
  auto image = sys::read_all(fd.get(), kLogHeaderSize + kMaxLogSize, path);
  ::flock(fd.get(), LOCK_UN);
  if (!image) return fail(std::move(image).error());
  return parse_log(*image);
}

}  // namespace kern
