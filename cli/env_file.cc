// Environment assignment parsing; see env_file.h.
#include "cli/env_file.h"

#include <sstream>

#include "runtime/sys/log.h"

namespace kern::cli {

std::string check_env_assignment(const std::string& kv) {
  size_t eq = kv.find('=');
  if (eq == std::string::npos)
    return "\"" + log::sanitize(kv) + "\" is not K=V (kern never copies a variable from the host)";
  if (eq == 0) return "\"" + log::sanitize(kv) + "\" has an empty name";
  for (size_t i = 0; i < eq; ++i) {
    unsigned char c = static_cast<unsigned char>(kv[i]);
    if (c <= ' ' || c == 0x7f) return "\"" + log::sanitize(kv.substr(0, eq)) + "\" is not a valid name";
  }
  return {};
}

Result<std::vector<std::string>> parse_env_file(const std::string& text, const std::string& file) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::string kv = line.substr(first);
    std::string err = check_env_assignment(kv);
    if (!err.empty()) return fail(ErrorKind::config, 0, file + ":" + std::to_string(n) + ": " + err);
    out.push_back(kv);
  }
  return out;
}

void merge_env(std::vector<std::string>& env, const std::vector<std::string>& add) {
  for (const auto& kv : add) {
    std::string key = kv.substr(0, kv.find('=') + 1);
    bool replaced = false;
    for (auto& e : env) {
      if (e.compare(0, key.size(), key) == 0) {
        e = kv;
        replaced = true;
        break;
      }
    }
    if (!replaced) env.push_back(kv);
  }
}

}  // namespace kern::cli
