// Profile tokens on the command line (profiles/profile_token.h).
#include <gtest/gtest.h>

#include "profiles/profile_token.h"

namespace kern::profiles {
namespace {

TEST(ProfileToken, ParsesTheThreeKinds) {
  auto a = parse_profile_token("vcpu:heavy");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, ProfileKind::vcpu);
  EXPECT_EQ(a->name, "heavy");
  EXPECT_EQ(parse_profile_token("vdisk:scratch.1")->kind, ProfileKind::vdisk);
  EXPECT_EQ(parse_profile_token("vgpio:Sensors_2-b")->kind, ProfileKind::vgpio);
}

TEST(ProfileToken, MalformedTokensNameTheToken) {
  for (const char* t : {"vcpu:../x", "vgpio:a;b", "vcpu:", "vdisk:.hidden", "vcpu:-x", "vcpu:a/b",
                        "vcpu:a b", "vcpu:\x1b[31mred"}) {
    auto r = parse_profile_token(t);
    ASSERT_FALSE(r) << t;
    EXPECT_EQ(r.error().kind(), ErrorKind::config);
    EXPECT_NE(r.error().message().find("profile token"), std::string::npos);
    EXPECT_EQ(r.error().message().find('\x1b'), std::string::npos) << "escape echoed";
  }
  auto r = parse_profile_token("vgpio:a;b");
  EXPECT_NE(r.error().message().find("\"vgpio:a;b\""), std::string::npos) << r.error().message();
}

TEST(ProfileToken, UnknownKind) {
  auto r = parse_profile_token("vram:big");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("unknown kind \"vram\""), std::string::npos) << r.error().message();
}

TEST(ProfileToken, WhatLooksLikeAToken) {
  EXPECT_TRUE(looks_like_profile_token("vcpu:x"));
  EXPECT_TRUE(looks_like_profile_token("vram:x"));
  EXPECT_TRUE(looks_like_profile_token("vgpio:a;b"));
  EXPECT_FALSE(looks_like_profile_token("mybox"));
  EXPECT_FALSE(looks_like_profile_token("/bin/sh"));
  EXPECT_FALSE(looks_like_profile_token(":x"));
  EXPECT_FALSE(looks_like_profile_token("Vcpu:x"));
  EXPECT_FALSE(looks_like_profile_token("./a:b"));
}

TEST(ProfileToken, NameRule) {
  EXPECT_TRUE(valid_profile_name("a"));
  EXPECT_TRUE(valid_profile_name(std::string(64, 'a')));
  EXPECT_FALSE(valid_profile_name(std::string(65, 'a')));
  EXPECT_FALSE(valid_profile_name(""));
  EXPECT_FALSE(valid_profile_name("_a"));
}

}  // namespace
}  // namespace kern::profiles
