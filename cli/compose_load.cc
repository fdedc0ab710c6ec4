// load_project (compose_model.h): which files, the .env file, interpolation, the merge of
// several files, extends, profiles, the top-level volumes and secrets, and check_one_pod.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "cli/compose_model.h"
#include "cli/compose_service.h"
#include "cli/compose_text.h"
#include "cli/compose_tree.h"

namespace kern::compose {
namespace load_impl {

bool file_exists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

std::string dir_of(const std::string& path) {
  size_t s = path.rfind('/');
  if (s == std::string::npos) return ".";
  return s == 0 ? "/" : path.substr(0, s);
}

std::string current_dir() {
  char buf[4096];
  return getcwd(buf, sizeof buf) ? std::string(buf) : std::string("/");
}

Result<void> interpolate_tree(Node& n, const std::string& path, const Lookup& lookup) {
  switch (n.kind) {
    case Node::Kind::scalar: {
      if (n.text.find('$') == std::string::npos) return {};
      auto v = interpolate(n.text, lookup);
      if (!v) return fail(tree_error(n, path, v.error().message()));
      n.text = *v;
      n.quoted = true;
      return {};
    }
    case Node::Kind::seq:
      for (size_t i = 0; i < n.items.size(); ++i)
        KERN_TRY(interpolate_tree(n.items[i], path + "[" + std::to_string(i) + "]", lookup));
      return {};
    case Node::Kind::map:
      for (auto& [k, v] : n.entries) KERN_TRY(interpolate_tree(v, path.empty() ? k : path + "." + k, lookup));
      return {};
    case Node::Kind::null:
      return {};
  }
  return {};
}

// A compose file read, interpolated, its services normalized for the merge.
Result<Node> load_file(const std::string& path, const Lookup& lookup) {
  KERN_TRY_ASSIGN(Node root, read_yaml_file(path));
  if (!root.is_map()) return fail(tree_error(root, "", "a compose file must be a mapping, not " + root.kind_name()));
  KERN_TRY(interpolate_tree(root, "", lookup));
  if (Node* services = root.get("services")) {
    if (!services->is_map() && !services->is_null())
      return fail(tree_error(*services, "services", "must be a mapping, not " + services->kind_name()));
    for (auto& [name, svc] : services->entries) normalize_service(svc);
  }
  return root;
}

// The relative paths of a service that extends one in another directory, made absolute there.
void rebase_paths(Node& svc, const std::string& dir, const Lookup& lookup) {
  auto fix = [&](Node& n) {
    if (n.is_scalar() && !n.text.empty() && n.text[0] != '/' && n.text[0] != '~')
      n.text = resolve_path(n.text, dir, lookup);
  };
  if (Node* ef = svc.get("env_file")) {
    if (ef->is_seq()) {
      for (Node& i : ef->items) {
        if (Node* p = i.get("path"))
          fix(*p);
        else
          fix(i);
      }
    } else {
      fix(*ef);
    }
  }
  if (Node* vols = svc.get("volumes"); vols && vols->is_seq()) {
    for (Node& v : vols->items) {
      if (v.is_scalar() && !v.text.empty() && v.text[0] == '.') {
        size_t c = v.text.find(':');
        if (c != std::string::npos) v.text = resolve_path(v.text.substr(0, c), dir, lookup) + v.text.substr(c);
      } else if (v.is_map()) {
        const Node* t = v.get("type");
        Node* src = v.get("source");
        if (t && t->text == "bind" && src) fix(*src);
      }
    }
  }
}

struct Extender {
  const Lookup& lookup;
  const std::string& project_dir;
  std::map<std::string, Node> other_files;

  Result<const Node*> services_of(const std::string& path, const Node& at) {
    auto it = other_files.find(path);
    if (it == other_files.end()) {
      auto root = load_file(path, lookup);
      if (!root) return fail(std::move(root.error()).with_context(at.where() + ": extends"));
      it = other_files.emplace(path, std::move(*root)).first;
    }
    const Node* s = it->second.get("services");
    static const Node empty = Node::map();
    return s ? s : &empty;
  }

