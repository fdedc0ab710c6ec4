// UTF-8 or hex strings in JSON records; see json_bytes.h.
#include "runtime/json_bytes.h"

#include <nlohmann/json.hpp>

#include "runtime/sys/log.h"

namespace kern {
namespace {

int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

nlohmann::json json_of_bytes(std::string_view bytes) {
  if (log::valid_utf8(bytes)) return nlohmann::json(std::string(bytes));
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  return nlohmann::json{{"hex", hex}};
}

std::optional<std::string> bytes_of_json(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (!j.is_object() || j.size() != 1 || !j.contains("hex") || !j["hex"].is_string()) return std::nullopt;
  const std::string& hex = j["hex"].get_ref<const std::string&>();
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi << 4 | lo);
  }
  return out;
}

}  // namespace kern
