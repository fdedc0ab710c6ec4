// Finding cgroup v2 and a usable subtree (runtime/cgroup/subtree.h), creating box cgroups in fake
// trees, --require-limits leaving nothing behind, and reaping leftovers of dead launchers.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <unistd.h>

#include "runtime/cgroup/box_cgroup.h"
#include "runtime/cgroup/subtree.h"
#include "runtime/sys/proc_stat.h"
#include "tests/unit/runtime_cgroup_fake_tree.h"

namespace kern {
namespace {

using testing::FakeCgroupTree;

TEST(CgroupProbe, FindsTheCgroup2Mount) {
  const char* v1_host =
      "30 25 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
      "31 30 0:27 / /sys/fs/cgroup/memory rw shared:9 - cgroup cgroup rw,memory\n"
      "40 30 0:35 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw\n";
  std::string root;
  EXPECT_EQ(*cgroup2_mount(v1_host, &root), "/sys/fs/cgroup/unified");
  EXPECT_EQ(root, "/");
  const char* nested = "50 40 0:35 /box/x /sys/fs/cgroup rw shared:1 master:2 - cgroup2 cgroup2 rw,nsdelegate\n";
  EXPECT_EQ(*cgroup2_mount(nested, &root), "/sys/fs/cgroup");
  EXPECT_EQ(root, "/box/x");
  EXPECT_EQ(*cgroup2_mount("1 1 0:1 / /my\\040cg rw - cgroup2 none rw\n", &root), "/my cg");
  EXPECT_FALSE(cgroup2_mount("1 1 0:1 / /proc rw - proc proc rw\n", &root));
}

TEST(CgroupProbe, OwnPathFromProcCgroup) {
  EXPECT_EQ(*unified_cgroup_path("4:memory:/x\n0::/user.slice/a.scope\n"), "/user.slice/a.scope");
  EXPECT_EQ(*unified_cgroup_path("0::/\n"), "/");
  EXPECT_FALSE(unified_cgroup_path("4:memory:/x\n"));
  EXPECT_FALSE(unified_cgroup_path("0::/gone (deleted)\n"));
}

TEST(CgroupProbe, ThisHostProbes) {
  auto h = probe_cgroup_host();
  ASSERT_TRUE(h) << h.error().what();
  EXPECT_EQ(h->pid, ::getpid());
  EXPECT_NE(h->start_time, 0u);
  EXPECT_GE(h->cpus, 1u);
  if (!h->mount.empty()) {
    EXPECT_EQ(h->self[0], '/');
  }
}

TEST(CgroupNames, RoundTripAndStrangers) {
  std::string n = box_cgroup_name("box", "my-box.1", 1234, 98765);
  EXPECT_EQ(n, "box-my-box.1-1234-98765");
  pid_t pid = 0;
  uint64_t start = 0;
  ASSERT_TRUE(parse_box_cgroup_name(n, &pid, &start));
  EXPECT_EQ(pid, 1234);
  EXPECT_EQ(start, 98765u);
  EXPECT_TRUE(parse_box_cgroup_name("run-7-8", &pid, &start));
  for (const char* s : {"kern-launch", "box-x", "box-x-1", "box-x-a-1", "other-x-1-2", "box--1", "memory.max"})
    EXPECT_FALSE(parse_box_cgroup_name(s, &pid, &start)) << s;
}

TEST(CgroupSubtree, NoControllersMeansNoSubtree) {
  FakeCgroupTree t;
  t.file("/cgroup.controllers", "");
  t.file("/cgroup.procs", "1\n");
  t.file("/cgroup.subtree_control", "");
  SubtreeResult r = prepare_subtree(t.host("/"));
  EXPECT_FALSE(r.subtree);
  EXPECT_NE(r.why_not.find("offers no memory and pids controllers"), std::string::npos) << r.why_not;
  EXPECT_FALSE(t.exists("/kern"));
}

TEST(CgroupSubtree, NoMountMeansNoSubtree) {
  CgroupHost h;
  SubtreeResult r = prepare_subtree(h);
  EXPECT_FALSE(r.subtree);
  EXPECT_EQ(r.why_not, "no cgroup v2 file system is mounted");
}

// systemd's user@UID.service: delegated, controllers passed down, kern runs in a leaf of it
// together with other processes.
void delegated_service(const FakeCgroupTree& t) {
  t.file("/u/svc/cgroup.controllers", "cpuset cpu io memory pids\n");
  t.file("/u/svc/cgroup.subtree_control", "cpu memory pids\n");
  t.file("/u/svc/cgroup.procs", "");
  t.file("/u/svc/init.scope/cgroup.controllers", "cpu memory pids\n");
  t.file("/u/svc/init.scope/cgroup.subtree_control", "");
  t.file("/u/svc/init.scope/cgroup.procs", "1\n" + std::to_string(::getpid()) + "\n");
  // What the kernel would show in the new kern dir.
  t.file("/u/svc/kern/cgroup.controllers", "cpu memory pids\n");
  t.file("/u/svc/kern/cgroup.subtree_control", "");
}

TEST(CgroupSubtree, ADelegatedAncestorWhenTheOwnCgroupIsShared) {
  FakeCgroupTree t;
  delegated_service(t);
  SubtreeResult r = prepare_subtree(t.host("/u/svc/init.scope"), {"cpu"});
  ASSERT_TRUE(r.subtree) << r.why_not;
  EXPECT_EQ(r.subtree->base, "/u/svc/kern");
  EXPECT_EQ(r.subtree->controllers, (std::vector<std::string>{"memory", "pids", "cpu"}));
  EXPECT_EQ(t.read("/u/svc/kern/cgroup.subtree_control"), "+memory +pids +cpu");
  EXPECT_FALSE(t.exists("/u/svc/init.scope/kern-launch"));  // nobody was moved
}

TEST(CgroupSubtree, OnlyTheControllersAskedForAreEnabled) {
  FakeCgroupTree t;
  delegated_service(t);
  SubtreeResult r = prepare_subtree(t.host("/u/svc/init.scope"));
  ASSERT_TRUE(r.subtree) << r.why_not;
  EXPECT_EQ(t.read("/u/svc/kern/cgroup.subtree_control"), "+memory +pids");
  EXPECT_EQ(r.subtree->controllers, (std::vector<std::string>{"memory", "pids"}));
}

TEST(CgroupSubtree, TheOwnCgroupWhenKernIsAloneInIt) {
  FakeCgroupTree t;
  const std::string own = "/u/app/run.scope";
  t.file(own + "/cgroup.controllers", "memory pids\n");
  t.file(own + "/cgroup.subtree_control", "");
  t.file(own + "/cgroup.procs", std::to_string(::getpid()) + "\n");
  t.file(own + "/kern-launch/cgroup.procs", "");
  t.file(own + "/kern/cgroup.controllers", "memory pids\n");
  t.file(own + "/kern/cgroup.subtree_control", "");
  SubtreeResult r = prepare_subtree(t.host(own));
  ASSERT_TRUE(r.subtree) << r.why_not;
  EXPECT_EQ(r.subtree->base, own + "/kern");
  EXPECT_EQ(r.subtree->how, "own cgroup");
  // kern moved itself into the leaf before enabling controllers in its own cgroup.
  EXPECT_EQ(t.read(own + "/kern-launch/cgroup.procs"), std::to_string(::getpid()));
  EXPECT_EQ(t.read(own + "/cgroup.subtree_control"), "+memory +pids");
}

TEST(CgroupSubtree, SharedOwnCgroupAndNoDelegatedAncestor) {
  FakeCgroupTree t;
  t.file("/s/cgroup.controllers", "memory pids\n");
  t.file("/s/cgroup.subtree_control", "");
  t.file("/s/cgroup.procs", "1\n" + std::to_string(::getpid()) + "\n");
  // The parent (the fake root) passes nothing down and cannot enable anything.
  t.file("/cgroup.controllers", "");
  t.file("/cgroup.subtree_control", "");
  t.file("/cgroup.procs", "");
  SubtreeResult r = prepare_subtree(t.host("/s"));
  EXPECT_FALSE(r.subtree);
  EXPECT_NE(r.why_not.find("holds other processes"), std::string::npos) << r.why_not;
}

TEST(CgroupCreate, RequireLimitsRefusesAndLeavesNothing) {
  FakeCgroupTree t;
  delegated_service(t);
  // The fake kernel creates no knob files: the caps cannot be written, so nothing is in force.
  Limits l;
  l.memory_max = 32 << 20;
  auto r = BoxCgroup::create_in(t.host("/u/svc/init.scope"), "box", "b", l, CgroupPolicy::require);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::host_unsupported);
  EXPECT_NE(r.error().message().find("--require-limits"), std::string::npos) << r.error().message();
  std::string leftover = "/u/svc/kern/" + box_cgroup_name("box", "b", ::getpid(), sys::process_start_time(::getpid()));
  EXPECT_FALSE(t.exists(leftover));
}

TEST(CgroupCreate, RequireLimitsWithoutASubtreeRefuses) {
  FakeCgroupTree t;
  t.file("/cgroup.controllers", "");
  auto r = BoxCgroup::create_in(t.host("/"), "box", "b", Limits{}, CgroupPolicy::require);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::host_unsupported);
  EXPECT_FALSE(t.exists("/kern"));
}

