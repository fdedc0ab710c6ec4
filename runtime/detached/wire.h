// The detached box's socket (<runtime>/detached/NAME.sock): how `kern logs -f`, `kern attach`,
// `kern wait` and `kern kill` talk to the box's supervisor. The client sends one request line
// ("follow", "attach", "wait", "kill N"); after "attach" whatever it sends is the box's input.
// The supervisor answers with frames: u8 type | 3 zero bytes | u32 length | u64 time (ns) |
// u64 sequence | payload. Types: out and err (the box's output, live; the sequence is the log
// ring's next sequence number once this output is in the ring), sync (sequence: the ring's next
// sequence number when the client was added, so `logs -f` prints the ring's records below it
// and then the live frames, nothing twice), exit (payload: the exit code in decimal; the
// connection ends after it), error (payload: a message; the request was refused). A follower
// that falls behind is let go; it reconnects and takes what it missed from the ring.
// Pure framing plus the client's connect; both sides.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern {

enum class WireType : uint8_t { out = 1, err = 2, sync = 3, exit = 4, error = 5 };
inline constexpr size_t kWireHeader = 24;
inline constexpr uint32_t kWireMaxPayload = 1u << 20;

struct WireFrame {
  WireType type = WireType::out;
  uint64_t time_ns = 0;
  uint64_t seq = 0;
  std::string payload;
};

std::string encode_frame(WireType type, uint64_t time_ns, std::string_view payload, uint64_t seq = 0);
// Takes one whole frame off the front of `buf`: nullopt when more bytes are needed, an Error
// for an unknown type or an oversized length.
Result<std::optional<WireFrame>> take_frame(std::string& buf);

// Connects to box NAME's supervisor. ENOENT / ECONNREFUSED: the box has no live supervisor.
Result<UniqueFd> connect_box(const std::string& runtime_dir, const std::string& name);
// Reads the next frame from `fd` (blocking); nullopt at end-of-file.
Result<std::optional<WireFrame>> read_frame(int fd, std::string& buf);

uint64_t wall_ns();

}  // namespace kern
