// Layer recipes: splitting a tar stream, their file form, re-creating a layer; see layer_split.h.
#include "oci/layer_split.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "oci/digest.h"
#include "oci/reference.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"

namespace kern::oci {
namespace {

constexpr size_t kBlock = 512;
constexpr size_t kMetaLimit = 1 << 20;
constexpr size_t kZeroRun = 32;  // zero runs at least this long are stored as a count
constexpr std::string_view kMagic = "KERN-LAYER-RECIPES 1\n";

// A numeric header field: octal digits, or base-256 when the first byte has its top bit set.
bool header_number(const char* f, size_t n, uint64_t* out) {
  uint64_t v = 0;
  if (static_cast<unsigned char>(f[0]) & 0x80) {
    if (static_cast<unsigned char>(f[0]) != 0x80) return false;  // negative or too large
    for (size_t i = 1; i < n; ++i) {
      if (v >> 56) return false;
      v = (v << 8) | static_cast<unsigned char>(f[i]);
    }
    *out = v;
    return true;
  }
  size_t i = 0;
  while (i < n && (f[i] == ' ' || f[i] == '\0')) ++i;
  for (; i < n && f[i] >= '0' && f[i] <= '7'; ++i) {
    if (v >> 60) return false;
    v = v * 8 + static_cast<uint64_t>(f[i] - '0');
  }
  *out = v;
  return true;
}

bool checksum_ok(const std::string& h) {
  uint64_t want = 0;
  if (!header_number(h.data() + 148, 8, &want)) return false;
  // The sums with the checksum field counted as spaces: over the whole block (a loop the
  // compiler vectorizes), then the field's own bytes swapped for spaces.
  uint64_t usum = 0;
  int64_t ssum = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    usum += static_cast<unsigned char>(h[i]);
    ssum += static_cast<signed char>(h[i]);
  }
  for (size_t i = 148; i < 156; ++i) {
    usum = usum - static_cast<unsigned char>(h[i]) + ' ';
    ssum = ssum - static_cast<signed char>(h[i]) + ' ';
  }
  return usum == want || static_cast<uint64_t>(ssum) == want;
}

void put_u64(std::string& out, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out.append(b, 8);
}

bool get_u64(std::string_view& in, uint64_t* v) {
  if (in.size() < 8) return false;
  *v = 0;
  for (int i = 7; i >= 0; --i) *v = (*v << 8) | static_cast<unsigned char>(in[static_cast<size_t>(i)]);
  in.remove_prefix(8);
  return true;
}

Unexpected<Error> corrupt(const std::string& what) {
  return fail(ErrorKind::image, 0, "layer recipe: " + what);
}

// The end of the run of zeros that starts at p[s] (a zero), eight bytes at a time.
size_t zeros_end(const char* p, size_t s, size_t n) {
  size_t e = s + 1;
  for (uint64_t w; e + 8 <= n && (std::memcpy(&w, p + e, 8), w == 0);) e += 8;
  while (e < n && p[e] == '\0') ++e;
  return e;
}

}  // namespace

uint64_t SplitRecipe::total() const {
  uint64_t n = 0;
  for (const auto& s : segments) n += s.length;
  return n;
}

void TarSplitter::literal(const char* p, size_t n) {
  auto add = [&](SplitSegment::Kind kind, const char* bytes, size_t len) {
    if (segments_.empty() || segments_.back().kind != kind) {
      segments_.emplace_back();
      segments_.back().kind = kind;
    }
    if (bytes) segments_.back().bytes.append(bytes, len);
    segments_.back().length += len;
  };
  // Runs of at least kZeroRun zeros are counted; everything between them (shorter zero runs
  // included) is kept as it is. Headers are mostly zeros: memchr and word compares find the
  // runs (a byte-at-a-time scan of them was 6% of a docker-archive load's CPU).
  size_t i = 0;
  while (i < n) {
    size_t zs = n, ze = n;
    for (size_t k = i; k < n;) {
      const void* z = std::memchr(p + k, 0, n - k);
      if (z == nullptr) break;
      size_t s = static_cast<size_t>(static_cast<const char*>(z) - p);
      size_t e = zeros_end(p, s, n);
      if (e - s >= kZeroRun) {
        zs = s;
        ze = e;
        break;
      }
      k = e;
    }
    if (zs > i) add(SplitSegment::Kind::literal, p + i, zs - i);
    if (zs < n) add(SplitSegment::Kind::zeros, nullptr, ze - zs);
    i = ze;
  }
}

