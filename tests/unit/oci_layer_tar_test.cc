// One layer's tar (oci/layer_tar.h): each kind of entry reads back with its name, mode, numeric
// ids and mtime; whiteouts are named as the image spec names them; SOURCE_DATE_EPOCH clamps
// later times only; the digest and size are those of the bytes written; the same entries give
// the same bytes; a file shorter than announced fails naming it.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "oci/digest.h"
#include "oci/layer_tar.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"
#include "tests/unit/layer_tar_reader.h"

namespace kern::oci {
namespace {

using testing::layer_tar_outline;
using testing::read_layer_tar;
using testing::ReadEntry;
using testing::slurp_file;

class LayerTarTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-layer-tar-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
  }
  void TearDown() override { (void)sys::remove_tree(AT_FDCWD, base_); }

  // Runs `fill` on a LayerTar writing to base_/name; returns what finish() gave.
  LayerDigest write_layer(const std::string& name, const std::function<void(LayerTar&)>& fill,
                          std::optional<int64_t> clamp = std::nullopt) {
    auto out = sys::open_at(AT_FDCWD, base_ + "/" + name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    EXPECT_TRUE(out);
    if (!out) return {};
    auto tar = LayerTar::create(out->get(), clamp);
    EXPECT_TRUE(tar) << tar.error().what();
    if (!tar) return {};
    fill(*tar);
    auto d = tar->finish();
    EXPECT_TRUE(d) << d.error().what();
    return d ? *d : LayerDigest{};
  }

  std::vector<ReadEntry> read_back(const std::string& name) {
    auto entries = read_layer_tar(slurp_file(base_ + "/" + name));
    EXPECT_TRUE(entries) << entries.error().what();
    return entries ? *entries : std::vector<ReadEntry>{};
  }

  std::string base_;
};

// Every kind, in the order written, as a reader sees it.
void layer_tar_fill_every_kind(const std::string& dir, LayerTar& t) {
  ASSERT_TRUE(t.dir({"etc", 0755, 0, 0, 1700000000}));
  auto fd = sys::open_at(AT_FDCWD, dir + "/passwd.src", O_RDONLY);
  ASSERT_TRUE(fd);
  ASSERT_TRUE(t.file({"etc/passwd", 0640, 1000, 1001, 1700000001}, fd->get(), 14, "ctx/passwd.src"));
  ASSERT_TRUE(t.data({"etc/motd", 0600, 7, 8, 1700000002}, "hello\n"));
  ASSERT_TRUE(t.symlink({"bin", 0755, 0, 0, 1700000003}, "usr/bin"));
  ASSERT_TRUE(t.hardlink({"etc/passwd-", 0640, 1000, 1001, 1700000001}, "etc/passwd"));
  ASSERT_TRUE(t.whiteout("etc/shadow"));
  ASSERT_TRUE(t.whiteout("old"));
  ASSERT_TRUE(t.opaque("var/cache"));
  ASSERT_TRUE(t.opaque(""));
  EXPECT_EQ(t.entries(), 9u);
}

TEST_F(LayerTarTest, EveryKindReadsBack) {
  ASSERT_TRUE(sys::write_file(AT_FDCWD, base_ + "/passwd.src", "root:x:0:0::/:\n", 0644));
  LayerDigest d = write_layer("layer.tar", [&](LayerTar& t) { layer_tar_fill_every_kind(base_, t); });
  std::vector<ReadEntry> e = read_back("layer.tar");
  EXPECT_EQ(layer_tar_outline(e), (std::vector<std::string>{"d etc", "f etc/passwd", "f etc/motd", "l bin -> usr/bin",
                                                            "h etc/passwd- => etc/passwd", "f etc/.wh.shadow",
                                                            "f .wh.old", "f var/cache/.wh..wh..opq",
                                                            "f .wh..wh..opq"}));
  ASSERT_EQ(e.size(), 9u);
  EXPECT_EQ(e[0].perm, 0755u);
  EXPECT_EQ(e[0].mtime, 1700000000);
  // The file: 14 of the source's 15 bytes, as asked.
  EXPECT_EQ(e[1].perm, 0640u);
  EXPECT_EQ(e[1].uid, 1000);
  EXPECT_EQ(e[1].gid, 1001);
  EXPECT_EQ(e[1].mtime, 1700000001);
  EXPECT_EQ(e[1].size, 14);
  EXPECT_EQ(e[1].data, "root:x:0:0::/:");
  EXPECT_EQ(e[2].perm, 0600u);
  EXPECT_EQ(e[2].uid, 7);
  EXPECT_EQ(e[2].gid, 8);
  EXPECT_EQ(e[2].data, "hello\n");
  EXPECT_EQ(e[3].mtime, 1700000003);
  EXPECT_EQ(e[4].size, 0);
  for (size_t i = 5; i < 9; ++i) {
    EXPECT_EQ(e[i].size, 0) << e[i].path;
    EXPECT_EQ(e[i].data, "") << e[i].path;
  }
  // The digest and size are those of the file as written.
  std::string bytes = slurp_file(base_ + "/layer.tar");
  EXPECT_EQ(d.size, bytes.size());
  EXPECT_EQ(d.digest, *sha256_of(bytes));
  EXPECT_EQ(bytes.size() % 512, 0u);
}

TEST_F(LayerTarTest, IdsAreNumbersWithoutNames) {
  // uid 0 is "root" on every host: a writer that looked names up would put it in the header.
  write_layer("ids.tar", [](LayerTar& t) { ASSERT_TRUE(t.data({"f", 0644, 0, 0, 1}, "x")); });
  std::string bytes = slurp_file(base_ + "/ids.tar");
  ASSERT_GE(bytes.size(), 512u);
  // The ustar header of the first entry: uname at 265, gname at 297, 32 bytes each.
  EXPECT_EQ(bytes.substr(265, 32), std::string(32, '\0'));
  EXPECT_EQ(bytes.substr(297, 32), std::string(32, '\0'));
  EXPECT_EQ(bytes.find("atime"), std::string::npos);
  EXPECT_EQ(bytes.find("ctime"), std::string::npos);
}

TEST_F(LayerTarTest, ClampLowersLaterTimesOnly) {
  auto fill = [](LayerTar& t) {
    ASSERT_TRUE(t.dir({"early", 0755, 0, 0, 999}));
    ASSERT_TRUE(t.dir({"same", 0755, 0, 0, 1000}));
    ASSERT_TRUE(t.data({"late", 0644, 0, 0, 5000}, "x"));
    ASSERT_TRUE(t.symlink({"link", 0777, 0, 0, 4000}, "late"));
  };
  write_layer("clamped.tar", fill, int64_t{1000});
  std::vector<ReadEntry> e = read_back("clamped.tar");
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].mtime, 999);
  EXPECT_EQ(e[1].mtime, 1000);
  EXPECT_EQ(e[2].mtime, 1000);
  EXPECT_EQ(e[3].mtime, 1000);
  write_layer("free.tar", fill);
  e = read_back("free.tar");
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[2].mtime, 5000);
  EXPECT_EQ(e[3].mtime, 4000);
}

