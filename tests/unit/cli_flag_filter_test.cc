// FlagFilter: the box verb built with only the flags its words can name parses those words as
// the box verb built with every flag does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/box_options.h"
#include "cli/flag_filter.h"

namespace kern::cli {
namespace {

TEST(FlagFilter, WantsEveryOptionTheWordsCanName) {
  FlagFilter f({"-qe", "K=V", "--rootfs=/r", "--net", "x", "-m512m"});
  EXPECT_TRUE(f.wants("-q,--quiet"));
  EXPECT_TRUE(f.wants("-e,--env"));
  EXPECT_TRUE(f.wants("-m,--memory"));
  EXPECT_TRUE(f.wants("--rootfs"));
  EXPECT_TRUE(f.wants("--net,--network"));
  EXPECT_TRUE(f.wants("positionals"));  // positionals are always built
  EXPECT_FALSE(f.wants("--image"));
  EXPECT_FALSE(f.wants("-t,--tty"));
  EXPECT_FALSE(f.wants("--json"));
  EXPECT_FALSE(f.wants("--env-file"));  // a name is matched whole, never as a prefix
  EXPECT_FALSE(f.everything());
}

TEST(FlagFilter, HelpAndNoFilterWantEverything) {
  for (const auto& words : std::vector<std::vector<std::string>>{{"--help"}, {"-h"}, {"-th"}, {"--help-all"}}) {
    FlagFilter f(words);
    EXPECT_TRUE(f.everything()) << words[0];
    EXPECT_TRUE(f.wants("--json")) << words[0];
  }
  EXPECT_TRUE(FlagFilter().wants("--anything"));
}

struct Parsed {
  BoxOptions o;
  std::vector<std::string> extras;
  std::string error;
  size_t options = 0;
};

// What the parse set, one field after another.
std::string summary(const BoxOptions& o) {
  std::string out;
  auto add = [&](const std::string& s) { out += s + "|"; };
  auto list = [&](const std::vector<std::string>& v) {
    for (const auto& s : v) out += s + ",";
    out += "|";
  };
  list(o.positionals), list(o.env), list(o.volumes), list(o.cap_drop), list(o.netx.egress_allow);
  list(o.limits.io.read_bps);
  add(o.rootfs), add(o.image), add(o.timeout), add(o.net ? "net=" + *o.net : "-"), add(o.docker.name);
  add(o.limits.memory.value_or("")), add(o.limits.cpus), add(o.limits.pids);
  for (bool b : {o.quiet, o.interactive, o.tty, o.read_only, o.uid_range, o.limits.allow_uncapped}) out += b ? '1' : '0';
  return out;
}

Parsed parse(const std::vector<std::string>& words, const FlagFilter& f) {
  Parsed p;
  CLI::App app{"t", "kern"};
  CLI::App* box = app.add_subcommand("box", "");
  add_box_flags(box, p.o, f);
  app.allow_extras();
  box->allow_extras();
  for (const CLI::App* g : box->get_subcommands([](const CLI::App*) { return true; })) p.options += g->get_options().size();
  p.options += box->get_options().size();
  std::vector<std::string> argv{"box"};
  argv.insert(argv.end(), words.begin(), words.end());
  std::vector<std::string> reversed(argv.rbegin(), argv.rend());
  try {
    app.parse(reversed);
    p.extras = box->remaining();
  } catch (const CLI::Error& e) {
    p.error = e.what();
  }
  return p;
}

TEST(FlagFilter, TheFilteredBoxVerbParsesAsTheFullOne) {
  const std::vector<std::vector<std::string>> lines = {
      {"-q", "--allow-uncapped", "--rootfs", "/r"},
      {"--rootfs=/r", "-qeA=1", "-e", "B=2", "--net", "host", "-m", "64m", "web", "vcpu:small"},
      {"-it", "--image", "busybox", "--timeout", "2s", "--cpus", "0.5", "-v", "/a:/b", "-v", "/c:/d:ro"},
      {"--net", "--egress-allow", "example.org", "--pids-limit", "9", "--device-read-bps", "/dev/sda:1m"},
      {"--rootfs", "/r", "--bogus", "x", "--imag", "y"},
      {"--timeout"},
      {"-d", "--rm", "--name", "n", "--read-only", "--cap-drop", "ALL", "--uid-range"},
  };
  for (const auto& words : lines) {
    Parsed full = parse(words, FlagFilter());
    Parsed some = parse(words, FlagFilter(words));
    std::string at = words.front() + " ...";
    EXPECT_LT(some.options, full.options) << at;
    EXPECT_EQ(some.error, full.error) << at;
    EXPECT_EQ(some.extras, full.extras) << at;
    EXPECT_EQ(summary(some.o), summary(full.o)) << at;
  }
}

}  // namespace
}  // namespace kern::cli