void TarSplitter::header_done() {
  const std::string& h = block_;
  if (std::all_of(h.begin(), h.end(), [](char c) { return c == '\0'; })) {
    // The tar reader stops at the first zero block: the rest of the stream is kept as it is.
    literal(h.data(), h.size());
    state_ = State::trailer;
    return;
  }
  uint64_t size = 0;
  if (!checksum_ok(h) || !header_number(h.data() + 124, 12, &size)) {
    ok_ = false;
    return;
  }
  literal(h.data(), h.size());
  char type = h[156];
  pad_ = (kBlock - size % kBlock) % kBlock;
  if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
    if (size > kMetaLimit) {
      ok_ = false;
      return;
    }
    meta_type_ = type;
    meta_.clear();
    remaining_ = size;
    state_ = remaining_ ? State::meta : State::pad;
    if (!remaining_) meta_done();
    return;
  }
  if (next_size_ != UINT64_MAX) {
    size = next_size_;
    pad_ = (kBlock - size % kBlock) % kBlock;
    next_size_ = UINT64_MAX;
  }
  bool regular = type == '0' || type == '\0' || type == '7';
  // Other members carry no content here: a size on them is read differently by different tar
  // readers, so such a layer is not re-created (its blob stays).
  if (!regular && (size != 0 || std::strchr("123456", type) == nullptr)) {
    ok_ = false;
    return;
  }
  uint64_t member = members_++;
  if (size > 0) {
    SplitSegment s;
    s.kind = SplitSegment::Kind::content;
    s.length = size;
    s.member = member;
    segments_.push_back(std::move(s));
  }
  remaining_ = size;
  state_ = remaining_ ? State::content : State::pad;
}

void TarSplitter::meta_done() {
  if (meta_type_ != 'x' && meta_type_ != 'g') return;
  // pax records: "LEN KEY=VALUE\n", LEN counting the whole record.
  std::string_view rest = meta_;
  while (!rest.empty()) {
    size_t sp = rest.find(' ');
    uint64_t len = 0;
    if (sp == std::string_view::npos || sp == 0) break;
    for (size_t i = 0; i < sp; ++i) {
      if (rest[i] < '0' || rest[i] > '9' || len > kMetaLimit) {
        ok_ = false;
        return;
      }
      len = len * 10 + static_cast<uint64_t>(rest[i] - '0');
    }
    if (len <= sp + 1 || len > rest.size()) {
      ok_ = false;
      return;
    }
    std::string_view rec = rest.substr(sp + 1, len - sp - 2);
    rest.remove_prefix(len);
    size_t eq = rec.find('=');
    std::string_view key = rec.substr(0, eq);
    if (key.rfind("GNU.sparse", 0) == 0 || key.rfind("SCHILY.realsize", 0) == 0) ok_ = false;
    if (key == "size") {
      if (meta_type_ == 'g') ok_ = false;  // a global size: readers disagree on it
      uint64_t v = 0;
      std::string_view val = rec.substr(eq == std::string_view::npos ? rec.size() : eq + 1);
      if (val.empty()) ok_ = false;
      for (char c : val) {
        if (c < '0' || c > '9' || v > (UINT64_MAX / 10 - 10)) {
          ok_ = false;
          break;
        }
        v = v * 10 + static_cast<uint64_t>(c - '0');
      }
      next_size_ = v;
    }
  }
}

