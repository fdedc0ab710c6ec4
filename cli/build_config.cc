// Config-only Dockerfile instructions; see build_config.h.
#include "cli/build_config.h"

#include <algorithm>

#include "cli/compose_text.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
using json = nlohmann::json;
using oci::build::Instruction;
namespace build_config_parts {

Error bad(const Instruction& in, const std::string& what) {
  return Error(ErrorKind::usage, 0, "Dockerfile line " + std::to_string(in.line) + ": " + in.keyword + ": " + what);
}

json& cfg(json& image) {
  json& c = image["config"];
  if (!c.is_object()) c = json::object();
  return c;
}

// The exec form's array, or the shell form as SHELL + [text].
std::vector<std::string> command_of(const json& image, const Instruction& in) {
  if (in.json) return in.args;
  std::vector<std::string> argv = build_shell(image);
  argv.push_back(in.text);
  return argv;
}

std::string json_words(const std::vector<std::string>& v) { return json(v).dump(); }

std::optional<std::string> flag(const Instruction& in, const std::string& name) {
  for (const auto& f : in.flags)
    if (f.name == name) return f.value;
  return std::nullopt;
}

Status only_flags(const Instruction& in, std::initializer_list<const char*> allowed) {
  for (const auto& f : in.flags)
    if (std::find_if(allowed.begin(), allowed.end(), [&](const char* a) { return f.name == a; }) == allowed.end())
      return fail(bad(in, "unknown flag --" + f.name));
  return {};
}

Result<long long> duration_ns(const Instruction& in, const std::string& name) {
  auto v = flag(in, name);
  if (!v) return 0;
  auto ms = compose::duration_ms(*v);
  if (!ms) return fail(bad(in, "--" + name + "=" + *v + ": not a duration").with_hint("for example 30s, 1m30s, 500ms"));
  return *ms * 1000000LL;
}

}  // namespace build_config_parts
}  // namespace

std::optional<std::string> env_value(const json& image, std::string_view key) {
  using namespace build_config_parts;
  auto c = image.find("config");
  if (c == image.end() || !c->is_object()) return std::nullopt;
  auto env = c->find("Env");
  if (env == c->end() || !env->is_array()) return std::nullopt;
  for (const auto& e : *env) {
    if (!e.is_string()) continue;
    const std::string& s = e.get_ref<const std::string&>();
    if (s.size() > key.size() && s.compare(0, key.size(), key) == 0 && s[key.size()] == '=') return s.substr(key.size() + 1);
  }
  return std::nullopt;
}

void set_env(json& image, const std::string& key, const std::string& value) {
  using namespace build_config_parts;
  json& env = cfg(image)["Env"];
  if (!env.is_array()) env = json::array();
  for (auto& e : env) {
    if (!e.is_string()) continue;
    const std::string& s = e.get_ref<const std::string&>();
    if (s.size() > key.size() && s.compare(0, key.size(), key) == 0 && s[key.size()] == '=') {
      e = key + "=" + value;
      return;
    }
  }
  env.push_back(key + "=" + value);
}

oci::build::Lookup build_lookup(const json& image, const std::map<std::string, std::string>& args) {
  using namespace build_config_parts;
  return [&image, &args](std::string_view k) -> std::optional<std::string> {
    if (auto v = env_value(image, k)) return v;
    auto it = args.find(std::string(k));
    if (it != args.end()) return it->second;
    return std::nullopt;
  };
}

std::vector<std::string> build_shell(const json& image) {
  using namespace build_config_parts;
  auto c = image.find("config");
  if (c != image.end() && c->is_object()) {
    auto s = c->find("Shell");
    if (s != c->end() && s->is_array() && !s->empty()) {
      std::vector<std::string> out;
      for (const auto& w : *s)
        if (w.is_string()) out.push_back(w.get<std::string>());
      if (!out.empty()) return out;
    }
  }
  return {"/bin/sh", "-c"};
}

