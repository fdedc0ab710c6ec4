// kern.toml parsing (profiles/toml_profiles.h): every key of kern.toml(5), types, units,
// unknown keys and syntax errors with their line and column.
#include <gtest/gtest.h>

#include "profiles/toml_profiles.h"
#include "profiles/units.h"

namespace kern::profiles {
namespace {

const char* kFull = R"([[cpu]]
id = "cpu:0"
cores = 8.0

[[vcpu]]
name = "heavy"
backend = "cpu:0"
cpus = 1.5
cpuset = "0-3"
memory = "512m"
nice = 5

[[vcpu]]
name = "light"
backend = "host"
cpus = "0.25"
numa = 0
memory = 67108864

[[disk]]
id = "disk:0"
path = "/var/tmp/kern-disks"

[[vdisk]]
name = "scratch"
backend = "ram"
size = "2g"

[[gpio]]
id = "gpio:0"

[[vgpio]]
name = "sensors"
backend = "gpio:0"
chips = ["/dev/gpiochip0"]
i2c = ["1", 2]
spi = ["0.0"]
uart = ["/dev/ttyS1"]
extra = ["/dev/watchdog-not"]
)";

TEST(Parser, ReadsEveryKey) {
  ParseOutcome o = parse_profiles(kFull, "k.toml");
  ASSERT_TRUE(o.problems.empty()) << o.problems[0].message;
  const ProfileSet& s = o.set;
  ASSERT_EQ(s.cpu.size(), 1u);
  EXPECT_EQ(s.cpu[0].id, "cpu:0");
  EXPECT_DOUBLE_EQ(*s.cpu[0].cores, 8.0);
  ASSERT_EQ(s.vcpu.size(), 2u);
  const VcpuProfile& h = *s.find_vcpu("heavy");
  EXPECT_EQ(h.backend, "cpu:0");
  EXPECT_DOUBLE_EQ(*h.cpus, 1.5);
  EXPECT_EQ(h.cpuset, "0-3");
  EXPECT_EQ(*h.memory, 512 * kMiB);
  EXPECT_EQ(*h.nice, 5);
  EXPECT_EQ(h.at.table.line, 5);
  EXPECT_EQ(h.at.of("cpus").line, 8);
  EXPECT_EQ(h.at.of("cpus").column, 1);
  const VcpuProfile& l = *s.find_vcpu("light");
  EXPECT_DOUBLE_EQ(*l.cpus, 0.25);
  EXPECT_EQ(*l.numa, 0u);
  EXPECT_EQ(*l.memory, 64 * kMiB);
  EXPECT_EQ(s.disk[0].path, "/var/tmp/kern-disks");
  EXPECT_EQ(s.find_vdisk("scratch")->size, 2 * kGiB);
  EXPECT_EQ(s.find_vdisk("scratch")->backend, "ram");
  EXPECT_EQ(s.gpio[0].id, "gpio:0");
  const VgpioProfile& g = *s.find_vgpio("sensors");
  ASSERT_EQ(g.i2c.size(), 2u);
  EXPECT_EQ(g.i2c[1].text, "2");
  EXPECT_EQ(g.i2c[1].at.line, 36);
  EXPECT_EQ(g.i2c[1].at.column, 13);
  EXPECT_EQ(g.spi[0].text, "0.0");
  EXPECT_EQ(g.uart[0].text, "/dev/ttyS1");
  EXPECT_EQ(g.extra[0].text, "/dev/watchdog-not");
}

TEST(Parser, EmptyFileIsAnEmptySet) {
  ParseOutcome o = parse_profiles("# nothing\n", "k.toml");
  EXPECT_TRUE(o.problems.empty());
  EXPECT_TRUE(o.set.vcpu.empty());
}

struct Bad {
  const char* text;
  int line;
  int column;
  const char* needle;
};

TEST(Parser, EveryProblemHasItsLocation) {
  const Bad cases[] = {
      {"[[vcpu]]\nname = \"a\"\nbackend = \"host\"\ncpu = 2\n", 4, 1, "unknown key \"cpu\" (did you mean \"cpus\"?)"},
      {"[[vcpus]]\nname = \"a\"\n", 1, 3, "unknown key \"vcpus\""},
      {"[[vcpu]]\nname = \"a\"\nbackend = \"host\"\nzzzz = 1\n", 4, 1, "expected name, backend"},
      {"[vcpu]\nname = \"a\"\n", 1, 1, "must be an array of tables: write [[vcpu]]"},
      {"[[vcpu]]\nname = \"a\"\nbackend = \"host\"\nmemory = \"12q\"\n", 4, 10, "bad size \"12q\""},
      {"[[vcpu]]\nname = \"a\"\nbackend = \"host\"\nmemory = 512\n", 4, 10, "did you mean 512m?"},
      {"[[vcpu]]\nname = \"a\"\nbackend = \"host\"\ncpus = 0\n", 4, 8, "out of range"},
      {"[[vcpu]]\nname = \"a\"\nbackend = \"host\"\ncpus = \"lots\"\n", 4, 8, "bad cpu amount"},
      {"[[vcpu]]\nname = \"a\"\nbackend = \"host\"\nnice = 40\n", 4, 8, "40 is out of range (-20 to 19)"},
      {"[[vcpu]]\nname = \"a\"\nbackend = \"host\"\nnice = \"5\"\n", 4, 8, "expected a whole number"},
      {"[[vcpu]]\nname = 7\nbackend = \"host\"\n", 2, 8, "name: expected a string"},
      {"[[vcpu]]\nname = \"a\"\n", 1, 1, "missing required key \"backend\""},
      {"[[vdisk]]\nname = \"a\"\nbackend = \"ram\"\n", 1, 1, "missing required key \"size\""},
      {"[[vdisk]]\nname = \"a\"\nbackend = \"ram\"\nsize = \"1k\"\n", 4, 8, "below the minimum"},
      {"[[vgpio]]\nname = \"a\"\nbackend = \"host\"\nchips = \"/dev/gpiochip0\"\n", 4, 9, "expected an array of strings"},
      {"[[vgpio]]\nname = \"a\"\nbackend = \"host\"\nspi = [1]\n", 4, 8, "spi: expected a string"},
      {"[[cpu]]\nid = \"cpu:0\"\ncores = -1.0\n", 3, 9, "out of range"},
      {"[[cpu]]\nid = \"cpu:0\"\nid = \"cpu:1\"\n", 3, 6, "redefin"},
      {"[[cpu]\n", 1, 7, "expected"},
      {"x = \"unterminated\n", 1, 18, ""},
  };
  for (const Bad& b : cases) {
    ParseOutcome o = parse_profiles(b.text, "k.toml");
    ASSERT_FALSE(o.problems.empty()) << b.text;
    const Diagnostic& d = o.problems[0];
    EXPECT_EQ(d.at.line, b.line) << b.text << " -> " << d.message;
    EXPECT_EQ(d.at.column, b.column) << b.text << " -> " << d.message;
    EXPECT_NE(d.message.find(b.needle), std::string::npos) << b.text << " -> " << d.message;
    EXPECT_EQ(o.set.where(d.at), "k.toml:" + std::to_string(b.line) + ":" + std::to_string(b.column));
  }
}

TEST(Parser, AllProblemsAreReportedNotJustTheFirst) {
  ParseOutcome o = parse_profiles("[[vcpu]]\nname = \"a\"\nbackend = \"host\"\ncpuz = 1\nmemroy = \"1g\"\n", "k.toml");
  ASSERT_EQ(o.problems.size(), 2u);
  EXPECT_EQ(o.problems[0].at.line, 4);
  EXPECT_EQ(o.problems[1].at.line, 5);
}

TEST(Parser, TerminalEscapesFromTheFileAreNeverEchoed) {
  ParseOutcome o = parse_profiles("[[vcpu]]\nname = \"a\"\nbackend = \"host\"\n\"\\u001b[2J\" = 1\n", "k.toml");
  ASSERT_EQ(o.problems.size(), 1u);
  EXPECT_EQ(o.problems[0].message.find('\x1b'), std::string::npos) << o.problems[0].message;
  EXPECT_NE(o.problems[0].message.find("\\x1b"), std::string::npos) << o.problems[0].message;
  ParseOutcome p = parse_profiles("[[vdisk]]\nname = \"a\"\nbackend = \"ram\"\nsize = \"\\u001b]0;x\\u0007\"\n", "k.toml");
  ASSERT_EQ(p.problems.size(), 1u);
  EXPECT_EQ(p.problems[0].message.find('\x1b'), std::string::npos) << p.problems[0].message;
  EXPECT_EQ(p.problems[0].message.find('\x07'), std::string::npos) << p.problems[0].message;
}

// Issue 21 item 19: a key nested past kMaxKeyDepth (a dotted key, a table header, inline
// tables) is an error at its line and column before toml++ reads the text (80,000 parts used to
// overflow the stack); strings, comments and floats holding dots are not keys.
TEST(Parser, KeyDepthIsBoundedBeforeTomlxxReadsTheText) {
  auto dotted = [](size_t n, const char* part) {
    std::string k = part;
    for (size_t i = 1; i < n; ++i) k += std::string(".") + part;
    return k;
  };
  struct Case {
    std::string text;
    int line, column;
    size_t depth;
  };
  std::vector<Case> deep = {
      {"[kern]\nwarn_uncapped = true\n" + dotted(80000, "a") + " = 1\n", 3, 1, 80001},
      {"# c\n\n  [" + dotted(65, "t") + "]\n", 3, 4, 65},
      {"[[" + dotted(40, "\"q.x\"") + "]]\n" + dotted(25, "k") + " = 2\n", 2, 1, 65},
      {"x = { a = 1, " + dotted(70, "b") + " = 2 }\n", 1, 14, 71},
      {"[" + dotted(30, "t") + "]\ny = [ { " + dotted(34, "c") + " = 1 } ]\n", 2, 9, 66},
      {"s = \"\"\"\n" + dotted(100, "a") + "\n\"\"\"\n" + dotted(65, "k") + " = 0\n", 4, 1, 65},
  };
  for (const auto& c : deep) {
    ParseOutcome p = parse_profiles(c.text, "k.toml");
    ASSERT_EQ(p.problems.size(), 1u) << c.text.substr(0, 80);
    const Diagnostic& d = p.problems[0];
    EXPECT_EQ(d.at.line, c.line) << c.text.substr(0, 80);
    EXPECT_EQ(d.at.column, c.column) << c.text.substr(0, 80);
    EXPECT_EQ(d.message, "a key nested " + std::to_string(c.depth) +
                             " tables deep (at most 64: kern.toml's tables are two deep)");
  }
  // At the bound, and dots that are not keys: no depth error (toml++ then judges the text).
  for (const std::string& text :
       {"[" + dotted(64, "t") + "]\n", dotted(64, "k") + " = 1\n",
        "a = \"" + dotted(500, "x") + "\" # " + dotted(500, "y") + "\nb = 1.5\n",
        "c = '''\n" + dotted(500, "z") + "\n'''\n", "d = [" + dotted(3, "1") + "]\n"}) {
    ParseOutcome p = parse_profiles(text, "k.toml");
    for (const auto& d : p.problems) EXPECT_EQ(d.message.find("tables deep"), std::string::npos) << d.message;
  }
}

}  // namespace
}  // namespace kern::profiles
