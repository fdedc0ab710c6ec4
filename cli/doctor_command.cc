// `kern doctor`: will boxes run on this host, and what is missing, with the fix. Each check tries
// the real thing where it can (a user namespace, an overlay mount inside one) rather than
// reading a sysctl and guessing.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "cli/verb.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {

struct Check {
  std::string name;
  bool ok;
  bool required;
  std::string detail;
  std::string fix;
};

// Runs `fn` in a forked child and reports its exit status (0 = worked).
template <typename Fn>
int in_child(Fn fn) {
  pid_t p = ::fork();
  if (p < 0) return -1;
  if (p == 0) _exit(fn());
  int st = 0;
  ::waitpid(p, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

std::string read_trim(const std::string& path) {
  auto t = sys::read_file(AT_FDCWD, path, 4096);
  if (!t) return "";
  std::string s = *t;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

Result<int> run_doctor() {
  std::vector<Check> checks;
  struct utsname u;
  ::uname(&u);
  checks.push_back({"kernel", true, false, std::string(u.release), ""});

  int userns = in_child([] { return ::unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 ? 0 : errno; });
  checks.push_back({"unprivileged user namespaces", userns == 0, true,
                    userns == 0 ? "ok" : "unshare(CLONE_NEWUSER): errno " + std::to_string(userns),
                    "sysctl kernel.unprivileged_userns_clone=1; on Ubuntu also "
                    "kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile for kern)"});
  std::string maxns = read_trim("/proc/sys/user/max_user_namespaces");
  checks.push_back({"max_user_namespaces", maxns != "0", true, maxns.empty() ? "unknown" : maxns,
                    "sysctl user.max_user_namespaces=15000"});

  // The directory is made outside the namespace: an unmapped id cannot create files.
  char tmpl[] = "/tmp/kern-doctor-XXXXXX";
  std::string d = ::mkdtemp(tmpl) ? tmpl : "";
  int ovl = d.empty() ? 3 : in_child([&d] {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return 2;
    int r = 1;
    if (::mount("tmpfs", d.c_str(), "tmpfs", 0, nullptr) == 0) {
      for (const char* s : {"/l", "/u", "/w", "/m"}) ::mkdir((d + s).c_str(), 0755);
      std::string o = "lowerdir=" + d + "/l,upperdir=" + d + "/u,workdir=" + d + "/w";
      r = ::mount("overlay", (d + "/m").c_str(), "overlay", 0, o.c_str()) == 0 ? 0 : 1;
      ::umount2(d.c_str(), MNT_DETACH);
    }
    return r;
  });
  if (!d.empty()) ::rmdir(d.c_str());
  checks.push_back({"overlay in a user namespace", ovl == 0, true, ovl == 0 ? "ok" : "mount overlay refused",
                    "a kernel >= 5.11 allows overlayfs in user namespaces"});

  std::string seccomp = read_trim("/proc/sys/kernel/seccomp/actions_avail");
  checks.push_back({"seccomp", seccomp.find("kill_process") != std::string::npos, true,
                    seccomp.empty() ? "no /proc/sys/kernel/seccomp" : seccomp, "a kernel with CONFIG_SECCOMP_FILTER"});

  struct stat st;
  bool cg2 = ::stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0;
  std::string ctrl = read_trim(cg2 ? "/sys/fs/cgroup/cgroup.controllers" : "/sys/fs/cgroup/unified/cgroup.controllers");
  checks.push_back({"cgroup v2 (limits)", cg2, false,
                    cg2 ? "unified hierarchy, controllers: " + ctrl
                        : "no unified cgroup v2 hierarchy with controllers: boxes run uncapped (warned)",
                    "boot with systemd.unified_cgroup_hierarchy=1 and run under a systemd user session "
                    "(loginctl enable-linger $USER) so kern can get a delegated subtree"});

  bool newuidmap = ::access("/usr/bin/newuidmap", X_OK) == 0 && ::access("/usr/bin/newgidmap", X_OK) == 0;
  checks.push_back({"newuidmap/newgidmap (--uid-range)", newuidmap, false, newuidmap ? "present" : "missing",
                    "apt-get install uidmap; usermod --add-subuids 100000-165535 --add-subgids 100000-165535 $USER"});

  auto rt = paths::runtime_dir();
  checks.push_back({"runtime dir", rt.has_value(), true, rt ? *rt : rt.error().what(),
                    "set XDG_RUNTIME_DIR to a private directory you own"});

  bool all_required = true;
  std::string out;
  for (const auto& c : checks) {
    out += (c.ok ? "ok      " : (c.required ? "MISSING " : "limited ")) + c.name + ": " + c.detail + "\n";
    if (!c.ok) out += "        fix: " + c.fix + "\n";
    if (c.required && !c.ok) all_required = false;
  }
  out += all_required ? "boxes will run on this host\n" : "boxes will NOT run on this host until the above is fixed\n";
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return all_required ? 0 : 1;
}

void register_doctor(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("doctor", "check whether boxes will run here");
  c->callback([&ctx] { ctx.action = run_doctor; });
}

const VerbRegistration reg{90, "doctor", &register_doctor};

}  // namespace
}  // namespace kern::cli
