// Byte strings in kern's JSON records (an environment entry, a working directory): Linux allows
// any byte but NUL in both, while a JSON string is UTF-8 (nlohmann's dump throws on anything
// else, and its "replace" mode loses the bytes). A string that is UTF-8 is written as itself;
// any other as {"hex": "..."}, its bytes in lowercase hex, read back exactly. Pure.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace kern {

nlohmann::json json_of_bytes(std::string_view bytes);
// The bytes json_of_bytes() wrote; nullopt for anything else (a number, bad hex, another object).
std::optional<std::string> bytes_of_json(const nlohmann::json& j);

}  // namespace kern
