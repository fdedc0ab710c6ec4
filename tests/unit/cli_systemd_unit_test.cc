// kern generate systemd's unit: the box made again as it was, words quoted as systemd reads them.
#include <gtest/gtest.h>

#include "cli/systemd_unit.h"

namespace kern::cli {
namespace {

TEST(SystemdUnit, QuotesAsExecStartReadsIt) {
  EXPECT_EQ(systemd_word("plain"), "\"plain\"");
  EXPECT_EQ(systemd_word("a b"), "\"a b\"");
  EXPECT_EQ(systemd_word("say \"hi\" \\ now"), "\"say \\\"hi\\\" \\\\ now\"");
  EXPECT_EQ(systemd_word("$HOME 100%"), "\"$$HOME 100%%\"");
  EXPECT_EQ(systemd_word(std::string("tab\there\x01")), "\"tab\\x09here\\x01\"");
}

TEST(SystemdUnit, GeneratedNameIsPutOnTheCommandLine) {
  UnitInput in{"brisk-otter", "/usr/bin/kern", {"kern", "box", "-d", "--image", "alpine", "--", "sleep", "9"}, 15};
  std::string u = systemd_unit(in);
  EXPECT_NE(u.find("ExecStart=\"/usr/bin/kern\" \"box\" \"brisk-otter\" \"-d\" \"--image\" \"alpine\" \"--\" \"sleep\" \"9\"\n"),
            std::string::npos)
      << u;
  EXPECT_NE(u.find("ExecStop=\"/usr/bin/kern\" \"stop\" \"-t\" \"15\" \"brisk-otter\"\n"), std::string::npos) << u;
  EXPECT_NE(u.find("ExecStartPre=-\"/usr/bin/kern\" \"rm\" \"-f\" \"brisk-otter\"\n"), std::string::npos) << u;
  EXPECT_NE(u.find("Type=oneshot\nRemainAfterExit=yes\n"), std::string::npos);
  EXPECT_NE(u.find("WantedBy=default.target"), std::string::npos);
}

TEST(SystemdUnit, AGivenNameIsNotRepeated) {
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"kern", "box", "web", "-d", "--image", "nginx"},
           {"kern", "box", "-d", "--name", "web", "--image", "nginx"},
           {"kern", "box", "-d", "--name=web", "--image", "nginx"}}) {
    std::string u = systemd_unit(UnitInput{"web", "/k", argv, 10});
    size_t exec = u.find("ExecStart=");
    std::string line = u.substr(exec, u.find('\n', exec) - exec);
    size_t first = line.find("web"), second = line.find("web", first + 1);
    EXPECT_EQ(second, std::string::npos) << line;
  }
}

}  // namespace
}  // namespace kern::cli
