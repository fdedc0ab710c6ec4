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

#include <unistd.h>

#include <filesystem>

#include "runtime/apparmor.h"
#include <fstream>

namespace kern::cli {
namespace {

// A fake /sys under a temp dir: AppArmor off, on without the profile, on with it.
TEST(DockerFlags, ApparmorFailsClosed) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("kern-aa-" + std::to_string(::getpid()));
  fs::create_directories(root / "sys/module/apparmor/parameters");
  fs::create_directories(root / "sys/kernel/security/apparmor");
  auto check = [&](const char* p) { return check_apparmor_profile(root.string(), p, std::string("--apparmor ") + p); };
  auto r = check("box");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("not enabled"), std::string::npos);
  std::ofstream(root / "sys/module/apparmor/parameters/enabled") << "Y\n";
  std::ofstream(root / "sys/kernel/security/apparmor/profiles") << "boxy (enforce)\nother (complain)\n";
  r = check("box");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("no such AppArmor profile is loaded"), std::string::npos);
  EXPECT_EQ(r.error().message(), "--apparmor box: no such AppArmor profile is loaded");
  EXPECT_TRUE(check("boxy").has_value()) << "a loaded profile is entered";
  EXPECT_FALSE(check("boxy (enforce)").has_value()) << "the mode is not part of the name";
  // Where the profiles file is root's only, the policy tree any user may read answers.
  fs::remove(root / "sys/kernel/security/apparmor/profiles");
  fs::create_directories(root / "sys/kernel/security/apparmor/policy/profiles/boxy.3");
  std::ofstream(root / "sys/kernel/security/apparmor/policy/profiles/boxy.3/name") << "boxy\n";
  EXPECT_TRUE(check("boxy").has_value());
  r = check("box");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("no such AppArmor profile is loaded"), std::string::npos);
  fs::remove_all(root / "sys/kernel/security/apparmor/policy");
  r = check("boxy");
  ASSERT_FALSE(r.has_value()) << "neither list readable: refused";
  EXPECT_NE(r.error().message().find("cannot read the loaded AppArmor profiles"), std::string::npos);
  fs::remove_all(root);
}

}  // namespace
}  // namespace kern::cli
