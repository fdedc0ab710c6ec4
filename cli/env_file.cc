// Environment assignment parsing; see env_file.h.
#include "cli/env_file.h"

#include <algorithm>
#include <fcntl.h>

#include <cstdlib>
#include <sstream>
#include <unordered_map>

#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {

CallerEnv caller_environment() {
  return [](const std::string& name) -> const char* { return std::getenv(name.c_str()); };
}

std::string check_env_assignment(const std::string& kv, bool bare_ok) {
  size_t eq = kv.find('=');
  if (eq == std::string::npos && !bare_ok) return log::quoted(kv) + " is not K=V";
  if (eq == 0 || kv.empty()) return log::quoted(kv) + " has an empty name";
  for (size_t i = 0; i < std::min(eq, kv.size()); ++i) {
    unsigned char c = static_cast<unsigned char>(kv[i]);
    if (c <= ' ' || c == 0x7f) return log::quoted(kv.substr(0, eq)) + " is not a valid name";
  }
  return {};
}

std::optional<std::string> env_entry(const std::string& word, const CallerEnv& caller) {
  if (word.find('=') != std::string::npos) return word;
  const char* v = caller(word);
  if (v == nullptr) return std::nullopt;
  return word + "=" + v;
}

Result<std::vector<std::string>> parse_env_file(const std::string& text, const std::string& file,
                                                const CallerEnv& caller) {
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
    std::string err = check_env_assignment(kv, /*bare_ok=*/true);
    if (!err.empty()) return fail(ErrorKind::config, 0, log::sanitize(file) + ":" + std::to_string(n) + ": " + err);
    if (auto entry = env_entry(kv, caller)) out.push_back(std::move(*entry));
  }
  return out;
}

void merge_env(std::vector<std::string>& env, const std::vector<std::string>& add) {
  // One hash lookup per variable: an image with 300k Env entries costs milliseconds, not a
  // scan of everything merged so far for each one.
  auto key_of = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  std::unordered_map<std::string, size_t> index;
  index.reserve(env.size() + add.size());
  for (size_t i = 0; i < env.size(); ++i) index.emplace(key_of(env[i]), i);
  for (const auto& kv : add) {
    auto [it, fresh] = index.emplace(key_of(kv), env.size());
    if (fresh) env.push_back(kv);
    else env[it->second] = kv;
  }
}

Status check_env_bounds(const std::vector<std::string>& env, const std::string& source) {
  if (env.size() > kMaxEnvEntries)
    return fail(Error(ErrorKind::usage, 0, source + " brings the box's environment to " + std::to_string(env.size()) +
                      " variables; at most " + std::to_string(kMaxEnvEntries) + " are allowed"));
  size_t bytes = 0;
  for (const auto& kv : env) bytes += kv.size() + 1;
  if (bytes > kMaxEnvBytes)
    return fail(Error(ErrorKind::usage, 0, source + " brings the box's environment to " + std::to_string(bytes) +
                      " bytes; at most " + std::to_string(kMaxEnvBytes) + " (1 MiB) are allowed"));
  return {};
}

Status merge_env_flags(std::vector<std::string>& env, const std::vector<std::string>& env_files,
                       const std::vector<std::string>& words, const CallerEnv& caller) {
  for (const auto& f : env_files) {
    auto text = sys::read_regular_file(AT_FDCWD, f, 16 << 20);
    if (!text) {
      int err = text.error().sys_errno();
      return fail(Error(ErrorKind::usage, err, "--env-file " + log::quoted(f) + (err ? "" : ": " + text.error().message())));
    }
    KERN_TRY_ASSIGN(auto lines, parse_env_file(*text, f, caller));
    merge_env(env, lines);
    KERN_TRY(check_env_bounds(env, "--env-file " + log::quoted(f)));
  }
  std::vector<std::string> given;
  for (const auto& e : words) {
    std::string err = check_env_assignment(e, /*bare_ok=*/true);
    if (!err.empty()) return fail(Error(ErrorKind::usage, 0, "-e: " + err));
    if (auto kv = env_entry(e, caller)) given.push_back(std::move(*kv));
  }
  merge_env(env, given);
  return check_env_bounds(env, "-e");
}

}  // namespace kern::cli