TEST(CgroupCreate, BestEffortWithoutASubtreeRunsUncapped) {
  FakeCgroupTree t;
  t.file("/cgroup.controllers", "");
  ::testing::internal::CaptureStderr();
  auto r = BoxCgroup::create_in(t.host("/"), "box", "b", Limits{}, CgroupPolicy::best_effort);
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(err.rfind("kern: warning: no cgroup here", 0), 0u) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  ::testing::internal::CaptureStderr();
  r = BoxCgroup::create_in(t.host("/"), "box", "b", Limits{}, CgroupPolicy::allow_uncapped);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->has_value());
}

TEST(CgroupCreate, WritesTheLimitsIntoTheBoxCgroup) {
  FakeCgroupTree t;
  delegated_service(t);
  std::string name = box_cgroup_name("box", "w", ::getpid(), sys::process_start_time(::getpid()));
  std::string box = "/u/svc/kern/" + name;
  // A fake tree has no kernel behind it: mkdir makes an empty directory without knobs.
  Limits l;
  l.memory_max = 64 << 20;
  l.pids_max = 32;
  l.cpus = 0.5;
  ::testing::internal::CaptureStderr();
  auto r = BoxCgroup::create_in(t.host("/u/svc/init.scope"), "box", "w", l, CgroupPolicy::best_effort);
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(r) << r.error().what();
  ASSERT_TRUE(r->has_value());
  BoxCgroup& cg = **r;
  EXPECT_EQ(cg.path(), t.root() + box);
  EXPECT_TRUE(t.exists(box));
  // Every knob write failed (no kernel behind the fake tree) and says so in one warning.
  EXPECT_NE(err.find("memory.max (ENOENT)"), std::string::npos) << err;
  EXPECT_NE(err.find("pids.max (ENOENT)"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(cg.read_back(l).memory, Verdict::not_enforced);
  ASSERT_TRUE(cg.remove());
  EXPECT_FALSE(t.exists(box));
}

TEST(CgroupCache, TheSubtreeIsRememberedAndAStaleOneForgotten) {
  FakeCgroupTree t;
  delegated_service(t);
  t.dir("/rt");
  CgroupHost h = t.host("/u/svc/init.scope");
  h.runtime_dir = t.root() + "/rt";
  ::testing::internal::CaptureStderr();
  {
    auto r = BoxCgroup::create_in(h, "box", "c", Limits{}, CgroupPolicy::best_effort);
    ASSERT_TRUE(r && r->has_value());
    ASSERT_TRUE((*r)->remove());
  }
  auto cached = cached_subtree(h, {});
  ASSERT_TRUE(cached);
  EXPECT_EQ(cached->base, "/u/svc/kern");
  EXPECT_FALSE(cached_subtree(h, {"io"}));  // not enabled there: search again
  CgroupHost other = h;
  other.self = other.proc_self = "/u/svc/other.scope";
  EXPECT_FALSE(cached_subtree(other, {}));
  // A start that has only read /proc/self/cgroup gets the mount from the remembered entry.
  CgroupHost fresh = h;
  fresh.mount.clear();
  fresh.self.clear();
  ASSERT_TRUE(cached_subtree(fresh, {}));
  EXPECT_EQ(fresh.mount, t.root());
  EXPECT_EQ(fresh.self, "/u/svc/init.scope");
  // The same cgroup path under another mount (another cgroup namespace's view) is a miss.
  CgroupHost elsewhere = h;
  elsewhere.mount = t.root() + "/u";
  EXPECT_FALSE(cached_subtree(elsewhere, {}));
  // A remembered subtree that has gone: forgotten, searched again, remembered anew.
  remember_subtree(h, Subtree{"/gone/kern", {"memory", "pids"}, "test"});
  EXPECT_EQ(cached_subtree(h, {})->base, "/gone/kern");
  {
    auto r = BoxCgroup::create_in(h, "box", "d", Limits{}, CgroupPolicy::best_effort);
    ASSERT_TRUE(r && r->has_value());
    EXPECT_EQ((*r)->rel().rfind("/u/svc/kern/box-d-", 0), 0u) << (*r)->rel();
  }
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(cached_subtree(h, {})->base, "/u/svc/kern");
}

// A host with cgroup v2 but no subtree for kern (issue 13): the mount found once is remembered,
// so that the next start does not read /proc/self/mountinfo; whether there is a subtree is still
// read anew each time from the own cgroup.
TEST(CgroupCache, TheMountIsRememberedWhereThereIsNoSubtree) {
  FakeCgroupTree t;
  t.file("/cgroup.controllers", "hugetlb\n");  // nothing offers memory and pids
  t.dir("/rt");
  CgroupHost h = t.host("/");
  h.runtime_dir = t.root() + "/rt";
  remember_mount(h);
  CgroupHost fresh = h;
  fresh.mount.clear();
  fresh.self.clear();
  ASSERT_TRUE(remembered_mount(fresh));
  EXPECT_EQ(fresh.mount, t.root());
  EXPECT_EQ(fresh.self, "/");
  ::testing::internal::CaptureStderr();
  auto r = BoxCgroup::create_in(fresh, "box", "m", Limits{}, CgroupPolicy::best_effort);
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(err.rfind("kern: warning: no cgroup here", 0), 0u) << err;
  // The reason, which the one-line warning leaves to kern doctor, is the --require-limits error's.
  auto required = BoxCgroup::create_in(fresh, "box", "m", Limits{}, CgroupPolicy::require);
  ASSERT_FALSE(required);
  EXPECT_NE(required.error().what().find("offers no memory and pids controllers"), std::string::npos)
      << required.error().what();
  // Another own cgroup, or a mount where the own cgroup is not (any more): a miss.
  CgroupHost other = fresh;
  other.mount.clear();
  other.self.clear();
  other.proc_self = "/elsewhere";
  EXPECT_FALSE(remembered_mount(other));
  ASSERT_EQ(::unlink((t.root() + "/cgroup.controllers").c_str()), 0);
  CgroupHost gone = h;
  gone.mount.clear();
  gone.self.clear();
  EXPECT_FALSE(remembered_mount(gone));
  EXPECT_TRUE(gone.mount.empty());
}

TEST(CgroupReap, TheBaseCountOfCgroupsSparesTheListing) {
  FakeCgroupTree t;
  const std::string base = "/u/svc/kern";
  std::string mine = box_cgroup_name("box", "live", ::getpid(), sys::process_start_time(::getpid()));
  std::string dead = box_cgroup_name("box", "dead", 4194303, 12345);
  for (const auto& d : {mine, dead}) t.dir(base + "/" + d);
  // The kernel's count says only the caller's own is there: nothing is listed (a fake tree can
  // say so while holding another; a real one cannot).
  t.file(base + "/cgroup.stat", "nr_descendants 1\nnr_dying_descendants 3\n");
  reap_leftovers(t.host("/u/svc/init.scope"), base, mine);
  EXPECT_TRUE(t.exists(base + "/" + dead));
  t.file(base + "/cgroup.stat", "nr_descendants 2\nnr_dying_descendants 0\n");
  reap_leftovers(t.host("/u/svc/init.scope"), base, mine);
  EXPECT_FALSE(t.exists(base + "/" + dead));
  EXPECT_TRUE(t.exists(base + "/" + mine));
}

TEST(CgroupReap, ABoxReapsDeadLaunchersLeftoversOnceItRunsNotBefore) {
  FakeCgroupTree t;
  delegated_service(t);
  const std::string dead = "/u/svc/kern/" + box_cgroup_name("box", "dead", 4194303, 12345);
  t.dir(dead);
  ::testing::internal::CaptureStderr();
  auto r = BoxCgroup::create_in(t.host("/u/svc/init.scope"), "box", "e", Limits{}, CgroupPolicy::best_effort);
  ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(r && r->has_value());
  EXPECT_TRUE(t.exists(dead));  // the start did not pay for it
  (*r)->reap_others();
  EXPECT_FALSE(t.exists(dead));
  EXPECT_TRUE(t.exists((*r)->rel()));  // its own stays
  ASSERT_TRUE((*r)->remove());
}

TEST(CgroupReap, DeadLaunchersBoxesGoLiveOnesStay) {
  FakeCgroupTree t;
  const std::string base = "/u/svc/kern";
  std::string mine = box_cgroup_name("box", "live", ::getpid(), sys::process_start_time(::getpid()));
  std::string dead = box_cgroup_name("box", "dead", 4194303, 12345);
  std::string reused = box_cgroup_name("run", "x", ::getpid(), 1);  // our pid, another start time
  for (const auto& d : {mine, dead, reused, std::string("not-ours")}) t.dir(base + "/" + d);
  // A launcher's memory grows while its box runs: that must not make it look like another process.
  void* grown = ::mmap(nullptr, 64u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(grown, MAP_FAILED);
  reap_leftovers(t.host("/u/svc/init.scope"), base);
  ::munmap(grown, 64u << 20);
  EXPECT_TRUE(t.exists(base + "/" + mine));
  EXPECT_FALSE(t.exists(base + "/" + dead));
  EXPECT_FALSE(t.exists(base + "/" + reused));
  EXPECT_TRUE(t.exists(base + "/not-ours"));
}

}  // namespace
}  // namespace kern
