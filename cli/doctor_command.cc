// `kern doctor [--json]`: will boxes run on this host, and what is missing, with the fix. Each
// check tries the real thing where it can (a user namespace, an overlay mount inside one) rather
// than reading a sysctl and guessing.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli/net_flags.h"
#include "cli/verb.h"
#include "runtime/box_spec.h"
#include "runtime/exit_status.h"
#include "runtime/box/mount_exec.h"
#include "runtime/box/mount_ops.h"
#include "runtime/mount_plan.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/syscall.h"
#include "runtime/userns.h"

namespace kern::cli {
namespace {
namespace doctor_verb {

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
  return exit_code_from_wait_status(st);
}

std::string read_trim(const std::string& path) {
  auto t = sys::read_file(AT_FDCWD, path, 4096);
  if (!t) return "";
  std::string s = *t;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

struct OverlayProbe {
  bool ok = false;
  std::string detail;
};

// A box's root, built the way a box builds it: a user namespace with the id map a box gets
// (written by the parent, write_id_maps), then the mount plan's own first steps (private
// propagation, the scratch tmpfs, the overlay root with a read-only lower) through the same
// executor and MountOps a box uses, so that doctor and boxes cannot disagree on the options.
// The lower sits where images are unpacked (the store, else /tmp).
OverlayProbe probe_overlay_root() {
  std::string parent = paths::cache_dir();
  struct stat st;
  if (parent.empty() || ::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) parent = "/tmp";
  std::string tmpl = parent + "/kern-doctor-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return {false, "mkdtemp \"" + tmpl + "\": " + errno_name(errno)};
  std::string base = tmpl;
  // Made outside the namespace: an unmapped id cannot create files.
  ::mkdir((base + "/lower").c_str(), 0755);
  ::mkdir((base + "/scratch").c_str(), 0700);
  (void)sys::write_file(AT_FDCWD, base + "/lower/seen", "lower\n", 0644);

  BoxSpec spec;
  spec.lower_dirs = {base + "/lower"};
  std::vector<MountStep> steps;
  for (const auto& step : build_mount_plan(spec)) {
    steps.push_back(step);
    if (step.kind == MountStepKind::overlay_root) break;
  }
  OverlayProbe out{false, "could not run the probe"};
  int go[2], report[2];
  if (::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(report, O_CLOEXEC) != 0) {
    (void)sys::remove_tree(AT_FDCWD, base);
    return {false, std::string("pipe2: ") + errno_name(errno)};
  }
  pid_t p = ::fork();
  if (p == 0) {
    // The probe's child: what a box's first process does before pivot_root.
    ::close(go[1]);
    ::close(report[0]);
    std::string msg;
    char c;
    // First byte: U (in the new namespaces, waiting for the map) or F (failed; text follows).
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
      msg = "Funshare(CLONE_NEWUSER|CLONE_NEWNS): " + errno_name(errno);
    } else if (::write(report[1], "U", 1) != 1 || ::read(go[0], &c, 1) != 1 || c != 'm') {
      msg = "the id map was not written";
    } else {
      MountContext ctx{base + "/scratch", nullptr, nullptr};
      MountFailure f;
      if (!execute_mount_plan(steps, ctx, real_mount_ops(), &f))
        msg = (f.step ? describe_step(*f.step) + ": " : std::string()) + f.what + ": " + errno_name(f.err);
      else if (::access((base + "/scratch/root/seen").c_str(), F_OK) != 0)
        msg = "the overlay root does not show its lower layer";
      else
        msg = "ok";
    }
    (void)!::write(report[1], msg.data(), msg.size());
    _exit(0);
  }
  ::close(go[0]);
  ::close(report[1]);
  if (p > 0) {
    char c = 0;
    if (::read(report[0], &c, 1) == 1 && c == 'U') {
      auto maps = write_id_maps(p, ::getuid(), ::getgid(), false);
      (void)!::write(go[1], maps ? "m" : "x", 1);
      if (!maps) out.detail = maps.error().what();
    }
    ::close(go[1]);
    auto text = sys::read_all(report[0], 4096, "doctor's overlay probe");
    ::waitpid(p, nullptr, 0);
    if (text && !text->empty()) out = {*text == "ok", *text == "ok" ? "ok (the overlay root a box gets)" : *text};
  } else {
    ::close(go[1]);
    out.detail = std::string("fork: ") + errno_name(errno);
  }
  ::close(report[0]);
  (void)sys::remove_tree(AT_FDCWD, base);
  return out;
}

bool g_json = false;

const char* status_of(const Check& c) { return c.ok ? "ok" : c.required ? "missing" : "limited"; }

std::string doctor_text(const std::vector<Check>& checks, bool all_required) {
  std::string out;
  for (const auto& c : checks) {
    out += (c.ok ? "ok      " : (c.required ? "MISSING " : "limited ")) + c.name + ": " + c.detail + "\n";
    if (!c.ok) out += "        fix: " + c.fix + "\n";
  }
  out += all_required ? "boxes will run on this host\n" : "boxes will NOT run on this host until the above is fixed\n";
  return out;
}

// The same facts as the text: each check with its status ("ok", "missing": boxes cannot run,
// "limited": they run with less), what was seen, the fix when it failed; and the verdict.
std::string doctor_json(const std::vector<Check>& checks, bool all_required) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& c : checks)
    arr.push_back({{"name", c.name},
                   {"status", status_of(c)},
                   {"ok", c.ok},
                   {"required", c.required},
                   {"detail", c.detail},
                   {"fix", c.ok ? nlohmann::json(nullptr) : nlohmann::json(c.fix)}});
  nlohmann::json j{{"checks", std::move(arr)}, {"boxes_will_run", all_required}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
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

  OverlayProbe ovl = probe_overlay_root();
  checks.push_back({"overlay in a user namespace", ovl.ok, true, ovl.detail,
                    "a kernel >= 5.11 allows overlayfs in user namespaces (with userxattr on a tmpfs upper)"});

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

  // Every network mode a box can have, and what each needs of this host.
  int netns = in_child([] { return ::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 ? 0 : errno; });
  std::string netns_seen = netns == 0 ? "ok" : "unshare(CLONE_NEWUSER|CLONE_NEWNET): " + errno_words(netns);
  checks.push_back({"--net none (the default, a network namespace with loopback only)", netns == 0, true, netns_seen,
                    "a kernel with CONFIG_NET_NS"});
  checks.push_back({"--net host", true, false, "the host's own network: nothing to check", ""});
  checks.push_back({"--egress-allow (kern's own relay and proxy)", netns == 0, false,
                    netns == 0 ? "ok (they need the box's network namespace and no other program)" : netns_seen,
                    "a kernel with CONFIG_NET_NS"});
  std::string pasta = find_on_path("pasta");
  checks.push_back({"--net private (pasta)", !pasta.empty(), false, pasta.empty() ? "pasta is not on $PATH" : pasta,
                    "apt-get install passt"});
  std::string tun = tun_problem();
  checks.push_back({"--net private (/dev/net/tun)", tun.empty(), false,
                    tun.empty() ? "ok (opened as you, as pasta opens it in the box's namespace)" : tun, tun_fix()});

  auto rt = paths::runtime_dir();
  checks.push_back({"runtime dir", rt.has_value(), true, rt ? *rt : rt.error().what(),
                    "set XDG_RUNTIME_DIR to a private directory you own"});

  bool all_required = true;
  for (const auto& c : checks)
    if (c.required && !c.ok) all_required = false;
  KERN_TRY(sys::write_all(STDOUT_FILENO, g_json ? doctor_json(checks, all_required) : doctor_text(checks, all_required),
                          "stdout"));
  return all_required ? 0 : 1;
}

void register_doctor(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("doctor", "check whether boxes will run here");
  c->add_flag("--json", g_json, "one JSON object: the checks and the verdict");
  c->callback([&ctx] { ctx.action = run_doctor; });
}

const VerbRegistration reg{90, "doctor", &register_doctor};

}  // namespace doctor_verb
}  // namespace
}  // namespace kern::cli
