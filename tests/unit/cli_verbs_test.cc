// Which verbs app.cc builds for a command line: building every verb's CLI11 options cost most
// of kern's start-up, so only the named verb is built; help and unknown words still see all.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/verb.h"

namespace kern::cli {
namespace {

std::vector<std::string> names(const std::vector<RegisteredVerb>& v) {
  std::vector<std::string> out;
  for (const auto& r : v) out.emplace_back(r.name);
  return out;
}

TEST(Verbs, EveryVerbFileRegistersItsName) {
  auto all = names(verbs_for({}));
  for (const char* v : {"box", "run", "ps", "stop", "pull", "push", "images", "rmi", "tag", "load", "save", "gc",
                        "login", "logout", "kernel", "validate", "config", "doctor", "bench"})
    EXPECT_NE(std::find(all.begin(), all.end(), v), all.end()) << v;
}

TEST(Verbs, TheNamedVerbAloneIsBuilt) {
  EXPECT_EQ(names(verbs_for({"box", "--rootfs", "/r"})), std::vector<std::string>{"box"});
  EXPECT_EQ(names(verbs_for({"kernel", "start", "k"})), std::vector<std::string>{"kernel"});
}

TEST(Verbs, HelpFlagsAndUnknownWordsBuildAllInHelpOrder) {
  auto all = verbs_for({});
  ASSERT_GT(all.size(), 10u);
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LE(all[i - 1].order, all[i].order);
  EXPECT_EQ(verbs_for({"--help"}).size(), all.size());
  EXPECT_EQ(verbs_for({"--version"}).size(), all.size());
  EXPECT_EQ(verbs_for({"bogus", "box"}).size(), all.size());
  // Only the first word names the verb: a flag before it is not skipped over.
  EXPECT_EQ(verbs_for({"-q", "box"}).size(), all.size());
}

}  // namespace
}  // namespace kern::cli
