// services.NAME into compose::Service (compose_service.h).
#include "cli/compose_service.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace kern::compose {
namespace service_impl {

struct Reader {
  const std::string& base;  // "services.web"
  const ServiceContext& ctx;

  std::string path(const std::string& key) const { return base + "." + key; }
  void warn(const std::string& p, const std::string& why = "not supported by kern, ignored") const {
    if (ctx.warnings) ctx.warnings->push_back(p + ": " + why);
  }
};

Error type_error(const Node& n, const std::string& path, const std::string& expected) {
  return tree_error(n, path, "must be " + expected + ", not " + n.kind_name());
}

// Calls fn(item, "PATH[i]") for each item of a list; anything but a list is a type error.
template <typename Fn>
Result<void> each_item(const Node& n, const std::string& path, const std::string& expected, Fn fn) {
  if (!n.is_seq()) return fail(type_error(n, path, expected));
  for (size_t i = 0; i < n.items.size(); ++i) KERN_TRY(fn(n.items[i], path + "[" + std::to_string(i) + "]"));
  return {};
}

Result<std::vector<std::string>> string_list(const Node& n, const std::string& path, bool scalar_ok) {
  std::vector<std::string> out;
  if (n.is_scalar() && scalar_ok) return std::vector<std::string>{n.text};
  if (n.is_null()) return out;
  KERN_TRY(each_item(n, path, scalar_ok ? "a string or a list" : "a list",
                     [&](const Node& item, const std::string& ip) -> Result<void> {
                       KERN_TRY_ASSIGN(std::string s, scalar_text(item, ip));
                       out.push_back(std::move(s));
                       return {};
                     }));
  return out;
}

// A mapping of scalars (environment, labels, sysctls...; lists were normalized to mappings).
Result<std::vector<std::pair<std::string, std::optional<std::string>>>> string_map(const Node& n,
                                                                                   const std::string& path) {
  std::vector<std::pair<std::string, std::optional<std::string>>> out;
  if (n.is_null()) return out;
  if (!n.is_map()) return fail(type_error(n, path, "a mapping or a list of KEY=VALUE"));
  for (const auto& [k, v] : n.entries) {
    if (v.is_null()) {
      out.emplace_back(k, std::nullopt);
      continue;
    }
    KERN_TRY_ASSIGN(std::string s, scalar_text(v, path + "." + k));
    out.emplace_back(k, s);
  }
  return out;
}

Result<std::vector<std::string>> command_words(const Node& n, const std::string& path) {
  if (n.is_scalar()) {
    auto words = shell_split(n.text);
    if (!words) return fail(tree_error(n, path, words.error().message()));
    return *words;
  }
  return string_list(n, path, false);
}

std::vector<std::string> split_colons(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t c; (c = s.find(':', start)) != std::string::npos; start = c + 1)
    parts.push_back(s.substr(start, c - start));
  parts.push_back(s.substr(start));
  return parts;
}

bool valid_port_part(const std::string& s) {
  if (s.empty()) return false;
  size_t dash = s.find('-');
  auto num = [](const std::string& p) {
    if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return false;
    int v = std::stoi(p);
    return v >= 0 && v <= 65535;
  };
  if (dash == std::string::npos) return num(s);
  return num(s.substr(0, dash)) && num(s.substr(dash + 1));
}

Result<PortSpec> short_port(const Node& n, const std::string& path) {
  std::string s = n.text;
  PortSpec p;
  if (size_t slash = s.rfind('/'); slash != std::string::npos) {
    p.protocol = s.substr(slash + 1);
    s = s.substr(0, slash);
  }
  if (!s.empty() && s[0] == '[') {  // [IPv6]:published:target
    size_t close = s.find(']');
    if (close == std::string::npos) return fail(tree_error(n, path, "invalid port \"" + n.text + "\""));
    p.host_ip = s.substr(1, close - 1);
    s = s.substr(close + 1);
    if (!s.empty() && s[0] == ':') s = s.substr(1);
  }
  std::vector<std::string> parts = split_colons(s);
  if (parts.size() == 1) {
    p.target = parts[0];
  } else if (parts.size() == 2) {
    p.published = parts[0];
    p.target = parts[1];
  } else if (parts.size() == 3 && p.host_ip.empty()) {
    p.host_ip = parts[0];
    p.published = parts[1];
    p.target = parts[2];
  } else {
    return fail(tree_error(n, path, "invalid port \"" + n.text + "\""));
  }
  if (!valid_port_part(p.target) || (!p.published.empty() && !valid_port_part(p.published)))
    return fail(tree_error(n, path, "invalid port \"" + n.text + "\""));
  return p;
}

