// The architecture checks of a box's image (oci/box_platform.h).
#include "oci/box_platform.h"

#include <gtest/gtest.h>

namespace kern::oci {
namespace {

TEST(BoxPlatform, TheHostsCompatAbiIsRefusedNamingBoth) {
  for (auto [host, compat] : {std::pair{"arm64", "arm"}, std::pair{"amd64", "386"}}) {
    Status s = check_box_architecture("docker.io/library/x:1", compat, host);
    ASSERT_FALSE(s) << host;
    EXPECT_EQ(s.error().kind(), ErrorKind::image);
    EXPECT_NE(s.error().what().find(std::string("linux/") + compat), std::string::npos) << s.error().what();
    EXPECT_NE(s.error().what().find(host), std::string::npos) << s.error().what();
    EXPECT_NE(s.error().what().find("seccomp"), std::string::npos) << s.error().what();
  }
}

TEST(BoxPlatform, OtherArchitecturesAndUnknownPass) {
  // The native one, an unknown one (no architecture in the config), and foreign ones that
  // binfmt_misc may emulate are not refused; neither is arm on a host with no 32-bit ABI known.
  for (auto [host, image] : {std::pair{"arm64", "arm64"}, std::pair{"arm64", ""}, std::pair{"arm64", "amd64"},
                             std::pair{"amd64", "arm"}, std::pair{"amd64", "arm64"}, std::pair{"riscv64", "arm"}})
    EXPECT_TRUE(check_box_architecture("x", image, host)) << host << " " << image;
}

TEST(BoxPlatform, ExecFormatHintNamesBothOnlyWhenTheyDiffer) {
  std::string h = exec_format_hint("s390x", "arm64");
  EXPECT_NE(h.find("linux/s390x"), std::string::npos) << h;
  EXPECT_NE(h.find("linux/arm64"), std::string::npos) << h;
  EXPECT_EQ(exec_format_hint("arm64", "arm64"), "");
  EXPECT_EQ(exec_format_hint("", "arm64"), "");
}

}  // namespace
}  // namespace kern::oci
