// A box's upper directory read as changes and as a layer (oci/upper_layer.h): a fake image tree
// and a fake overlay upper side by side, with what overlayfs leaves there (0/0 character devices
// for deletions, the opaque xattr, copied-up directories) and what kern's mounts leave (stubs).
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "oci/layer_tar.h"
#include "oci/upper_layer.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"
#include "tests/unit/layer_tar_reader.h"

namespace kern::oci {
namespace {

using testing::layer_tar_outline;
using testing::read_layer_tar;
using testing::ReadEntry;
using testing::slurp_file;

class UpperLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-upper-layer-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    ASSERT_EQ(::mkdir((base_ + "/lower").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((base_ + "/upper").c_str(), 0755), 0);
  }
  void TearDown() override { (void)sys::remove_tree(AT_FDCWD, base_); }

  void dir(const std::string& rel, mode_t mode = 0755) {
    ASSERT_EQ(::mkdir((base_ + "/" + rel).c_str(), mode), 0) << rel << ": " << strerror(errno);
    ASSERT_EQ(::chmod((base_ + "/" + rel).c_str(), mode), 0);  // past the umask
  }
  void file(const std::string& rel, const std::string& data, mode_t mode = 0644) {
    ASSERT_TRUE(sys::write_file(AT_FDCWD, base_ + "/" + rel, data, mode)) << rel;
    ASSERT_EQ(::chmod((base_ + "/" + rel).c_str(), mode), 0);
  }
  // A deleted entry as overlayfs marks it; false (with why_) when this host refuses the node.
  bool whiteout(const std::string& rel) {
    if (::mknod((base_ + "/" + rel).c_str(), S_IFCHR | 0000, makedev(0, 0)) == 0) return true;
    why_ = std::string("mknod of a 0/0 character device: ") + strerror(errno) +
           " (unprivileged whiteouts need Linux >= 5.8, or root)";
    EXPECT_TRUE(errno == EPERM || errno == EACCES) << why_;
    return false;
  }
  // An opaque directory as overlayfs with userxattr marks it; false (with why_) when this file
  // system keeps no user xattrs.
  bool opaque(const std::string& rel) {
    if (::setxattr((base_ + "/" + rel).c_str(), "user.overlay.opaque", "y", 1, 0) == 0) return true;
    why_ = std::string("setxattr user.overlay.opaque on ") + base_ + ": " + strerror(errno) +
           " (this file system keeps no user xattrs; tmpfs has them since Linux 6.6)";
    EXPECT_TRUE(errno == ENOTSUP || errno == EOPNOTSUPP) << why_;
    return false;
  }

  UpperSource source(bool with_lower = true) {
    auto u = sys::open_at(AT_FDCWD, base_ + "/upper", O_RDONLY | O_DIRECTORY);
    EXPECT_TRUE(u);
    upper_fd_ = std::move(*u);
    UpperSource s;
    s.upper_fd = upper_fd_.get();
    if (with_lower) {
      auto l = sys::open_at(AT_FDCWD, base_ + "/lower", O_RDONLY | O_DIRECTORY);
      EXPECT_TRUE(l);
      lower_fd_ = std::move(*l);
      s.lower_fd = lower_fd_.get();
    }
    s.stubs = box_mount_stubs();
    s.host_uid = ::geteuid();
    s.host_gid = ::getegid();
    return s;
  }

  static std::vector<std::string> changes_of(const UpperSource& s) {
    auto c = upper_changes(s);
    EXPECT_TRUE(c) << c.error().what();
    std::vector<std::string> out;
    if (c)
      for (const auto& ch : *c) out.push_back(std::string(1, ch.kind) + " " + ch.path);
    return out;
  }