Result<PortSpec> long_port(const Node& n, const std::string& path, const Reader& r) {
  PortSpec p;
  for (const auto& [k, v] : n.entries) {
    std::string kp = path + "." + k;
    if (k == "mode" || k.rfind("x-", 0) == 0) continue;
    if (k != "target" && k != "published" && k != "host_ip" && k != "protocol") {
      r.warn(kp);
      continue;
    }
    KERN_TRY_ASSIGN(std::string s, scalar_text(v, kp));
    if (k == "target")
      p.target = s;
    else if (k == "published")
      p.published = s;
    else if (k == "host_ip")
      p.host_ip = s;
    else
      p.protocol = s;
  }
  if (p.target.empty()) return fail(tree_error(n, path, "a port needs a target"));
  if (!valid_port_part(p.target) || (!p.published.empty() && !valid_port_part(p.published)))
    return fail(tree_error(n, path, "invalid port"));
  return p;
}

Result<VolumeMount> short_volume(const Node& n, const std::string& path, const Reader& r) {
  const std::string& s = n.text;
  std::vector<std::string> parts = split_colons(s);
  VolumeMount m;
  if (parts.size() == 1) {
    m.type = "volume";
    m.target = parts[0];
  } else if (parts.size() <= 3) {
    m.source = parts[0];
    m.target = parts[1];
    const std::string& src = m.source;
    m.type = !src.empty() && (src[0] == '/' || src[0] == '.' || src[0] == '~') ? "bind" : "volume";
    if (parts.size() == 3) {
      std::stringstream opts(parts[2]);
      for (std::string o; std::getline(opts, o, ',');) {
        if (o == "ro")
          m.read_only = true;
        else if (o != "rw")
          r.warn(path, "option \"" + o + "\" not supported by kern, ignored");
      }
    }
  } else {
    return fail(tree_error(n, path, "invalid volume \"" + s + "\""));
  }
  if (m.target.empty() || m.target[0] != '/')
    return fail(tree_error(n, path, "the target of \"" + s + "\" is not an absolute path"));
  return m;
}

Result<VolumeMount> long_volume(const Node& n, const std::string& path, const Reader& r) {
  VolumeMount m;
  for (const auto& [k, v] : n.entries) {
    std::string kp = path + "." + k;
    if (k.rfind("x-", 0) == 0) continue;
    if (k == "read_only") {
      KERN_TRY_ASSIGN(m.read_only, read_bool(v, kp));
    } else if (k == "type" || k == "source" || k == "target") {
      KERN_TRY_ASSIGN(std::string s, scalar_text(v, kp));
      (k == "type" ? m.type : k == "source" ? m.source : m.target) = s;
    } else if (k == "bind" && v.is_map()) {
      for (const auto& [bk, bv] : v.entries)
        if (bk != "create_host_path") r.warn(kp + "." + bk);
    } else {
      r.warn(kp);
    }
  }
  if (m.type != "bind" && m.type != "volume" && m.type != "tmpfs")
    return fail(tree_error(n, path + ".type", "must be bind, volume or tmpfs (kern has no \"" + m.type + "\")"));
  if (m.target.empty() || m.target[0] != '/') return fail(tree_error(n, path + ".target", "must be an absolute path"));
  if (m.type == "bind" && m.source.empty()) return fail(tree_error(n, path + ".source", "a bind needs a source"));
  return m;
}

