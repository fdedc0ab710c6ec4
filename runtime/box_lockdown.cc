// The exec lockdown record; see box_lockdown.h. Launcher side (publish, the destructor) and the
// exec verb (read_lockdown); the JSON round trip is pure.
#include "runtime/box_lockdown.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <nlohmann/json.hpp>

#include "runtime/json_bytes.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/proc_stat.h"
#include "runtime/sys/syscall.h"

namespace kern {
namespace {

// Every mode kern compiles a program for; a plan's program is recognised among them.
constexpr SeccompMode kSeccompModes[] = {SeccompMode::allowlist, SeccompMode::denylist};

constexpr unsigned long long kNamespaceFlags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
                                               CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWCGROUP;

Error bad_record(const std::string& why) { return Error(ErrorKind::internal, EPROTO, "lockdown record: " + why); }

}  // namespace

Result<BoxLockdown> lockdown_from_plan(const LaunchPlan& plan, pid_t init_pid, uint64_t init_start) {
  BoxLockdown l;
  bool known = false;
  for (SeccompMode m : kSeccompModes) {
    SeccompProgram p = seccomp_program(m);
    if (p.filter == plan.seccomp.filter && p.len == plan.seccomp.len) {
      l.seccomp = m;
      known = true;
    }
  }
  if (!known) return fail(bad_record("the box's seccomp program is not one kern exec can load"));
  l.init_pid = init_pid;
  l.init_start = init_start;
  // A pod's box is in the pod's user, network (ipc, uts) namespaces, which kern exec joins too.
  unsigned long long joined = plan.join_holder > 0 ? CLONE_NEWUSER | static_cast<unsigned long long>(plan.join_holder_ns) : 0;
  l.namespaces = (plan.clone_flags | joined) & kNamespaceFlags;
  l.caps_keep = plan.exec.creds.caps.bounding;
  l.env = plan.exec.env;
  l.cwd = plan.exec.cwd;
  l.uid = plan.exec.creds.uid;
  l.gid = plan.exec.creds.gid;
  l.user_set = plan.exec.creds.switch_ids;
  l.apparmor_exec = plan.exec.apparmor_exec;
  l.rlimits = plan.exec.rlimits;
  return l;
}

std::string lockdown_to_json(const BoxLockdown& l) {
  nlohmann::json j = {{"init_pid", l.init_pid},   {"init_start", l.init_start},
                      {"namespaces", l.namespaces}, {"caps_keep", l.caps_keep},
                      {"seccomp", seccomp_mode_name(l.seccomp)},
                      {"env", nlohmann::json::array()}, {"cwd", json_of_bytes(l.cwd)},
                      {"uid", l.uid},             {"gid", l.gid},
                      {"user_set", l.user_set}};
  for (const auto& e : l.env) j["env"].push_back(json_of_bytes(e));
  if (!l.apparmor_exec.empty()) j["apparmor_exec"] = json_of_bytes(l.apparmor_exec);
  for (const auto& r : l.rlimits) j["rlimits"].push_back({r.resource, r.soft, r.hard, r.name});
  return j.dump();
}

Result<BoxLockdown> lockdown_from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail(bad_record("not a JSON object"));
  const char* uints[] = {"init_pid", "init_start", "namespaces", "caps_keep", "uid", "gid"};
  for (const char* k : uints)
    if (!j.contains(k) || !j[k].is_number_unsigned()) return fail(bad_record(std::string("no number \"") + k + "\""));
  if (!j.contains("seccomp") || !j["seccomp"].is_string()) return fail(bad_record("no \"seccomp\""));
  if (!j.contains("cwd")) return fail(bad_record("no \"cwd\""));
  if (!j.contains("user_set") || !j["user_set"].is_boolean()) return fail(bad_record("no \"user_set\""));
  if (!j.contains("env") || !j["env"].is_array()) return fail(bad_record("no \"env\""));
  BoxLockdown l;
  for (const auto& e : j["env"]) {
    auto kv = bytes_of_json(e);
    if (!kv) return fail(bad_record("an \"env\" entry is not a string"));
    l.env.push_back(std::move(*kv));
  }
  std::string mode = j["seccomp"].get<std::string>();
  if (mode.empty()) return fail(bad_record("empty \"seccomp\""));
  auto m = parse_seccomp_env(mode.c_str());
  if (!m) return fail(bad_record("unknown seccomp mode \"" + mode + "\""));
  l.seccomp = *m;
  uint64_t pid = j["init_pid"].get<uint64_t>();
  if (pid == 0 || pid > 0x3fffffff) return fail(bad_record("init_pid out of range"));
  l.init_pid = static_cast<pid_t>(pid);
  l.init_start = j["init_start"].get<uint64_t>();
  l.namespaces = j["namespaces"].get<unsigned long long>();
  if ((l.namespaces & ~kNamespaceFlags) != 0) return fail(bad_record("unknown namespace bits"));
  l.caps_keep = j["caps_keep"].get<uint64_t>();
  uint64_t uid = j["uid"].get<uint64_t>(), gid = j["gid"].get<uint64_t>();
  if (uid > 0xfffffffeu || gid > 0xfffffffeu) return fail(bad_record("uid or gid out of range"));
  l.uid = static_cast<uid_t>(uid);
  l.gid = static_cast<gid_t>(gid);
  auto cwd = bytes_of_json(j["cwd"]);
  if (!cwd) return fail(bad_record("\"cwd\" is not a string"));
  l.cwd = std::move(*cwd);
  if (l.cwd.empty() || l.cwd[0] != '/') return fail(bad_record("cwd is not absolute"));
  l.user_set = j["user_set"].get<bool>();
  if (j.contains("apparmor_exec")) {
    auto exec = bytes_of_json(j["apparmor_exec"]);
    if (!exec) return fail(bad_record("\"apparmor_exec\" is not a string"));
    l.apparmor_exec = std::move(*exec);
    if (l.apparmor_exec.rfind("exec ", 0) != 0 || l.apparmor_exec.size() == 5)
      return fail(bad_record("\"apparmor_exec\" is not an exec request"));
  }
  if (j.contains("rlimits")) {
    if (!j["rlimits"].is_array()) return fail(bad_record("\"rlimits\" is not an array"));
    for (const auto& r : j["rlimits"]) {
      if (!r.is_array() || r.size() != 4 || !r[0].is_number_unsigned() || !r[1].is_number_unsigned() ||
          !r[2].is_number_unsigned() || !r[3].is_string() || r[0].get<uint64_t>() >= RLIM_NLIMITS)
        return fail(bad_record("an \"rlimits\" entry is not [resource, soft, hard, name]"));
      l.rlimits.push_back({r[0].get<int>(), r[1].get<uint64_t>(), r[2].get<uint64_t>(), r[3].get<std::string>()});
    }
  }
  return l;
}

