// The layer unpacker, one test per attack shape (issue 3), on archives built in the test with
// libarchive's writer. Each attack test also checks the host side: the file outside the tree
// that the attack aims at is unchanged.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "oci/layer_unpack.h"
#include "oci/tree_writer.h"
#include "oci_tar_builder.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"
#include "tests/unit/openat2_probe.h"

namespace kern::oci {
namespace {

using testing::TarBuilder;

class Unpack : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-unpack-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    root_ = base_ + "/root";
    host_ = base_ + "/host";
    ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(host_.c_str(), 0755), 0);
    write(host_ + "/victim", "host data\n");
  }
  void TearDown() override { (void)sys::remove_tree(AT_FDCWD, base_); }

  static void write(const std::string& path, const std::string& data) {
    std::ofstream(path) << data;
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static bool exists(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
  }
  static struct stat lstat_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st;
  }
  void expect_host_untouched() {
    EXPECT_EQ(read(host_ + "/victim"), "host data\n");
    EXPECT_EQ(lstat_of(host_ + "/victim").st_nlink, 1u);
  }

  // Unpacks the layers bottom first; returns the first error.
  Status unpack(const std::vector<std::string>& layers, UnpackLimits limits = {}) {
    UniqueFd dir(::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    auto w = TreeWriter::open(dir.get(), limits);
    if (!w) return fail(std::move(w).error());
    writer_.emplace(std::move(*w));
    for (const auto& l : layers) KERN_TRY(unpack_layer_memory(*writer_, l.data(), l.size()));
    UniqueFd b(::open(base_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    return writer_->finish(b.get(), "owners.jsonl");
  }

  std::string base_, root_, host_;
  std::optional<TreeWriter> writer_;
};

TEST_F(Unpack, PlainLayerWritesFilesModesAndTimes) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto tar = TarBuilder().dir("etc").file("etc/hostname", "box\n", 0640).dir("ro", 0555)
                 .file("ro/f", "x").symlink("etc/link", "hostname").build();
  ASSERT_TRUE(unpack({tar})) ;
  EXPECT_EQ(read(root_ + "/etc/hostname"), "box\n");
  EXPECT_EQ(lstat_of(root_ + "/etc/hostname").st_mode & 07777, 0640u);
  EXPECT_EQ(lstat_of(root_ + "/etc/hostname").st_mtime, 1700000000);
  EXPECT_EQ(lstat_of(root_ + "/ro").st_mode & 07777, 0555u);
  EXPECT_EQ(lstat_of(root_ + "/ro").st_mtime, 1700000000);
  EXPECT_TRUE(S_ISLNK(lstat_of(root_ + "/etc/link").st_mode));
  EXPECT_FALSE(exists(base_ + "/owners.jsonl"));
}

TEST_F(Unpack, ParentTraversalRefused) {
  auto tar = TarBuilder().file("../host/victim", "pwned").build();
  auto st = unpack({tar});
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind(), ErrorKind::image);
  EXPECT_NE(st.error().what().find(".."), std::string::npos);
  auto mid = TarBuilder().file("a/../../host/victim", "pwned").build();
  EXPECT_FALSE(unpack({mid}));
  expect_host_untouched();
}

TEST_F(Unpack, AbsolutePathStaysInsideRoot) {
  KERN_SKIP_WITHOUT_OPENAT2();
  std::string abs = host_ + "/victim";  // an absolute name pointing at the host file
  auto tar = TarBuilder().file(abs, "inside").build();
  ASSERT_TRUE(unpack({tar}));
  EXPECT_EQ(read(root_ + abs), "inside");
  expect_host_untouched();
}

TEST_F(Unpack, SymlinkThenWriteThroughItInSameLayerRefused) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto tar = TarBuilder().symlink("evil", host_).file("evil/victim", "pwned").build();
  auto st = unpack({tar});
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().what().find("symlink"), std::string::npos);
  expect_host_untouched();
}

