// Container status and state documents (see state.h). Pure.
#include "runtime/bundle/state.h"

#include <nlohmann/json.hpp>

#include "runtime/bundle/json_node.h"

namespace kern::bundle {

const char* status_name(ContainerStatus s) {
  switch (s) {
    case ContainerStatus::creating: return "creating";
    case ContainerStatus::created: return "created";
    case ContainerStatus::running: return "running";
    case ContainerStatus::stopped: return "stopped";
    case ContainerStatus::paused: return "paused";
  }
  return "?";
}

ContainerStatus observe(const ContainerRecord& r, const PidObservation& seen) {
  if (r.pid <= 0) return ContainerStatus::creating;
  if (seen.start_time == 0 || seen.start_time != r.pid_start_time) return ContainerStatus::stopped;
  if (seen.frozen) return ContainerStatus::paused;
  return r.started ? ContainerStatus::running : ContainerStatus::created;
}

namespace {
const char* verb_name(Verb v) {
  switch (v) {
    case Verb::start: return "start";
    case Verb::kill: return "kill";
    case Verb::pause: return "pause";
    case Verb::resume: return "resume";
    case Verb::exec: return "exec";
    case Verb::delete_: return "delete";
    case Verb::delete_force: return "delete --force";
  }
  return "?";
}
}  // namespace

kern::Status allowed(Verb verb, const std::string& id, ContainerStatus s) {
  bool ok = false;
  switch (verb) {
    case Verb::start: ok = s == ContainerStatus::created; break;
    // The specification lets kill act on a created or a running container; a paused one is
    // running too (its signals are delivered once it is resumed, SIGKILL at once).
    case Verb::kill:
      ok = s == ContainerStatus::created || s == ContainerStatus::running || s == ContainerStatus::paused;
      break;
    case Verb::pause: ok = s == ContainerStatus::running || s == ContainerStatus::created; break;
    case Verb::resume: ok = s == ContainerStatus::paused; break;
    // A process started in a frozen cgroup would freeze before it ran: refused, as runc does.
    // Unlike runc, not into a created container either: until `start` its process is kern
    // itself (box init, waiting to become the workload), whose executable a process joined
    // beside it could hold and, once init has exec'd, write (runc's CVE-2019-5736 class).
    case Verb::exec: ok = s == ContainerStatus::running; break;
    // A created container's process has not run the workload yet: delete ends it, as runc's
    // does (containerd's shim deletes a created container that failed to start this way).
    case Verb::delete_: ok = s == ContainerStatus::stopped || s == ContainerStatus::created; break;
    case Verb::delete_force: ok = true; break;
  }
  if (ok) return {};
  std::string msg = std::string("cannot ") + verb_name(verb) + " container \"" + id + "\": it is " + status_name(s);
  // Not a usage error: the same command line is right at another moment (runc's exit 1, too).
  if (verb == Verb::exec && s == ContainerStatus::paused)
    return fail(Error(ErrorKind::config, 0, "cannot exec in a paused container (\"" + id + "\")")
                    .with_hint("resume it first, or give exec --ignore-paused"));
  if (verb == Verb::exec && s == ContainerStatus::created)
    return fail(Error(ErrorKind::config, 0, msg).with_hint("start it first: until then its process is kern's own"));
  if (verb == Verb::delete_) return fail(Error(ErrorKind::config, 0, msg).with_hint("stop it first, or use delete --force"));
  return fail(ErrorKind::config, 0, msg);
}

std::string state_json(const ContainerRecord& r, ContainerStatus s) {
  nlohmann::json j = {{"ociVersion", kOciVersion}, {"id", r.id}, {"status", status_name(s)}, {"bundle", r.bundle}};
  // The specification: pid is REQUIRED when the status is created or running.
  // A paused container still has its process (runc reports it too).
  if (s == ContainerStatus::created || s == ContainerStatus::running || s == ContainerStatus::paused) j["pid"] = r.pid;
  j["annotations"] = r.annotations;
  return j.dump();
}

std::string record_json(const ContainerRecord& r) {
  nlohmann::json j = {{"id", r.id},         {"bundle", r.bundle},       {"pid", r.pid},
                      {"pid_start_time", r.pid_start_time}, {"started", r.started},
                      {"created", r.created}, {"cgroup", r.cgroup},     {"annotations", r.annotations}};
  if (!r.cgroups_v1.empty()) j["cgroups_v1"] = r.cgroups_v1;
  if (r.entry_ino != 0) j["entry_ino"] = r.entry_ino;
  j["start_needs_config"] = r.start_needs_config;
  j["delete_needs_config"] = r.delete_needs_config;
  return j.dump();
}

Result<ContainerRecord> parse_record(const std::string& text) {
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return fail(ErrorKind::config, 0, "container state: not a JSON document");
  JsonNode top(doc, "");
  KERN_TRY(top.object());
  ContainerRecord r;
  for (const char* k : {"id", "bundle", "pid", "pid_start_time", "started"}) KERN_TRY(require(top, k));
  KERN_TRY_ASSIGN(r.id, top.at("id").str());
  KERN_TRY_ASSIGN(r.bundle, top.at("bundle").str());
  KERN_TRY_ASSIGN(int32_t pid, top.at("pid").i32());
  if (pid < 0) return fail(top.at("pid").error("must be at least 0"));
  r.pid = pid;
  KERN_TRY_ASSIGN(r.pid_start_time, top.at("pid_start_time").u64());
  KERN_TRY_ASSIGN(r.started, top.at("started").boolean());
  KERN_TRY(get(top, "created", r.created));
  KERN_TRY(get(top, "cgroup", r.cgroup));
  KERN_TRY(get(top, "annotations", r.annotations));
  if (top.has("cgroups_v1")) KERN_TRY(get(top, "cgroups_v1", r.cgroups_v1));
  if (top.has("entry_ino")) {
    KERN_TRY_ASSIGN(r.entry_ino, top.at("entry_ino").u64());
  }
  if (top.has("start_needs_config")) {
    KERN_TRY_ASSIGN(r.start_needs_config, top.at("start_needs_config").boolean());
  }
  if (top.has("delete_needs_config")) {
    KERN_TRY_ASSIGN(r.delete_needs_config, top.at("delete_needs_config").boolean());
  }
  return r;
}

std::string init_title(const std::string& id) { return "kern-init oci:" + id; }

bool procs_list(const std::string& procs, pid_t pid) {
  std::string want = std::to_string(pid);
  for (size_t pos = 0; pos < procs.size();) {
    size_t end = procs.find('\n', pos);
    if (end == std::string::npos) end = procs.size();
    if (procs.compare(pos, end - pos, want) == 0) return true;
    pos = end + 1;
  }
  return false;
}

kern::Status check_container_id(const std::string& id) {
  if (id.empty()) return fail(ErrorKind::usage, 0, "container id: empty");
  if (id.size() > 1024) return fail(ErrorKind::usage, 0, "container id: longer than 1024 bytes");
  if (id == "." || id == "..") return fail(ErrorKind::usage, 0, "container id: \"" + id + "\" is not allowed");
  for (unsigned char ch : id) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '+' || ch == '-' || ch == '.';
    if (!ok) return fail(ErrorKind::usage, 0, "container id: only letters, digits and _+-. are allowed");
  }
  return {};
}

}  // namespace kern::bundle
