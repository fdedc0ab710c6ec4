// The documents `kern oci spec` and `features` print, and signal names for `kern oci kill`.
#include <gtest/gtest.h>

#include <algorithm>

#include <csignal>
#include <nlohmann/json.hpp>

#include "runtime/bundle/config.h"
#include "runtime/bundle/documents.h"
#include "runtime/bundle/signal_name.h"

namespace kern::bundle {
namespace {

TEST(BundleDocuments, DefaultSpecIsAcceptedByTheParser) {
  for (bool rootless : {false, true}) {
    auto c = parse_config(default_spec(rootless, 1000, 1000, rootless));
    ASSERT_TRUE(c.has_value()) << c.error().what();
    bool has_cgroup = false;
    for (const auto& ns : c->linux_config->namespaces) has_cgroup |= ns.type == "cgroup";
    EXPECT_EQ(has_cgroup, rootless);
    EXPECT_TRUE(check_supported(*c, HostFacts{}).has_value());
    bool has_user = false;
    for (const auto& ns : c->linux_config->namespaces) has_user |= ns.type == "user";
    EXPECT_EQ(has_user, rootless);
    if (rootless) {
      ASSERT_EQ(c->linux_config->uid_mappings.size(), 1u);
      EXPECT_EQ(c->linux_config->uid_mappings[0].host_id, 1000u);
      EXPECT_FALSE(c->linux_config->resources.has_value());
    }
  }
}

TEST(BundleDocuments, FeaturesSayWhatIsCarriedOut) {
  auto f = nlohmann::json::parse(features_json());
  EXPECT_EQ(f["ociVersionMin"], "1.0.0");
  EXPECT_TRUE(f["linux"]["seccomp"]["enabled"].get<bool>());
  EXPECT_NE(std::find(f["linux"]["seccomp"]["actions"].begin(), f["linux"]["seccomp"]["actions"].end(), "SCMP_ACT_NOTIFY"),
            f["linux"]["seccomp"]["actions"].end());
  EXPECT_EQ(f["linux"]["namespaces"].size(), 8u);
  EXPECT_EQ(f["linux"]["capabilities"][0], "CAP_CHOWN");
  EXPECT_TRUE(f["linux"]["cgroup"]["v2"].get<bool>());
  EXPECT_TRUE(f["linux"]["cgroup"]["v1"].get<bool>());
  auto opts = f["mountOptions"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(opts.begin(), opts.end(), "rbind"), opts.end());
  EXPECT_EQ(std::find(opts.begin(), opts.end(), "idmap"), opts.end());  // refused at create
  EXPECT_EQ(f["hooks"].size(), 6u);
  EXPECT_FALSE(f["linux"]["intelRdt"]["enabled"].get<bool>());
}

TEST(BundleSignals, NamesNumbersAndRealtime) {
  EXPECT_EQ(*parse_signal("KILL"), SIGKILL);
  EXPECT_EQ(*parse_signal("SIGTERM"), SIGTERM);
  EXPECT_EQ(*parse_signal("sigusr1"), SIGUSR1);
  EXPECT_EQ(*parse_signal("9"), 9);
  EXPECT_EQ(*parse_signal("SIGRTMIN+2"), SIGRTMIN + 2);
  EXPECT_EQ(*parse_signal("RTMAX-1"), SIGRTMAX - 1);
  EXPECT_EQ(*parse_signal("0"), 0);  // a probe, as with runc (`kill ID 0`)
  for (const char* bad : {"", "999", "SIGNOPE", "RTMIN+999", "RTMINx", "-9"})
    EXPECT_FALSE(parse_signal(bad).has_value()) << bad;
}

}  // namespace
}  // namespace kern::bundle
