// The block I/O flags (cli/io_limits.h): DEVICE:RATE parsing, the device checks and merging.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli/io_limits.h"
#include "tests/unit/test_require.h"

namespace kern::cli {
namespace {

std::string error_of(IoCap cap, const std::string& arg, const std::string& sysfs = "/sys") {
  std::vector<IoThrottle> list;
  auto s = add_io_limit(list, cap, arg, sysfs);
  return s ? std::string() : s.error().what();
}

// A block device node of this machine, "" when it has none.
std::string some_block_device() {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev", ec)) {
    struct stat st;
    if (::stat(e.path().c_str(), &st) == 0 && S_ISBLK(st.st_mode)) return e.path();
  }
  return "";
}

TEST(IoFlags, MalformedValuesAreRefusedWithTheFlagAndTheValue) {
  EXPECT_NE(error_of(IoCap::write_bps, "/dev/sda").find("--device-write-bps /dev/sda: expected DEVICE:RATE"), std::string::npos);
  EXPECT_NE(error_of(IoCap::write_bps, "/dev/sda:").find("expected DEVICE:RATE"), std::string::npos);
  EXPECT_NE(error_of(IoCap::read_bps, ":1m").find("expected DEVICE:RATE"), std::string::npos);
  EXPECT_NE(error_of(IoCap::read_bps, "sda:1m").find("absolute path"), std::string::npos);
  EXPECT_NE(error_of(IoCap::read_bps, "/dev/sda:0").find("above 0"), std::string::npos);
  EXPECT_NE(error_of(IoCap::read_bps, "/dev/sda:fast").find("--device-read-bps /dev/sda:fast"), std::string::npos);
  EXPECT_NE(error_of(IoCap::write_iops, "/dev/sda:1.5").find("whole number"), std::string::npos);
  EXPECT_NE(error_of(IoCap::write_iops, "/dev/sda:0").find("above 0"), std::string::npos);
  // Terminal escapes in the value are not echoed.
  EXPECT_EQ(error_of(IoCap::read_bps, "\x1b[31m").find('\x1b'), std::string::npos);
}

TEST(IoFlags, TheDeviceMustBeABlockDevice) {
  EXPECT_NE(error_of(IoCap::write_bps, "/dev/null:1m").find("\"/dev/null\" is not a block device"), std::string::npos);
  EXPECT_NE(error_of(IoCap::write_bps, "/nonexistent/disk:1m").find("stat \"/nonexistent/disk\""), std::string::npos);
}

TEST(IoFlags, ADiskIsTakenAndItsCapsMerged) {
  std::string dev = some_block_device();
  if (dev.empty()) KERN_SKIP_UNLESS_REQUIRED("block-device", "this machine has no block device node in /dev");
  struct stat st;
  ASSERT_EQ(::stat(dev.c_str(), &st), 0);
  char tmpl[] = "/tmp/kern-sysfs-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string sysfs = tmpl;  // a fake sysfs: the device is a whole disk there
  std::vector<IoThrottle> list;
  ASSERT_TRUE(add_io_limit(list, IoCap::write_bps, dev + ":1m", sysfs));
  ASSERT_TRUE(add_io_limit(list, IoCap::read_iops, dev + ":200", sysfs));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].major, ::major(st.st_rdev));
  EXPECT_EQ(list[0].minor, ::minor(st.st_rdev));
  EXPECT_EQ(list[0].wbps, 1048576u);
  EXPECT_EQ(list[0].riops, 200u);
  EXPECT_EQ(list[0].rbps, 0u);
  auto twice = add_io_limit(list, IoCap::write_bps, dev + ":2m", sysfs);
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().what().find("named twice"), std::string::npos);

  // The same numbers as a partition of "vdz": refused, and the disk is named.
  std::string node = sysfs + "/dev/block/" + std::to_string(::major(st.st_rdev)) + ":" + std::to_string(::minor(st.st_rdev));
  std::filesystem::create_directories(sysfs + "/devices/virtual/block/vdz/vdz1");
  std::filesystem::create_directories(sysfs + "/dev/block");
  std::filesystem::create_directory_symlink("../../devices/virtual/block/vdz/vdz1", node);
  std::filesystem::create_directories(node + "/");
  { FILE* f = std::fopen((node + "/partition").c_str(), "w"); ASSERT_NE(f, nullptr); std::fputs("1\n", f); std::fclose(f); }
  std::string err = error_of(IoCap::write_bps, dev + ":1m", sysfs);
  EXPECT_NE(err.find("is a partition; io.max caps whole disks, name /dev/vdz"), std::string::npos) << err;
  std::filesystem::remove_all(sysfs);
}

}  // namespace
}  // namespace kern::cli
