// Whole-file checks (profiles/validation.h) with a fake device table, and the file loader.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "profiles/profile_loader.h"
#include "profiles/toml_profiles.h"
#include "profiles/validation.h"

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

// A host with two GPIO chips, one I2C bus, one SPI device, one UART, /dev/mem and a disk.
DeviceIdentity fake_host(const std::string& path) {
  static const std::map<std::string, DeviceIdentity> nodes = {
      {"/dev/gpiochip0", chr(254, 0, "gpiochip", "gpiochip0")},
      {"/dev/gpiochip1", chr(254, 1, "gpiochip", "gpiochip1")},
      {"/dev/i2c-1", chr(89, 1, "i2c", "i2c-1")},
      {"/dev/spidev0.0", chr(153, 0, "spi", "spidev0.0")},
      {"/dev/ttyS1", chr(4, 65, "ttyS", "ttyS1")},
      {"/dev/mem", chr(1, 1, "mem", "mem")},
      {"/dev/innocent", chr(1, 1, "mem", "mem")},  // /dev/mem under another name
      {"/dev/kvm", chr(10, 232, "misc", "kvm")},
      {"/dev/dri/card0", chr(226, 0, "drm", "dri/card0")},
      {"/dev/dri/renderD128", chr(226, 128, "drm", "dri/renderD128")},
  };
  auto it = nodes.find(path);
  if (it != nodes.end()) return it->second;
  DeviceIdentity d;
  if (path == "/dev/sda") {
    d.exists = true;
    d.is_block = true;
    d.major = 8;
    return d;
  }
  d.err = ENOENT;
  return d;
}

std::vector<Diagnostic> check(const std::string& text) {
  ParseOutcome o = parse_profiles(text, "k.toml");
  EXPECT_TRUE(o.problems.empty()) << (o.problems.empty() ? "" : o.problems[0].message);
  return validate_profiles(o.set, fake_host);
}

const char* kGood = R"([[cpu]]
id = "cpu:0"
cores = 2.0
[[vcpu]]
name = "heavy"
backend = "cpu:0"
cpus = 1.5
cpuset = "0-1"
[[disk]]
id = "disk:0"
path = "/var/tmp/kern-disks"
[[vdisk]]
name = "data"
backend = "disk:0"
size = "16m"
[[gpio]]
id = "gpio:0"
[[vgpio]]
name = "sensors"
backend = "gpio:0"
chips = ["0"]
i2c = ["i2c-1"]
spi = ["spidev0.0"]
uart = ["ttyS1"]
extra = ["/dev/dri/renderD128"]
)";

TEST(Validation, AGoodFileHasNoProblem) {
  auto p = check(kGood);
  EXPECT_TRUE(p.empty()) << p[0].message;
}

struct Case {
  std::string text;
  int line;
  std::string needle;
  bool warning = false;
};

TEST(Validation, EachErrorNamesItsLine) {
  const std::string vg = "[[vgpio]]\nname = \"g\"\nbackend = \"host\"\n";
  const Case cases[] = {
      {"[[vcpu]]\nname = \"a\"\nbackend = \"cpu:9\"\n", 3, "backend \"cpu:9\" is not a [[cpu]] id"},
      {"[[vdisk]]\nname = \"a\"\nbackend = \"disk:9\"\nsize = \"1m\"\n", 3, "is not \"ram\" or a [[disk]] id"},
      {"[[vgpio]]\nname = \"a\"\nbackend = \"gpio:9\"\nchips = [\"0\"]\n", 3, "is not a [[gpio]] id"},
      {"[[cpu]]\nid = \"gpu:0\"\n", 2, "expected cpu:NAME"},  // a bare "0" is cpu:0 (upstream)
      {"[[cpu]]\nid = \"cpu:0\"\n[[cpu]]\nid = \"cpu:0\"\n", 4, "defined twice"},
      {"[[vcpu]]\nname = \"a\"\nbackend = \"host\"\n[[vcpu]]\nname = \"a\"\nbackend = \"host\"\n", 5, "defined twice"},
      {"[[vcpu]]\nname = \"../x\"\nbackend = \"host\"\n", 2, "name \"../x\""},
      {"[[cpu]]\nid = \"cpu:0\"\ncores = 1.0\n[[vcpu]]\nname = \"a\"\nbackend = \"cpu:0\"\ncpus = 2\n", 7, "more than the 1 cores"},
      {"[[vcpu]]\nname = \"a\"\nbackend = \"host\"\ncpuset = \"3-1\"\n", 4, "descending"},
      {"[[vcpu]]\nname = \"a\"\nbackend = \"host\"\ncpuset = \"0\"\nnuma = 0\n", 5, "exclusive"},
      {"[[disk]]\nid = \"disk:0\"\npath = \"relative/dir\"\n", 3, "absolute path"},
      {"[[disk]]\nid = \"disk:0\"\npath = \"/var/../etc\"\n", 3, "absolute path"},
      {vg + "extra = [\"/dev/mem\"]\n", 4, "/dev/mem (host physical memory)"},
      {vg + "extra = [\"/dev/innocent\"]\n", 4, "(char 1:1) is refused"},
      {vg + "extra = [\"/dev/sda\"]\n", 4, "a block device"},
      {vg + "extra = [\"/dev/kvm\"]\n", 4, "kvm"},
      {vg + "extra = [\"/dev/dri/card0\"]\n", 4, "DRM primary node"},
      {vg + "extra = [\"/etc/shadow\"]\n", 4, "not a node under /dev/"},
      {vg + "extra = [\"/dev/../etc/shadow\"]\n", 4, ".. component"},
      {vg + "chips = [\"gpiochipX\"]\n", 4, "expected N, gpiochipN"},
      {vg + "i2c = [\"1\", \"/dev/i2c-1\"]\n", 4, "listed twice"},
      {vg + "uart = [\"ttyS7\"]\n", 4, "does not exist on this host", true},
      {"[[vgpio]]\nname = \"g\"\nbackend = \"host\"\n", 1, "lists no device"},
  };
  for (const Case& c : cases) {
    auto p = check(c.text);
    ASSERT_FALSE(p.empty()) << c.text;
    EXPECT_EQ(p[0].at.line, c.line) << c.text << " -> " << p[0].message;
    EXPECT_NE(p[0].message.find(c.needle), std::string::npos) << c.text << " -> " << p[0].message;
    EXPECT_EQ(p[0].warning, c.warning) << c.text;
  }
}

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-profiles-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string write(const std::string& name, const std::string& text) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  std::string dir_;
};

TEST_F(LoaderTest, MissingFileIsEmptyOnlyWhenAllowed) {
  auto ok = load_profiles(dir_ + "/none.toml", true);
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->vcpu.empty());
  auto bad = load_profiles(dir_ + "/none.toml", false);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind(), ErrorKind::config);
}

TEST_F(LoaderTest, FirstErrorWithFileLineColumnAndACount) {
  std::string p = write("k.toml", "[[vcpu]]\nname = \"a\"\nbackend = \"host\"\ncpuz = 1\nmemroy = 1\n");
  auto r = load_profiles(p, true);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::config);
  EXPECT_EQ(r.error().message().rfind(p + ":4:1: ", 0), 0u) << r.error().message();
  EXPECT_NE(r.error().message().find("and 1 more; run: kern validate"), std::string::npos) << r.error().message();
}

TEST_F(LoaderTest, ADirectoryIsNotAConfiguration) {
  auto r = load_profiles(dir_, true);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("not a regular file"), std::string::npos);
}

}  // namespace
}  // namespace kern::profiles
