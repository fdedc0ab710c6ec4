// man/kern.toml.5: its example passes the same checks as `kern validate`, and every key the
// parser accepts is documented there.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "profiles/profile_loader.h"
#include "profiles/toml_profiles.h"
#include "unit/profiles_text_file.h"

namespace kern::profiles {
namespace {

std::string manpage() {
  std::string path = std::string(KERN_SOURCE_DIR) + "/man/kern.toml.5";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines between .EX and .EE, with the roff escapes the example uses undone.
std::string example(const std::string& roff) {
  std::istringstream in(roff);
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == ".EX") { inside = true; continue; }
    if (line == ".EE") break;
    if (!inside) continue;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line.compare(i, 2, "\\-") == 0) { out += '-'; ++i; }
      else if (line.compare(i, 2, "\\e") == 0) { out += '\\'; ++i; }
      else out += line[i];
    }
    out += '\n';
  }
  return out;
}

TEST(ManPage, TheExamplePassesValidation) {
  std::string text = example(manpage());
  ASSERT_NE(text.find("[[vgpio]]"), std::string::npos) << "no example found";
  auto o = testing::check_text(text, inspect_device);
  ASSERT_TRUE(o) << o.error().what();
  ASSERT_TRUE(o->found);
  for (const auto& d : o->problems)
    EXPECT_FALSE(d.is_error()) << d.at.line << ":" << d.at.column << ": " << d.message;
  // The example shows every kind.
  EXPECT_EQ(o->set.cpu.size(), 1u);
  EXPECT_EQ(o->set.vcpu.size(), 2u);
  EXPECT_EQ(o->set.disk.size(), 1u);
  EXPECT_EQ(o->set.vdisk.size(), 2u);
  EXPECT_EQ(o->set.gpio.size(), 1u);
  EXPECT_EQ(o->set.vgpio.size(), 1u);
}

TEST(ManPage, EveryKeyIsDocumented) {
  std::string roff = manpage();
  for (const char* table : {"[[cpu]]", "[[vcpu]]", "[[disk]]", "[[vdisk]]", "[[gpio]]", "[[vgpio]]"})
    EXPECT_NE(roff.find(".SS " + std::string(table)), std::string::npos) << table;
  EXPECT_NE(roff.find(".SS [kern]"), std::string::npos);
  for (const char* key : {"id", "cores", "path", "name", "backend", "cpus", "cpuset", "numa", "memory", "nice",
                          "size", "chips", "i2c", "spi", "uart", "extra", "config_version", "log_level",
                          "crash_recovery", "warn_uncapped", "extends", "default", "iops", "bandwidth", "device",
                          "model", "persistent", "adc", "camera", "audio", "midi", "usb", "input", "display",
                          "bluetooth", "pins", "total_pins", "usb_ports"})
    EXPECT_NE(roff.find(".BR " + std::string(key) + " \""), std::string::npos) << key;
  for (const char* key : {"pwm", "onewire", "leds", "can", "net"})
    EXPECT_NE(roff.find(std::string(key) + " \""), std::string::npos) << key;
  // And the parser rejects a key the page does not list.
  ParseOutcome o = parse_profiles("[[vcpu]]\nname = \"a\"\nbackend = \"host\"\nweight = 3\n", "k.toml");
  ASSERT_EQ(o.problems.size(), 1u);
}

}  // namespace
}  // namespace kern::profiles
