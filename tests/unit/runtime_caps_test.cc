// Capability names, the default and always-dropped sets, --cap-drop/--cap-add resolution (with
// Docker's order), listing; and the one credential step (apply_credentials_raw) run for real in a
// child inside a new user namespace with the credentials of each translator (kern box's
// box_credentials, the OCI mode's oci_exec_plan), read back from /proc/self/status, the
// parent-death signal it must put back after the id switch included.
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "test_require.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "runtime/bundle/config.h"
#include "runtime/bundle/oci_plan.h"
#include "runtime/caps.h"

namespace kern {
namespace {

uint64_t bit(int cap) { return uint64_t{1} << cap; }

constexpr int kChown = 0, kDacOverride = 1, kFowner = 3, kFsetid = 4, kKill = 5, kSetgid = 6,
              kSetuid = 7, kSetpcap = 8, kNetBind = 10, kNetAdmin = 12, kNetRaw = 13,
              kSysModule = 16, kSysRawio = 17, kSysChroot = 18, kSysPtrace = 19, kSysAdmin = 21,
              kSysBoot = 22, kSysNice = 23, kSysTime = 25, kMknod = 27, kAuditWrite = 29,
              kSetfcap = 31, kMacOverride = 32, kMacAdmin = 33, kSyslog = 34, kPerfmon = 38,
              kBpf = 39;

// --- Names ---------------------------------------------------------------------------------

TEST(Caps, NamesWithOrWithoutPrefixAnyCase) {
  EXPECT_EQ(*parse_cap("CHOWN"), bit(kChown));
  EXPECT_EQ(*parse_cap("CAP_CHOWN"), bit(kChown));
  EXPECT_EQ(*parse_cap("cap_chown"), bit(kChown));
  EXPECT_EQ(*parse_cap("Net_Raw"), bit(kNetRaw));
  EXPECT_EQ(*parse_cap("cAp_NeT_bInD_sErViCe"), bit(kNetBind));
  EXPECT_EQ(*parse_cap("checkpoint_restore"), bit(kCapNamedLast));
  EXPECT_EQ(cap_name(kChown), "CAP_CHOWN");
  EXPECT_EQ(cap_name(kCapNamedLast), "CAP_CHECKPOINT_RESTORE");
  EXPECT_EQ(cap_name(kCapNamedLast + 1), "");
  EXPECT_EQ(cap_name(-1), "");
  // Every name round-trips.
  for (int cap = 0; cap <= kCapNamedLast; ++cap)
    EXPECT_EQ(*parse_cap(cap_name(cap)), bit(cap)) << cap_name(cap);
}

TEST(Caps, AllMeansEveryKnownCapability) {
  EXPECT_EQ(*parse_cap("ALL"), all_caps());
  EXPECT_EQ(*parse_cap("all"), all_caps());
  EXPECT_EQ(all_caps(), (bit(kCapNamedLast) << 1) - 1);
}

TEST(Caps, UnknownNameIsAUsageErrorNamingIt) {
  for (const char* bad : {"FOO", "CAP_FOO", "", "CAP_", "chown ", "CAP_ALL", "SYS-ADMIN", "0"}) {
    auto r = parse_cap(bad);
    ASSERT_FALSE(r) << "'" << bad << "'";
    EXPECT_EQ(r.error().kind(), ErrorKind::usage);
    EXPECT_NE(r.error().what().find(std::string("\"") + bad + "\""), std::string::npos) << r.error().what();
  }
}

// --- Sets ----------------------------------------------------------------------------------

TEST(Caps, DefaultIsDockersSet) {
  uint64_t want = bit(kChown) | bit(kDacOverride) | bit(kFsetid) | bit(kFowner) | bit(kMknod) |
                  bit(kNetRaw) | bit(kSetgid) | bit(kSetuid) | bit(kSetfcap) | bit(kSetpcap) |
                  bit(kNetBind) | bit(kSysChroot) | bit(kKill) | bit(kAuditWrite);
  EXPECT_EQ(default_caps(), want) << cap_list(default_caps());
  EXPECT_EQ(default_caps() & always_dropped_caps(), 0u);
}

TEST(Caps, AlwaysDroppedCoversTheDangerousOnes) {
  for (int cap : {kSysAdmin, kSysModule, kSysRawio, kSysPtrace, kSysBoot, kSysTime, kMacAdmin,
                  kMacOverride, kBpf, kPerfmon, kSyslog, kNetAdmin})
    EXPECT_TRUE(always_dropped_caps() & bit(cap)) << cap_name(cap);
}

TEST(Caps, ListIsNumericOrderOrNone) {
  EXPECT_EQ(cap_list(0), "none");
  EXPECT_EQ(cap_list(bit(kKill) | bit(kChown)), "CAP_CHOWN,CAP_KILL");
  EXPECT_EQ(cap_list(bit(41)), "CAP_41");
}

// --- Resolution ----------------------------------------------------------------------------

Result<uint64_t> resolve(std::vector<std::string> drop, std::vector<std::string> add) {
  return resolve_caps(drop, add);
}

TEST(CapsResolve, NoFlagsGiveTheDefault) { EXPECT_EQ(*resolve({}, {}), default_caps()); }

TEST(CapsResolve, DropThenAdd) {
  EXPECT_EQ(*resolve({"CHOWN"}, {}), default_caps() & ~bit(kChown));
  EXPECT_EQ(*resolve({}, {"SYS_NICE"}), default_caps() | bit(kSysNice));
  // An add wins over a drop of the same capability, whatever the order on the command line.
  EXPECT_EQ(*resolve({"CHOWN"}, {"chown"}), default_caps());
  EXPECT_EQ(*resolve({"chown", "KILL"}, {"CAP_SYS_NICE"}),
            (default_caps() & ~bit(kChown) & ~bit(kKill)) | bit(kSysNice));
}

TEST(CapsResolve, DropAllKeepsOnlyTheAdds) {
  EXPECT_EQ(*resolve({"ALL"}, {}), 0u);
  EXPECT_EQ(*resolve({"all"}, {"NET_RAW", "SYS_NICE"}), bit(kNetRaw) | bit(kSysNice));
  // Other drops next to ALL change nothing.
  EXPECT_EQ(*resolve({"CHOWN", "ALL"}, {"CHOWN"}), bit(kChown));
}

TEST(CapsResolve, AddAllKeepsEverythingButTheDropsAndTheAlwaysDropped) {
  EXPECT_EQ(*resolve({}, {"ALL"}), all_caps() & ~always_dropped_caps());
  EXPECT_EQ(*resolve({"CHOWN"}, {"ALL"}), all_caps() & ~always_dropped_caps() & ~bit(kChown));
  // Docker: --cap-add ALL wins over --cap-drop ALL.
  EXPECT_EQ(*resolve({"ALL"}, {"ALL"}), all_caps() & ~always_dropped_caps());
}

TEST(CapsResolve, AddingAnAlwaysDroppedCapabilityIsRefused) {
  for (const char* name : {"SYS_ADMIN", "cap_sys_admin", "NET_ADMIN", "bpf", "SYS_PTRACE", "CAP_SYSLOG"}) {
    auto r = resolve({}, {name});
    ASSERT_FALSE(r) << name;
    EXPECT_EQ(r.error().kind(), ErrorKind::usage);
    EXPECT_NE(r.error().what().find("always dropped"), std::string::npos) << r.error().what();
    EXPECT_NE(r.error().what().find("--cap-add"), std::string::npos) << r.error().what();
  }
  auto r = resolve({"ALL"}, {"NET_RAW", "SYS_ADMIN"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what().find("CAP_SYS_ADMIN"), std::string::npos) << r.error().what();
  // Dropping one is allowed (it changes nothing).
  EXPECT_EQ(*resolve({"SYS_ADMIN"}, {}), default_caps());
}

TEST(CapsResolve, UnknownNameNamesTheFlagAndTheWord) {
  auto d = resolve({"CHOWN", "FROB"}, {});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().kind(), ErrorKind::usage);
  EXPECT_NE(d.error().what().find("--cap-drop"), std::string::npos) << d.error().what();
  EXPECT_NE(d.error().what().find("\"FROB\""), std::string::npos) << d.error().what();
  auto a = resolve({}, {"CAP_WIBBLE"});
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().what().find("--cap-add"), std::string::npos) << a.error().what();
  EXPECT_NE(a.error().what().find("\"CAP_WIBBLE\""), std::string::npos) << a.error().what();
}

TEST(Caps, ReadLastCapMatchesTheKernel) {
  std::ifstream f("/proc/sys/kernel/cap_last_cap");
  int want = -1;
  if (!(f >> want)) GTEST_SKIP() << "/proc/sys/kernel/cap_last_cap is not readable here";
  EXPECT_EQ(read_last_cap(), want);
  EXPECT_GE(read_last_cap(), 36);
}

// --- The child side, for real ----------------------------------------------------------------

struct ChildResult {
  bool skipped = false;
  std::string skip_reason;
  int rc = -1;
  std::map<std::string, std::string> status;  // "CapEff" -> "00000000a80425fb", "Uid" -> ...
};

bool write_file(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// Forks a child that enters a new user namespace (the parent writes its id maps: the caller's
// own uid/gid as 0, or, for root, 65536 ids), sets a parent-death signal, runs
// apply_credentials_raw and reports its return value, the parent-death signal after it and
// /proc/self/status.
ChildResult apply_in_userns(const Credentials& creds, bool want_range) {
  ChildResult res;
  if (want_range && geteuid() != 0) {
    res.skipped = true;
    res.skip_reason = "switching to a non-zero uid needs a mapped id range, which only root can write here";
    return res;
  }
  int to_parent[2], to_child[2];
  if (pipe(to_parent) != 0 || pipe(to_child) != 0) {
    res.skipped = true;
    res.skip_reason = "pipe failed";
    return res;
  }
  int last_cap = read_last_cap();
  pid_t pid = fork();
  if (pid == 0) {
    close(to_parent[0]);
    close(to_child[1]);
    char ok = unshare(CLONE_NEWUSER) == 0 ? 'u' : 'e';
    int err = errno;
    if (write(to_parent[1], &ok, 1) != 1 || ok != 'u') {
      if (write(to_parent[1], &err, sizeof err) < 0) _exit(3);
      _exit(2);
    }
    char go;
    if (read(to_child[0], &go, 1) != 1 || go != 'g') _exit(4);
    prctl(PR_SET_PDEATHSIG, SIGUSR2, 0, 0, 0);
    int rc = apply_credentials_raw(creds, last_cap);
    int pdeathsig = 0;
    prctl(PR_GET_PDEATHSIG, &pdeathsig, 0, 0, 0);
    std::string out = std::to_string(rc) + "\nPdeathSig:\t" + std::to_string(pdeathsig) + "\n";
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    char buf[8192];
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<size_t>(n));
    if (write(to_parent[1], out.data(), out.size()) < 0) _exit(5);
    _exit(0);
  }
  close(to_parent[1]);
  close(to_child[0]);
  char ok = 0;
  if (read(to_parent[0], &ok, 1) != 1 || ok != 'u') {
    int err = 0;
    if (read(to_parent[0], &err, sizeof err) < 0) err = 0;
    waitpid(pid, nullptr, 0);
    res.skipped = true;
    res.skip_reason = std::string("unshare(CLONE_NEWUSER): ") + std::strerror(err) +
                      " (unprivileged user namespaces unavailable)";
    return res;
  }
  std::string proc = "/proc/" + std::to_string(pid);
  bool mapped;
  if (want_range) {
    mapped = write_file(proc + "/uid_map", "0 100000 65536\n") && write_file(proc + "/gid_map", "0 100000 65536\n");
  } else {
    mapped = write_file(proc + "/setgroups", "deny") &&
             write_file(proc + "/uid_map", "0 " + std::to_string(geteuid()) + " 1\n") &&
             write_file(proc + "/gid_map", "0 " + std::to_string(getegid()) + " 1\n");
  }
  EXPECT_TRUE(mapped) << "writing the id maps of " << pid << ": " << std::strerror(errno);
  char go = 'g';
  EXPECT_EQ(write(to_child[1], &go, 1), 1);
  close(to_child[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(to_parent[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(to_parent[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << "child status " << wstatus;
  std::istringstream in(text);
  std::string line;
  if (std::getline(in, line)) res.rc = std::stoi(line);
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    res.status[line.substr(0, colon)] = value;
  }
  return res;
}

uint64_t hex(const std::string& s) { return std::stoull(s, nullptr, 16); }

TEST(CapsApply, RootKeepsExactlyTheKeptSetInEverySetButInheritableAndAmbient) {
  uint64_t keep = default_caps() | bit(kSysNice);
  ChildResult r = apply_in_userns(box_credentials(0, 0, false, keep), false);
  if (r.skipped) KERN_SKIP_UNLESS_REQUIRED("userns", r.skip_reason);
  ASSERT_EQ(r.rc, 0) << std::strerror(r.rc);
  EXPECT_EQ(hex(r.status["CapEff"]), keep);
  EXPECT_EQ(hex(r.status["CapPrm"]), keep);
  EXPECT_EQ(hex(r.status["CapInh"]), 0u);  // runc's CVE-2022-29162 class
  EXPECT_EQ(hex(r.status["CapBnd"]), keep);
  EXPECT_EQ(hex(r.status["CapAmb"]), 0u);
  EXPECT_EQ(r.status["NoNewPrivs"], "0");  // that is install_seccomp_raw's job
}

TEST(CapsApply, DropAllLeavesEverySetEmpty) {
  ChildResult r = apply_in_userns(box_credentials(0, 0, false, 0), false);
  if (r.skipped) KERN_SKIP_UNLESS_REQUIRED("userns", r.skip_reason);
  ASSERT_EQ(r.rc, 0) << std::strerror(r.rc);
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"})
    EXPECT_EQ(hex(r.status[set]), 0u) << set << " = " << r.status[set];
}

TEST(CapsApply, AlwaysDroppedAreNeverKeptEvenIfAsked) {
  ChildResult r = apply_in_userns(box_credentials(0, 0, false, default_caps() | bit(kSysAdmin) | bit(kNetAdmin)), false);
  if (r.skipped) KERN_SKIP_UNLESS_REQUIRED("userns", r.skip_reason);
  ASSERT_EQ(r.rc, 0) << std::strerror(r.rc);
  EXPECT_EQ(hex(r.status["CapEff"]), default_caps());
  EXPECT_EQ(hex(r.status["CapBnd"]), default_caps());
}

TEST(CapsApply, NonRootUidEndsWithNoCapabilities) {
  ChildResult r = apply_in_userns(box_credentials(1000, 1000, true, default_caps()), true);
  if (r.skipped) KERN_SKIP_UNLESS_REQUIRED("userns", r.skip_reason);
  ASSERT_EQ(r.rc, 0) << std::strerror(r.rc);
  EXPECT_EQ(r.status["Uid"].substr(0, 4), "1000") << r.status["Uid"];
  EXPECT_EQ(r.status["Gid"].substr(0, 4), "1000") << r.status["Gid"];
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapAmb"})
    EXPECT_EQ(hex(r.status[set]), 0u) << set << " = " << r.status[set];
  // The bounding set still says what the box allows.
  EXPECT_EQ(hex(r.status["CapBnd"]), default_caps());
  EXPECT_EQ(r.status["Groups"], "");
  // The id change would have cleared the parent-death signal; it is kept.
  EXPECT_EQ(r.status["PdeathSig"], std::to_string(SIGUSR2));
}

TEST(CapsApply, SwitchingToUidZeroKeepsTheSet) {
  ChildResult r = apply_in_userns(box_credentials(0, 0, true, default_caps()), false);
  if (r.skipped) KERN_SKIP_UNLESS_REQUIRED("userns", r.skip_reason);
  ASSERT_EQ(r.rc, 0) << std::strerror(r.rc);
  EXPECT_EQ(hex(r.status["CapEff"]), default_caps());
  EXPECT_EQ(r.status["Uid"].substr(0, 1), "0");
}

// The OCI translator's credentials through the same step: every set as config.json gives it,
// the additional groups, and the parent-death signal kept across the switch to uid 1000.
TEST(CapsApply, OciProcessCredentialsAsConfigured) {
  bundle::Process p;
  p.args = {"sh"};
  p.cwd = "/";
  p.user.uid = 1000;
  p.user.gid = 1000;
  p.user.additional_gids = {7, 8};
  bundle::Capabilities k;
  k.bounding = {"CAP_KILL", "CAP_CHOWN", "CAP_NET_BIND_SERVICE"};
  k.effective = {"CAP_KILL", "CAP_NET_BIND_SERVICE"};
  k.permitted = {"CAP_KILL", "CAP_NET_BIND_SERVICE"};
  k.inheritable = {"CAP_NET_BIND_SERVICE"};
  k.ambient = {"CAP_NET_BIND_SERVICE"};
  p.capabilities = k;
  std::vector<std::string> warnings;
  auto e = bundle::oci_exec_plan(p, warnings);
  ASSERT_TRUE(e.has_value()) << e.error().what();
  ChildResult r = apply_in_userns(e->creds, true);
  if (r.skipped) KERN_SKIP_UNLESS_REQUIRED("userns", r.skip_reason);
  ASSERT_EQ(r.rc, 0) << std::strerror(r.rc);
  EXPECT_EQ(r.status["Uid"].substr(0, 4), "1000") << r.status["Uid"];
  EXPECT_EQ(r.status["Groups"], "7 8 ");  // the kernel ends the list with a space
  EXPECT_EQ(hex(r.status["CapBnd"]), bit(kKill) | bit(kChown) | bit(kNetBind));
  EXPECT_EQ(hex(r.status["CapEff"]), bit(kKill) | bit(kNetBind));
  EXPECT_EQ(hex(r.status["CapPrm"]), bit(kKill) | bit(kNetBind));
  EXPECT_EQ(hex(r.status["CapInh"]), bit(kNetBind));
  EXPECT_EQ(hex(r.status["CapAmb"]), bit(kNetBind));
  EXPECT_EQ(r.status["PdeathSig"], std::to_string(SIGUSR2));
}

// The same translator for a process of uid 0 with no capabilities section (all sets empty).
TEST(CapsApply, OciProcessWithoutCapabilitiesHasNone) {
  bundle::Process p;
  p.args = {"sh"};
  p.cwd = "/";
  std::vector<std::string> warnings;
  auto e = bundle::oci_exec_plan(p, warnings);
  ASSERT_TRUE(e.has_value()) << e.error().what();
  ChildResult r = apply_in_userns(e->creds, false);
  if (r.skipped) KERN_SKIP_UNLESS_REQUIRED("userns", r.skip_reason);
  ASSERT_EQ(r.rc, 0) << std::strerror(r.rc);
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"})
    EXPECT_EQ(hex(r.status[set]), 0u) << set << " = " << r.status[set];
  EXPECT_EQ(r.status["PdeathSig"], std::to_string(SIGUSR2));
}

// kern box's translator is pure: what it asks of the step for each case.
TEST(CapsTranslate, BoxCredentials) {
  Credentials root = box_credentials(0, 0, false, default_caps() | bit(kSysAdmin));
  EXPECT_EQ(root.caps.bounding, default_caps());
  EXPECT_EQ(root.caps.effective, default_caps());
  EXPECT_EQ(root.caps.permitted, default_caps());
  EXPECT_EQ(root.caps.inheritable, 0u);
  EXPECT_EQ(root.caps.ambient, 0u);
  EXPECT_TRUE(root.groups.empty());
  EXPECT_FALSE(root.switch_ids);
  Credentials user = box_credentials(1000, 100, true, default_caps());
  EXPECT_EQ(user.caps.bounding, default_caps());
  EXPECT_EQ(user.caps.effective, 0u);
  EXPECT_EQ(user.caps.permitted, 0u);
  EXPECT_TRUE(user.switch_ids);
  EXPECT_EQ(user.uid, 1000u);
  EXPECT_EQ(user.gid, 100u);
}

}  // namespace
}  // namespace kern