Result<Healthcheck> healthcheck(const Node& n, const std::string& path, const Reader& r) {
  if (!n.is_map()) return fail(type_error(n, path, "a mapping"));
  Healthcheck h;
  for (const auto& [k, v] : n.entries) {
    std::string kp = path + "." + k;
    if (k.rfind("x-", 0) == 0) continue;
    if (k == "test") {
      if (v.is_scalar()) {
        h.test = {"CMD-SHELL", v.text};
      } else {
        KERN_TRY_ASSIGN(h.test, string_list(v, kp, false));
        if (h.test.empty() || (h.test[0] != "CMD" && h.test[0] != "CMD-SHELL" && h.test[0] != "NONE"))
          return fail(tree_error(v, kp, "a list must start with CMD, CMD-SHELL or NONE"));
      }
    } else if (k == "disable") {
      KERN_TRY_ASSIGN(h.disable, read_bool(v, kp));
    } else if (k == "retries") {
      KERN_TRY_ASSIGN(std::string s, scalar_text(v, kp));
      if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9)
        return fail(type_error(v, kp, "a whole number"));
      h.retries = std::stoi(s);
    } else if (k == "interval" || k == "timeout" || k == "start_period") {
      KERN_TRY_ASSIGN(std::string s, scalar_text(v, kp));
      if (!duration_ms(s)) return fail(tree_error(v, kp, "invalid duration \"" + s + "\""));
      (k == "interval" ? h.interval : k == "timeout" ? h.timeout : h.start_period) = s;
    } else {
      r.warn(kp);
    }
  }
  if (!h.test.empty() && h.test[0] == "NONE") h.disable = true;
  return h;
}

bool known_condition(const std::string& c) {
  return c == "service_started" || c == "service_healthy" || c == "service_completed_successfully";
}

Result<void> resources(const Node& deploy, const std::string& path, const Reader& r, Service& s) {
  if (!deploy.is_map()) return fail(type_error(deploy, path, "a mapping"));
  for (const auto& [k, v] : deploy.entries) {
    std::string kp = path + "." + k;
    if (k.rfind("x-", 0) == 0) continue;
    if (k != "resources" || !v.is_map()) {
      r.warn(kp);
      continue;
    }
    for (const auto& [rk, rv] : v.entries) {
      std::string rp = kp + "." + rk;
      if (rk != "limits" || !rv.is_map()) {
        r.warn(rp);
        continue;
      }
      for (const auto& [lk, lv] : rv.entries) {
        std::string lp = rp + "." + lk;
        if (lk != "cpus" && lk != "memory" && lk != "pids") {
          r.warn(lp);
          continue;
        }
        KERN_TRY_ASSIGN(std::string val, scalar_text(lv, lp));
        (lk == "cpus" ? s.cpus : lk == "memory" ? s.memory : s.pids) = val;
      }
    }
  }
  return {};
}

Result<std::string> ulimit_value(const Node& v, const std::string& path) {
  if (v.is_scalar()) return scalar_text(v, path);
  if (!v.is_map()) return fail(type_error(v, path, "a number or a mapping of soft and hard"));
  const Node* soft = v.get("soft");
  const Node* hard = v.get("hard");
  if (!soft || !hard) return fail(tree_error(v, path, "needs both soft and hard"));
  KERN_TRY_ASSIGN(std::string a, scalar_text(*soft, path + ".soft"));
  KERN_TRY_ASSIGN(std::string b, scalar_text(*hard, path + ".hard"));
  return a + ":" + b;
}

