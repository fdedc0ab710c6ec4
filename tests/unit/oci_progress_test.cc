// The progress line text (oci/progress.h) and the observer scope.
#include <gtest/gtest.h>

#include "oci/progress.h"

namespace kern::oci::progress {
namespace {

const std::string kId = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

TEST(OciProgress, Bytes) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(3 << 20), "3.0 MiB");
  EXPECT_EQ(format_bytes(int64_t{5} << 30), "5.00 GiB");
}

TEST(OciProgress, InFlightLineHasDoneTotalAndRate) {
  EXPECT_EQ(format_line(kId, "downloading", 1 << 20, 4 << 20, 0.5, false),
            "sha256:0123456789ab  downloading  1.0 MiB / 4.0 MiB  2.0 MiB/s");
  EXPECT_EQ(format_line(kId, "unpacking", 512, -1, 0, false), "sha256:0123456789ab  unpacking  512 B  -");
}

TEST(OciProgress, FinishedLineSaysWhatWasDone) {
  EXPECT_EQ(format_line(kId, "downloaded, unpacked", 4 << 20, 4 << 20, 2.0, true),
            "sha256:0123456789ab  downloaded, unpacked  4.0 MiB in 2.0 s (2.0 MiB/s)");
}

class Counting final : public Observer {
 public:
  void start(const std::string&, std::string_view, int64_t, bool) override { ++starts; }
  void update(const std::string&, int64_t) override {}
  void finish(const std::string&) override {}
  void source(const std::string&) override {}
  int starts = 0;
};

TEST(OciProgress, ScopeInstallsAndRestores) {
  EXPECT_EQ(current(), nullptr);
  Counting a, b;
  {
    Scope sa(&a);
    EXPECT_EQ(current(), &a);
    {
      Scope sb(&b);
      EXPECT_EQ(current(), &b);
    }
    EXPECT_EQ(current(), &a);
  }
  EXPECT_EQ(current(), nullptr);
  EXPECT_EQ(stderr_display(Mode::none), nullptr);
}

}  // namespace
}  // namespace kern::oci::progress
