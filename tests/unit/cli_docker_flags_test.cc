// Docker's spellings (cli/docker_flags.h): --name against the bare word, --entrypoint's command,
// the --privileged refusal.
#include <gtest/gtest.h>

#include "cli/docker_flags.h"

namespace kern::cli {
namespace {

TEST(DockerFlags, NameOnceEitherWay) {
  DockerOptions o;
  EXPECT_EQ(*docker_box_name(o, "a"), "a");
  o.name = "b";
  EXPECT_EQ(*docker_box_name(o, ""), "b");
  EXPECT_EQ(*docker_box_name(o, "b"), "b");
  auto both = docker_box_name(o, "a");
  ASSERT_FALSE(both.has_value());
  EXPECT_NE(both.error().message().find("two box names"), std::string::npos);
}

TEST(DockerFlags, EntrypointReplacesImageEntrypointAndCmd) {
  DockerOptions o;
  EXPECT_FALSE(entrypoint_command(o, {"x"}).has_value());
  o.entrypoint = "/bin/echo";
  EXPECT_EQ(*entrypoint_command(o, {"hi"}), (std::vector<std::string>{"/bin/echo", "hi"}));
  EXPECT_EQ(*entrypoint_command(o, {}), (std::vector<std::string>{"/bin/echo"}));
  o.entrypoint = "";
  EXPECT_EQ(*entrypoint_command(o, {"ls", "-l"}), (std::vector<std::string>{"ls", "-l"}));
}

TEST(DockerFlags, PrivilegedIsRefusedWithItsReason) {
  DockerOptions o;
  EXPECT_TRUE(check_docker_flags(o).has_value());
  o.privileged = true;
  auto r = check_docker_flags(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind(), ErrorKind::usage);
  EXPECT_NE(r.error().message().find("--privileged is refused"), std::string::npos);
}

}  // namespace
}  // namespace kern::cli