  // The layer of `s`, read back; stats in *stats.
  std::vector<ReadEntry> layer_of(const UpperSource& s, UpperLayerStats* stats = nullptr) {
    auto out = sys::open_at(AT_FDCWD, base_ + "/layer.tar", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    EXPECT_TRUE(out);
    if (!out) return {};
    auto tar = LayerTar::create(out->get());
    EXPECT_TRUE(tar);
    if (!tar) return {};
    auto st = write_upper_layer(s, *tar);
    EXPECT_TRUE(st) << st.error().what();
    if (st && stats) *stats = *st;
    auto d = tar->finish();
    EXPECT_TRUE(d);
    auto entries = read_layer_tar(slurp_file(base_ + "/layer.tar"));
    EXPECT_TRUE(entries) << entries.error().what();
    return entries ? *entries : std::vector<ReadEntry>{};
  }

  static const ReadEntry* find(const std::vector<ReadEntry>& e, const std::string& path) {
    for (const auto& x : e)
      if (x.path == path) return &x;
    return nullptr;
  }

  std::string base_, why_;
  UniqueFd upper_fd_, lower_fd_;
};

TEST_F(UpperLayerTest, StubListNamesTheBoxMountPoints) {
  const auto& stubs = box_mount_stubs();
  for (const char* want : {"proc", "dev", "sys", "etc/hosts", "etc/hostname", "etc/resolv.conf"})
    EXPECT_NE(std::find(stubs.begin(), stubs.end(), want), stubs.end()) << want;
  for (const auto& s : stubs) {
    EXPECT_FALSE(s.empty());
    EXPECT_NE(s[0], '/') << s;
  }
}

// Additions, changes, a copied-up directory with no change, a mode change, stubs, hard links, a
// symlink and a fifo: no whiteout or xattr needed, so this runs everywhere.
TEST_F(UpperLayerTest, AddedChangedAndLeftOut) {
  dir("lower/etc");
  file("lower/etc/passwd", "root:x:0:0::/:\n");
  file("lower/etc/hostname", "image\n");
  dir("lower/usr");
  dir("lower/usr/share");
  file("lower/usr/share/doc", "d");
  dir("lower/srv");

  dir("upper/etc");
  file("upper/etc/passwd", "root:x:0:0::/root:/bin/sh\napp:x:1000:1000::/:\n", 0644);  // changed
  file("upper/etc/newfile", "new\n", 0600);                                            // added
  file("upper/etc/hosts", "");      // a stub the image lacks: left out
  file("upper/etc/hostname", "");   // a stub the image has: the box changed it
  dir("upper/usr");                 // copied up, nothing below changed: left out
  dir("upper/usr/share");
  dir("upper/srv", 0700);           // copied up by a chmod: a change
  dir("upper/proc");                // a stub directory the image lacks: left out
  dir("upper/data");
  file("upper/data/a", "same inode\n");
  ASSERT_EQ(::link((base_ + "/upper/data/a").c_str(), (base_ + "/upper/data/b").c_str()), 0);
  ASSERT_EQ(::mkfifo((base_ + "/upper/data/fifo").c_str(), 0644), 0);
  ASSERT_EQ(::symlink("etc/passwd", (base_ + "/upper/link").c_str()), 0);

  UpperSource s = source();
  EXPECT_EQ(changes_of(s), (std::vector<std::string>{"A /data", "A /data/a", "A /data/b", "A /data/fifo", "C /etc",
                                                     "C /etc/hostname", "A /etc/newfile", "C /etc/passwd",
                                                     "A /link", "C /srv"}));
  UpperLayerStats stats;
  std::vector<ReadEntry> e = layer_of(s, &stats);
  EXPECT_EQ(layer_tar_outline(e), (std::vector<std::string>{"d data", "f data/a", "h data/b => data/a", "d etc",
                                                            "f etc/hostname", "f etc/newfile", "f etc/passwd",
                                                            "l link -> etc/passwd", "d srv"}));
  EXPECT_EQ(stats.entries, 9u);
  EXPECT_EQ(stats.skipped_special, 1u);
  const ReadEntry* p = find(e, "etc/passwd");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->data, "root:x:0:0::/root:/bin/sh\napp:x:1000:1000::/:\n");
  EXPECT_EQ(p->perm, 0644u);
  // The box's own user is root in the layer.
  EXPECT_EQ(p->uid, 0);
  EXPECT_EQ(p->gid, 0);
  const ReadEntry* n = find(e, "etc/newfile");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->perm, 0600u);
  EXPECT_EQ(n->data, "new\n");
  const ReadEntry* srv = find(e, "srv");
  ASSERT_NE(srv, nullptr);
  EXPECT_EQ(srv->perm, 0700u);
  const ReadEntry* h = find(e, "etc/hostname");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->size, 0);
}

TEST_F(UpperLayerTest, MtimesAndForeignOwnersAreKept) {
  file("upper/f", "x");
  struct timespec ts[2] = {{1600000000, 0}, {1600000123, 456}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (base_ + "/upper/f").c_str(), ts, 0), 0);
  UpperSource s = source();
  // The box's user is someone else: the files' owner is written as it is.
  s.host_uid = ::geteuid() + 1;
  s.host_gid = ::getegid() + 1;
  std::vector<ReadEntry> e = layer_of(s);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].mtime, 1600000123);
  EXPECT_EQ(e[0].uid, static_cast<int64_t>(::geteuid()));
  EXPECT_EQ(e[0].gid, static_cast<int64_t>(::getegid()));
}

