// Hand-written JSON for the warm kernel's hot lines (a cell's request, the driver's end of cell,
// the cell's answer), pure and unit-tested in tests/unit/runtime_kernel_json_line_test.cc. Used
// by protocol.cc only. Supervisor process.
//
// Every function here either gives exactly what nlohmann would (the same values parsed, the same
// bytes written by dump(-1, ' ', false, replace)) or declines, and protocol.cc then asks nlohmann:
// the fast path never decides anything nlohmann would decide otherwise, it only skips building
// a DOM for the common shapes. It declines on anything unusual: duplicate keys, nested values
// where scalars are expected, numbers it does not need, invalid UTF-8, lone surrogates, a BOM.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kern::kernel::json_line {

// Appends `s` as a JSON string literal, as nlohmann's dump writes it (ensure_ascii off, invalid
// UTF-8 replaced by U+FFFD: such a string is handed to nlohmann itself).
void append_string(std::string& out, std::string_view s);
// Whether `s` is valid UTF-8 (append_string then writes it by itself, piece by piece alike).
bool is_utf8(std::string_view s);

// Appends a duration in milliseconds already rounded to 3 decimals, as nlohmann writes the double.
void append_duration_ms(std::string& out, double ms);

// One scalar member of a flat JSON object.
struct Value {
  enum class Kind { null, boolean, number, string } kind = Kind::null;
  std::string text;  // string: decoded (valid UTF-8); number: its literal
  bool boolean = false;
};

struct Member {
  std::string key;
  Value value;
};

// A flat object: every value a scalar, no key twice, nothing but whitespace around it.
// nullopt: not of this shape, or not valid JSON (nlohmann decides).
std::optional<std::vector<Member>> parse_flat_object(std::string_view text);

// The driver's end of cell: {"nonce":S,"rc":INT,"results":[{S:S,...},...], other scalars}.
// `results` is the array rewritten as nlohmann would dump it (keys sorted, strings re-escaped);
// it declines when an object's keys are not in nlohmann's (byte) order or repeat, when a result
// value is not a string, when rc is not a small integer.
struct DriverEnd {
  std::string nonce;
  int rc = 0;
  std::string results = "[]";
};
std::optional<DriverEnd> parse_driver_end(std::string_view text);

}  // namespace kern::kernel::json_line
