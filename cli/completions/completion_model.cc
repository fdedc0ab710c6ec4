// The completion model's tables and the helpers the renderers share (completion_model.h). Pure.
#include "cli/completions/completion_model.h"

#include <algorithm>
#include <utility>

namespace kern::cli {
namespace {

CompletionKind words(std::vector<std::string> w) { return {"words", std::move(w)}; }
CompletionKind kind(const char* k) { return {k, {}}; }

// What a flag's value is, by the flag's long name, whichever verb has it. Flags not named here
// that take a value get the shell's file name completion (a path is the common case).
const std::vector<std::pair<std::string, CompletionKind>>& flag_kinds() {
  static const std::vector<std::pair<std::string, CompletionKind>> t = {
      {"--image", kind("images")},
      {"--rootfs", kind("dirs")},
      {"--config", kind("files")},
      {"--env-file", kind("files")},
      {"--volume", kind("files")},
      {"--input", kind("files")},
      {"--output", kind("files")},
      {"--pull", words({"missing", "never", "always"})},
      {"--net", words({"none", "host", "private"})},
      {"--security-profile", words({"untrusted"})},
      {"--lang", words({"python", "node", "bash"})},
      {"--signal", words({"KILL", "TERM", "INT", "HUP", "QUIT", "USR1", "USR2", "STOP", "CONT"})},
      {"--cap-add", words({"ALL", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
                           "SETPCAP", "NET_BIND_SERVICE", "NET_RAW", "SYS_CHROOT", "AUDIT_WRITE", "SETFCAP",
                           "MKNOD", "NET_ADMIN", "SYS_PTRACE", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME"})},
      {"--cap-drop", words({"ALL", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
                            "SETPCAP", "NET_BIND_SERVICE", "NET_RAW", "SYS_CHROOT", "AUDIT_WRITE", "SETFCAP",
                            "MKNOD"})},
      {"--workdir", kind("none")},
      {"--user", kind("none")},
      {"--hostname", kind("none")},
      {"--name", kind("none")},
      {"--memory", kind("none")},
      {"--timeout", kind("none")},
      // The listing verbs' --format: the two words; a template is typed.
      {"--format", words({"table", "json"})},
      {"--interval", kind("none")},
  };
  return t;
}

// What a verb's bare words are. Verbs not named here complete nothing there.
const std::vector<std::pair<std::string, CompletionKind>>& positional_kinds() {
  static const std::vector<std::pair<std::string, CompletionKind>> t = {
      {"help", kind("verbs")},        {"box", kind("command")},
      {"stop", kind("boxes")},         {"exec", kind("boxes")},        {"cp", kind("files")},
      {"logs", kind("boxes")},      {"attach", kind("boxes")},       {"wait", kind("boxes")},
      {"kill", kind("boxes")},      {"rm", kind("boxes")},           {"inspect", kind("boxes")},
      {"top", kind("boxes")},       {"stats", kind("boxes")},        {"port", kind("boxes")},
      {"rename", kind("boxes")},    {"pause", kind("boxes")},        {"unpause", kind("boxes")},
      {"rmi", kind("images")},      {"tag", kind("images")},         {"save", kind("images")},
      {"push", kind("images")},
      {"validate", kind("files")},  {"completion", words({"bash", "zsh", "fish"})},
      {"kernel run", kind("kernels")},  {"kernel fire", kind("kernels")}, {"kernel poll", kind("kernels")},
      {"kernel int", kind("kernels")},  {"kernel stop", kind("kernels")}, {"kernel status", kind("kernels")},
      {"volume inspect", kind("volumes")}, {"volume rm", kind("volumes")},
  };
  return t;
}

template <typename T>
const CompletionKind* find_kind(const T& table, const std::string& key) {
  for (const auto& [k, v] : table)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace

CompletionKind flag_value_kind(const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (const CompletionKind* k = find_kind(flag_kinds(), n)) return *k;
  return kind("files");
}

CompletionKind positional_kind(const std::string& path) {
  const CompletionKind* k = find_kind(positional_kinds(), path);
  return k ? *k : CompletionKind{};
}

std::vector<std::string> completion_table_flags() {
  std::vector<std::string> out;
  for (const auto& [k, v] : flag_kinds()) out.push_back(k);
  return out;
}

std::vector<std::string> completion_table_paths() {
  std::vector<std::string> out;
  for (const auto& [k, v] : positional_kinds()) out.push_back(k);
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

FlagNames flag_names(const CompletionVerb& v) {
  FlagNames out;
  for (const auto& f : v.flags)
    for (const auto& n : f.names) {
      out.all.push_back(n);
      if (f.value == CompletionFlag::Value::required) out.required.push_back(n);
      if (f.value == CompletionFlag::Value::optional) out.optional.push_back(n);
    }
  return out;
}

std::string render_switch(const SwitchSyntax& sx, const std::vector<SwitchCase>& cases,
                          const std::vector<std::string>& fallback_lines) {
  std::string out;
  auto one = [&](const std::string& patterns, const std::vector<std::string>& lines) {
    out += sx.head + patterns + sx.open;
    for (const auto& l : lines) out += sx.indent + l + "\n";
    out += sx.close;
  };
  for (const auto& c : cases) {
    std::string patterns;
    for (const auto& p : c.patterns) patterns += (patterns.empty() ? "" : sx.sep) + sx.quote(p);
    one(patterns, c.lines);
  }
  one(sx.fallback, fallback_lines);
  return out;
}

std::vector<SwitchCase> value_cases(const std::vector<CompletionVerb>& model, const SwitchSyntax& sx) {
  std::vector<SwitchCase> out;
  for (const auto& v : model)
    for (const auto& f : v.flags) {
      if (f.value == CompletionFlag::Value::none) continue;
      SwitchCase c{{}, {sx.print + sx.quote(kind_word(f.kind))}};
      for (const auto& n : f.names) c.patterns.push_back(v.path + "|" + n);
      out.push_back(std::move(c));
    }
  return out;
}

std::string subverb_help(const std::vector<CompletionVerb>& model, const std::string& path, const std::string& sub) {
  std::string full = path.empty() ? sub : path + " " + sub;
  for (const auto& v : model)
    if (v.path == full) return v.help;
  return "";
}

std::string join_words(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

std::string kind_word(const CompletionKind& k) { return k.kind == "words" ? "words:" + join_words(k.words) : k.kind; }

}  // namespace kern::cli
