// kern build's stage plan: global ARGs (with --build-arg over their defaults) in FROM, stage
// names and numbers, --target, and the stages a target needs (FROM, COPY --from, RUN --mount from=).
#include <gtest/gtest.h>

#include "cli/build_inputs.h"

namespace kern::cli {
namespace {

StagePlan plan(const std::string& text, std::map<std::string, std::string> args = {}) {
  auto df = oci::build::parse_dockerfile(text);
  EXPECT_TRUE(df.has_value()) << (df ? "" : df.error().what());
  auto p = plan_stages(*df, args);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().what());
  return p ? *p : StagePlan{};
}

const char* kFile =
    "ARG BASE=busybox:1\n"
    "FROM ${BASE} AS Build\n"
    "RUN make\n"
    "FROM busybox AS unused\n"
    "RUN true\n"
    "FROM busybox AS assets\n"
    "ARG LEVEL\n"
    "FROM build AS final\n"
    "COPY --from=assets /a /a\n"
    "RUN --mount=type=bind,from=0,target=/x true\n";

TEST(BuildStages, GlobalArgsNamesAndNumbers) {
  StagePlan p = plan(kFile);
  ASSERT_EQ(p.stages.size(), 4u);
  EXPECT_EQ(p.stages[0].name, "build");  // any case, as Docker
  EXPECT_EQ(p.global_args.at("BASE"), "busybox:1");
  EXPECT_EQ(p.declared, (std::set<std::string>{"BASE", "LEVEL"}));
  EXPECT_EQ(*from_words(p, p.stages[0].from, '\\'), (std::vector<std::string>{"busybox:1", "AS", "Build"}));
  StagePlan over = plan(kFile, {{"BASE", "alpine:3"}});
  EXPECT_EQ(*from_words(over, over.stages[0].from, '\\'), (std::vector<std::string>{"alpine:3", "AS", "Build"}));
  EXPECT_EQ(stage_named(p, "BUILD", 3), std::optional<size_t>(0));
  EXPECT_EQ(stage_named(p, "1", 3), std::optional<size_t>(1));
  EXPECT_EQ(stage_named(p, "final", 3), std::nullopt);  // only earlier stages
  EXPECT_EQ(stage_named(p, "busybox", 3), std::nullopt);
}

TEST(BuildStages, TargetAndWhatItNeeds) {
  StagePlan p = plan(kFile);
  EXPECT_EQ(*target_stage(p, ""), 3u);
  EXPECT_EQ(*target_stage(p, "Assets"), 2u);
  auto bad = target_stage(p, "nope");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().hint(), "the stages are: build, unused, assets, final");
  EXPECT_EQ(*needed_stages(p, 3, '\\'), (std::set<size_t>{0, 2, 3}));  // "unused" is not built
  EXPECT_EQ(*needed_stages(p, 2, '\\'), (std::set<size_t>{2}));
}

TEST(BuildStages, RefusesWhatIsNotAStagePlan) {
  auto df = oci::build::parse_dockerfile("RUN true\n");
  ASSERT_TRUE(df.has_value());
  EXPECT_FALSE(plan_stages(*df, {}).has_value());
  df = oci::build::parse_dockerfile("FROM a b c d\n");
  ASSERT_TRUE(df.has_value());
  EXPECT_FALSE(plan_stages(*df, {}).has_value());
}

TEST(BuildStages, CommaFields) {
  EXPECT_EQ(comma_fields("type=cache,target=/x,rw", "true"),
            (std::vector<std::pair<std::string, std::string>>{{"type", "cache"}, {"target", "/x"}, {"rw", "true"}}));
}

}  // namespace
}  // namespace kern::cli
