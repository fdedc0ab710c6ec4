// The one wire form of kern::Error, for every pipe and socket between kern's processes: the box's
// channel, a warm kernel's ready pipe, a launcher reporting to its supervisor. Any process.
//
// Layout (host byte order: both ends are the same machine and the same binary):
//   u8 version (1) | u8 kind | i32 errno | i32 code | str domain | str message | str hint
//   | u8 frames | frames x str            where str = u16 length + that many bytes
// Context frames travel innermost first, as Error stores them. Nothing is parsed back out of
// printed text: the errno, the kind and the non-errno code keep their own fields.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "runtime/sys/error.h"

namespace kern::sys {

// The most an encoded Error takes here: it fits one atomic pipe write with a frame header.
inline constexpr size_t kMaxEncodedError = 3072;

// Encodes into `buf` (at most `cap` bytes; strings that would not fit are cut, the record stays
// whole). Returns the length written, 0 if `cap` cannot hold even the fixed part. Allocates
// nothing, so the box's processes may call it after clone.
size_t encode_error_raw(char* buf, size_t cap, ErrorKind kind, int err, std::string_view message,
                        std::string_view hint = {}) noexcept;
size_t encode_error(const Error& e, char* buf, size_t cap) noexcept;
std::string encode_error(const Error& e);

// Refuses a truncated record, trailing bytes, an unknown version or kind.
Result<Error> decode_error(std::string_view bytes);

}  // namespace kern::sys