std::string lockdown_path(const std::string& runtime_dir, const std::string& name) {
  return runtime_dir + "/lockdown/" + name;
}

Result<BoxLockdown> read_lockdown(const std::string& runtime_dir, const std::string& name) {
  std::string path = lockdown_path(runtime_dir, name);
  auto text = sys::read_file(AT_FDCWD, path, 4 << 20);
  if (!text) {
    if (text.error().sys_errno() == ENOENT)
      return fail(Error(ErrorKind::config, 0, "box \"" + name + "\" keeps no lockdown record for kern exec")
                      .with_hint("warm kernels cannot be joined; a box started by an older kern neither"));
    return fail(std::move(text).error());
  }
  auto l = lockdown_from_json(*text);
  if (!l) return fail(std::move(l).error().with_context("reading \"" + path + "\""));
  return l;
}

Result<LockdownRecord> LockdownRecord::publish(const std::string& runtime_dir, const LaunchPlan& plan,
                                               pid_t init_pid) {
  KERN_TRY_ASSIGN(BoxLockdown l, lockdown_from_plan(plan, init_pid, sys::process_start_time(init_pid)));
  std::string dir = runtime_dir + "/lockdown";
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return fail_errno("mkdir \"" + dir + "\"");
  std::string path = lockdown_path(runtime_dir, plan.name);
  // Written whole under a temporary name, then renamed over any stale record: a reader sees
  // either the old record or the complete new one.
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  if (auto w = sys::write_file(AT_FDCWD, tmp, lockdown_to_json(l) + "\n", 0600); !w) {
    ::unlink(tmp.c_str());  // a full runtime dir: nothing half-written stays
    return fail(std::move(w).error());
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return fail(ErrorKind::setup, err, "rename \"" + tmp + "\"");
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return fail_errno("stat \"" + path + "\"");
  return LockdownRecord(path, st.st_ino);
}

LockdownRecord::~LockdownRecord() {
  if (path_.empty()) return;
  struct stat st;
  if (::stat(path_.c_str(), &st) == 0 && st.st_ino == ino_) ::unlink(path_.c_str());
}

Status LockdownRecord::rename_to(const std::string& runtime_dir, const std::string& name) {
  std::string to = lockdown_path(runtime_dir, name);
  if (::rename(path_.c_str(), to.c_str()) != 0) return fail_errno("rename \"" + path_ + "\" to \"" + to + "\"");
  path_ = to;
  return {};
}

void reap_stale_lockdowns(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    std::string path = dir + "/" + n;
    auto fd = sys::open_at(AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (!fd) continue;
    struct stat st;
    if (::fstat(fd->get(), &st) != 0) continue;
    auto text = sys::read_all(fd->get(), 4 << 20, path);
    bool stale = true;
    if (n.find(".tmp-") != std::string::npos) {
      stale = ::time(nullptr) - st.st_mtime > 60;  // a publish that died half-way
    } else if (text) {
      auto l = lockdown_from_json(*text);
      stale = !l || sys::process_start_time(l->init_pid) != l->init_start;
    }
    // Only the file that was read: a record published again under that name meanwhile is a new
    // file (publish renames), and stays.
    struct stat now;
    if (stale && ::stat(path.c_str(), &now) == 0 && now.st_ino == st.st_ino) ::unlink(path.c_str());
  }
  ::closedir(d);
}

}  // namespace kern
