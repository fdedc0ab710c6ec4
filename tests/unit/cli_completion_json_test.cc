// The completion model read off kern's real CLI11 app (every lookup table entry names a real
// flag or verb; the box flags carry their value kinds), and the --json forms of --show-config
// and --plan carry every fact of their text forms.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include "cli/completions/completion_model.h"
#include "cli/completions/completion_scripts.h"
#include "cli/spec_builder.h"
#include "cli/verb.h"

namespace kern::cli {
namespace {

std::vector<CompletionVerb> real_model() {
  CLI::App all{"kern", "kern"};
  VerbContext unused;
  for (const auto& v : verbs_for({})) v.fn(all, unused);
  return completion_model(all);
}

const CompletionVerb* verb(const std::vector<CompletionVerb>& m, const std::string& path) {
  for (const auto& v : m)
    if (v.path == path) return &v;
  return nullptr;
}

const CompletionFlag* flag(const CompletionVerb& v, const std::string& name) {
  for (const auto& f : v.flags)
    if (std::find(f.names.begin(), f.names.end(), name) != f.names.end()) return &f;
  return nullptr;
}

TEST(Completion, EveryTableFlagIsAFlagOfSomeVerb) {
  auto m = real_model();
  for (const auto& name : completion_table_flags()) {
    bool found = false;
    for (const auto& v : m) found = found || flag(v, name) != nullptr;
    EXPECT_TRUE(found) << name << " is in the completion table but no verb has it";
  }
}

TEST(Completion, EveryTablePathIsAVerb) {
  auto m = real_model();
  for (const auto& path : completion_table_paths()) EXPECT_NE(verb(m, path), nullptr) << path;
}

TEST(Completion, BoxFlagsCarryTheirValueKinds) {
  auto m = real_model();
  const CompletionVerb* box = verb(m, "box");
  ASSERT_NE(box, nullptr);
  const CompletionFlag* image = flag(*box, "--image");
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(image->value, CompletionFlag::Value::required);
  EXPECT_EQ(image->kind.kind, "images");
  const CompletionFlag* net = flag(*box, "--network");
  ASSERT_NE(net, nullptr);
  EXPECT_EQ(net->value, CompletionFlag::Value::optional);  // bare --net means host
  EXPECT_EQ(net->kind.words, (std::vector<std::string>{"none", "host", "private"}));
  const CompletionFlag* plan = flag(*box, "--plan");
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->value, CompletionFlag::Value::none);
  const CompletionFlag* env = flag(*box, "-e");
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->names, (std::vector<std::string>{"-e", "--env"}));
  EXPECT_EQ(env->value, CompletionFlag::Value::required);
  EXPECT_NE(flag(*box, "--json"), nullptr);  // built whenever the command line is not a box start
  EXPECT_EQ(box->positional.kind, "command");
  const CompletionVerb* root = verb(m, "");
  ASSERT_NE(root, nullptr);
  for (const char* v : {"box", "kernel", "images", "completion", "help"})
    EXPECT_NE(std::find(root->subverbs.begin(), root->subverbs.end(), v), root->subverbs.end()) << v;
  const CompletionVerb* start = verb(m, "kernel start");
  ASSERT_NE(start, nullptr);
  EXPECT_NE(flag(*start, "--image"), nullptr);
  EXPECT_EQ(verb(m, "stop")->positional.kind, "boxes");
}

TEST(Completion, ScriptsQuoteWhatTheyEmbed) {
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  std::vector<CompletionVerb> m(1);
  m[0].subverbs = {"box"};
  CompletionFlag f;
  f.names = {"--x"};
  f.help = "a 'quoted' help";
  m[0].flags = {f};
  EXPECT_NE(completion_script_zsh(m).find("'--x:a '\\''quoted'\\'' help'"), std::string::npos);
  EXPECT_NE(completion_script_fish(m).find("-d 'a \\'quoted\\' help'"), std::string::npos);
}