TEST_F(Unpack, SymlinkFromLowerLayerIsReplacedNotFollowed) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto lower = TarBuilder().symlink("evil", host_).symlink("rel", "../../host").build();
  auto upper = TarBuilder().file("evil/victim", "inside").file("rel/victim", "inside2").build();
  ASSERT_TRUE(unpack({lower, upper}));
  EXPECT_TRUE(S_ISDIR(lstat_of(root_ + "/evil").st_mode));
  EXPECT_EQ(read(root_ + "/evil/victim"), "inside");
  EXPECT_EQ(read(root_ + "/rel/victim"), "inside2");
  expect_host_untouched();
}

TEST_F(Unpack, HardlinkToHostFileRefused) {
  for (std::string target : {host_ + "/victim", std::string("../host/victim"), std::string("etc/passwd")}) {
    auto tar = TarBuilder().hardlink("link", target).build();
    EXPECT_FALSE(unpack({tar})) << target;
    EXPECT_FALSE(exists(root_ + "/link"));
  }
  expect_host_untouched();
}

TEST_F(Unpack, HardlinkThroughSymlinkRefused) {
  auto tar = TarBuilder().symlink("lnk", host_).hardlink("link", "lnk/victim").build();
  EXPECT_FALSE(unpack({tar}));
  expect_host_untouched();
}

TEST_F(Unpack, HardlinkInsideLayerStackAcrossLayers) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto lower = TarBuilder().file("bin/busybox", "BB", 0755).build();
  auto upper = TarBuilder().hardlink("bin/sh", "bin/busybox").hardlink("bin/ls", "/bin/busybox").build();
  ASSERT_TRUE(unpack({lower, upper}));
  EXPECT_EQ(lstat_of(root_ + "/bin/sh").st_ino, lstat_of(root_ + "/bin/busybox").st_ino);
  EXPECT_EQ(lstat_of(root_ + "/bin/busybox").st_nlink, 3u);
}

TEST_F(Unpack, HardlinkToDirectoryRefused) {
  auto tar = TarBuilder().dir("d").hardlink("x", "d").build();
  EXPECT_FALSE(unpack({tar}));
}

TEST_F(Unpack, DeviceNodesAndFifosSkipped) {
  auto tar = TarBuilder().node("dev/mem", S_IFCHR).node("dev/sda", S_IFBLK).node("fifo", S_IFIFO)
                 .file("ok", "1").build();
  ASSERT_TRUE(unpack({tar}));
  EXPECT_FALSE(exists(root_ + "/dev/mem"));
  EXPECT_FALSE(exists(root_ + "/dev/sda"));
  EXPECT_FALSE(exists(root_ + "/fifo"));
  EXPECT_TRUE(exists(root_ + "/ok"));
  EXPECT_EQ(writer_->stats().skipped_devices, 2u);
  EXPECT_EQ(writer_->stats().skipped_fifos, 1u);
}

TEST_F(Unpack, SetuidAndSetgidClearedAndRecorded) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto tar = TarBuilder().file("usr/bin/su", "x", 04755).file("usr/bin/wall", "y", 02755, 0, 5)
                 .file("home/u/f", "z", 0600, 1000, 1000).build();
  ASSERT_TRUE(unpack({tar}));
  EXPECT_EQ(lstat_of(root_ + "/usr/bin/su").st_mode & 07777, 0755u);
  EXPECT_EQ(lstat_of(root_ + "/usr/bin/wall").st_mode & 07777, 0755u);
  std::string owners = read(base_ + "/owners.jsonl");
  EXPECT_NE(owners.find(R"("path":"/usr/bin/su","uid":0,"gid":0,"mode":"4755")"), std::string::npos) << owners;
  EXPECT_NE(owners.find(R"("path":"/usr/bin/wall","uid":0,"gid":5,"mode":"2755")"), std::string::npos) << owners;
  EXPECT_NE(owners.find(R"("path":"/home/u/f","uid":1000,"gid":1000,"mode":"0600")"), std::string::npos) << owners;
  EXPECT_EQ(writer_->stats().ownership_records, 3u);
}

