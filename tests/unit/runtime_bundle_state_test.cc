// Container status (creating, created, running, stopped), the verbs each allows, and the state
// documents.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runtime/bundle/state.h"

namespace kern::bundle {
namespace {

ContainerRecord record() {
  ContainerRecord r;
  r.id = "c1";
  r.bundle = "/b";
  r.pid = 4242;
  r.pid_start_time = 777;
  r.created = "2026-12-01T10:00:00Z";
  r.annotations = {{"io.kern.x", "y"}};
  return r;
}

TEST(BundleState, Transitions) {
  ContainerRecord r = record();
  r.pid = 0;
  EXPECT_EQ(observe(r, {0}), ContainerStatus::creating);
  r = record();
  EXPECT_EQ(observe(r, {777}), ContainerStatus::created);
  r.started = true;
  EXPECT_EQ(observe(r, {777}), ContainerStatus::running);
  EXPECT_EQ(observe(r, {0}), ContainerStatus::stopped);
  r.started = false;
  EXPECT_EQ(observe(r, {0}), ContainerStatus::stopped);  // box init died before start
}

TEST(BundleState, RecycledPidIsStopped) {
  ContainerRecord r = record();
  r.started = true;
  EXPECT_EQ(observe(r, {778}), ContainerStatus::stopped);
}

TEST(BundleState, VerbsFollowTheStatus) {
  using S = ContainerStatus;
  EXPECT_TRUE(allowed(Verb::start, "c", S::created).has_value());
  for (S s : {S::creating, S::running, S::stopped}) EXPECT_FALSE(allowed(Verb::start, "c", s).has_value());
  EXPECT_TRUE(allowed(Verb::kill, "c", S::created).has_value());
  EXPECT_TRUE(allowed(Verb::kill, "c", S::running).has_value());
  EXPECT_FALSE(allowed(Verb::kill, "c", S::stopped).has_value());
  EXPECT_TRUE(allowed(Verb::delete_, "c", S::stopped).has_value());
  // A created container is deleted without --force, as runc does (its process never ran the
  // workload; containerd's shim deletes one this way).
  EXPECT_TRUE(allowed(Verb::delete_, "c", S::created).has_value());
  auto e = allowed(Verb::delete_, "c", S::running);
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().what(), "cannot delete container \"c\": it is running");
  for (S s : {S::creating, S::created, S::running, S::stopped})
    EXPECT_TRUE(allowed(Verb::delete_force, "c", s).has_value());
}

TEST(BundleState, StateDocumentFollowsTheSpec) {
  ContainerRecord r = record();
  auto j = nlohmann::json::parse(state_json(r, ContainerStatus::created));
  EXPECT_EQ(j["ociVersion"], kOciVersion);
  EXPECT_EQ(j["id"], "c1");
  EXPECT_EQ(j["status"], "created");
  EXPECT_EQ(j["pid"], 4242);
  EXPECT_EQ(j["bundle"], "/b");
  EXPECT_EQ(j["annotations"]["io.kern.x"], "y");
  auto stopped = nlohmann::json::parse(state_json(r, ContainerStatus::stopped));
  EXPECT_FALSE(stopped.contains("pid"));  // no process to name
}

TEST(BundleState, RecordRoundTrips) {
  ContainerRecord r = record();
  r.started = true;
  r.cgroup = "/sys/fs/cgroup/x";
  r.cgroups_v1 = {{"memory", "/sys/fs/cgroup/memory/x"}, {"cpu,cpuacct", "/sys/fs/cgroup/cpu,cpuacct/x"}};
  r.entry_ino = 1234567;
  auto back = parse_record(record_json(r));
  ASSERT_TRUE(back.has_value()) << back.error().what();
  EXPECT_EQ(back->id, r.id);
  EXPECT_EQ(back->pid, r.pid);
  EXPECT_EQ(back->pid_start_time, r.pid_start_time);
  EXPECT_TRUE(back->started);
  EXPECT_EQ(back->cgroup, r.cgroup);
  EXPECT_EQ(back->cgroups_v1, r.cgroups_v1);
  EXPECT_EQ(back->annotations, r.annotations);
  EXPECT_EQ(back->entry_ino, 1234567u);
  EXPECT_TRUE(back->start_needs_config);
  EXPECT_TRUE(back->delete_needs_config);
  r.start_needs_config = false;
  r.delete_needs_config = false;
  back = parse_record(record_json(r));
  ASSERT_TRUE(back.has_value()) << back.error().what();
  EXPECT_FALSE(back->start_needs_config);
  EXPECT_FALSE(back->delete_needs_config);
  // A record an older kern wrote has neither: start and delete read the kept document then.
  auto older = parse_record(R"({"id": "c", "bundle": "/b", "pid": 1, "pid_start_time": 1, "started": true})");
  ASSERT_TRUE(older.has_value()) << older.error().what();
  EXPECT_TRUE(older->start_needs_config);
  EXPECT_TRUE(older->delete_needs_config);
  auto bad = parse_record(R"({"id": "c", "bundle": "/b", "pid": "1", "pid_start_time": 1, "started": true})");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().what(), "pid: expected an integer");
}

TEST(BundleState, ContainerIds) {
  EXPECT_TRUE(check_container_id("abc-1.2_x+y").has_value());
  for (const char* bad : {"", ".", "..", "a/b", "../x", "a b", "a\nb"})
    EXPECT_FALSE(check_container_id(bad).has_value()) << bad;
  EXPECT_FALSE(check_container_id(std::string(1025, 'a')).has_value());
}

// A cgroup.procs text lists the container's process by its whole number, never by a prefix.
TEST(BundleState, OwnProcessIsTold) {
  EXPECT_EQ(init_title("c1"), "kern-init oci:c1");
  EXPECT_TRUE(procs_list("12\n345\n", 345));
  EXPECT_TRUE(procs_list("12\n345", 12));
  EXPECT_FALSE(procs_list("12\n3456\n", 345));
  EXPECT_FALSE(procs_list("", 1));
}

}  // namespace
}  // namespace kern::bundle