TEST_F(LayerTarTest, SameEntriesGiveSameBytes) {
  ASSERT_TRUE(sys::write_file(AT_FDCWD, base_ + "/passwd.src", "root:x:0:0::/:\n", 0644));
  auto fill = [&](LayerTar& t) { layer_tar_fill_every_kind(base_, t); };
  LayerDigest a = write_layer("a.tar", fill);
  LayerDigest b = write_layer("b.tar", fill);
  EXPECT_EQ(slurp_file(base_ + "/a.tar"), slurp_file(base_ + "/b.tar"));
  EXPECT_EQ(a.digest, b.digest);
  EXPECT_EQ(a.size, b.size);
  // The discriminant: one second of one entry changes the digest.
  LayerDigest c = write_layer("c.tar", [&](LayerTar& t) {
    ASSERT_TRUE(t.dir({"etc", 0755, 0, 0, 1700000009}));
  });
  LayerDigest d = write_layer("d.tar", [&](LayerTar& t) {
    ASSERT_TRUE(t.dir({"etc", 0755, 0, 0, 1700000000}));
  });
  EXPECT_NE(c.digest, d.digest);
  EXPECT_EQ(c.size, d.size);
}

TEST_F(LayerTarTest, FileIsReadFromItsCurrentOffsetAcrossBuffers) {
  // Larger than one read of the writer, read from offset 5.
  std::string body(300001, '\0');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i % 23);
  ASSERT_TRUE(sys::write_file(AT_FDCWD, base_ + "/big", body, 0644));
  auto fd = sys::open_at(AT_FDCWD, base_ + "/big", O_RDONLY);
  ASSERT_TRUE(fd);
  ASSERT_EQ(::lseek(fd->get(), 5, SEEK_SET), 5);
  write_layer("big.tar", [&](LayerTar& t) {
    ASSERT_TRUE(t.file({"big", 0644, 0, 0, 1}, fd->get(), body.size() - 5, "big"));
  });
  std::vector<ReadEntry> e = read_back("big.tar");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].size, static_cast<int64_t>(body.size() - 5));
  EXPECT_TRUE(e[0].data == body.substr(5)) << "content differs";
}

