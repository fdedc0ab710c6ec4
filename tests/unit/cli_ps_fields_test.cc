// The rows kern ps --format and kern top show (cli/ps_fields.h, cli/top_view.h) and the PORTS
// column of kern ps's own table (cli/ps_table.h).
#include <gtest/gtest.h>

#include "cli/ps_fields.h"
#include "cli/ps_table.h"
#include "cli/top_view.h"

namespace kern::cli {
namespace {

BoxRecord box(const std::string& name) {
  BoxRecord r;
  r.name = name;
  r.init_pid = 4242;
  r.started_unix = 1000;
  r.command = "sleep 100";
  r.image = "busybox";
  return r;
}

TEST(PsFields, DockerStatusStateAndTimes) {
  BoxRecord up = box("up");
  up.labels = {{"app", "web"}};
  up.ports = {"0.0.0.0:8080->80/tcp"};
  auto j = ps_row(up, 1000 + 300, false);
  EXPECT_EQ(j["ID"], "up");
  EXPECT_EQ(j["Names"], "up");
  EXPECT_EQ(j["State"], "running");
  EXPECT_EQ(j["Status"], "Up 5 minutes");
  EXPECT_EQ(j["RunningFor"], "5 minutes ago");
  EXPECT_EQ(j["CreatedAt"], "1970-01-01 00:16:40 +0000 UTC");
  EXPECT_EQ(j["Ports"].dump(), "[\"0.0.0.0:8080->80/tcp\"]");
  EXPECT_EQ(j["Labels"]["app"], "web");
  EXPECT_EQ(j["Pid"], 4242);
  BoxRecord down = box("down");
  down.detached = true;
  down.state = "exited";
  down.exit_code = 3;
  down.exited_unix = 1010;
  j = ps_row(down, 1012, false);
  EXPECT_EQ(j["State"], "exited");
  EXPECT_EQ(j["Status"], "Exited (3) 2 seconds ago");
  EXPECT_TRUE(j["Pid"].is_null());
}

TEST(PsFields, PortsColumnOnlyWhenABoxPublishes) {
  std::vector<BoxRecord> boxes = {box("a")};
  EXPECT_EQ(ps_table(boxes, 1000, false).find("PORTS"), std::string::npos);
  boxes[0].ports = {"0.0.0.0:8080->80/tcp"};
  boxes.push_back(box("b"));
  std::string out = ps_table(boxes, 1000, false);
  EXPECT_NE(out.find("PORTS"), std::string::npos) << out;
  EXPECT_NE(out.find("0.0.0.0:8080->80/tcp"), std::string::npos) << out;
  EXPECT_LT(out.find("PORTS"), out.find("IMAGE"));
}

TEST(TopView, BusiestFirstWithOneRowABox) {
  std::vector<BoxRecord> boxes = {box("idle"), box("busy")};
  std::vector<BoxUsage> usage(2);
  usage[0].cpu_percent = 0.5;
  usage[0].memory = 3 * 1024 * 1024;
  usage[1].cpu_percent = 99.0;
  usage[1].memory_limit = 512ull * 1024 * 1024;
  usage[1].pids = 3;
  std::string out = top_table(boxes, usage, 1000 + 7200);
  EXPECT_EQ(out.rfind("NAME", 0), 0u) << out;
  ASSERT_NE(out.find("busy"), std::string::npos);
  EXPECT_LT(out.find("busy"), out.find("idle")) << out;
  EXPECT_NE(out.find("99.00%"), std::string::npos) << out;
  EXPECT_NE(out.find("3MiB / -"), std::string::npos) << out;
  EXPECT_NE(out.find("0B / 512MiB"), std::string::npos) << out;
  EXPECT_NE(out.find("2 hours"), std::string::npos) << out;
}

}  // namespace
}  // namespace kern::cli
