// registries.conf (v2); see registries_conf.h.
//
// toml++ header-only with exceptions off, as in profiles/toml_profiles.cc (Debian's shared
// library is built with exceptions on, so the no-exceptions entry points exist only when
// compiled in).
#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#define TOML_ENABLE_FORMATTERS 0
#include <toml++/toml.h>

#include "oci/registries_conf.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>

#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::oci {
namespace {

constexpr size_t kFileLimit = 1 << 20;

std::string at(const std::string& path, const toml::source_region& r) {
  return path + ":" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.column);
}

Unexpected<Error> bad(const std::string& where, const std::string& what) {
  return fail(Error(ErrorKind::config, 0, where + ": " + what));
}

Status read_bool(const toml::node& n, const std::string& where, const char* key, bool& out) {
  auto v = n.as_boolean();
  if (v == nullptr) return bad(where, std::string("\"") + key + "\" must be true or false");
  out = v->get();
  return {};
}

Status read_string(const toml::node& n, const std::string& where, const char* key, std::string& out) {
  auto v = n.as_string();
  if (v == nullptr) return bad(where, std::string("\"") + key + "\" must be a string");
  out = v->get();
  return {};
}

Result<RegistryMirror> parse_mirror(const toml::table& t, const std::string& path) {
  RegistryMirror m;
  for (const auto& [k, v] : t) {
    std::string key(k.str()), where = at(path, v.source());
    if (key == "location") KERN_TRY(read_string(v, where, "location", m.location));
    else if (key == "insecure") KERN_TRY(read_bool(v, where, "insecure", m.insecure));
    else if (key == "pull-from-mirror") {
      KERN_TRY(read_string(v, where, "pull-from-mirror", m.pull_from_mirror));
      if (m.pull_from_mirror != "all" && m.pull_from_mirror != "digest-only" && m.pull_from_mirror != "tag-only")
        return bad(where, "\"pull-from-mirror\" must be \"all\", \"digest-only\" or \"tag-only\"");
    } else {
      log::warning(where + ": unknown key \"" + log::sanitize(key) + "\" in a registry mirror (ignored)");
    }
  }
  if (m.location.empty()) return bad(at(path, t.source()), "a mirror needs a location");
  return m;
}

Result<RegistryEntry> parse_entry(const toml::table& t, const std::string& path) {
  RegistryEntry e;
  e.file = path;
  for (const auto& [k, v] : t) {
    std::string key(k.str()), where = at(path, v.source());
    if (key == "prefix") KERN_TRY(read_string(v, where, "prefix", e.prefix));
    else if (key == "location") KERN_TRY(read_string(v, where, "location", e.location));
    else if (key == "insecure") KERN_TRY(read_bool(v, where, "insecure", e.insecure));
    else if (key == "blocked") KERN_TRY(read_bool(v, where, "blocked", e.blocked));
    else if (key == "mirror-by-digest-only") KERN_TRY(read_bool(v, where, "mirror-by-digest-only", e.mirror_by_digest_only));
    else if (key == "mirror") {
      auto arr = v.as_array();
      if (arr == nullptr) return bad(where, "\"mirror\" must be an array of tables");
      for (const auto& item : *arr) {
        auto mt = item.as_table();
        if (mt == nullptr) return bad(at(path, item.source()), "a mirror must be a table");
        KERN_TRY_ASSIGN(RegistryMirror m, parse_mirror(*mt, path));
        e.mirrors.push_back(std::move(m));
      }
    } else {
      log::warning(where + ": unknown key \"" + log::sanitize(key) + "\" in a [[registry]] (ignored)");
    }
  }
  if (e.prefix.empty()) e.prefix = e.location;
  if (e.prefix.empty()) return bad(at(path, t.source()), "a [[registry]] needs a prefix or a location");
  if (e.prefix.rfind("*.", 0) == 0 && !e.location.empty())
    return bad(at(path, t.source()), "a wildcard prefix (\"" + e.prefix + "\") cannot have a location");
  return e;
}

std::string user_containers_dir() {
  const char* x = std::getenv("XDG_CONFIG_HOME");
  return (x && *x ? std::string(x) : paths::home_dir() + "/.config") + "/containers";
}

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::vector<std::string> dropins(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".conf") == 0) out.push_back(dir + "/" + n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// Whether `name` ("host/repo/path") is under `prefix`, and how long the match is.
size_t prefix_match(const std::string& prefix, const std::string& name) {
  if (prefix.rfind("*.", 0) == 0) {
    std::string host = name.substr(0, name.find('/'));
    std::string tail = prefix.substr(1);  // ".example.com"
    return host.size() > tail.size() && host.compare(host.size() - tail.size(), tail.size(), tail) == 0 ? prefix.size() : 0;
  }
  if (name == prefix) return prefix.size();
  if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 && name[prefix.size()] == '/')
    return prefix.size();
  return 0;
}