bool config_instruction(const std::string& k) {
  using namespace build_config_parts;
  static const char* const kw[] = {"ENV", "LABEL", "WORKDIR", "USER", "CMD", "ENTRYPOINT", "EXPOSE",
                                   "VOLUME", "STOPSIGNAL", "HEALTHCHECK", "SHELL", "ONBUILD", "MAINTAINER"};
  return std::find(std::begin(kw), std::end(kw), k) != std::end(kw);
}

std::string join_workdir(const std::string& current, const std::string& path) {
  std::string base = current.empty() ? "/" : current;
  return paths::clean_absolute_path(path.empty() ? base : path[0] == '/' ? path : base + "/" + path);
}

Result<std::string> apply_config_instruction(json& image, const Instruction& in,
                                             const std::map<std::string, std::string>& args, char escape) {
  using namespace build_config_parts;
  oci::build::Lookup lookup = build_lookup(image, args);
  const std::string& k = in.keyword;
  json& c = cfg(image);
  if (k == "ENV" || k == "LABEL") {
    KERN_TRY(only_flags(in, {}));
    // Each pair sees the values before this instruction, as Docker's ENV a=1 b=$a does not.
    KERN_TRY_ASSIGN(auto kvs, oci::build::parse_key_values(in.text, lookup, escape, k == "ENV"));
    if (kvs.empty()) return fail(bad(in, "nothing to set").with_hint(k + " KEY=VALUE ..."));
    std::string shown = k;
    for (const auto& kv : kvs) {
      if (!kv.has_value && k == "ENV") return fail(bad(in, "\"" + kv.key + "\" has no value").with_hint("ENV KEY=VALUE"));
      if (k == "ENV") {
        set_env(image, kv.key, kv.value);
      } else {
        json& labels = c["Labels"];
        if (!labels.is_object()) labels = json::object();
        labels[kv.key] = kv.value;
      }
      shown += " " + kv.key + "=" + kv.value;
    }
    return shown;
  }
  if (k == "MAINTAINER") {
    image["author"] = in.text;
    return "MAINTAINER " + in.text;
  }
  if (k == "CMD" || k == "ENTRYPOINT") {
    KERN_TRY(only_flags(in, {}));
    std::vector<std::string> argv = command_of(image, in);
    c[k == "CMD" ? "Cmd" : "Entrypoint"] = argv;
    // A new ENTRYPOINT drops the Cmd the base image had, as Docker does.
    if (k == "ENTRYPOINT") c.erase("Cmd");
    return k + " " + json_words(argv);
  }
  if (k == "SHELL") {
    if (!in.json || in.args.empty()) return fail(bad(in, "takes a JSON array").with_hint("SHELL [\"/bin/bash\", \"-c\"]"));
    c["Shell"] = in.args;
    return "SHELL " + json_words(in.args);
  }
  if (k == "ONBUILD") {
    std::string inner = in.text;
    size_t sp = inner.find_first_of(" \t");
    std::string word = inner.substr(0, sp);
    for (auto& ch : word) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (word == "ONBUILD" || word == "FROM" || word == "MAINTAINER")
      return fail(bad(in, word + " is not allowed as an ONBUILD trigger"));
    json& triggers = c["OnBuild"];
    if (!triggers.is_array()) triggers = json::array();
    triggers.push_back(inner);
    return "ONBUILD " + inner;
  }
  if (k == "HEALTHCHECK") {
    KERN_TRY(only_flags(in, {"interval", "timeout", "start-period", "start-interval", "retries"}));
    std::string text = in.text;
    size_t sp = text.find_first_of(" \t");
    std::string word = text.substr(0, sp);
    for (auto& ch : word) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    json hc = json::object();
    if (word == "NONE") {
      if (!in.flags.empty()) return fail(bad(in, "HEALTHCHECK NONE takes no flags"));
      hc["Test"] = {"NONE"};
    } else if (word == "CMD") {
      std::string rest = sp == std::string::npos ? "" : text.substr(text.find_first_not_of(" \t", sp));
      json parsed = json::parse(rest, nullptr, false);
      bool exec = parsed.is_array() && !parsed.empty() &&
                  std::all_of(parsed.begin(), parsed.end(), [](const json& w) { return w.is_string(); });
      if (rest.empty()) return fail(bad(in, "CMD needs a command"));
      if (exec) {
        json t = json::array({"CMD"});
        for (const auto& w : parsed) t.push_back(w);
        hc["Test"] = t;
      } else {
        hc["Test"] = {"CMD-SHELL", rest};
      }
      KERN_TRY_ASSIGN(long long interval, duration_ns(in, "interval"));
      KERN_TRY_ASSIGN(long long timeout, duration_ns(in, "timeout"));
      KERN_TRY_ASSIGN(long long start, duration_ns(in, "start-period"));
      KERN_TRY_ASSIGN(long long start_interval, duration_ns(in, "start-interval"));
      if (start_interval) hc["StartInterval"] = start_interval;
      if (interval) hc["Interval"] = interval;
      if (timeout) hc["Timeout"] = timeout;
      if (start) hc["StartPeriod"] = start;
      if (auto r = flag(in, "retries")) {
        try {
          size_t used = 0;
          int n = std::stoi(*r, &used);
          if (used != r->size() || n < 0) throw std::invalid_argument(*r);
          hc["Retries"] = n;
        } catch (const std::exception&) {
          return fail(bad(in, "--retries=" + *r + ": not a count"));
        }
      }
    } else {
      return fail(bad(in, "takes NONE or CMD").with_hint("HEALTHCHECK --interval=30s CMD wget -q -O- http://localhost/"));
    }
    c["Healthcheck"] = hc;
    return "HEALTHCHECK " + text;
  }
  // One-word (or word list) instructions: expanded words.
  KERN_TRY(only_flags(in, {}));
  std::vector<std::string> words;
  if (k == "WORKDIR" || k == "USER" || k == "STOPSIGNAL") {
    // One argument, blanks and all ("WORKDIR /my dir").
    KERN_TRY_ASSIGN(std::string w, oci::build::process_word(in.text, lookup, escape));
    if (!w.empty()) words.push_back(w);
  } else if (in.json && (k == "VOLUME")) {
    words = in.args;
  } else {
    KERN_TRY_ASSIGN(words, oci::build::split_words(in.text, lookup, escape, true));
  }
  if (k == "WORKDIR" || k == "USER" || k == "STOPSIGNAL") {
    if (words.size() != 1) return fail(bad(in, "takes exactly one argument"));
    if (k == "WORKDIR") {
      std::string wd = join_workdir(c.value("WorkingDir", std::string()), words[0]);
      c["WorkingDir"] = wd;
      return "WORKDIR " + wd;
    }
    c[k == "USER" ? "User" : "StopSignal"] = words[0];
    return k + " " + words[0];
  }
  if (k == "EXPOSE" || k == "VOLUME") {
    if (words.empty()) return fail(bad(in, "needs at least one argument"));
    json& set = c[k == "EXPOSE" ? "ExposedPorts" : "Volumes"];
    if (!set.is_object()) set = json::object();
    std::string shown = k;
    for (auto w : words) {
      if (k == "EXPOSE") {
        if (w.find('/') == std::string::npos) w += "/tcp";
        size_t slash = w.find('/');
        std::string port = w.substr(0, slash), proto = w.substr(slash + 1);
        bool digits = !port.empty() && std::all_of(port.begin(), port.end(), [](char ch) {
          return (ch >= '0' && ch <= '9') || ch == '-';
        });
        if (!digits || (proto != "tcp" && proto != "udp" && proto != "sctp"))
          return fail(bad(in, "\"" + w + "\" is not a port").with_hint("EXPOSE 80 443/tcp 53/udp"));
      }
      set[w] = json::object();
      shown += " " + w;
    }
    return shown;
  }
  return fail(bad(in, "not a config instruction"));
}

}  // namespace kern::cli