BuiltBox sample_box() {
  BuiltBox b;
  BoxSpec& s = b.spec;
  s.name = "web";
  s.image_ref = "docker.io/library/busybox:latest";
  s.lower_dirs = {"/l1", "/l2"};
  s.argv = {"sh", "-c", "echo hi"};
  s.env = {"A=1", "B=2"};
  s.cwd = "/srv";
  s.uid = 1000;
  s.gid = 100;
  s.hostname = "web";
  s.caps_keep = (1ull << 0) | (1ull << 5);  // CAP_CHOWN, CAP_KILL
  s.timeout_ms = 2000;
  s.limits.memory_max = 64ull << 20;
  s.limits.pids_max = 64;
  s.limits.cpus = 1.5;
  s.limits.cpuset_cpus = "0-1";
  s.limits.nice = 5;
  s.binds = {BindMount{"/src", "/dst", true}};
  s.tmpfs = {TmpfsMount{"/scratch", 1 << 20, "--tmpfs"}};
  s.devices = {DeviceGrant{"/dev/i2c-1", "/dev/i2c-1", "vgpio:sensors"}};
  b.profiles.plan = {"vcpu:heavy cpus=1.5"};
  return b;
}

// "key: value" lines -> the keys, in order, once each.
std::vector<std::string> text_keys(const std::string& text) {
  std::vector<std::string> keys;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::string k = line.substr(0, line.find(": "));
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  return keys;
}

TEST(PlanJson, ShowConfigJsonHasEveryKeyOfTheText) {
  BuiltBox b = sample_box();
  std::string text = show_config(b);
  nlohmann::json j = nlohmann::json::parse(show_config_json(b));
  for (const auto& k : text_keys(text)) EXPECT_TRUE(j.contains(k == "timeout" ? "timeout_ms" : k)) << k;
  EXPECT_EQ(j["name"], "web");
  EXPECT_EQ(j["command"], (std::vector<std::string>{"sh", "-c", "echo hi"}));
  EXPECT_EQ(j["env"].size(), 2u);
  EXPECT_EQ(j["user"]["uid"], 1000);
  EXPECT_EQ(j["memory_max"], 64ull << 20);
  EXPECT_TRUE(j["memory_swap_max"].is_null());  // the text's "default"
  EXPECT_EQ(j["pids_max"], 64);
  EXPECT_EQ(j["cpus"], 1.5);
  EXPECT_EQ(j["nice"], 5);
  EXPECT_EQ(j["timeout_ms"], 2000);
  EXPECT_EQ(j["bind"][0]["read_only"], true);
  EXPECT_EQ(j["tmpfs"][0]["size_bytes"], 1 << 20);
  EXPECT_EQ(j["device"][0]["origin"], "vgpio:sensors");
  EXPECT_NE(text.find("capabilities: CAP_CHOWN,CAP_KILL\n"), std::string::npos) << text;
  EXPECT_EQ(j["capabilities"], (std::vector<std::string>{"CAP_CHOWN", "CAP_KILL"}));
  b.spec.caps_keep = 0;
  EXPECT_NE(show_config(b).find("capabilities: none\n"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(show_config_json(b))["capabilities"], nlohmann::json::array());
}

TEST(PlanJson, ShowPlanJsonHasEveryStepOfTheText) {
  BuiltBox b = sample_box();
  std::string text = show_plan(b);
  nlohmann::json j = nlohmann::json::parse(show_plan_json(b));
  std::vector<std::string> mounts;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto at = line.find(" mount: ");
    if (line.rfind("4.", 0) == 0 && at != std::string::npos) mounts.push_back(line.substr(at + 8));
  }
  ASSERT_FALSE(mounts.empty());
  EXPECT_EQ(j["mounts"], mounts);
  EXPECT_EQ(j["cgroup"]["memory_max"], 64ull << 20);
  EXPECT_EQ(j["cgroup"]["cpuset_cpus"], "0-1");
  EXPECT_NE(text.find("namespaces user,pid,mount"), std::string::npos);
  EXPECT_EQ(j["namespaces"][0], "user");
  EXPECT_EQ(j["workload"]["argv"], (std::vector<std::string>{"sh", "-c", "echo hi"}));
  EXPECT_EQ(j["workload"]["cwd"], "/srv");
  EXPECT_EQ(j["device_grants"][0]["host_path"], "/dev/i2c-1");
  EXPECT_EQ(j["profiles"], (std::vector<std::string>{"vcpu:heavy cpus=1.5"}));
  EXPECT_EQ(j["hostname"], "web");
}

TEST(PlanJson, BytesThatAreNotUtf8DoNotThrow) {
  BuiltBox b = sample_box();
  b.spec.argv = {"echo", "\xff\xfe"};
  nlohmann::json j = nlohmann::json::parse(show_config_json(b));
  EXPECT_EQ(j["command"][1], "\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFD twice
}

}  // namespace
}  // namespace kern::cli