TEST_F(LayerTarTest, LongNamesAndSpecialBitsSurvive) {
  std::string dir(120, 'd');
  std::string path = dir + "/" + std::string(90, 'f');
  std::string target = std::string(150, 't');
  write_layer("long.tar", [&](LayerTar& t) {
    ASSERT_TRUE(t.dir({dir, 01777, 0, 0, 1}));
    ASSERT_TRUE(t.data({path, 04755, 70000, 70001, 1}, "x"));
    ASSERT_TRUE(t.symlink({dir + "/l", 0777, 0, 0, 1}, target));
    ASSERT_TRUE(t.whiteout(path));
  });
  std::vector<ReadEntry> e = read_back("long.tar");
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].path, dir);
  EXPECT_EQ(e[0].perm, 01777u);
  EXPECT_EQ(e[1].path, path);
  EXPECT_EQ(e[1].perm, 04755u);
  EXPECT_EQ(e[1].uid, 70000);
  EXPECT_EQ(e[1].gid, 70001);
  EXPECT_EQ(e[2].link, target);
  EXPECT_EQ(e[3].path, dir + "/.wh." + std::string(90, 'f'));
}

TEST_F(LayerTarTest, ShortFileFailsNamingItsPath) {
  ASSERT_TRUE(sys::write_file(AT_FDCWD, base_ + "/short", "abc", 0644));
  auto out = sys::open_at(AT_FDCWD, base_ + "/short.tar", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_TRUE(out);
  auto tar = LayerTar::create(out->get());
  ASSERT_TRUE(tar);
  auto fd = sys::open_at(AT_FDCWD, base_ + "/short", O_RDONLY);
  ASSERT_TRUE(fd);
  Status st = tar->file({"short", 0644, 0, 0, 1}, fd->get(), 10, "context/short.txt");
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().what().find("context/short.txt"), std::string::npos) << st.error().what();
  // Exactly the size: no error (the discriminant).
  auto fd2 = sys::open_at(AT_FDCWD, base_ + "/short", O_RDONLY);
  ASSERT_TRUE(fd2);
  auto out2 = sys::open_at(AT_FDCWD, base_ + "/ok.tar", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_TRUE(out2);
  auto tar2 = LayerTar::create(out2->get());
  ASSERT_TRUE(tar2);
  EXPECT_TRUE(tar2->file({"short", 0644, 0, 0, 1}, fd2->get(), 3, "context/short.txt"));
}

TEST_F(LayerTarTest, EmptyLayerIsTheEndMarkerOnly) {
  LayerDigest d = write_layer("empty.tar", [](LayerTar& t) { EXPECT_EQ(t.entries(), 0u); });
  std::string bytes = slurp_file(base_ + "/empty.tar");
  // Two zero blocks at least, nothing else.
  EXPECT_GE(bytes.size(), 1024u);
  EXPECT_EQ(bytes.size() % 512, 0u);
  EXPECT_EQ(bytes, std::string(bytes.size(), '\0'));
  EXPECT_EQ(d.size, bytes.size());
  EXPECT_EQ(d.digest, *sha256_of(bytes));
}

}  // namespace
}  // namespace kern::oci
