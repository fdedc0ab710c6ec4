// A detached box's log: a ring of framed records in one file of fixed size
// (<runtime>/detached/NAME.log), written by the box's supervisor, read by `kern logs`.
//
// File layout: a 64-byte header (magic "KERNLOG1", data capacity, offset of the oldest record,
// offset past the newest, record count, next sequence number, bytes of output dropped from the
// ring so far), then `capacity` bytes of data.
// A record is a 24-byte frame (u32 length, u8 stream: 1 stdout, 2 stderr; u64 sequence number,
// u64 wall-clock time in ns) and its bytes. A record never straddles the end of the data area:
// the writer puts a wrap marker (stream 0) where the next frame does not fit and goes on at 0,
// dropping the oldest records as the new ones need their room. So the file never grows past
// header + capacity and what it holds is always the newest output.
//
// LogRing works on a byte span (pure, unit-tested); LogFile maps the file (supervisor side) and
// read_log copies it under a shared lock (the `kern logs` side; the writer takes the lock
// exclusively around each append).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern {

inline constexpr size_t kLogHeaderSize = 64;
inline constexpr size_t kLogFrameSize = 24;
inline constexpr uint64_t kDefaultLogSize = 4ull << 20;  // --log-size default: 4 MiB
inline constexpr uint64_t kMinLogSize = 4096;
inline constexpr uint64_t kMaxLogSize = 1ull << 30;

enum class LogStream : uint8_t { out = 1, err = 2 };

struct LogRecord {
  LogStream stream = LogStream::out;
  uint64_t seq = 0;
  uint64_t time_ns = 0;
  std::string data;
  uint64_t offset = 0;  // bytes of the box's output (both streams) that came before this record
};

class LogRing {
 public:
  // `mem` holds header + capacity bytes. `init` formats it (else it must be a ring already).
  LogRing(unsigned char* mem, size_t size, bool init);
  // Appends `data` as one or more records (a piece is at most capacity/4 bytes).
  void append(LogStream stream, uint64_t time_ns, std::string_view data);
  uint64_t capacity() const;
  uint64_t next_seq() const;

 private:
  void append_one(LogStream stream, uint64_t time_ns, std::string_view data);
  void evict_oldest();
  unsigned char* mem_;
};

// The records of a ring image (header + data), oldest first. A damaged image is an error.
Result<std::vector<LogRecord>> parse_log(std::string_view image);

// What a follower that has printed the output up to sequence `from` (`from_offset` bytes of it)
// finds in `records` (a ring's, oldest first): the records with from <= seq < below, the bytes
// written after `from` that fell out of the ring before they were read, and the output's offset
// at `below` (where the follower goes on from). Pure.
struct LogResume {
  std::vector<LogRecord> records;
  uint64_t lost_bytes = 0;
  uint64_t below_offset = 0;
};
LogResume resume_log(std::vector<LogRecord> records, uint64_t from, uint64_t from_offset, uint64_t below);

// The records that hold the last `lines` lines of the output (all when lines < 0); the first
// one is cut to start at a line's start.
std::vector<LogRecord> tail_lines(std::vector<LogRecord> records, long lines);

// Prefixes every line start of `data` with `stamp` ("2026-12-01T10:00:00.123456789Z ");
// `at_line_start` carries across records.
std::string stamp_lines(std::string_view data, const std::string& stamp, bool* at_line_start);
std::string rfc3339_ns(uint64_t time_ns);

// The supervisor's side: the file created (0600, its blocks allocated: a ring the file system
// cannot back is refused at start, not met as SIGBUS later) and mapped shared.
class LogFile {
 public:
  static Result<LogFile> create(const std::string& path, uint64_t capacity);
  LogFile(LogFile&&) noexcept;
  LogFile& operator=(LogFile&&) = delete;
  ~LogFile();
  void append(LogStream stream, uint64_t time_ns, std::string_view data);
  uint64_t next_seq() const;

 private:
  LogFile(UniqueFd fd, unsigned char* mem, size_t size);
  UniqueFd fd_;
  unsigned char* mem_;
  size_t size_;
};

// The reader's side: a consistent copy of the ring's records.
Result<std::vector<LogRecord>> read_log(const std::string& path);

}  // namespace kern
