// vgpio device refusal by identity (profiles/device_policy.h): the number decides, not the path.
#include <gtest/gtest.h>

#include "profiles/device_policy.h"

namespace kern::profiles {
namespace {

DeviceIdentity chr(unsigned M, unsigned m, std::string driver = "", std::string name = "") {
  DeviceIdentity d;
  d.exists = true;
  d.is_char = true;
  d.major = M;
  d.minor = m;
  d.driver = std::move(driver);
  d.kernel_name = std::move(name);
  return d;
}

TEST(DevicePolicy, RefusedByNumberWhateverTheName) {
  struct R {
    unsigned M, m;
  };
  const R refused[] = {{1, 1}, {1, 2}, {1, 4}, {1, 11}, {10, 232}, {10, 229}, {10, 223}, {10, 196},
                       {10, 237}, {10, 236}, {10, 130}, {4, 0}, {4, 1}, {4, 63}, {5, 1}, {5, 0},
                       {226, 0}, {226, 63}, {226, 64}, {13, 64}, {21, 0}, {29, 0}, {7, 0}, {136, 3},
                       {202, 0}, {90, 0}};
  for (const R& r : refused) {
    auto why = refusal_reason(chr(r.M, r.m, "", "harmless-looking-name"));
    EXPECT_TRUE(why.has_value()) << r.M << ":" << r.m;
  }
}

TEST(DevicePolicy, BlockDevicesAndNonNodesAreRefused) {
  DeviceIdentity blk;
  blk.exists = true;
  blk.is_block = true;
  blk.major = 7;  // a loop device
  EXPECT_TRUE(refusal_reason(blk).has_value());
  DeviceIdentity file;
  file.exists = true;
  EXPECT_TRUE(refusal_reason(file).has_value());
}

TEST(DevicePolicy, DynamicNumbersRefusedByTheKernelsNames) {
  EXPECT_TRUE(refusal_reason(chr(245, 0, "vfio", "vfio/12")).has_value());
  EXPECT_TRUE(refusal_reason(chr(240, 0, "nvme-generic", "ng0n1")).has_value());
  EXPECT_TRUE(refusal_reason(chr(10, 120, "misc", "vsock")).has_value());
  EXPECT_TRUE(refusal_reason(chr(10, 121, "misc", "userfaultfd")).has_value());
  EXPECT_TRUE(refusal_reason(chr(10, 122, "misc", "vhost-vdpa")).has_value());
  EXPECT_TRUE(refusal_reason(chr(250, 0, "tpmrm", "tpmrm0")).has_value());
  EXPECT_TRUE(refusal_reason(chr(251, 0, "watchdog", "watchdog0")).has_value());
}

TEST(DevicePolicy, TheDevicesVgpioIsForAreAllowed) {
  EXPECT_FALSE(refusal_reason(chr(254, 0, "gpiochip", "gpiochip0")).has_value());
  EXPECT_FALSE(refusal_reason(chr(89, 1, "i2c", "i2c-1")).has_value());
  EXPECT_FALSE(refusal_reason(chr(153, 0, "spi", "spidev0.0")).has_value());
  EXPECT_FALSE(refusal_reason(chr(4, 64, "ttyS", "ttyS0")).has_value());
  EXPECT_FALSE(refusal_reason(chr(188, 0, "ttyUSB", "ttyUSB0")).has_value());
  EXPECT_FALSE(refusal_reason(chr(226, 128, "drm", "dri/renderD128")).has_value());
}

TEST(DevicePolicy, RealHostNodesAreInspectedByNumber) {
  DeviceIdentity null = inspect_device("/dev/null");
  ASSERT_TRUE(null.exists);
  EXPECT_TRUE(null.is_char);
  EXPECT_EQ(null.major, 1u);
  EXPECT_EQ(null.minor, 3u);
  EXPECT_TRUE(refusal_reason(null).has_value());  // major 1: the box has its own
  DeviceIdentity none = inspect_device("/dev/definitely-not-here");
  EXPECT_FALSE(none.exists);
  EXPECT_EQ(none.err, ENOENT);
  DeviceIdentity dir = inspect_device("/dev");
  EXPECT_TRUE(dir.exists);
  EXPECT_TRUE(refusal_reason(dir).has_value());
}

TEST(DeviceEntries, ShortFormsResolveUnderDev) {
  EXPECT_EQ(*resolve_device_entry(DeviceClass::chip, "0"), "/dev/gpiochip0");
  EXPECT_EQ(*resolve_device_entry(DeviceClass::chip, "gpiochip3"), "/dev/gpiochip3");
  EXPECT_EQ(*resolve_device_entry(DeviceClass::i2c, "1"), "/dev/i2c-1");
  EXPECT_EQ(*resolve_device_entry(DeviceClass::i2c, "i2c-1"), "/dev/i2c-1");
  EXPECT_EQ(*resolve_device_entry(DeviceClass::i2c, "/dev/i2c-1"), "/dev/i2c-1");
  EXPECT_EQ(*resolve_device_entry(DeviceClass::spi, "0.0"), "/dev/spidev0.0");
  EXPECT_EQ(*resolve_device_entry(DeviceClass::spi, "spidev1.2"), "/dev/spidev1.2");
  EXPECT_EQ(*resolve_device_entry(DeviceClass::uart, "ttyS1"), "/dev/ttyS1");
  EXPECT_EQ(*resolve_device_entry(DeviceClass::uart, "/dev/ttyAMA0"), "/dev/ttyAMA0");
  EXPECT_EQ(*resolve_device_entry(DeviceClass::extra, "/dev/serial/by-id/x"), "/dev/serial/by-id/x");
  for (auto [c, t] : std::initializer_list<std::pair<DeviceClass, const char*>>{
           {DeviceClass::extra, "mem"}, {DeviceClass::extra, "/dev/"}, {DeviceClass::extra, "/dev"},
           {DeviceClass::extra, "/dev//mem"}, {DeviceClass::extra, "/dev/./mem"}, {DeviceClass::extra, "/dev/a/../mem"},
           {DeviceClass::extra, "/dev/x/"}, {DeviceClass::extra, "/proc/kcore"}, {DeviceClass::i2c, "i2c-x"},
           {DeviceClass::spi, "0"}, {DeviceClass::uart, "../ttyS1"}, {DeviceClass::chip, "-1"},
           {DeviceClass::extra, "/dev/a b"}})
    EXPECT_FALSE(resolve_device_entry(c, t)) << t;
}

}  // namespace
}  // namespace kern::profiles
