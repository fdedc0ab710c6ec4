// Layer recipes (oci/layer_split.h): a layer unpacked into a tree is re-created byte for byte
// from the tree, a file a later layer replaces makes its layer's recipe incomplete, member
// kinds whose size readers disagree on make the splitter give up, and a damaged recipe file is
// refused.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "oci/digest.h"
#include "oci/layer_split.h"
#include "oci/layer_unpack.h"
#include "oci/tree_writer.h"
#include "oci_tar_builder.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"
#include "tests/unit/openat2_probe.h"

namespace kern::oci {
namespace {

using testing::TarBuilder;

class SplitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-split-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    ASSERT_EQ(::mkdir((base_ + "/tree").c_str(), 0755), 0);
    auto fd = sys::open_at(AT_FDCWD, base_ + "/tree", O_PATH | O_DIRECTORY);
    ASSERT_TRUE(fd);
    tree_ = std::move(*fd);
  }
  void TearDown() override { (void)sys::remove_tree(AT_FDCWD, base_); }

  // Unpacks `layers` bottom first into the tree, splitting each; returns the resolved recipes.
  std::vector<SplitRecipe> unpack(const std::vector<std::string>& layers, std::vector<bool>& complete) {
    auto w = TreeWriter::open(tree_.get());
    EXPECT_TRUE(w);
    w->track_files(true);
    std::vector<SplitRecipe> raw(layers.size());
    std::vector<std::vector<TreeWriter::WrittenFile>> files(layers.size());
    for (size_t i = 0; i < layers.size(); ++i) {
      std::string path = base_ + "/layer" + std::to_string(i);
      EXPECT_TRUE(sys::write_file(AT_FDCWD, path, layers[i], 0600));
      auto fd = sys::open_at(AT_FDCWD, path, O_RDONLY);
      EXPECT_TRUE(fd);
      TarSplitter split;
      LayerPipeOptions opts;
      opts.fd = fd->get();
      opts.split = &split;
      auto r = unpack_layer(*w, opts, &files[i]);
      EXPECT_TRUE(r) << r.error().what();
      if (split.ok()) {
        raw[i].diff_id = *sha256_of(layers[i]);
        raw[i].segments = split.take();
      }
    }
    EXPECT_TRUE(w->finish(AT_FDCWD, base_ + "/owners.jsonl"));
    return resolve_recipes(*w, std::move(raw), files, complete);
  }