Result<std::vector<std::pair<std::string, std::string>>> env_files(const Node& n, const std::string& path,
                                                                   const ServiceContext& ctx) {
  std::vector<std::pair<std::string, std::string>> out;
  std::vector<std::pair<std::string, bool>> files;  // path, required
  auto add = [&](const Node& item, const std::string& p) -> Result<void> {
    if (item.is_map()) {
      const Node* f = item.get("path");
      if (!f) return fail(tree_error(item, p, "needs a path"));
      KERN_TRY_ASSIGN(std::string file, scalar_text(*f, p + ".path"));
      bool required = true;
      if (const Node* req = item.get("required")) {
        KERN_TRY_ASSIGN(required, read_bool(*req, p + ".required"));
      }
      files.emplace_back(file, required);
      return {};
    }
    KERN_TRY_ASSIGN(std::string file, scalar_text(item, p));
    files.emplace_back(file, true);
    return {};
  };
  if (n.is_seq()) {
    for (size_t i = 0; i < n.items.size(); ++i) KERN_TRY(add(n.items[i], path + "[" + std::to_string(i) + "]"));
  } else {
    KERN_TRY(add(n, path));
  }
  for (const auto& [file, required] : files) {
    std::string abs = resolve_path(file, ctx.project_dir, ctx.environment);
    std::ifstream in(abs, std::ios::binary);
    if (!in) {
      if (!required) continue;
      return fail(tree_error(n, path, "env file \"" + abs + "\" not found"));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    KERN_TRY_ASSIGN(auto lines, parse_dotenv(ss.str(), abs, &ctx.environment));
    for (auto& [k, v] : lines) {
      std::optional<std::string> value = v ? v : ctx.environment(k);
      if (value) out.emplace_back(k, *value);
    }
  }
  return out;
}

void set_env(std::vector<std::pair<std::string, std::string>>& env, const std::string& k, const std::string& v) {
  for (auto& e : env)
    if (e.first == k) {
      e.second = v;
      return;
    }
  env.emplace_back(k, v);
}

// The keys whose value is one string of the model.
const std::map<std::string, std::string Service::*>& scalar_fields() {
  static const std::map<std::string, std::string Service::*> fields = {
      {"image", &Service::image},
      {"container_name", &Service::container_name},
      {"hostname", &Service::hostname},
      {"user", &Service::user},
      {"working_dir", &Service::working_dir},
      {"stop_signal", &Service::stop_signal},
      {"stop_grace_period", &Service::stop_grace_period},
      {"restart", &Service::restart},
      {"mem_limit", &Service::memory},
      {"cpus", &Service::cpus},
      {"pids_limit", &Service::pids},
  };
  return fields;
}

bool valid_restart(const std::string& t) {
  return t == "no" || t == "always" || t == "unless-stopped" || t == "on-failure" ||
         (t.rfind("on-failure:", 0) == 0 && t.size() > 11 &&
          t.find_first_not_of("0123456789", 11) == std::string::npos);
}

const std::set<std::string>& ignored_silently() {
  static const std::set<std::string> keys = {"extends", "profiles"};
  return keys;
}

}  // namespace service_impl

Result<bool> read_bool(const Node& n, const std::string& path) {
  std::optional<bool> b = scalar_bool(n);
  if (!b) return fail(service_impl::type_error(n, path, "a boolean (true or false)"));
  return *b;
}

Result<std::string> scalar_text(const Node& node, const std::string& path) {
  if (!node.is_scalar()) return fail(service_impl::type_error(node, path, "a string or a number"));
  return node.text;
}

std::string resolve_path(const std::string& path, const std::string& base, const Lookup& env) {
  std::string p = path;
  if (p == "~" || p.rfind("~/", 0) == 0) p = env("HOME").value_or("") + p.substr(1);
  if (!p.empty() && p[0] == '/') return p;
  std::string out = base;
  std::stringstream parts(p);
  for (std::string part; std::getline(parts, part, '/');) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      size_t s = out.rfind('/');
      out = s == 0 || s == std::string::npos ? "/" : out.substr(0, s);
      continue;
    }
    out += (out.empty() || out.back() != '/' ? "/" : "") + part;
  }
  return out;
}

