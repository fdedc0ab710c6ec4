// parse_config: config.json text -> Config (the top level, process, mounts, hooks; the "linux"
// object is read by config_linux.cc). Pure.
#include "runtime/bundle/config.h"
#include "runtime/bundle/config_parts.h"
#include "runtime/bundle/spec_names.h"
#include "runtime/caps.h"

namespace kern::bundle {

Status parse_id_mappings(const JsonNode& obj, const char* key, std::vector<IdMapping>& out) {
  if (!obj.has(key)) return {};
  JsonNode arr = obj.at(key);
  KERN_TRY(each_object(arr, {"containerID", "hostID", "size"}, [&](const JsonNode& m) -> Status {
    IdMapping id;
    KERN_TRY_ASSIGN(id.container_id, m.at("containerID").u32());
    KERN_TRY_ASSIGN(id.host_id, m.at("hostID").u32());
    KERN_TRY_ASSIGN(id.size, m.at("size").u32());
    out.push_back(id);
    return {};
  }));
  return {};
}

namespace {

Status parse_user(const JsonNode& u, ProcessUser& out) {
  KERN_TRY(u.object());
  std::optional<uint32_t> uid, gid;
  KERN_TRY(get(u, "uid", uid));
  KERN_TRY(get(u, "gid", gid));
  out.uid = uid.value_or(0);
  out.gid = gid.value_or(0);
  KERN_TRY(get(u, "umask", out.umask));
  KERN_TRY(get(u, "username", out.username));
  if (u.has("additionalGids")) {
    JsonNode a = u.at("additionalGids");
    KERN_TRY(a.array());
    for (size_t i = 0; i < a.size(); ++i) {
      KERN_TRY_ASSIGN(uint32_t g, a.at(i).u32());
      out.additional_gids.push_back(g);
    }
  }
  return {};
}

bool known_cap(const std::string& name) {
  for (int i = 0; i <= kCapNamedLast; ++i)
    if (cap_name(i) == name) return true;
  return false;
}

// One capability set: every name must be one the kernel has (the specification: a value that
// cannot be mapped to a kernel interface is an error, not something to skip).
Status parse_cap_set(const JsonNode& c, const char* key, std::vector<std::string>& out) {
  KERN_TRY(get(c, key, out));
  for (size_t i = 0; i < out.size(); ++i)
    if (!known_cap(out[i])) return fail(c.at(key).at(i).error("unknown capability \"" + out[i] + "\""));
  return {};
}

Status parse_capabilities(const JsonNode& c, Capabilities& out) {
  KERN_TRY(c.object());
  KERN_TRY(parse_cap_set(c, "bounding", out.bounding));
  KERN_TRY(parse_cap_set(c, "effective", out.effective));
  KERN_TRY(parse_cap_set(c, "inheritable", out.inheritable));
  KERN_TRY(parse_cap_set(c, "permitted", out.permitted));
  KERN_TRY(parse_cap_set(c, "ambient", out.ambient));
  return {};
}

// "1.MINOR.PATCH" with an optional "-suffix" ("1.0.2-dev"): the versions of the specification
// whose documents kern reads. Anything else is refused rather than guessed at.
bool supported_oci_version(const std::string& v) {
  size_t pos = 0;
  auto number = [&]() {
    size_t start = pos;
    while (pos < v.size() && v[pos] >= '0' && v[pos] <= '9') ++pos;
    return pos > start && pos - start <= 9;
  };
  if (v.compare(0, 2, "1.") != 0) return false;
  pos = 2;
  if (!number() || pos >= v.size() || v[pos] != '.') return false;
  ++pos;
  if (!number()) return false;
  return pos == v.size() || (v[pos] == '-' && pos + 1 < v.size());
}

Status parse_rlimits(const JsonNode& arr, std::vector<Rlimit>& out) {
  KERN_TRY(each_object(arr, {"type", "soft", "hard"}, [&](const JsonNode& r) -> Status {
    Rlimit rl;
    KERN_TRY_ASSIGN(rl.type, r.at("type").str());
    if (!one_of(rl.type, kRlimitTypes)) return fail(r.at("type").error("unknown value \"" + rl.type + "\""));
    KERN_TRY_ASSIGN(rl.soft, r.at("soft").u64());
    KERN_TRY_ASSIGN(rl.hard, r.at("hard").u64());
    for (const auto& seen : out)
      if (seen.type == rl.type) return fail(r.at("type").error(rl.type + " is given twice"));
    out.push_back(std::move(rl));
    return {};
  }));
  return {};
}

Status parse_process(const JsonNode& p, Process& out) {
  KERN_TRY(p.object());
  KERN_TRY(require(p, "cwd"));
  KERN_TRY_ASSIGN(out.cwd, p.at("cwd").str());
  if (out.cwd.empty() || out.cwd[0] != '/') return fail(p.at("cwd").error("must be an absolute path"));
  KERN_TRY(get(p, "terminal", out.terminal));
  if (p.has("consoleSize")) {
    JsonNode cs = p.at("consoleSize");
    KERN_TRY(cs.object());
    KERN_TRY(require(cs, "height"));
    KERN_TRY(require(cs, "width"));
    KERN_TRY(get(cs, "height", out.console_height));
    KERN_TRY(get(cs, "width", out.console_width));
  }
  KERN_TRY(get(p, "args", out.args));
  KERN_TRY(get(p, "commandLine", out.command_line));
  KERN_TRY(get(p, "env", out.env));
  if (p.has("user")) KERN_TRY(parse_user(p.at("user"), out.user));
  if (p.has("capabilities")) {
    Capabilities caps;
    KERN_TRY(parse_capabilities(p.at("capabilities"), caps));
    out.capabilities = std::move(caps);
  }
  if (p.has("rlimits")) KERN_TRY(parse_rlimits(p.at("rlimits"), out.rlimits));
  KERN_TRY(get(p, "noNewPrivileges", out.no_new_privileges));
  KERN_TRY(get(p, "oomScoreAdj", out.oom_score_adj));
  KERN_TRY(get(p, "apparmorProfile", out.apparmor_profile));
  KERN_TRY(get(p, "selinuxLabel", out.selinux_label));
  out.has_scheduler = p.has("scheduler");
  out.has_io_priority = p.has("ioPriority");
  out.has_exec_cpu_affinity = p.has("execCPUAffinity");
  return {};
}

Status parse_mounts(const JsonNode& arr, std::vector<Mount>& out) {
  KERN_TRY(each_object(arr, {"destination"}, [&](const JsonNode& m) -> Status {
    Mount mnt;
    KERN_TRY_ASSIGN(mnt.destination, m.at("destination").str());
    // Linux: the destination is absolute (the specification's MUST for this platform).
    if (mnt.destination.empty() || mnt.destination[0] != '/')
      return fail(m.at("destination").error("must be an absolute path, got \"" + mnt.destination + "\""));
    KERN_TRY(get(m, "type", mnt.type));
    KERN_TRY(get(m, "source", mnt.source));
    KERN_TRY(get(m, "options", mnt.options));
    KERN_TRY(parse_id_mappings(m, "uidMappings", mnt.uid_mappings));
    KERN_TRY(parse_id_mappings(m, "gidMappings", mnt.gid_mappings));
    out.push_back(std::move(mnt));
    return {};
  }));
  return {};
}

Status parse_hook_list(const JsonNode& hooks, const char* key, std::vector<Hook>& out) {
  if (!hooks.has(key)) return {};
  JsonNode arr = hooks.at(key);
  KERN_TRY(each_object(arr, {"path"}, [&](const JsonNode& h) -> Status {
    Hook hook;
    KERN_TRY_ASSIGN(hook.path, h.at("path").str());
    if (hook.path.empty() || hook.path[0] != '/')
      return fail(h.at("path").error("must be an absolute path"));
    KERN_TRY(get(h, "args", hook.args));
    KERN_TRY(get(h, "env", hook.env));
    KERN_TRY(get(h, "timeout", hook.timeout_s));
    if (hook.timeout_s && *hook.timeout_s < 1) return fail(h.at("timeout").error("must be at least 1"));
    out.push_back(std::move(hook));
    return {};
  }));
  return {};
}

Status parse_hooks(const JsonNode& h, Hooks& out) {
  KERN_TRY(h.object());
  KERN_TRY(parse_hook_list(h, "prestart", out.prestart));
  KERN_TRY(parse_hook_list(h, "createRuntime", out.create_runtime));
  KERN_TRY(parse_hook_list(h, "createContainer", out.create_container));
  KERN_TRY(parse_hook_list(h, "startContainer", out.start_container));
  KERN_TRY(parse_hook_list(h, "poststart", out.poststart));
  KERN_TRY(parse_hook_list(h, "poststop", out.poststop));
  return {};
}

}  // namespace

Result<Config> parse_config(const std::string& text) {
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return fail(ErrorKind::config, 0, "not a JSON document");
  JsonNode top(doc, "");
  KERN_TRY(top.object());
  Config c;
  KERN_TRY(require(top, "ociVersion"));
  KERN_TRY_ASSIGN(c.oci_version, top.at("ociVersion").str());
  if (!supported_oci_version(c.oci_version))
    return fail(top.at("ociVersion").error("expected a version 1.x.y of the runtime specification, got \"" +
                                           c.oci_version + "\""));
  if (top.has("root")) {
    JsonNode r = top.at("root");
    KERN_TRY(r.object());
    KERN_TRY(require(r, "path"));
    KERN_TRY_ASSIGN(c.root_path, r.at("path").str());
    KERN_TRY(get(r, "readonly", c.root_readonly));
    c.has_root = true;
  }
  if (top.has("process")) {
    Process p;
    KERN_TRY(parse_process(top.at("process"), p));
    c.process = std::move(p);
  }
  KERN_TRY(get(top, "hostname", c.hostname));
  KERN_TRY(get(top, "domainname", c.domainname));
  if (top.has("mounts")) KERN_TRY(parse_mounts(top.at("mounts"), c.mounts));
  if (top.has("hooks")) KERN_TRY(parse_hooks(top.at("hooks"), c.hooks));
  KERN_TRY(get(top, "annotations", c.annotations));
  if (top.has("linux")) {
    Linux l;
    KERN_TRY(parse_linux(top.at("linux"), l));
    c.linux_config = std::move(l);
  }
  return c;
}

Result<Process> parse_process_document(const std::string& text) {
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return fail(ErrorKind::config, 0, "process: not a JSON document");
  Process p;
  KERN_TRY(parse_process(JsonNode(doc, "process"), p));
  return p;
}

}  // namespace kern::bundle