TEST_F(Unpack, WhiteoutOfDotDotRefused) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto lower = TarBuilder().file("a/keep", "1").build();
  for (const char* name : {"a/.wh...", "a/.wh..", "a/.wh."}) {
    auto upper = TarBuilder().file(name, "").build();
    EXPECT_FALSE(unpack({lower, upper})) << name;
  }
  EXPECT_TRUE(exists(root_ + "/a/keep"));
  expect_host_untouched();
}

TEST_F(Unpack, WhiteoutThroughSymlinkDoesNotReachTarget) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto lower = TarBuilder().symlink("lnk", host_).build();
  auto upper = TarBuilder().file("lnk/.wh.victim", "").build();
  ASSERT_TRUE(unpack({lower, upper}));
  EXPECT_TRUE(S_ISDIR(lstat_of(root_ + "/lnk").st_mode));
  expect_host_untouched();
}

TEST_F(Unpack, WhiteoutHidesLowerOnly) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto lower = TarBuilder().file("a/gone", "1").dir("a/dir").file("a/dir/x", "2").file("a/keep", "3").build();
  auto upper = TarBuilder().file("a/.wh.gone", "").file("a/.wh.dir", "").file("a/new", "4")
                   .file("a/.wh.new", "").build();
  ASSERT_TRUE(unpack({lower, upper}));
  EXPECT_FALSE(exists(root_ + "/a/gone"));
  EXPECT_FALSE(exists(root_ + "/a/dir"));
  EXPECT_FALSE(exists(root_ + "/a/.wh.gone"));
  EXPECT_TRUE(exists(root_ + "/a/keep"));
  // Same-layer: a whiteout never hides what its own layer wrote.
  EXPECT_TRUE(exists(root_ + "/a/new"));
}

TEST_F(Unpack, OpaqueDirectoryHidesLowerAtAnyDepth) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto lower = TarBuilder().file("d/old", "1").file("d/sub/old", "2").file("other", "3").build();
  auto upper = TarBuilder().file("d/sub/new", "4").file("d/.wh..wh..opq", "").file("d/top", "5").build();
  ASSERT_TRUE(unpack({lower, upper}));
  EXPECT_FALSE(exists(root_ + "/d/old"));
  EXPECT_FALSE(exists(root_ + "/d/sub/old"));
  EXPECT_TRUE(exists(root_ + "/d/sub/new"));
  EXPECT_TRUE(exists(root_ + "/d/top"));
  EXPECT_TRUE(exists(root_ + "/other"));
  EXPECT_FALSE(exists(root_ + "/d/.wh..wh..opq"));
}

TEST_F(Unpack, DirectoryReplacedByFileAndBack) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto l1 = TarBuilder().dir("d").file("d/f", "1").build();
  auto l2 = TarBuilder().file("d", "now a file").build();
  auto l3 = TarBuilder().dir("d", 0700).file("d/g", "2").build();
  ASSERT_TRUE(unpack({l1, l2}));
  EXPECT_TRUE(S_ISREG(lstat_of(root_ + "/d").st_mode));
  ASSERT_EQ(sys::remove_tree(AT_FDCWD, root_).has_value(), true);
  ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
  ASSERT_TRUE(unpack({l1, l2, l3}));
  EXPECT_TRUE(S_ISDIR(lstat_of(root_ + "/d").st_mode));
  EXPECT_EQ(lstat_of(root_ + "/d").st_mode & 07777, 0700u);
  EXPECT_FALSE(exists(root_ + "/d/f"));
  EXPECT_EQ(read(root_ + "/d/g"), "2");
}