  Result<Node> resolve(const std::string& name, const Node& services, const std::string& file,
                       std::vector<std::string>& stack) {
    const Node* svc = services.get(name);
    if (!svc) {
      Node at = services;
      return fail(tree_error(at, "services", "no service \"" + name + "\" to extend in " + file));
    }
    std::string key = file + "#" + name;
    if (std::find(stack.begin(), stack.end(), key) != stack.end())
      return fail(tree_error(
          *svc, "services." + name + ".extends", "extends makes a cycle: " + [&] {
            std::string c;
            for (const auto& s : stack) c += s.substr(s.rfind('#') + 1) + " -> ";
            return c + name;
          }()));
    const Node* ext = svc->get("extends");
    if (!ext) return *svc;
    std::string path = "services." + name + ".extends";
    std::string base_name, base_file;
    if (ext->is_scalar()) {
      base_name = ext->text;
    } else if (ext->is_map()) {
      const Node* s = ext->get("service");
      if (!s || !s->is_scalar()) return fail(tree_error(*ext, path + ".service", "a service name is required"));
      base_name = s->text;
      if (const Node* f = ext->get("file")) {
        KERN_TRY_ASSIGN(base_file, scalar_text(*f, path + ".file"));
      }
    } else {
      return fail(tree_error(*ext, path, "must be a service name or a mapping, not " + ext->kind_name()));
    }
    stack.push_back(key);
    Node base;
    if (base_file.empty()) {
      KERN_TRY_ASSIGN(base, resolve(base_name, services, file, stack));
    } else {
      std::string from = ext->file ? dir_of(*ext->file) : project_dir;
      std::string other = resolve_path(base_file, from, lookup);
      KERN_TRY_ASSIGN(const Node* others, services_of(other, *ext));
      KERN_TRY_ASSIGN(base, resolve(base_name, *others, other, stack));
      if (dir_of(other) != project_dir) rebase_paths(base, dir_of(other), lookup);
    }
    stack.pop_back();
    Node own = *svc;
    own.erase("extends");
    base.erase("extends");
    merge_tree(base, own, "services." + name);
    return base;
  }
};

std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string part; std::getline(ss, part, sep);)
    if (!part.empty()) out.push_back(part);
  return out;
}

Result<std::vector<std::string>> compose_files(const LoadOptions& o, const std::map<std::string, std::string>& environ,
                                               const std::string& cwd) {
  std::vector<std::string> files = o.files;
  if (files.empty()) {
    if (auto it = environ.find("COMPOSE_FILE"); it != environ.end() && !it->second.empty()) {
      auto sep = environ.find("COMPOSE_PATH_SEPARATOR");
      files = split_list(it->second, sep != environ.end() && !sep->second.empty() ? sep->second[0] : ':');
    }
  }
  if (files.empty()) {
    std::string dir =
        o.project_directory.empty()
            ? cwd
            : resolve_path(o.project_directory, cwd, [](const std::string&) { return std::optional<std::string>(); });
    for (const char* stem : {"compose", "docker-compose"}) {
      for (const char* ext : {".yaml", ".yml"}) {
        std::string p = dir + "/" + stem + ext;
        if (!file_exists(p)) continue;
        files.push_back(p);
        for (const char* oext : {".yaml", ".yml"}) {
          std::string ov = dir + "/" + stem + ".override" + oext;
          if (file_exists(ov)) {
            files.push_back(ov);
            break;
          }
        }
        return files;
      }
    }
    return fail(Error(ErrorKind::config, 0, "no compose file in " + dir)
                    .with_hint("write compose.yaml there, or name one with -f FILE"));
  }
  for (auto& f : files) {
    if (f == "-") return fail(ErrorKind::usage, 0, "-f -: reading a compose file from stdin is not supported by kern");
    if (f[0] != '/') f = resolve_path(f, cwd, [](const std::string&) { return std::optional<std::string>(); });
  }
  return files;
}