void TarSplitter::feed(const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (ok_ && len > 0) {
    switch (state_) {
      case State::header: {
        size_t n = std::min(len, kBlock - block_.size());
        block_.append(p, n);
        p += n;
        len -= n;
        if (block_.size() == kBlock) {
          header_done();
          block_.clear();
        }
        break;
      }
      case State::meta: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(len, remaining_));
        meta_.append(p, n);
        literal(p, n);
        p += n;
        len -= n;
        remaining_ -= n;
        if (remaining_ == 0) {
          meta_done();
          state_ = State::pad;
        }
        break;
      }
      case State::content: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(len, remaining_));
        p += n;
        len -= n;
        remaining_ -= n;
        if (remaining_ == 0) state_ = State::pad;
        break;
      }
      case State::pad: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(len, pad_));
        literal(p, n);
        p += n;
        len -= n;
        pad_ -= n;
        if (pad_ == 0) state_ = State::header;
        break;
      }
      case State::trailer:
        literal(p, len);
        len = 0;
        break;
    }
  }
}

// The file: the magic line, then per layer 'D' + the diff_id (71 bytes) + the segment count
// (u64 LE) + per segment: the kind (one byte), the length (u64), the stored bytes' size (u64)
// and the bytes (a literal's bytes, a content segment's tree path, nothing for zeros).
std::string encode_recipes(const std::vector<SplitRecipe>& recipes) {
  // Sized first: a docker-archive's recipes are megabytes of headers, and growing the string
  // by doubling copied them several times over fresh pages.
  size_t size = kMagic.size();
  for (const auto& r : recipes) {
    size += 1 + r.diff_id.size() + 8;
    for (const auto& s : r.segments) size += 17 + s.bytes.size();
  }
  std::string out;
  out.reserve(size);
  out += kMagic;
  for (const auto& r : recipes) {
    out += 'D';
    out += r.diff_id;
    put_u64(out, r.segments.size());
    for (const auto& s : r.segments) {
      out += static_cast<char>(s.kind);
      put_u64(out, s.length);
      put_u64(out, s.bytes.size());
      out += s.bytes;
    }
  }
  return out;
}

namespace {

// Walks the serialised recipes, checking their structure as decode_recipes does: `on_layer(diff_id)`
// at each layer, `on_segment(kind, length, stored bytes)` at each of its segments.
template <typename OnLayer, typename OnSegment>
Status walk_recipes(std::string_view in, OnLayer on_layer, OnSegment on_segment) {
  if (in.substr(0, kMagic.size()) != kMagic) return corrupt("unknown format");
  in.remove_prefix(kMagic.size());
  while (!in.empty()) {
    if (in.size() < 72 || in[0] != 'D') return corrupt("bad layer header");
    std::string_view diff_id = in.substr(1, 71);
    if (!valid_digest(std::string(diff_id))) return corrupt("bad diff_id");
    in.remove_prefix(72);
    on_layer(diff_id);
    uint64_t n = 0;
    if (!get_u64(in, &n) || n > in.size()) return corrupt("bad segment count");
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t length = 0, stored = 0;
      if (in.empty()) return corrupt("truncated");
      unsigned char kind = static_cast<unsigned char>(in[0]);
      in.remove_prefix(1);
      if (kind > static_cast<unsigned char>(SplitSegment::Kind::content)) return corrupt("bad segment kind");
      auto k = static_cast<SplitSegment::Kind>(kind);
      if (!get_u64(in, &length) || !get_u64(in, &stored) || stored > in.size()) return corrupt("truncated");
      std::string_view bytes = in.substr(0, stored);
      in.remove_prefix(stored);
      if ((k == SplitSegment::Kind::literal && bytes.size() != length) ||
          (k == SplitSegment::Kind::zeros && !bytes.empty()) ||
          (k == SplitSegment::Kind::content && bytes.empty()))
        return corrupt("inconsistent segment");
      on_segment(k, length, bytes);
    }
  }
  return {};
}

}  // namespace

