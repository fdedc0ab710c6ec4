// Docker's --device HOST[:BOX][:PERMS] (cli/device_flags.h): the split as Docker reads it, the
// box path rules, the permissions kern can honour, and the grant by identity.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cli/device_flags.h"

namespace kern::cli {
namespace {

std::string refusal(const std::string& value) {
  auto r = parse_device_flag(value);
  EXPECT_FALSE(r.has_value()) << value;
  if (r.has_value()) return "";
  return r.error().message() + " | " + r.error().hint();
}

TEST(DeviceFlag, SplitAsDockerReadsIt) {
  auto d = parse_device_flag("/dev/ttyUSB0");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->host, "/dev/ttyUSB0");
  EXPECT_EQ(d->box, "/dev/ttyUSB0");
  EXPECT_EQ(d->perms, "rwm");
  d = parse_device_flag("/dev/ttyUSB0:/dev/serial0");
  EXPECT_EQ(d->box, "/dev/serial0");
  // A second field of only r, w and m is the permissions, not a box path.
  d = parse_device_flag("/dev/ttyUSB0:rw");
  EXPECT_EQ(d->box, "/dev/ttyUSB0");
  EXPECT_EQ(d->perms, "rw");
  d = parse_device_flag("/srv/odd/node:/dev//x/y/:mwr");
  EXPECT_EQ(d->host, "/srv/odd/node");
  EXPECT_EQ(d->box, "/dev/x/y");
  EXPECT_EQ(d->perms, "mwr");
}

TEST(DeviceFlag, Refusals) {
  EXPECT_NE(refusal("dev/ttyUSB0").find("not absolute"), std::string::npos);
  EXPECT_NE(refusal("/dev/a:/dev/b:rw:x").find("HOST[:BOX][:PERMISSIONS]"), std::string::npos);
  EXPECT_NE(refusal("/dev/a:/srv/b").find("not under /dev/"), std::string::npos);
  EXPECT_NE(refusal("/dev/a:/dev").find("not under /dev/"), std::string::npos);
  EXPECT_NE(refusal("/dev/a:/dev/../etc/x").find("\"..\" component"), std::string::npos);
  EXPECT_NE(refusal("/dev/a:").find("box path is empty"), std::string::npos);
  for (const char* own : {"/dev/null", "/dev/tty", "/dev/pts/0", "/dev/shm/x", "/dev/fd", "/dev/ptmx", "/dev/zero"})
    EXPECT_NE(refusal(std::string("/dev/a:") + own).find("the box's own"), std::string::npos) << own;
  EXPECT_NE(refusal("/dev/a:/dev/b:r").find("cannot limit a granted node to reading or to writing"), std::string::npos);
  EXPECT_NE(refusal("/dev/a:/dev/b:wm").find("cannot limit"), std::string::npos);
  EXPECT_NE(refusal("/dev/a:/dev/b:rrw").find("not a set of r, w and m"), std::string::npos);
  EXPECT_NE(refusal("/dev/a:/dev/b:rwx").find("not a set of r, w and m"), std::string::npos);
  EXPECT_NE(refusal("/dev/a:rwx").find("is not an absolute path"), std::string::npos);  // not perms: a box path
}

// The grant is decided by identity: the node's rdev is recorded, the refusals of vgpio apply
// whatever the path is called, and one box path cannot take two nodes.
TEST(DeviceFlag, GrantByIdentity) {
  BoxSpec spec;
  auto r = add_device_flags({"/dev/null:/dev/mynull"}, spec);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind(), ErrorKind::config);
  EXPECT_NE(r.error().message().find("(char 1:3) is refused"), std::string::npos) << r.error().message();
  EXPECT_TRUE(spec.devices.empty());

  // A symlink with an innocent name to a refused node is still that node.
  std::string link = "/tmp/kern-devflag-" + std::to_string(::getpid());
  ASSERT_EQ(::symlink("/dev/zero", link.c_str()), 0);
  r = add_device_flags({link + ":/dev/innocent"}, spec);
  ::unlink(link.c_str());
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("(char 1:5) is refused"), std::string::npos) << r.error().message();

  r = add_device_flags({"/dev/kern-no-such-node"}, spec);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().sys_errno(), ENOENT);

  struct stat st;
  if (::stat("/dev/net/tun", &st) != 0 || !S_ISCHR(st.st_mode)) GTEST_SKIP() << "no /dev/net/tun here";
  r = add_device_flags({"/dev/net/tun", "/dev/net/tun:/dev/tun2:rw", "/dev/net/tun:rwm"}, spec);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(spec.devices.size(), 2u);  // the third is the first again
  EXPECT_EQ(spec.devices[0].host_path, "/dev/net/tun");
  EXPECT_EQ(spec.devices[0].box_path, "/dev/net/tun");
  EXPECT_EQ(spec.devices[0].origin, "--device");
  EXPECT_EQ(spec.devices[0].rdev, static_cast<uint64_t>(st.st_rdev));
  EXPECT_EQ(spec.devices[1].box_path, "/dev/tun2");
  DeviceGrant other = spec.devices[0];
  other.box_path = "/dev/x";
  other.rdev = ::makedev(1, 3);
  spec.devices.push_back(other);
  r = add_device_flags({"/dev/net/tun:/dev/x"}, spec);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("another node is granted"), std::string::npos);
}

}  // namespace
}  // namespace kern::cli