TEST_F(Unpack, TenThousandDeepNestingRefused) {
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "a/";
  auto tar = TarBuilder().file(deep + "f", "x").build();
  auto st = unpack({tar});
  ASSERT_FALSE(st);
  EXPECT_FALSE(exists(root_ + "/a"));
  // The depth bound holds on its own, below the name-length bound.
  UnpackLimits small;
  small.max_depth = 8;
  auto nine = TarBuilder().file("a/b/c/d/e/f/g/h/i", "x").build();
  EXPECT_FALSE(unpack({nine}, small));
}

TEST_F(Unpack, LongComponentRefused) {
  auto tar = TarBuilder().file(std::string(256, 'n'), "x").build();
  EXPECT_FALSE(unpack({tar}));
}

TEST_F(Unpack, DeclaredSizeFarBeyondDataRefused) {
  auto tar = TarBuilder().file("big", "12345").file("after", "x").build();
  auto lying = testing::patch_declared_size(tar, "big", 10ull << 30);
  auto st = unpack({lying});
  ASSERT_FALSE(st);
  struct stat s {};
  if (::lstat((root_ + "/big").c_str(), &s) == 0) {
    EXPECT_LT(s.st_blocks * 512, 1 << 20);
  }
}

TEST_F(Unpack, SizeAndEntryBoundsEnforced) {
  UnpackLimits limits;
  limits.max_total_bytes = 10;
  EXPECT_FALSE(unpack({TarBuilder().file("a", "123456").file("b", "123456").build()}, limits));
  UnpackLimits few;
  few.max_entries = 2;
  EXPECT_FALSE(unpack({TarBuilder().file("a", "").file("b", "").file("c", "").build()}, few));
}

TEST_F(Unpack, TruncatedStreamRefused) {
  auto tar = TarBuilder().file("f", std::string(100000, 'x')).file("g", "y").build();
  auto cut = tar.substr(0, 512 + 50000);
  EXPECT_FALSE(unpack({cut}));
  auto gz = TarBuilder().file("f", std::string(100000, 'x')).build("gzip");
  EXPECT_FALSE(unpack({gz.substr(0, gz.size() / 2)}));
}

// umoci 0.4.7's insert writes layers that stop right after the last file's data: no padding
// to 512 bytes and no end blocks. Go's tar reader takes that as the end; so does kern, but a
// stream cut inside a file's data is still refused.
TEST_F(Unpack, StreamEndingAfterTheLastFilesDataUnpacks) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto tar = TarBuilder().dir("own").file("own/a", "first\n").file("own/b", "x\n").build();
  auto b_data = tar.find("x\n");
  ASSERT_NE(b_data, std::string::npos);
  ASSERT_TRUE(unpack({tar.substr(0, b_data + 2)}));
  EXPECT_EQ(read(root_ + "/own/a"), "first\n");
  EXPECT_EQ(read(root_ + "/own/b"), "x\n");
  EXPECT_FALSE(unpack({tar.substr(0, b_data + 1)}));
}

TEST_F(Unpack, GarbageIsNotALayer) {
  std::string junk(4096, '\x5a');
  EXPECT_FALSE(unpack({junk}));
}