// Calls fn(key, value, "SECTION.KEY") for each entry of a top-level section (volumes, secrets)
// but its x- ones; the section must be a mapping (or absent).
template <typename Fn>
Result<void> each_top_entry(const Node* n, const std::string& section, Fn fn) {
  if (!n || n->is_null()) return {};
  if (!n->is_map()) return fail(tree_error(*n, section, "must be a mapping, not " + n->kind_name()));
  for (const auto& [k, v] : n->entries)
    if (k.rfind("x-", 0) != 0) KERN_TRY(fn(k, v, section + "." + k));
  return {};
}

Result<std::vector<NamedVolume>> top_volumes(const Node* n, const std::string& project,
                                             std::vector<std::string>& warnings) {
  std::vector<NamedVolume> out;
  KERN_TRY(each_top_entry(n, "volumes", [&](const std::string& k, const Node& v, const std::string& p) -> Result<void> {
    NamedVolume vol;
    vol.key = k;
    std::string explicit_name;
    if (!v.is_null() && !v.is_map()) return fail(tree_error(v, p, "must be a mapping, not " + v.kind_name()));
    for (const auto& [vk, vv] : v.entries) {
      std::string vp = p + "." + vk;
      if (vk == "name") {
        KERN_TRY_ASSIGN(explicit_name, scalar_text(vv, vp));
      } else if (vk == "external") {
        KERN_TRY_ASSIGN(vol.external, read_bool(vv, vp));
      } else if (vk == "labels") {
        Node m = Node::map();
        m.entries.emplace_back("labels", vv);
        normalize_service(m);
        const Node& lm = *m.get("labels");
        if (!lm.is_map()) return fail(tree_error(vv, vp, "must be a mapping or a list, not " + vv.kind_name()));
        for (const auto& [lk, lv] : lm.entries) {
          if (!lv.is_null() && !lv.is_scalar()) return fail(tree_error(lv, vp + "." + lk, "must be a string"));
          vol.labels.emplace_back(lk, lv.text);
        }
      } else if (vk.rfind("x-", 0) != 0) {
        warnings.push_back(vp + ": not supported by kern, ignored");
      }
    }
    vol.name = !explicit_name.empty() ? explicit_name : vol.external ? k : project + "_" + k;
    out.push_back(vol);
    return {};
  }));
  return out;
}

Result<std::vector<Secret>> top_secrets(const Node* n, const std::string& dir, const Lookup& lookup,
                                        std::vector<std::string>& warnings) {
  std::vector<Secret> out;
  KERN_TRY(each_top_entry(n, "secrets", [&](const std::string& k, const Node& v, const std::string& p) -> Result<void> {
    if (!v.is_map()) return fail(tree_error(v, p, "must be a mapping, not " + v.kind_name()));
    Secret s;
    s.key = k;
    for (const auto& [sk, sv] : v.entries) {
      std::string sp = p + "." + sk;
      if (sk == "file") {
        KERN_TRY_ASSIGN(std::string f, scalar_text(sv, sp));
        s.file = resolve_path(f, dir, lookup);
      } else if (sk == "environment") {
        KERN_TRY_ASSIGN(s.environment, scalar_text(sv, sp));
      } else if (sk == "external") {
        KERN_TRY_ASSIGN(s.external, read_bool(sv, sp));
        if (s.external) warnings.push_back(sp + ": kern has no secret store: an external secret is not carried out");
      } else if (sk != "name" && sk.rfind("x-", 0) != 0) {
        warnings.push_back(sp + ": not supported by kern, ignored");
      }
    }
    if (s.file.empty() && s.environment.empty() && !s.external)
      return fail(tree_error(v, p, "a secret needs a file or an environment variable"));
    out.push_back(s);
    return {};
  }));
  return out;
}

}  // namespace load_impl