TEST_F(UpperLayerTest, DeletedEntriesBecomeWhiteouts) {
  dir("lower/etc");
  file("lower/etc/shadow", "s");
  file("lower/etc/keep", "k");
  dir("lower/olddir");
  file("lower/olddir/x", "x");
  dir("upper/etc");
  if (!whiteout("upper/etc/shadow")) GTEST_SKIP() << why_;
  ASSERT_TRUE(whiteout("upper/olddir"));
  UpperSource s = source();
  EXPECT_EQ(changes_of(s), (std::vector<std::string>{"C /etc", "D /etc/shadow", "D /olddir"}));
  std::vector<ReadEntry> e = layer_of(s);
  EXPECT_EQ(layer_tar_outline(e), (std::vector<std::string>{"d etc", "f etc/.wh.shadow", "f .wh.olddir"}));
}

TEST_F(UpperLayerTest, OpaqueDirectoryHidesTheLowerOne) {
  dir("lower/var");
  dir("lower/var/cache");
  file("lower/var/cache/old", "o");
  file("lower/var/cache/same", "s");
  dir("upper/var");
  dir("upper/var/cache");
  file("upper/var/cache/same", "t");  // present in the lower too, but the lower is hidden
  if (!opaque("upper/var/cache")) GTEST_SKIP() << why_;
  UpperSource s = source();
  EXPECT_EQ(changes_of(s), (std::vector<std::string>{"C /var", "C /var/cache", "A /var/cache/same"}));
  std::vector<ReadEntry> e = layer_of(s);
  EXPECT_EQ(layer_tar_outline(e),
            (std::vector<std::string>{"d var", "d var/cache", "f var/cache/.wh..wh..opq", "f var/cache/same"}));
}

TEST_F(UpperLayerTest, EmptyOpaqueDirectoryStillHidesTheLowerOne) {
  // rm -rf /var/cache/* then mkdir: overlay makes an empty opaque directory, which is a change.
  dir("lower/var");
  dir("lower/var/cache");
  file("lower/var/cache/old", "o");
  dir("upper/var");
  dir("upper/var/cache");
  if (!opaque("upper/var/cache")) GTEST_SKIP() << why_;
  UpperSource s = source();
  EXPECT_EQ(changes_of(s), (std::vector<std::string>{"C /var", "C /var/cache"}));
  EXPECT_EQ(layer_tar_outline(layer_of(s)),
            (std::vector<std::string>{"d var", "d var/cache", "f var/cache/.wh..wh..opq"}));
}

TEST_F(UpperLayerTest, NoLowerMeansEverythingIsAdded) {
  dir("upper/app");
  file("upper/app/main", "m", 0755);
  dir("upper/proc");  // a stub: left out here too
  UpperSource s = source(false);
  EXPECT_EQ(changes_of(s), (std::vector<std::string>{"A /app", "A /app/main"}));
  std::vector<ReadEntry> e = layer_of(s);
  EXPECT_EQ(layer_tar_outline(e), (std::vector<std::string>{"d app", "f app/main"}));
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[1].perm, 0755u);
}

TEST_F(UpperLayerTest, StubWithContentIsKept) {
  // A stub directory the box wrote into is no longer only a mount point.
  dir("upper/tmp");
  file("upper/tmp/kept", "k");
  UpperSource s = source();
  EXPECT_EQ(changes_of(s), (std::vector<std::string>{"A /tmp", "A /tmp/kept"}));
}

TEST_F(UpperLayerTest, ParentsMadeOnlyForStubsAreLeftOut) {
  // An image without /etc and /run: kern makes them to hold its mount points, the box writes
  // nothing else there. No change.
  dir("lower/bin");
  dir("upper/etc");
  file("upper/etc/hosts", "");
  file("upper/etc/resolv.conf", "");
  dir("upper/run");
  dir("upper/run/secrets");
  UpperSource s = source();
  EXPECT_EQ(changes_of(s), std::vector<std::string>{});
  EXPECT_EQ(layer_tar_outline(layer_of(s)), std::vector<std::string>{});
}

TEST_F(UpperLayerTest, UnreadableFileIsStillWritten) {
  // chmod 000 in the box: the owner's file, read all the same, its mode kept.
  file("upper/secret", "s3cret", 0000);
  UpperSource s = source();
  std::vector<ReadEntry> e = layer_of(s);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].perm, 0u);
  EXPECT_EQ(e[0].data, "s3cret");
  struct stat st;
  ASSERT_EQ(::stat((base_ + "/upper/secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0u);
}

}  // namespace
}  // namespace kern::oci