TEST_F(Unpack, PipelineGzipAndZstdWithDigests) {
  KERN_SKIP_WITHOUT_OPENAT2();
  for (std::string filter : {"none", "gzip", "zstd"}) {
    auto blob = TarBuilder().dir("x").file("x/data", std::string(3 << 20, 'q')).build(filter);
    auto plain = TarBuilder().dir("x").file("x/data", std::string(3 << 20, 'q')).build();
    std::string path = base_ + "/blob-" + filter;
    write(path, blob);
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    UniqueFd dir(::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    auto w = TreeWriter::open(dir.get());
    ASSERT_TRUE(w);
    LayerPipeOptions opts;
    opts.fd = fd.get();
    opts.hash_output = true;
    auto r = unpack_layer(*w, opts);
    ASSERT_TRUE(r) << filter << ": " << r.error().what();
    EXPECT_EQ(r->input_digest, *sha256_of(blob)) << filter;
    EXPECT_EQ(r->output_digest, *sha256_of(plain)) << filter;
    EXPECT_EQ(r->input_bytes, blob.size());
    EXPECT_EQ(lstat_of(root_ + "/x/data").st_size, 3 << 20);
  }
}

TEST_F(Unpack, PipelinePlainTarReadInPlaceFromALargerFileWithItsCopy) {
  KERN_SKIP_WITHOUT_OPENAT2();
  // An uncompressed layer inside a docker-archive: read from its offset for its length, hashed
  // once for both digests, copied to the store's file byte for byte.
  auto blob = TarBuilder().dir("d").file("d/f", std::string((2 << 20) + 7, 'p')).build();
  std::string path = base_ + "/archive";
  write(path, "HEAD" + blob + "TAIL-NOT-PART-OF-THE-LAYER");
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_EQ(::lseek(fd.get(), 4, SEEK_SET), 4);
  std::string copy = base_ + "/copy";
  UniqueFd tee(::open(copy.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  UniqueFd dir(::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  auto w = TreeWriter::open(dir.get());
  ASSERT_TRUE(w);
  LayerPipeOptions opts;
  opts.fd = fd.get();
  opts.length = static_cast<int64_t>(blob.size());
  opts.tee_fd = tee.get();
  opts.hash_output = true;
  auto r = unpack_layer(*w, opts);
  ASSERT_TRUE(r) << r.error().what();
  EXPECT_EQ(r->input_digest, *sha256_of(blob));
  EXPECT_EQ(r->output_digest, r->input_digest);
  EXPECT_EQ(r->input_bytes, blob.size());
  EXPECT_EQ(lstat_of(root_ + "/d/f").st_size, (2 << 20) + 7);
  std::ifstream in(copy, std::ios::binary);
  std::string copied((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(copied == blob) << "the store's copy differs from the layer";
  // A declared length beyond the file's end is a truncated layer, not a short success.
  ASSERT_EQ(::lseek(fd.get(), 4, SEEK_SET), 4);
  auto w2 = TreeWriter::open(dir.get());
  ASSERT_TRUE(w2);
  LayerPipeOptions longer;
  longer.fd = fd.get();
  longer.length = static_cast<int64_t>(blob.size()) + 4096;
  EXPECT_FALSE(unpack_layer(*w2, longer));
}

TEST_F(Unpack, PipelinePlainTarFromAPipe) {
  // No pread on a pipe: the general path reads it, with the same digest.
  auto blob = TarBuilder().file("p", std::string(300000, 'z')).build();
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd rd(p[0]), wr(p[1]);
  std::thread feeder([&] {
    (void)sys::write_all(wr.get(), blob, "test pipe");
    wr.reset();
  });
  UniqueFd dir(::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  auto w = TreeWriter::open(dir.get());
  ASSERT_TRUE(w);
  LayerPipeOptions opts;
  opts.fd = rd.get();
  auto r = unpack_layer(*w, opts);
  feeder.join();
  ASSERT_TRUE(r) << r.error().what();
  EXPECT_EQ(r->input_digest, *sha256_of(blob));
  EXPECT_EQ(lstat_of(root_ + "/p").st_size, 300000);
}

TEST_F(Unpack, PipelineReportsCorruptCompressedData) {
  auto blob = TarBuilder().file("f", std::string(1 << 20, 'q')).build("gzip");
  blob[blob.size() / 2] ^= 0x55;
  blob[blob.size() / 2 + 1] ^= 0x55;
  std::string path = base_ + "/bad.gz";
  write(path, blob);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  UniqueFd dir(::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  auto w = TreeWriter::open(dir.get());
  ASSERT_TRUE(w);
  LayerPipeOptions opts;
  opts.fd = fd.get();
  EXPECT_FALSE(unpack_layer(*w, opts));
}

}  // namespace
}  // namespace kern::oci
