// The compose stacks of tests/integration/compose load, pass check_one_pod, and warn as expected.
#include <gtest/gtest.h>

#include "cli/compose_box_args.h"
#include "cli/compose_model.h"

namespace kern::compose {
namespace {

Project load_stack(const std::string& name, std::vector<std::string> profiles = {}) {
  LoadOptions o;
  o.files = {std::string(KERN_SOURCE_DIR) + "/tests/integration/compose/" + name + "/compose.yaml"};
  o.profiles = std::move(profiles);
  auto p = load_project(o, {{"HOME", "/home/u"}});
  EXPECT_TRUE(p.has_value()) << name << ": " << (p ? "" : p.error().what());
  if (!p) return {};
  auto pod = check_one_pod(*p);
  EXPECT_TRUE(pod.has_value()) << name << ": " << (pod ? "" : pod.error().what());
  return *p;
}

TEST(ComposeStacks, WebappWithStoreAndWorker) {
  Project p = load_stack("webapp");
  EXPECT_EQ(p.name, "webapp");
  ASSERT_EQ(p.services.size(), 3u);
  EXPECT_TRUE(p.warnings.empty());
  const Service* web = p.find("web");
  ASSERT_NE(web, nullptr);
  EXPECT_EQ(*web->command, (std::vector<std::string>{"python3", "/app/app.py"}));
  EXPECT_EQ(web->environment[2], (std::pair<std::string, std::string>{"GREETING_FROM", "compose"}));
  EXPECT_EQ(p.find("worker")->memory, "32m");
  EXPECT_EQ(pod_publish_args(p), std::vector<std::string>{"8000:8000/tcp"});
}

TEST(ComposeStacks, HealthyWaitsForItsDatabase) {
  Project p = load_stack("healthy");
  EXPECT_EQ(p.name, "healthy");
  EXPECT_EQ(p.warnings, std::vector<std::string>{"version: obsolete, ignored"});
  const Service* app = p.find("app");
  ASSERT_NE(app, nullptr);
  ASSERT_EQ(app->depends_on.size(), 2u);
  EXPECT_EQ(app->depends_on[0].condition, "service_healthy");
  EXPECT_EQ(app->depends_on[1].condition, "service_completed_successfully");
  EXPECT_EQ(p.find("db")->healthcheck->retries, 20);
}

TEST(ComposeStacks, VolumesAndSecrets) {
  Project p = load_stack("volumes_secrets");
  EXPECT_EQ(p.name, "volumes_secrets");
  EXPECT_TRUE(p.warnings.empty());
  ASSERT_EQ(p.volumes.size(), 2u);
  EXPECT_EQ(p.volumes[0].name, "volumes_secrets_data");
  const Service* backup = p.find("backup");
  ASSERT_NE(backup, nullptr);
  EXPECT_EQ(backup->secrets[0].target, "password");
  EXPECT_TRUE(backup->volumes[0].read_only);
  auto args = box_args(p, *p.find("reader"));
  bool secret = false;
  for (const auto& a : args) secret = secret || a.find("/secrets/db_password.txt:db_password") != std::string::npos;
  EXPECT_TRUE(secret);
}

TEST(ComposeStacks, AnchorsMergeKeysExtendsProfiles) {
  Project p = load_stack("anchors");
  EXPECT_TRUE(p.warnings.empty());
  ASSERT_EQ(p.services.size(), 2u);
  ASSERT_EQ(p.inactive.size(), 1u);
  const Service* api = p.find("api");
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->image, "busybox:latest");  // base.yaml, interpolated from .env
  EXPECT_EQ(api->restart, "unless-stopped");
  EXPECT_EQ(api->memory, "64m");
  EXPECT_EQ(api->environment,
            (std::vector<std::pair<std::string, std::string>>{{"LOG_LEVEL", "debug"}, {"APP_MODE", "demo"}, {"PORT", "9000"}}));
  EXPECT_EQ(api->command->back(), "while true; do echo api $APP_MODE; sleep 5; done");
  const Service* helper = p.find("helper");
  EXPECT_EQ(helper->environment.back().second, "9001");
  EXPECT_EQ(helper->stop_grace_period, "1s");
  Project all = load_stack("anchors", {"debug"});
  ASSERT_EQ(all.services.size(), 3u);
  EXPECT_EQ(*all.find("debug")->command, (std::vector<std::string>{"sleep", "3600"}));
}

}  // namespace
}  // namespace kern::compose
