// The first block of a `kern load` stream: an archive, or refused before anything is written.
#include <gtest/gtest.h>

#include "oci/archive_source.h"
#include "oci_tar_builder.h"

namespace kern::oci {
namespace {

using testing::TarBuilder;

TEST(OciArchiveHead, TarHeadersAndCompressedStreamsPass) {
  std::string tar = TarBuilder().file("manifest.json", "[]").build();
  EXPECT_TRUE(archive_head_plausible(std::string_view(tar).substr(0, 512)));
  EXPECT_TRUE(archive_head_plausible(TarBuilder().file("a", "1").build("gzip").substr(0, 512)));
  EXPECT_TRUE(archive_head_plausible(std::string("\x28\xb5\x2f\xfd", 4)));
  EXPECT_TRUE(archive_head_plausible(std::string("\xfd" "7zXZ\0", 6)));
}

TEST(OciArchiveHead, ZerosTextAndABrokenChecksumAreRefused) {
  EXPECT_FALSE(archive_head_plausible(std::string(512, '\0')));  // /dev/zero, or an empty archive
  EXPECT_FALSE(archive_head_plausible(""));
  EXPECT_FALSE(archive_head_plausible(std::string(512, 'x')));
  EXPECT_FALSE(archive_head_plausible("not an archive\n"));
  std::string tar = TarBuilder().file("manifest.json", "[]").build().substr(0, 512);
  tar[0] ^= 1;  // one bit of the name: the checksum no longer adds up
  EXPECT_FALSE(archive_head_plausible(tar));
}

}  // namespace
}  // namespace kern::oci
