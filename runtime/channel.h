// The channel from the box to kern: a close-on-exec pipe carrying a closed set of typed messages.
// Written by the box's processes (child setup, box init, the workload before its execve), read
// by the launcher (the BoxHandle). The set:
//   exec_ok                    box init saw the workload's execve succeed; the box has started
//   step_skipped {step, errno} a best-effort step was not done (the box runs without it)
//   setup_failed {Error}       a step failed; nothing was started (exec failures included: an
//                              Error of kind workload, its errno decides 126 or 127)
//   workload_status {status}   the workload's raw wait status, sent by box init as it exits
//   held                       the root is built and box init waits to be released before it
//                              spawns the workload (the OCI mode's created state)
//   before_pivot               the OCI root is mounted but not yet entered: box init's first
//                              process waits for one byte on its sync pipe while the launcher
//                              runs what must happen then (prestart, createRuntime and
//                              createContainer hooks)
//   seccomp_listener           the workload loaded a filter with SCMP_ACT_NOTIFY rules; its
//                              listener comes with the frame (SCM_RIGHTS: only on a socket, the
//                              OCI mode's release connection), for the configured agent
// A frame is u32 magic | u16 type | u16 payload length | payload, written with one write(2)
// below PIPE_BUF, so frames never interleave. The reader refuses an unknown type, a wrong
// length, a bad magic and a frame cut by end-of-file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <vector>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern {

enum class ChannelMsgType : uint16_t {
  exec_ok = 1,
  step_skipped = 2,
  setup_failed = 3,
  workload_status = 4,
  held = 5,
  seccomp_listener = 6,
  before_pivot = 7,
};

struct ChannelMsg {
  ChannelMsgType type = ChannelMsgType::exec_ok;
  std::string step;            // step_skipped: what was not done ("sysfs /sys")
  int err = 0;                 // step_skipped: why
  int wait_status = 0;         // workload_status
  std::optional<Error> error;  // setup_failed
};

inline constexpr size_t kChannelFrameMax = 4000;  // below PIPE_BUF (4096)

// Encoders, for the box's processes: no allocation, return the frame length (0 if it cannot be
// built). The send_* calls write one frame and ignore a closed reader (kern is gone then).
size_t encode_exec_ok(char* buf, size_t cap) noexcept;
size_t encode_held(char* buf, size_t cap) noexcept;
size_t encode_before_pivot(char* buf, size_t cap) noexcept;
size_t encode_step_skipped(char* buf, size_t cap, const char* step, int err) noexcept;
size_t encode_setup_failed(char* buf, size_t cap, ErrorKind kind, int err, const char* what,
                           const char* detail) noexcept;
size_t encode_workload_status(char* buf, size_t cap, int wait_status) noexcept;
void send_exec_ok(int fd) noexcept;
void send_held(int fd) noexcept;
void send_before_pivot(int fd) noexcept;
void send_step_skipped(int fd, const char* step, int err) noexcept;
// The message is `what "detail"` (or `what` alone for an empty detail).
void send_setup_failed(int fd, ErrorKind kind, int err, const char* what, const char* detail) noexcept;
void send_workload_status(int fd, int wait_status) noexcept;
// 0 or the errno of the sendmsg.
int send_seccomp_listener(int sock, int listener) noexcept;

// Decodes one frame from the front of `bytes`. Ok(nullopt) when `bytes` holds only part of a
// frame (more must be read); *consumed says how much the frame took.
Result<std::optional<ChannelMsg>> decode_channel_frame(std::string_view bytes, size_t* consumed);

// Launcher side: reads frames from the channel's read end.
class ChannelReader {
 public:
  explicit ChannelReader(int fd) : fd_(fd) {}
  // The next message, waiting for it; Ok(nullopt) at end-of-file. A frame cut by end-of-file,
  // or one that does not decode, is an error.
  Result<std::optional<ChannelMsg>> next();
  // As next(), but never waits: Ok(nullopt) when nothing whole is there yet (or at EOF).
  Result<std::optional<ChannelMsg>> poll_next();
  bool at_eof() const { return eof_; }
  // The descriptor a seccomp_listener frame brought (the first not yet taken), or none.
  UniqueFd take_fd();

 private:
  Result<std::optional<ChannelMsg>> take(bool wait);
  int fd_;
  std::string buf_;
  bool eof_ = false;
  bool pipe_ = false;            // recvmsg said ENOTSOCK: read(2) from then on
  std::vector<UniqueFd> fds_;    // arrived with the frames, in order
};

}  // namespace kern
