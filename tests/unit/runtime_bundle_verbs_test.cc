// The pure parts of the verbs that act on an existing container: the paused status and what
// each verb may do in it, ps's pid selection, update's resources -> cgroup v2 files, the stats
// document, and the one-part documents (--process, --resources).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runtime/cgroup/container_resources.h"
#include "runtime/bundle/config.h"
#include "runtime/bundle/container_procs.h"
#include "runtime/bundle/live_container.h"
#include "runtime/bundle/state.h"

namespace kern::bundle {
namespace {

ContainerRecord live() {
  ContainerRecord r;
  r.id = "c1";
  r.pid = 4242;
  r.pid_start_time = 777;
  r.started = true;
  r.cgroup = "/sys/fs/cgroup/c1";
  return r;
}

TEST(BundlePaused, FrozenLiveContainerIsPaused) {
  ContainerRecord r = live();
  EXPECT_EQ(observe(r, {777, false}), ContainerStatus::running);
  EXPECT_EQ(observe(r, {777, true}), ContainerStatus::paused);
  r.started = false;
  EXPECT_EQ(observe(r, {777, true}), ContainerStatus::paused);  // a created container paused
  // A dead (or recycled) init is stopped, frozen or not.
  EXPECT_EQ(observe(r, {0, true}), ContainerStatus::stopped);
  EXPECT_EQ(observe(r, {778, true}), ContainerStatus::stopped);
  EXPECT_STREQ(status_name(ContainerStatus::paused), "paused");
}

TEST(BundlePaused, VerbsOnAPausedContainer) {
  const auto p = ContainerStatus::paused;
  EXPECT_TRUE(allowed(Verb::resume, "c1", p));
  EXPECT_TRUE(allowed(Verb::kill, "c1", p));
  EXPECT_TRUE(allowed(Verb::delete_force, "c1", p));
  auto start = allowed(Verb::start, "c1", p);
  ASSERT_FALSE(start);
  EXPECT_EQ(start.error().what(), "cannot start container \"c1\": it is paused");
  EXPECT_FALSE(allowed(Verb::pause, "c1", p));
  EXPECT_FALSE(allowed(Verb::exec, "c1", p));
  EXPECT_FALSE(allowed(Verb::delete_, "c1", p));
  // resume only thaws what is paused; pause only freezes what runs (or is created).
  EXPECT_FALSE(allowed(Verb::resume, "c1", ContainerStatus::running));
  EXPECT_FALSE(allowed(Verb::resume, "c1", ContainerStatus::stopped));
  EXPECT_TRUE(allowed(Verb::pause, "c1", ContainerStatus::running));
  EXPECT_TRUE(allowed(Verb::pause, "c1", ContainerStatus::created));
  EXPECT_FALSE(allowed(Verb::pause, "c1", ContainerStatus::stopped));
}

TEST(BundlePaused, StateDocumentKeepsThePid) {
  auto doc = nlohmann::json::parse(state_json(live(), ContainerStatus::paused));
  EXPECT_EQ(doc["status"], "paused");
  EXPECT_EQ(doc["pid"], 4242);
}

TEST(BundlePaused, EventsText) {
  EXPECT_TRUE(events_say_frozen("populated 1\nfrozen 1\n"));
  EXPECT_FALSE(events_say_frozen("populated 1\nfrozen 0\n"));
  EXPECT_FALSE(events_say_frozen("populated 1\n"));
  EXPECT_FALSE(events_say_frozen(""));
}

TEST(BundlePs, PidsOfOneNamespace) {
  std::vector<ProcNs> procs = {{1, 100}, {50, 200}, {7, 200}, {51, 200}, {9, 300}, {50, 200}};
  EXPECT_EQ(pids_in_namespace(procs, 200), (std::vector<pid_t>{7, 50, 51}));
  EXPECT_EQ(pids_in_namespace(procs, 100), (std::vector<pid_t>{1}));
  EXPECT_TRUE(pids_in_namespace(procs, 400).empty());
  EXPECT_TRUE(pids_in_namespace(procs, 0).empty());  // an unknown namespace matches nothing
}

TEST(BundlePs, CgroupProcs) {
  auto p = parse_cgroup_procs("12\n5\n12\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, (std::vector<pid_t>{5, 12}));
  EXPECT_TRUE(parse_cgroup_procs("")->empty());
  EXPECT_FALSE(parse_cgroup_procs("12\nx\n"));
}

TEST(BundlePs, TableKeepsTheContainersLines) {
  std::string text =
      "UID   PID  PPID CMD\n"
      "root    1     0 /sbin/init\n"
      "root  500     1 sleep 5 500\n"
      "root  501   500 sh\n";
  auto out = filter_ps_output(text, {500, 501});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, "UID   PID  PPID CMD\nroot  500     1 sleep 5 500\nroot  501   500 sh\n");
  // A pid in another column (the parent of a host process) does not select its line.
  EXPECT_EQ(*filter_ps_output(text, {0}), "UID   PID  PPID CMD\n");
  EXPECT_FALSE(filter_ps_output("COMMAND\nsh\n", {1}));
}

std::vector<CgroupWrite> writes(const Resources& r, const std::string& cpu_max = "") {
  auto w = resource_writes(r, cpu_max, nullptr);
  EXPECT_TRUE(w) << w.error().what();
  return w ? *w : std::vector<CgroupWrite>{};
}

TEST(BundleUpdate, MemoryAndSwap) {
  Resources r;
  r.memory_limit = 64 << 20;
  r.memory_swap = 96 << 20;
  r.memory_reservation = -1;
  EXPECT_EQ(writes(r), (std::vector<CgroupWrite>{{"memory.max", "67108864"},
                                                 {"memory.low", "max"},
                                                 {"memory.swap.max", "33554432"}}));
  r.memory_swap = 32 << 20;  // below the memory limit
  EXPECT_FALSE(resource_writes(r, "", nullptr));
  Resources s;
  s.memory_swap = 1 << 20;  // swap without a memory limit
  EXPECT_FALSE(resource_writes(s, "", nullptr));
  s.memory_swap = -1;
  EXPECT_EQ(writes(s), (std::vector<CgroupWrite>{{"memory.swap.max", "max"}}));
}

TEST(BundleUpdate, CpuKeepsTheHalfNotGiven) {
  Resources r;
  r.cpu_quota = 50000;
  EXPECT_EQ(writes(r, "max 200000\n"), (std::vector<CgroupWrite>{{"cpu.max", "50000 200000"}}));
  Resources p;
  p.cpu_period = 10000;
  EXPECT_EQ(writes(p, "20000 100000\n"), (std::vector<CgroupWrite>{{"cpu.max", "20000 10000"}}));
  Resources q;
  q.cpu_quota = -1;
  EXPECT_EQ(writes(q, ""), (std::vector<CgroupWrite>{{"cpu.max", "max 100000"}}));
  Resources sh;
  sh.cpu_shares = 1024;
  sh.cpu_cpus = "0-1";
  sh.cpu_mems = "0";
  EXPECT_EQ(writes(sh), (std::vector<CgroupWrite>{{"cpu.weight", "39"}, {"cpuset.cpus", "0-1"}, {"cpuset.mems", "0"}}));
  sh.cpu_shares = 2;
  EXPECT_EQ(writes(sh)[0].value, "1");
  sh.cpu_shares = 262144;
  EXPECT_EQ(writes(sh)[0].value, "10000");
  Resources rt;
  rt.cpu_realtime_runtime = 1000;
  EXPECT_FALSE(resource_writes(rt, "", nullptr));
}

TEST(BundleUpdate, PidsIoHugetlbUnified) {
  Resources r;
  r.pids_limit = 20;
  r.io_weight = 500;
  r.io_read_bps = {{8, 0, 1048576}};
  r.hugepage_limits = {{"2MB", 4194304}};
  r.unified = {{"memory.high", "1000000"}};
  EXPECT_EQ(writes(r), (std::vector<CgroupWrite>{{"pids.max", "20"},
                                                 {"io.weight", "default 4950"},
                                                 {"io.max", "8:0 rbps=1048576"},
                                                 {"hugetlb.2MB.max", "4194304"},
                                                 {"memory.high", "1000000"}}));
  Resources unlimited;
  unlimited.pids_limit = -1;
  EXPECT_EQ(writes(unlimited), (std::vector<CgroupWrite>{{"pids.max", "max"}}));
  unlimited.pids_limit = 0;  // leaves it as it is
  EXPECT_TRUE(writes(unlimited).empty());
  Resources bad;
  bad.unified = {{"../cgroup.procs", "1"}};
  EXPECT_FALSE(resource_writes(bad, "", nullptr));
  Resources dev;
  dev.devices = {DeviceRule{}};
  EXPECT_FALSE(resource_writes(dev, "", nullptr));
}

TEST(BundleUpdate, FieldsWithoutAV2FileAreNamed) {
  Resources r;
  r.memory_kernel = 1 << 20;
  r.memory_swappiness = 10;
  std::vector<std::string> ignored;
  auto w = resource_writes(r, "", &ignored);
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->empty());
  EXPECT_EQ(ignored, (std::vector<std::string>{"memory.kernel", "memory.swappiness"}));
}

TEST(BundleUpdate, ResourcesDocument) {
  auto r = parse_resources_document(R"({"memory":{"limit":1048576},"pids":{"limit":9},"cpu":{"quota":1000}})");
  ASSERT_TRUE(r) << r.error().what();
  EXPECT_EQ(*r->memory_limit, 1048576);
  EXPECT_EQ(*r->pids_limit, 9);
  EXPECT_EQ(*r->cpu_quota, 1000);
  auto bad = parse_resources_document(R"({"memory":{"limit":"lots"}})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().what().find("resources.memory.limit"), std::string::npos) << bad.error().what();
  EXPECT_FALSE(parse_resources_document("{"));
}

TEST(BundleStats, RuncShape) {
  std::map<std::string, std::string> files = {
      {"cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnr_periods 4\nnr_throttled 1\nthrottled_usec 20\n"},
      {"memory.current", "4096\n"},
      {"memory.max", "max\n"},
      {"memory.stat", "anon 1024\nfile 2048\n"},
      {"pids.current", "3\n"},
      {"pids.max", "max\n"}};
  auto doc = nlohmann::json::parse(stats_document("c1", files));
  EXPECT_EQ(doc["type"], "stats");
  EXPECT_EQ(doc["id"], "c1");
  EXPECT_EQ(doc["data"]["cpu"]["usage"]["total"], 1500000);
  EXPECT_EQ(doc["data"]["cpu"]["usage"]["kernel"], 500000);
  EXPECT_EQ(doc["data"]["cpu"]["throttling"]["throttledPeriods"], 1);
  EXPECT_EQ(doc["data"]["memory"]["usage"]["usage"], 4096);
  EXPECT_EQ(doc["data"]["memory"]["raw"]["file"], 2048);
  EXPECT_EQ(doc["data"]["pids"]["current"], 3);
  EXPECT_EQ(doc["data"]["pids"]["limit"], 0);
  // Files the cgroup lacks leave their part out.
  auto bare = nlohmann::json::parse(stats_document("c1", {}));
  EXPECT_TRUE(bare["data"].empty());
}

TEST(BundleStats, RuncShapeFromCgroupV1) {
  std::map<std::string, std::string> files = {
      {"cpuacct.usage", "123456789\n"},
      {"cpuacct.stat", "user 7\nsystem 3\n"},  // USER_HZ ticks
      {"cpu.stat", "nr_periods 4\nnr_throttled 2\nthrottled_time 5000\n"},
      {"memory.usage_in_bytes", "8192\n"},
      {"memory.limit_in_bytes", "33554432\n"},
      {"memory.max_usage_in_bytes", "16384\n"},
      {"memory.memsw.usage_in_bytes", "8192\n"},
      {"memory.memsw.limit_in_bytes", "67108864\n"},
      {"pids.current", "2\n"},
      {"pids.max", "5\n"}};
  auto doc = nlohmann::json::parse(stats_document("c1", files));
  EXPECT_EQ(doc["data"]["cpu"]["usage"]["total"], 123456789);
  EXPECT_EQ(doc["data"]["cpu"]["usage"]["user"], 70000000);
  EXPECT_EQ(doc["data"]["cpu"]["usage"]["kernel"], 30000000);
  EXPECT_EQ(doc["data"]["cpu"]["throttling"]["throttledPeriods"], 2);
  EXPECT_EQ(doc["data"]["cpu"]["throttling"]["throttledTime"], 5000);
  EXPECT_EQ(doc["data"]["memory"]["usage"]["usage"], 8192);
  EXPECT_EQ(doc["data"]["memory"]["usage"]["limit"], 33554432);
  EXPECT_EQ(doc["data"]["memory"]["usage"]["max"], 16384);
  EXPECT_EQ(doc["data"]["memory"]["swap"]["limit"], 67108864);
  EXPECT_EQ(doc["data"]["pids"]["limit"], 5);
}

TEST(BundleExec, ProcessDocument) {
  auto p = parse_process_document(
      R"({"args":["sh","-c","id"],"cwd":"/tmp","env":["A=1"],"user":{"uid":5,"gid":6},"noNewPrivileges":true})");
  ASSERT_TRUE(p) << p.error().what();
  EXPECT_EQ(p->args, (std::vector<std::string>{"sh", "-c", "id"}));
  EXPECT_EQ(p->cwd, "/tmp");
  EXPECT_EQ(p->user.uid, 5u);
  EXPECT_TRUE(p->no_new_privileges);
  auto rel = parse_process_document(R"({"args":["sh"],"cwd":"tmp"})");
  ASSERT_FALSE(rel);
  EXPECT_EQ(rel.error().what(), "process.cwd: must be an absolute path");
}

}  // namespace
}  // namespace kern::bundle