std::string normalize_project_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || ((l == '_' || l == '-') && !out.empty())) out += l;
  }
  return out;
}

const Service* Project::find(std::string_view name) const {
  for (const auto& s : services)
    if (s.name == name) return &s;
  return nullptr;
}

Result<Project> load_project(const LoadOptions& o, const std::map<std::string, std::string>& environ) {
  using namespace load_impl;
  Project project;
  std::string cwd = current_dir();
  KERN_TRY_ASSIGN(project.files, compose_files(o, environ, cwd));
  Lookup no_env = [](const std::string&) { return std::optional<std::string>(); };
  project.working_dir =
      o.project_directory.empty() ? dir_of(project.files.front()) : resolve_path(o.project_directory, cwd, no_env);

  // The .env file feeds interpolation; the process environment wins over it.
  std::map<std::string, std::string> dotenv;
  std::string env_path = o.env_file.empty() ? project.working_dir + "/.env" : resolve_path(o.env_file, cwd, no_env);
  if (!o.env_file.empty() || file_exists(env_path)) {
    std::ifstream in(env_path, std::ios::binary);
    if (!in) return fail(Error(ErrorKind::config, errno, "open env file \"" + env_path + "\""));
    std::ostringstream ss;
    ss << in.rdbuf();
    Lookup process = [&environ](const std::string& name) -> std::optional<std::string> {
      auto it = environ.find(name);
      return it == environ.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    KERN_TRY_ASSIGN(auto lines, parse_dotenv(ss.str(), env_path, &process));
    for (auto& [k, v] : lines)
      if (v) dotenv[k] = *v;
  }
  Lookup lookup = [&environ, &dotenv](const std::string& name) -> std::optional<std::string> {
    if (auto it = environ.find(name); it != environ.end()) return it->second;
    if (auto it = dotenv.find(name); it != dotenv.end()) return it->second;
    return std::nullopt;
  };

  Node root = Node::map();
  for (const auto& f : project.files) {
    KERN_TRY_ASSIGN(Node n, load_file(f, lookup));
    if (root.entries.empty())
      root = std::move(n);
    else
      merge_tree(root, n, "");
  }

  for (const auto& [k, v] : root.entries) {
    if (k == "version")
      project.warnings.push_back("version: obsolete, ignored");
    else if (k == "networks") {
      if (v.is_map())
        for (const auto& [nk, nv] : v.entries) project.networks.push_back(nk);
      project.warnings.push_back("networks: kern runs a stack in one shared network namespace, ignored");
    } else if (k != "name" && k != "services" && k != "volumes" && k != "secrets" && k.rfind("x-", 0) != 0) {
      project.warnings.push_back(k + ": not supported by kern, ignored");
    }
  }

  std::string name = o.project_name;
  if (name.empty()) name = lookup("COMPOSE_PROJECT_NAME").value_or("");
  if (name.empty())
    if (const Node* n = root.get("name")) {
      KERN_TRY_ASSIGN(name, scalar_text(*n, "name"));
    }
  if (name.empty()) name = project.working_dir.substr(project.working_dir.rfind('/') + 1);
  project.name = normalize_project_name(name);
  if (project.name.empty())
    return fail(Error(ErrorKind::config, 0, "the project name \"" + name + "\" has no letter or digit")
                    .with_hint("name it with -p NAME"));

  KERN_TRY_ASSIGN(project.volumes, top_volumes(root.get("volumes"), project.name, project.warnings));
  KERN_TRY_ASSIGN(project.secrets, top_secrets(root.get("secrets"), project.working_dir, lookup, project.warnings));

  ServiceContext ctx;
  ctx.project_name = project.name;
  ctx.project_dir = project.working_dir;
  ctx.environment = lookup;
  ctx.warnings = &project.warnings;
  for (const auto& v : project.volumes) ctx.volume_names[v.key] = v.name;
  for (const auto& s : project.secrets) ctx.secret_keys.push_back(s.key);

  std::set<std::string> enabled(o.profiles.begin(), o.profiles.end());
  for (const auto& p : split_list(lookup("COMPOSE_PROFILES").value_or(""), ',')) enabled.insert(p);

  const Node* services = root.get("services");
  if (!services || !services->is_map() || services->entries.empty())
    return fail(tree_error(root, "services", "a compose file needs at least one service"));
  Extender extender{lookup, project.working_dir, {}};
  for (const auto& [sname, snode] : services->entries) {
    if (sname.rfind("x-", 0) == 0) continue;
    std::vector<std::string> stack;
    KERN_TRY_ASSIGN(Node full, extender.resolve(sname, *services, project.files.front(), stack));
    KERN_TRY_ASSIGN(Service svc, parse_service(sname, full, ctx));
    bool active = svc.profiles.empty() || enabled.count("*");
    for (const auto& p : svc.profiles) active = active || enabled.count(p);
    (active ? project.services : project.inactive).push_back(std::move(svc));
  }
  for (const auto* list : {&project.services, &project.inactive})
    for (const auto& svc : *list)
      for (const auto& d : svc.depends_on) {
        bool known = project.find(d.service) != nullptr;
        for (const auto& i : project.inactive) known = known || i.name == d.service;
        if (!known)
          return fail(tree_error(*services->get(svc.name), "services." + svc.name + ".depends_on",
                                 "service \"" + svc.name + "\" depends on undefined service \"" + d.service + "\""));
      }
  return project;
}

Status check_one_pod(const Project& project) {
  struct Owner {
    std::string service, what, ip;  // ip: a published port's host address, empty for all
  };
  std::map<std::string, std::vector<Owner>> box_ports, host_ports;
  auto claim = [](std::map<std::string, std::vector<Owner>>& seen, const std::string& key, const Owner& o,
                  const std::string& kind) -> Status {
    for (const Owner& had : seen[key]) {
      if (had.service == o.service || (!had.ip.empty() && !o.ip.empty() && had.ip != o.ip)) continue;
      return fail(Error(ErrorKind::config, 0,
                        "services \"" + had.service + "\" and \"" + o.service + "\" both " + kind + " " + key + " (" +
                            had.what + ", " + o.what + "): a stack runs as one pod, in one network namespace")
                      .with_hint("give one of them another port"));
    }
    seen[key].push_back(o);
    return {};
  };
  auto each_port = [](const std::string& range, const auto& fn) -> Status {
    size_t dash = range.find('-');
    int lo = std::stoi(range.substr(0, dash));
    int hi = dash == std::string::npos ? lo : std::stoi(range.substr(dash + 1));
    for (int p = lo; p <= hi; ++p) KERN_TRY(fn(std::to_string(p)));
    return {};
  };
  auto listens = [&](const Service& s, const std::string& ports, const std::string& proto, const char* what) {
    return each_port(ports, [&](const std::string& port) {
      return claim(box_ports, port + "/" + proto, {s.name, what, ""}, "listen on container port");
    });
  };
  for (const auto& s : project.services) {
    for (const auto& p : s.ports) {
      KERN_TRY(listens(s, p.target, p.protocol, "ports"));
      bool any = p.host_ip.empty() || p.host_ip == "0.0.0.0" || p.host_ip == "::";
      if (!p.published.empty())
        KERN_TRY(each_port(p.published, [&](const std::string& port) {
          return claim(host_ports, port + "/" + p.protocol, {s.name, "ports", any ? "" : p.host_ip},
                       "publish host port");
        }));
    }
    for (const auto& e : s.expose) {
      size_t slash = e.find('/');
      KERN_TRY(listens(s, e.substr(0, slash), slash == std::string::npos ? "tcp" : e.substr(slash + 1), "expose"));
    }
  }
  return {};
}

}  // namespace kern::compose
