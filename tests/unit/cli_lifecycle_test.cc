// The lifecycle verbs' pure parts (cli/box_lookup.h, cli/ps_table.h): the inspect document,
// signal names, the STATUS column of `kern ps -a`.
#include <gtest/gtest.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "cli/box_lookup.h"
#include "cli/ps_table.h"

namespace kern::cli {
namespace {

BoxRecord detached_record(bool exited) {
  BoxRecord r;
  r.name = "brisk-otter";
  r.launcher_pid = 100;
  r.init_pid = 101;
  r.command = "sh -c exit 5";
  r.started_unix = 1000;
  r.detached = true;
  if (exited) {
    r.state = "exited";
    r.exit_code = 5;
    r.exited_unix = 1010;
  }
  r.detail = R"({"argv":["sh","-c","exit 5"],"enforcement":{"memory":"enforced"}})";
  return r;
}

TEST(Inspect, RunningBoxShowsPidsAndNoExitCode) {
  auto j = nlohmann::json::parse(inspect_json(detached_record(false), "/run/x.log"));
  EXPECT_EQ(j["state"], "running");
  EXPECT_EQ(j["pids"]["supervisor"], 100);
  EXPECT_EQ(j["pids"]["init"], 101);
  EXPECT_TRUE(j["exit_code"].is_null());
  EXPECT_TRUE(j["exited_unix"].is_null());
  EXPECT_EQ(j["enforcement"]["memory"], "enforced");
  EXPECT_EQ(j["spec"]["argv"][2], "exit 5");
  EXPECT_FALSE(j["spec"].contains("enforcement"));
  EXPECT_EQ(j["log"], "/run/x.log");
}

TEST(Inspect, ExitedBoxShowsItsCodeAndNoPids) {
  auto j = nlohmann::json::parse(inspect_json(detached_record(true), "/run/x.log"));
  EXPECT_EQ(j["state"], "exited");
  EXPECT_EQ(j["exit_code"], 5);
  EXPECT_EQ(j["exited_unix"], 1010);
  EXPECT_TRUE(j["pids"]["init"].is_null());
}

TEST(Inspect, ForegroundBoxHasNoLog) {
  BoxRecord r;
  r.name = "fg";
  auto j = nlohmann::json::parse(inspect_json(r, "/run/fg.log"));
  EXPECT_EQ(j["detached"], false);
  EXPECT_TRUE(j["log"].is_null());
  EXPECT_EQ(j["state"], "running");
}

TEST(Signals, NamesAndNumbers) {
  EXPECT_EQ(parse_signal("TERM"), SIGTERM);
  EXPECT_EQ(parse_signal("SIGKILL"), SIGKILL);
  EXPECT_EQ(parse_signal("usr1"), SIGUSR1);
  EXPECT_EQ(parse_signal("15"), 15);
  EXPECT_EQ(parse_signal("0"), 0);
  EXPECT_EQ(parse_signal("SIGRTMIN+3"), SIGRTMIN + 3);
  EXPECT_EQ(parse_signal("rtmin"), SIGRTMIN);
  EXPECT_EQ(parse_signal("RTMAX-1"), SIGRTMAX - 1);
  EXPECT_EQ(parse_signal("SIGPWR"), SIGPWR);
  EXPECT_EQ(parse_signal("RTMIN-1"), 0);
  EXPECT_EQ(parse_signal("RTMIN+99"), 0);
  EXPECT_EQ(parse_signal("RTMIN+"), 0);
  EXPECT_EQ(signal_name(SIGRTMIN + 3), "SIGRTMIN+3");
  EXPECT_EQ(parse_signal(signal_name(SIGRTMIN + 3)), SIGRTMIN + 3);
  EXPECT_EQ(parse_signal("999"), 0);
  EXPECT_EQ(parse_signal("NOPE"), 0);
  EXPECT_EQ(parse_signal("15x"), 0);
  EXPECT_EQ(parse_signal(""), 0);
}

TEST(PsTable, StatusColumnOnlyWithAll) {
  std::vector<BoxRecord> recs = {detached_record(true), detached_record(false)};
  recs[1].name = "calm-heron";
  std::string plain = ps_table(recs, 1020, false);
  EXPECT_EQ(plain.find("STATUS"), std::string::npos);
  std::string all = ps_table(recs, 1020, false, true);
  EXPECT_NE(all.find("STATUS"), std::string::npos);
  EXPECT_NE(all.find("exited (5)"), std::string::npos);
  EXPECT_NE(all.find("running"), std::string::npos);
  // An exited box has no pid to show.
  EXPECT_NE(all.find("brisk-otter              box     -  "), std::string::npos) << all;
}

}  // namespace
}  // namespace kern::cli