  std::string replay(const SplitRecipe& r) {
    std::string out_path = base_ + "/out-" + r.diff_id.substr(7, 8);
    auto out = sys::open_at(AT_FDCWD, out_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    EXPECT_TRUE(out);
    auto digest = replay_recipe(r, tree_.get(), out->get());
    EXPECT_TRUE(digest) << digest.error().what();
    EXPECT_EQ(*digest, r.diff_id);
    auto text = sys::read_file(AT_FDCWD, out_path, 64 << 20);
    EXPECT_TRUE(text);
    return *text;
  }

  std::string base_;
  UniqueFd tree_;
};

TEST_F(SplitTest, LayerIsRecreatedByteForByteFromTheTree) {
  KERN_SKIP_WITHOUT_OPENAT2();
  std::string big(300000, 'x');
  for (size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>('a' + i % 26);
  std::string tar = TarBuilder()
                        .dir("usr")
                        .dir("usr/lib")
                        .file("usr/lib/" + std::string(150, 'n') + ".so", big)  // a pax path record
                        .file("usr/empty", "")
                        .file("usr/zeros", std::string(5000, '\0'))
                        .symlink("usr/link", "lib")
                        .hardlink("usr/again", "usr/empty")
                        .file("top", "top\n", 0755)
                        .build();
  std::vector<bool> complete;
  auto recipes = unpack({tar}, complete);
  ASSERT_EQ(recipes.size(), 1u);
  EXPECT_TRUE(complete[0]);
  EXPECT_EQ(recipes[0].total(), tar.size());
  EXPECT_EQ(replay(recipes[0]), tar);
  // The recipe holds the headers, not the file data.
  EXPECT_LT(encode_recipes(recipes).size(), tar.size() / 10);
  auto back = decode_recipes(encode_recipes(recipes));
  ASSERT_TRUE(back) << back.error().what();
  EXPECT_EQ(replay((*back)[0]), tar);
  // The summary names the same layer and size without the segments, and refuses what decode refuses.
  auto summary = summarise_recipes(encode_recipes(recipes));
  ASSERT_TRUE(summary) << summary.error().what();
  ASSERT_EQ(summary->size(), 1u);
  EXPECT_EQ((*summary)[0].diff_id, recipes[0].diff_id);
  EXPECT_EQ((*summary)[0].total, tar.size());
  std::string cut = encode_recipes(recipes);
  cut.resize(cut.size() - 3);
  EXPECT_FALSE(decode_recipes(cut));
  EXPECT_FALSE(summarise_recipes(cut));
}

TEST_F(SplitTest, FileReplacedByALaterLayerLeavesThatLayerWithoutRecipe) {
  KERN_SKIP_WITHOUT_OPENAT2();
  std::string lower = TarBuilder().dir("etc").file("etc/motd", "lower\n").file("etc/keep", "keep\n").build();
  std::string upper = TarBuilder().file("etc/motd", "upper\n").build();
  std::vector<bool> complete;
  auto recipes = unpack({lower, upper}, complete);
  EXPECT_EQ(complete, (std::vector<bool>{false, true}));
  ASSERT_EQ(recipes.size(), 1u);
  EXPECT_EQ(replay(recipes[0]), upper);
}

TEST_F(SplitTest, WhiteoutOfALowerFileLeavesThatLayerWithoutRecipe) {
  KERN_SKIP_WITHOUT_OPENAT2();
  std::string lower = TarBuilder().dir("etc").file("etc/motd", "lower\n").build();
  std::string upper = TarBuilder().file("etc/.wh.motd", "").build();
  std::vector<bool> complete;
  auto recipes = unpack({lower, upper}, complete);
  EXPECT_EQ(complete, (std::vector<bool>{false, true}));
}

TEST_F(SplitTest, UnreadableFileOrUnsearchableDirectoryMeansNoRecipe) {
  KERN_SKIP_WITHOUT_OPENAT2();
  std::vector<bool> complete;
  unpack({TarBuilder().file("secret", "s", 0200).build()}, complete);
  EXPECT_EQ(complete, (std::vector<bool>{false}));
  ASSERT_TRUE(sys::remove_tree(AT_FDCWD, base_ + "/tree"));
  SetUp();
  unpack({TarBuilder().dir("d", 0300).file("d/f", "f").build()}, complete);
  EXPECT_EQ(complete, (std::vector<bool>{false}));
  (void)::chmod((base_ + "/tree/d").c_str(), 0755);
}

TEST_F(SplitTest, SymlinkHeaderWithASizeIsNotSplit) {
  // Tar readers disagree on whether data follows such a header: no recipe, the blob stays.
  std::string tar = testing::patch_declared_size(TarBuilder().symlink("l", "t").file("f", "x").build(), "l", 0);
  TarSplitter ok;
  ok.feed(tar.data(), tar.size());
  EXPECT_TRUE(ok.ok());
  tar = testing::patch_declared_size(tar, "l", 512);
  TarSplitter split;
  split.feed(tar.data(), tar.size());
  EXPECT_FALSE(split.ok());
}

TEST_F(SplitTest, DamagedRecipeFileIsRefused) {
  SplitRecipe r;
  r.diff_id = "sha256:" + std::string(64, 'a');
  SplitSegment s;
  s.kind = SplitSegment::Kind::literal;
  s.bytes = "abc";
  s.length = 3;
  r.segments.push_back(s);
  std::string enc = encode_recipes({r});
  ASSERT_TRUE(decode_recipes(enc));
  EXPECT_FALSE(decode_recipes(enc.substr(0, enc.size() - 1)));
  EXPECT_FALSE(decode_recipes("garbage"));
  std::string bad = enc;
  bad[bad.size() - 3 - 17] = 9;  // the segment kind
  EXPECT_FALSE(decode_recipes(bad));
}

TEST_F(SplitTest, ReplayRefusesAChangedTreeFile) {
  std::string tar = TarBuilder().file("f", std::string(2000, 'q')).build();
  std::vector<bool> complete;
  auto recipes = unpack({tar}, complete);
  ASSERT_EQ(recipes.size(), 1u);
  ASSERT_TRUE(sys::write_file(AT_FDCWD, base_ + "/tree/f", "short", 0644));
  auto out = sys::open_at(AT_FDCWD, base_ + "/out", O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_TRUE(out);
  EXPECT_FALSE(replay_recipe(recipes[0], tree_.get(), out->get()));
}

}  // namespace
}  // namespace kern::oci