Result<std::vector<SplitRecipe>> decode_recipes(std::string_view in) {
  std::vector<SplitRecipe> out;
  KERN_TRY(walk_recipes(
      in, [&](std::string_view diff_id) { out.push_back(SplitRecipe{std::string(diff_id), {}}); },
      [&](SplitSegment::Kind kind, uint64_t length, std::string_view bytes) {
        SplitSegment s;
        s.kind = kind;
        s.length = length;
        s.bytes = std::string(bytes);
        out.back().segments.push_back(std::move(s));
      }));
  return out;
}

Result<std::vector<RecipeSummary>> summarise_recipes(std::string_view in) {
  std::vector<RecipeSummary> out;
  KERN_TRY(walk_recipes(
      in, [&](std::string_view diff_id) { out.push_back(RecipeSummary{std::string(diff_id), 0}); },
      [&](SplitSegment::Kind, uint64_t length, std::string_view) { out.back().total += length; }));
  return out;
}

std::vector<SplitRecipe> resolve_recipes(const TreeWriter& writer, std::vector<SplitRecipe> raw,
                                         const std::vector<std::vector<TreeWriter::WrittenFile>>& files,
                                         std::vector<bool>& complete) {
  std::vector<SplitRecipe> out;
  complete.assign(raw.size(), false);
  if (!writer.dirs_searchable()) return out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i].diff_id.empty()) continue;
    bool ok = true;
    for (auto& seg : raw[i].segments) {
      if (seg.kind != SplitSegment::Kind::content) continue;
      if (seg.member >= files[i].size() || !writer.intact(files[i][seg.member])) {
        ok = false;
        break;
      }
      seg.bytes = files[i][seg.member].path;
    }
    if (!ok) continue;
    complete[i] = true;
    out.push_back(std::move(raw[i]));
  }
  return out;
}

Result<std::string> replay_recipe(const SplitRecipe& r, int tree_fd, int out_fd) {
  KERN_TRY_ASSIGN(Sha256 hash, Sha256::create());
  std::vector<char> buf(1 << 20);
  auto emit = [&](const char* p, size_t n) -> Status {
    hash.update(p, n);
    if (out_fd < 0) return Status();
    return sys::write_all(out_fd, std::string_view(p, n), "layer.tar");
  };
  constexpr unsigned long long kResolve =
      RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  for (const auto& s : r.segments) {
    switch (s.kind) {
      case SplitSegment::Kind::literal: KERN_TRY(emit(s.bytes.data(), s.bytes.size())); break;
      case SplitSegment::Kind::zeros: {
        // Only as many zeros as the segment has: most are a member's padding, under 512 bytes,
        // and a layer has one after each file (clearing the whole buffer for each was 86% of
        // a load that found its image's tree already made).
        for (uint64_t left = s.length; left > 0;) {
          size_t n = static_cast<size_t>(std::min<uint64_t>(left, buf.size()));
          std::memset(buf.data(), 0, n);
          KERN_TRY(emit(buf.data(), n));
          left -= n;
        }
        break;
      }
      case SplitSegment::Kind::content: {
        auto fd = sys::open_beneath(tree_fd, s.bytes, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, kResolve);
        if (!fd) return fail(std::move(fd).error().with_context("re-creating layer " + r.diff_id));
        struct stat st;
        if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != s.length)
          return fail(ErrorKind::image, 0,
                      "re-creating layer " + r.diff_id + ": \"" + s.bytes + "\" in the image tree has changed");
        for (uint64_t left = s.length; left > 0;) {
          ssize_t n = ::read(fd->get(), buf.data(), static_cast<size_t>(std::min<uint64_t>(left, buf.size())));
          if (n < 0 && errno == EINTR) continue;
          if (n < 0) return fail_errno("read \"" + s.bytes + "\"", ErrorKind::image);
          if (n == 0) return fail(ErrorKind::image, 0, "re-creating layer " + r.diff_id + ": \"" + s.bytes + "\" is short");
          KERN_TRY(emit(buf.data(), static_cast<size_t>(n)));
          left -= static_cast<uint64_t>(n);
        }
        break;
      }
    }
  }
  return hash.finish();
}

}  // namespace kern::oci