Result<Service> parse_service(const std::string& name, const Node& node, const ServiceContext& ctx) {
  using namespace service_impl;
  std::string base = "services." + name;
  Reader r{base, ctx};
  if (!node.is_map()) return fail(type_error(node, base, "a mapping"));
  Service s;
  s.name = name;
  std::vector<std::pair<std::string, std::string>> env;
  if (const Node* ef = node.get("env_file")) {
    KERN_TRY_ASSIGN(env, env_files(*ef, r.path("env_file"), ctx));
  }
  for (const auto& [k, v] : node.entries) {
    std::string p = r.path(k);
    if (k.rfind("x-", 0) == 0 || ignored_silently().count(k) || k == "env_file") continue;
    if (auto field = scalar_fields().find(k); field != scalar_fields().end()) {
      KERN_TRY_ASSIGN(std::string t, scalar_text(v, p));
      if (k == "stop_grace_period" && !duration_ms(t)) return fail(tree_error(v, p, "invalid duration \"" + t + "\""));
      if (k == "restart" && !valid_restart(t))
        return fail(tree_error(v, p, "must be no, always, on-failure[:N] or unless-stopped, not \"" + t + "\""));
      s.*(field->second) = t;
    } else if (k == "command" || k == "entrypoint") {
      if (v.is_null()) continue;
      KERN_TRY_ASSIGN(std::vector<std::string> words, command_words(v, p));
      (k == "command" ? s.command : s.entrypoint) = std::move(words);
    } else if (k == "environment") {
      KERN_TRY_ASSIGN(auto m, string_map(v, p));
      for (auto& [ek, ev] : m) {
        std::optional<std::string> value = ev ? ev : ctx.environment(ek);
        if (value) set_env(env, ek, *value);
      }
    } else if (k == "labels" || k == "sysctls") {
      KERN_TRY_ASSIGN(auto m, string_map(v, p));
      for (auto& [mk, mv] : m) (k == "labels" ? s.labels : s.sysctls).emplace_back(mk, mv.value_or(""));
    } else if (k == "extra_hosts") {
      KERN_TRY_ASSIGN(auto m, string_map(v, p));
      for (auto& [h, ip] : m) {
        if (!ip || ip->empty()) return fail(tree_error(v, p + "." + h, "needs an IP address"));
        s.extra_hosts.push_back(h + ":" + *ip);
      }
    } else if (k == "ports") {
      KERN_TRY(each_item(v, p, "a list", [&](const Node& item, const std::string& ip) -> Result<void> {
        if (item.is_scalar()) {
          KERN_TRY_ASSIGN(PortSpec ps, short_port(item, ip));
          s.ports.push_back(ps);
        } else if (item.is_map()) {
          KERN_TRY_ASSIGN(PortSpec ps, long_port(item, ip, r));
          s.ports.push_back(ps);
        } else {
          return fail(type_error(item, ip, "a string, a number or a mapping"));
        }
        const std::string& proto = s.ports.back().protocol;
        if (proto != "tcp" && proto != "udp") return fail(tree_error(item, ip, "protocol must be tcp or udp"));
        return {};
      }));
    } else if (k == "expose") {
      KERN_TRY_ASSIGN(auto list, string_list(v, p, false));
      for (auto& e : list) {
        std::string port = e.substr(0, e.find('/'));
        if (!valid_port_part(port)) return fail(tree_error(v, p, "invalid port \"" + e + "\""));
        s.expose.push_back(e);
      }
    } else if (k == "volumes") {
      KERN_TRY(each_item(v, p, "a list", [&](const Node& item, const std::string& ip) -> Result<void> {
        VolumeMount m;
        if (item.is_scalar()) {
          KERN_TRY_ASSIGN(m, short_volume(item, ip, r));
        } else if (item.is_map()) {
          KERN_TRY_ASSIGN(m, long_volume(item, ip, r));
        } else {
          return fail(type_error(item, ip, "a string or a mapping"));
        }
        if (m.type == "bind") {
          m.source = resolve_path(m.source, ctx.project_dir, ctx.environment);
        } else if (m.type == "volume" && !m.source.empty()) {
          auto it = ctx.volume_names.find(m.source);
          if (it == ctx.volume_names.end())
            return fail(tree_error(item, ip,
                                   "service \"" + name + "\" refers to undefined volume \"" + m.source +
                                       "\": declare it under the top-level volumes"));
          m.source = it->second;
        } else if (m.type == "tmpfs") {
          m.source.clear();
        }
        s.volumes.push_back(m);
        return {};
      }));
    } else if (k == "tmpfs") {
      KERN_TRY_ASSIGN(s.tmpfs, string_list(v, p, true));
    } else if (k == "depends_on") {
      if (!v.is_map()) return fail(type_error(v, p, "a list or a mapping"));
      for (const auto& [dk, dv] : v.entries) {
        DependsOn d;
        d.service = dk;
        std::string dp = p + "." + dk;
        if (!dv.is_map() && !dv.is_null()) return fail(type_error(dv, dp, "a mapping"));
        for (const auto& [ck, cv] : dv.entries) {
          std::string cp = dp + "." + ck;
          if (ck == "condition") {
            KERN_TRY_ASSIGN(d.condition, scalar_text(cv, cp));
            if (!known_condition(d.condition))
              return fail(
                  tree_error(cv, cp, "must be service_started, service_healthy or service_completed_successfully"));
          } else if (ck == "required") {
            KERN_TRY_ASSIGN(d.required, read_bool(cv, cp));
          } else if (ck == "restart") {
            KERN_TRY_ASSIGN(d.restart, read_bool(cv, cp));
          } else if (ck.rfind("x-", 0) != 0) {
            r.warn(cp);
          }
        }
        s.depends_on.push_back(d);
      }
    } else if (k == "healthcheck") {
      KERN_TRY_ASSIGN(Healthcheck h, healthcheck(v, p, r));
      s.healthcheck = h;
    } else if (k == "deploy") {
      KERN_TRY(resources(v, p, r, s));
    } else if (k == "read_only" || k == "init") {
      KERN_TRY_ASSIGN(bool b, read_bool(v, p));
      (k == "init" ? s.init : s.read_only) = b;
    } else if (k == "build") {
      s.has_build = true;
      BuildSpec b;
      if (v.is_scalar()) {
        KERN_TRY_ASSIGN(b.context, scalar_text(v, p));
      } else if (v.is_map()) {
        for (const auto& [bk, bv] : v.entries) {
          std::string bp = p + "." + bk;
          if (bk == "context" || bk == "dockerfile" || bk == "target" || bk == "network") {
            KERN_TRY_ASSIGN(std::string t, scalar_text(bv, bp));
            (bk == "context" ? b.context : bk == "dockerfile" ? b.dockerfile : bk == "target" ? b.target : b.network) = t;
          } else if (bk == "args") {
            KERN_TRY_ASSIGN(auto m, string_map(bv, bp));
            for (auto& [ak, av] : m) {
              std::optional<std::string> value = av ? av : ctx.environment(ak);
              if (value) b.args.emplace_back(ak, *value);
            }
          } else if (bk == "tags") {
            KERN_TRY_ASSIGN(b.tags, string_list(bv, bp, false));
          } else if (bk.rfind("x-", 0) != 0) {
            r.warn(bp);
          }
        }
      } else {
        return fail(type_error(v, p, "a path or a mapping"));
      }
      if (b.context.empty()) b.context = ".";
      b.context = resolve_path(b.context, ctx.project_dir, ctx.environment);
      s.build = std::move(b);
    } else if (k == "cap_add" || k == "cap_drop") {
      KERN_TRY_ASSIGN(auto list, string_list(v, p, false));
      (k == "cap_add" ? s.cap_add : s.cap_drop) = list;
    } else if (k == "ulimits") {
      if (!v.is_map()) return fail(type_error(v, p, "a mapping"));
      for (const auto& [uk, uv] : v.entries) {
        KERN_TRY_ASSIGN(std::string val, ulimit_value(uv, p + "." + uk));
        s.ulimits.emplace_back(uk, val);
      }
    } else if (k == "secrets") {
      KERN_TRY(each_item(v, p, "a list", [&](const Node& item, const std::string& ip) -> Result<void> {
        SecretRef ref;
        if (item.is_map()) {
          for (const auto& [sk, sv] : item.entries) {
            if (sk == "source" || sk == "target") {
              KERN_TRY_ASSIGN(std::string t, scalar_text(sv, ip + "." + sk));
              (sk == "source" ? ref.source : ref.target) = t;
            } else if (sk.rfind("x-", 0) != 0) {
              r.warn(ip + "." + sk);
            }
          }
        } else {
          KERN_TRY_ASSIGN(ref.source, scalar_text(item, ip));
        }
        if (ref.target.empty()) ref.target = ref.source;
        if (ref.target.rfind("/run/secrets/", 0) == 0) ref.target = ref.target.substr(13);
        if (ref.target.empty() || ref.target.find('/') != std::string::npos)
          return fail(tree_error(item, ip, "kern puts a secret in /run/secrets/NAME: the target must be a file name"));
        if (std::find(ctx.secret_keys.begin(), ctx.secret_keys.end(), ref.source) == ctx.secret_keys.end())
          return fail(tree_error(item, ip,
                                 "service \"" + name + "\" refers to undefined secret \"" + ref.source +
                                     "\": declare it under the top-level secrets"));
        s.secrets.push_back(ref);
        return {};
      }));
    } else if (k == "networks" || k == "network_mode") {
      r.warn(p, "kern runs a stack in one shared network namespace, ignored");
    } else {
      r.warn(p);
    }
  }
  if (const Node* pr = node.get("profiles")) {
    KERN_TRY_ASSIGN(s.profiles, string_list(*pr, base + ".profiles", false));
  }
  s.environment = std::move(env);
  if (s.image.empty() && !s.has_build) return fail(tree_error(node, base, "has neither an image nor a build"));
  // A built image without a name is named after the project and the service, as Compose does.
  if (s.image.empty()) s.image = ctx.project_name + "-" + name;
  return s;
}

}  // namespace kern::compose