Result<Reference> rewrite(const Reference& ref, const std::string& prefix, const std::string& location) {
  std::string name = ref.name();
  std::string to = location + name.substr(prefix.size());
  size_t slash = to.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == to.size())
    return fail(ErrorKind::config, 0, "registries.conf: \"" + location + "\" leaves no repository for " + ref.str());
  Reference out = ref;
  out.registry = to.substr(0, slash);
  out.repository = to.substr(slash + 1);
  return out;
}

}  // namespace

Status parse_registries_conf(std::string_view text, const std::string& path, RegistriesConf& conf) {
  toml::parse_result parsed = toml::parse(text, std::string_view(path));
  if (!parsed) {
    const auto& err = parsed.error();
    return bad(at(path, err.source()), std::string(err.description()));
  }
  const toml::table& root = parsed.table();
  if (root.contains("registries") && !root.contains("registry"))
    log::warning(path + ": the v1 format ([registries.search] ...) is not read; write [[registry]] entries");
  auto regs = root["registry"];
  if (!regs) return {};
  auto arr = regs.as_array();
  if (arr == nullptr) return bad(at(path, regs.node()->source()), "\"registry\" must be an array of tables ([[registry]])");
  for (const auto& item : *arr) {
    auto t = item.as_table();
    if (t == nullptr) return bad(at(path, item.source()), "a [[registry]] must be a table");
    KERN_TRY_ASSIGN(RegistryEntry e, parse_entry(*t, path));
    auto same = std::find_if(conf.entries.begin(), conf.entries.end(),
                             [&](const RegistryEntry& o) { return o.prefix == e.prefix; });
    if (same != conf.entries.end()) *same = std::move(e);
    else conf.entries.push_back(std::move(e));
  }
  return {};
}

Result<RegistriesConf> load_registries_conf() {
  std::vector<std::string> files;
  std::string user = user_containers_dir();
  const char* forced = std::getenv("CONTAINERS_REGISTRIES_CONF");
  if (forced && *forced) files.push_back(forced);
  else if (exists(user + "/registries.conf")) files.push_back(user + "/registries.conf");
  else files.push_back("/etc/containers/registries.conf");
  for (auto& f : dropins("/etc/containers/registries.conf.d")) files.push_back(std::move(f));
  for (auto& f : dropins(user + "/registries.conf.d")) files.push_back(std::move(f));
  RegistriesConf conf;
  for (const auto& f : files) {
    auto text = sys::read_file(AT_FDCWD, f, kFileLimit);
    if (!text) {
      if (text.error().sys_errno() == ENOENT) continue;
      return fail(std::move(text).error());
    }
    KERN_TRY(parse_registries_conf(*text, f, conf));
  }
  return conf;
}

const RegistryEntry* match_registry(const RegistriesConf& conf, const Reference& ref) {
  const RegistryEntry* best = nullptr;
  size_t best_len = 0;
  std::string name = ref.name();
  for (const auto& e : conf.entries) {
    size_t n = prefix_match(e.prefix, name);
    if (n > best_len) {
      best = &e;
      best_len = n;
    }
  }
  return best;
}

Result<std::vector<PullEndpoint>> pull_endpoints(const RegistriesConf& conf, const Reference& ref) {
  std::vector<PullEndpoint> out;
  const RegistryEntry* e = match_registry(conf, ref);
  if (e == nullptr) {
    out.push_back(PullEndpoint{ref, false, false});
    return out;
  }
  if (e->blocked)
    return fail(Error(ErrorKind::image, EACCES, ref.name() + " is blocked by " + e->file)
                    .with_hint("remove \"blocked = true\" from its [[registry]] entry to pull from it"));
  bool wildcard = e->prefix.rfind("*.", 0) == 0;
  // A wildcard entry's mirrors take the whole name after the host.
  std::string prefix = wildcard ? ref.registry : e->prefix;
  bool by_digest = !ref.digest.empty();
  for (const auto& m : e->mirrors) {
    std::string mode = e->mirror_by_digest_only ? "digest-only" : m.pull_from_mirror;
    if ((mode == "digest-only" && !by_digest) || (mode == "tag-only" && by_digest)) continue;
    KERN_TRY_ASSIGN(Reference r, rewrite(ref, prefix, m.location));
    out.push_back(PullEndpoint{std::move(r), m.insecure, true});
  }
  Reference primary = ref;
  if (!wildcard && !e->location.empty()) {
    KERN_TRY_ASSIGN(primary, rewrite(ref, e->prefix, e->location));
  }
  out.push_back(PullEndpoint{std::move(primary), e->insecure, false});
  return out;
}

bool registry_insecure(const RegistriesConf& conf, const std::string& host) {
  for (const auto& e : conf.entries)
    if (e.insecure && (e.location == host || e.prefix == host)) return true;
  return false;
}

}  // namespace kern::oci
