// COPY and ADD of kern build (cli/build_copy.h) against a fake build context and a fake image
// tree: where each source lands by Docker's destination rules, the image's own symlinks
// followed, patterns kept inside the context, .dockerignore, --chmod and --chown, ADD of a local
// archive, the cache digest, and the layer written from a plan.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "cli/build_copy.h"
#include "oci/build/dockerignore.h"
#include "oci/dl/archive_api.h"
#include "oci/layer_tar.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"
#include "tests/unit/layer_tar_reader.h"
#include "tests/unit/openat2_probe.h"

namespace kern::cli {
namespace {

using oci::testing::layer_tar_outline;
using oci::testing::read_layer_tar;
using oci::testing::ReadEntry;
using oci::testing::slurp_file;

// A member of a test archive: 'd', 'f', 'l' (link: symlink target) or 'h' (link: hard link target).
struct BuildCopyMember {
  char type;
  std::string name;
  std::string data, link;
  unsigned perm = 0644;
  int uid = 0, gid = 0;
};

la_ssize_t build_copy_append(struct archive*, void* out, const void* buf, size_t len) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(buf), len);
  return static_cast<la_ssize_t>(len);
}

// A gzip-compressed tar of `members`, in order.
std::string build_copy_targz(const std::vector<BuildCopyMember>& members) {
  std::string out;
  auto api_r = oci::dl::archive_api();
  EXPECT_TRUE(api_r);
  if (!api_r) return out;
  const oci::dl::ArchiveApi* api = *api_r;
  struct archive* a = api->write_new();
  EXPECT_EQ(api->write_set_format_pax_restricted(a), ARCHIVE_OK);
  EXPECT_EQ(api->write_add_filter_gzip(a), ARCHIVE_OK);
  EXPECT_EQ(api->write_set_bytes_in_last_block(a, 1), ARCHIVE_OK);
  EXPECT_EQ(api->write_open(a, &out, nullptr, build_copy_append, nullptr), ARCHIVE_OK);
  struct archive_entry* e = api->entry_new();
  for (const auto& m : members) {
    api->entry_clear(e);
    api->entry_set_pathname(e, m.name.c_str());
    api->entry_set_uid(e, m.uid);
    api->entry_set_gid(e, m.gid);
    api->entry_set_mtime(e, 1500000000, 0);
    if (m.type == 'h') {
      api->entry_set_filetype(e, AE_IFREG);
      api->entry_set_perm(e, m.perm);
      api->entry_set_hardlink(e, m.link.c_str());
      api->entry_set_size(e, 0);
    } else {
      api->entry_set_filetype(e, m.type == 'd' ? AE_IFDIR : m.type == 'l' ? AE_IFLNK : AE_IFREG);
      api->entry_set_perm(e, m.perm);
      api->entry_set_size(e, m.type == 'f' ? static_cast<la_int64_t>(m.data.size()) : 0);
      if (m.type == 'l') api->entry_set_symlink(e, m.link.c_str());
    }
    EXPECT_EQ(api->write_header(a, e), ARCHIVE_OK) << m.name;
    if (m.type == 'f' && !m.data.empty()) api->write_data(a, m.data.data(), m.data.size());
  }
  api->entry_free(e);
  EXPECT_EQ(api->write_close(a), ARCHIVE_OK);
  api->write_free(a);
  return out;
}

// "f dest/a.txt 0644 0:0": kind, path, mode, owner of each planned entry.
std::vector<std::string> build_copy_outline(const CopyPlan& plan) {
  std::vector<std::string> out;
  for (const auto& e : plan.entries) {
    char k = '?';
    switch (e.kind) {
      case CopyEntry::Kind::dir: k = 'd'; break;
      case CopyEntry::Kind::file: k = 'f'; break;
      case CopyEntry::Kind::symlink: k = 'l'; break;
      case CopyEntry::Kind::data: k = 't'; break;
      case CopyEntry::Kind::archive: k = 'a'; break;
    }
    char perm[8];
    std::snprintf(perm, sizeof perm, "%04o", static_cast<unsigned>(e.perm));
    out.push_back(std::string(1, k) + " " + e.path + " " + perm + " " + std::to_string(e.uid) + ":" +
                  std::to_string(e.gid));
  }
  return out;
}

class BuildCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-build-copy-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    // The context.
    dir("ctx", 0755);
    file("ctx/a.txt", "A\n", 0644);
    file("ctx/b.txt", "BB\n", 0640);
    dir("ctx/src", 0750);
    file("ctx/src/x", "x", 0644);
    dir("ctx/src/sub", 0755);
    file("ctx/src/sub/y", "yy", 0600);
    file("ctx/notes.log", "n", 0644);
    file("ctx/keep.log", "k", 0644);
    ASSERT_EQ(::symlink("a.txt", (base_ + "/ctx/ln").c_str()), 0);
    ASSERT_EQ(::symlink("..", (base_ + "/ctx/up").c_str()), 0);
    dir("ctx/links", 0755);
    ASSERT_EQ(::symlink("../a.txt", (base_ + "/ctx/links/to-a").c_str()), 0);
    // Beside the context, never to be read through it.
    file("outside-secret", "secret", 0644);
    // The image.
    dir("image", 0755);
    dir("image/etc", 0755);
    file("image/etc/passwd", "root:x:0:0:root:/root:/bin/sh\napp:x:1200:1300::/home/app:/bin/sh\n", 0644);
    file("image/etc/group", "root:x:0:\nstaff:x:50:app\n", 0644);
    dir("image/usr", 0755);
    dir("image/usr/bin", 0755);
    dir("image/usr/lib", 0755);
    dir("image/w", 0755);
    ASSERT_EQ(::symlink("usr/bin", (base_ + "/image/bin").c_str()), 0);
    ASSERT_EQ(::symlink("/usr/lib", (base_ + "/image/lib").c_str()), 0);
    auto c = sys::open_at(AT_FDCWD, base_ + "/ctx", O_RDONLY | O_DIRECTORY);
    ASSERT_TRUE(c);
    ctx_ = std::move(*c);
    auto i = sys::open_at(AT_FDCWD, base_ + "/image", O_RDONLY | O_DIRECTORY);
    ASSERT_TRUE(i);
    image_ = std::move(*i);
    root_.fd = ctx_.get();
    root_.shown = "the build context";
  }
  void TearDown() override { (void)sys::remove_tree(AT_FDCWD, base_); }

  void dir(const std::string& rel, mode_t mode) {
    ASSERT_EQ(::mkdir((base_ + "/" + rel).c_str(), mode), 0) << rel << ": " << strerror(errno);
    ASSERT_EQ(::chmod((base_ + "/" + rel).c_str(), mode), 0);
  }
  void file(const std::string& rel, const std::string& data, mode_t mode) {
    ASSERT_TRUE(sys::write_file(AT_FDCWD, base_ + "/" + rel, data, mode)) << rel;
    ASSERT_EQ(::chmod((base_ + "/" + rel).c_str(), mode), 0);
  }

  static CopyRequest request(std::vector<std::string> sources, std::string dest, std::string workdir = "/") {
    CopyRequest r;
    r.sources = std::move(sources);
    r.dest = std::move(dest);
    r.workdir = std::move(workdir);
    r.now = 1234;
    return r;
  }

  // The plan's outline; a failed plan fails the test.
  std::vector<std::string> outline(const CopyRequest& req, int image = -2) {
    auto p = plan_copy(root_, image == -2 ? image_.get() : image, req);
    EXPECT_TRUE(p) << p.error().what();
    return p ? build_copy_outline(*p) : std::vector<std::string>{"(failed)"};
  }
  // The plan's error (what()), "" when it planned.
  std::string error_of(const CopyRequest& req) {
    auto p = plan_copy(root_, image_.get(), req);
    if (p) return "";
    EXPECT_EQ(p.error().kind(), ErrorKind::usage) << p.error().what();
    return p.error().what();
  }

  // The plan written as a layer, read back.
  std::vector<ReadEntry> layer_of(const CopyPlan& plan) {
    auto out = sys::open_at(AT_FDCWD, base_ + "/layer.tar", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    EXPECT_TRUE(out);
    if (!out) return {};
    auto tar = oci::LayerTar::create(out->get());
    EXPECT_TRUE(tar);
    if (!tar) return {};
    Status st = write_plan(plan, *tar);
    EXPECT_TRUE(st) << st.error().what();
    EXPECT_TRUE(tar->finish());
    auto e = read_layer_tar(slurp_file(base_ + "/layer.tar"));
    EXPECT_TRUE(e) << e.error().what();
    return e ? *e : std::vector<ReadEntry>{};
  }

  std::string base_;
  UniqueFd ctx_, image_;
  CopyRoot root_;
};

using Lines = std::vector<std::string>;

TEST_F(BuildCopyTest, OneFileToAFileName) {
  auto p = plan_copy(root_, image_.get(), request({"a.txt"}, "/dest"));
  ASSERT_TRUE(p) << p.error().what();
  EXPECT_EQ(build_copy_outline(*p), Lines{"f dest 0644 0:0"});
  ASSERT_EQ(p->entries.size(), 1u);
  const CopyEntry& e = p->entries[0];
  EXPECT_EQ(e.size, 2u);
  EXPECT_EQ(e.src_name, "a.txt");
  struct stat st;
  ASSERT_EQ(::stat((base_ + "/ctx/a.txt").c_str(), &st), 0);
  EXPECT_EQ(e.mtime, st.st_mtim.tv_sec);
  // The discriminant: a trailing "/" makes it a directory.
  EXPECT_EQ(outline(request({"a.txt"}, "/dest/")), (Lines{"d dest 0755 0:0", "f dest/a.txt 0644 0:0"}));
}

TEST_F(BuildCopyTest, OneFileIntoADirectory) {
  auto p = plan_copy(root_, image_.get(), request({"a.txt"}, "/dest/"));
  ASSERT_TRUE(p);
  ASSERT_EQ(p->entries.size(), 2u);
  EXPECT_EQ(p->entries[0].mtime, 1234);  // a directory this makes: the request's time
  // A directory the image has, named without "/".
  EXPECT_EQ(outline(request({"a.txt"}, "/etc")), Lines{"f etc/a.txt 0644 0:0"});
  EXPECT_EQ(outline(request({"b.txt"}, "/")), Lines{"f b.txt 0640 0:0"});
}

TEST_F(BuildCopyTest, SeveralSourcesNeedATrailingSlash) {
  std::string err = error_of(request({"a.txt", "b.txt"}, "/dest"));
  EXPECT_NE(err.find("/dest"), std::string::npos) << err;
  EXPECT_NE(err.find("must end with \"/\""), std::string::npos) << err;
  // A glob that matches two is several sources too.
  err = error_of(request({"*.txt"}, "/dest"));
  EXPECT_NE(err.find("must end with \"/\""), std::string::npos) << err;
  EXPECT_EQ(outline(request({"a.txt", "b.txt"}, "/dest/")),
            (Lines{"d dest 0755 0:0", "f dest/a.txt 0644 0:0", "f dest/b.txt 0640 0:0"}));
}

TEST_F(BuildCopyTest, ADirectoryCopiesItsContents) {
  EXPECT_EQ(outline(request({"src"}, "/app")), (Lines{"d app 0755 0:0", "d app/sub 0755 0:0",
                                                      "f app/sub/y 0600 0:0", "f app/x 0644 0:0"}));
  EXPECT_EQ(outline(request({"src/"}, "/etc/")),
            (Lines{"d etc/sub 0755 0:0", "f etc/sub/y 0600 0:0", "f etc/x 0644 0:0"}));
}

TEST_F(BuildCopyTest, MissingParentsArePlanned0755) {
  CopyRequest r = request({"a.txt"}, "/opt/deep/er/f");
  r.chown = std::make_pair(7u, 8u);
  auto p = plan_copy(root_, image_.get(), r);
  ASSERT_TRUE(p) << p.error().what();
  EXPECT_EQ(build_copy_outline(*p),
            (Lines{"d opt 0755 7:8", "d opt/deep 0755 7:8", "d opt/deep/er 0755 7:8", "f opt/deep/er/f 0644 7:8"}));
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(p->entries[i].mtime, 1234);
  // Only what the image lacks.
  EXPECT_EQ(outline(request({"a.txt"}, "/etc/x/")), (Lines{"d etc/x 0755 0:0", "f etc/x/a.txt 0644 0:0"}));
}

TEST_F(BuildCopyTest, DestinationFollowsTheImagesSymlinks) {
  EXPECT_EQ(outline(request({"a.txt"}, "/bin/")), Lines{"f usr/bin/a.txt 0644 0:0"});
  EXPECT_EQ(outline(request({"a.txt"}, "/bin")), Lines{"f usr/bin/a.txt 0644 0:0"});
  EXPECT_EQ(outline(request({"a.txt"}, "/bin/new/")), (Lines{"d usr/bin/new 0755 0:0", "f usr/bin/new/a.txt 0644 0:0"}));
  EXPECT_EQ(outline(request({"a.txt"}, "/bin/tool")), Lines{"f usr/bin/tool 0644 0:0"});
  // An absolute link is read inside the image, not on the host.
  EXPECT_EQ(outline(request({"a.txt"}, "/lib/x")), Lines{"f usr/lib/x 0644 0:0"});
  EXPECT_EQ(outline(request({"src"}, "/bin/")), (Lines{"d usr/bin/sub 0755 0:0", "f usr/bin/sub/y 0600 0:0",
                                                       "f usr/bin/x 0644 0:0"}));
}

TEST_F(BuildCopyTest, RelativeDestinationsJoinTheWorkdir) {
  EXPECT_EQ(outline(request({"a.txt"}, ".", "/w")), Lines{"f w/a.txt 0644 0:0"});
  EXPECT_EQ(outline(request({"a.txt"}, "sub/", "/w")), (Lines{"d w/sub 0755 0:0", "f w/sub/a.txt 0644 0:0"}));
  EXPECT_EQ(outline(request({"a.txt"}, "name", "/w")), Lines{"f w/name 0644 0:0"});
  EXPECT_EQ(outline(request({"a.txt"}, "name", "/")), Lines{"f name 0644 0:0"});
}

TEST_F(BuildCopyTest, DotIsADirectoryEvenWhenTheWorkdirIsMissing) {
  // COPY a.txt . in a WORKDIR the image does not have (yet), and in FROM scratch: the file goes
  // into the directory, as Docker reads "." as a directory.
  auto p = plan_copy(root_, image_.get(), request({"a.txt"}, ".", "/app"));
  auto s = plan_copy(root_, -1, request({"a.txt"}, ".", "/"));
  Lines got_app = p ? build_copy_outline(*p) : Lines{"error: " + p.error().what()};
  Lines got_scratch = s ? build_copy_outline(*s) : Lines{"error: " + s.error().what()};
  Lines want_app{"d app 0755 0:0", "f app/a.txt 0644 0:0"}, want_scratch{"f a.txt 0644 0:0"};
  EXPECT_EQ(got_app, want_app);
  EXPECT_EQ(got_scratch, want_scratch);
}

TEST_F(BuildCopyTest, ScratchImageGetsEveryParent) {
  EXPECT_EQ(outline(request({"a.txt"}, "/usr/local/"), -1), (Lines{"d usr 0755 0:0", "d usr/local 0755 0:0",
                                                                   "f usr/local/a.txt 0644 0:0"}));
  EXPECT_EQ(outline(request({"a.txt"}, "/"), -1), Lines{"f a.txt 0644 0:0"});
}

TEST_F(BuildCopyTest, PatternsCannotLeaveTheContext) {
  // ".." is cleaned away at the context's root.
  EXPECT_EQ(outline(request({"../a.txt"}, "/x/")), (Lines{"d x 0755 0:0", "f x/a.txt 0644 0:0"}));
  EXPECT_EQ(outline(request({"src/../../../b.txt"}, "/x")), Lines{"f x 0640 0:0"});
  std::string err = error_of(request({"../outside-secret"}, "/x"));
  EXPECT_NE(err.find("../outside-secret"), std::string::npos) << err;
  EXPECT_NE(err.find("not found"), std::string::npos) << err;
  // Nor does a symlink of the context (up -> ..) lead out of it.
  err = error_of(request({"up/outside-secret"}, "/x"));
  EXPECT_NE(err.find("up/outside-secret"), std::string::npos) << err;
  err = error_of(request({"up/*-secret"}, "/x"));
  EXPECT_NE(err.find("up/*-secret"), std::string::npos) << err;
  // Through it, the context's own files.
  EXPECT_EQ(outline(request({"up/a.txt"}, "/x")), Lines{"f x 0644 0:0"});
}

TEST_F(BuildCopyTest, SymlinksBelowASourceAreCopiedAsSymlinks) {
  auto p = plan_copy(root_, image_.get(), request({"links"}, "/l/"));
  ASSERT_TRUE(p) << p.error().what();
  EXPECT_EQ(build_copy_outline(*p), (Lines{"d l 0755 0:0", "l l/to-a 0777 0:0"}));
  ASSERT_EQ(p->entries.size(), 2u);
  EXPECT_EQ(p->entries[1].text, "../a.txt");
  std::vector<ReadEntry> e = layer_of(*p);
  EXPECT_EQ(layer_tar_outline(e), (Lines{"d l", "l l/to-a -> ../a.txt"}));
}

TEST_F(BuildCopyTest, ASourceNamedByASymlinkKeepsItsName) {
  // COPY ln /dest/ (ln -> a.txt): the entry is dest/ln, whether it is copied as the symlink
  // (this header's words) or as the file it names (Docker follows a source it is given by name).
  auto p = plan_copy(root_, image_.get(), request({"ln"}, "/dest/"));
  ASSERT_TRUE(p) << p.error().what();
  ASSERT_EQ(p->entries.size(), 2u);
  const CopyEntry& e = p->entries[1];
  bool as_link = e.kind == CopyEntry::Kind::symlink && e.text == "a.txt";
  bool as_file = e.kind == CopyEntry::Kind::file && e.size == 2;
  EXPECT_TRUE(as_link || as_file) << build_copy_outline(*p)[1];
  EXPECT_EQ(e.path, "dest/ln");
}

TEST_F(BuildCopyTest, GlobsMatchInTheContext) {
  EXPECT_EQ(outline(request({"*.txt"}, "/g/")), (Lines{"d g 0755 0:0", "f g/a.txt 0644 0:0", "f g/b.txt 0640 0:0"}));
  EXPECT_EQ(outline(request({"[b].txt", "s?c/x"}, "/g/")),
            (Lines{"d g 0755 0:0", "f g/b.txt 0640 0:0", "f g/x 0644 0:0"}));
  // A directory a glob matches gives its contents, as Docker does.
  EXPECT_EQ(outline(request({"src/*"}, "/g/")), (Lines{"d g 0755 0:0", "f g/y 0600 0:0", "f g/x 0644 0:0"}));
}

TEST_F(BuildCopyTest, DockerignoreExcludes) {
  auto rules = oci::build::IgnoreRules::parse("*.log\n!keep.log\nsrc/sub\n");
  ASSERT_TRUE(rules) << rules.error().what();
  root_.ignore = &*rules;
  EXPECT_EQ(outline(request({"."}, "/c/")),
            (Lines{"d c 0755 0:0", "f c/a.txt 0644 0:0", "f c/b.txt 0640 0:0", "f c/keep.log 0644 0:0",
                   "d c/links 0755 0:0", "l c/links/to-a 0777 0:0", "l c/ln 0777 0:0", "d c/src 0750 0:0", "f c/src/x 0644 0:0", "l c/up 0777 0:0"}));
  EXPECT_EQ(outline(request({"*.log"}, "/c/")), (Lines{"d c 0755 0:0", "f c/keep.log 0644 0:0"}));
  std::string err = error_of(request({"notes.log"}, "/c/"));
  EXPECT_NE(err.find("notes.log"), std::string::npos) << err;
  EXPECT_NE(err.find(".dockerignore"), std::string::npos) << err;
  err = error_of(request({"src/sub/y"}, "/c/"));
  EXPECT_NE(err.find("src/sub/y"), std::string::npos) << err;
}

TEST_F(BuildCopyTest, APatternMatchingNothingIsNamed) {
  for (const char* pattern : {"nope*", "missing.txt", "src/none/x"}) {
    std::string err = error_of(request({"a.txt", pattern}, "/d/"));
    EXPECT_NE(err.find(pattern), std::string::npos) << err;
    EXPECT_NE(err.find("the build context"), std::string::npos) << err;
  }
}

TEST_F(BuildCopyTest, ChmodAndChownApply) {
  CopyRequest r = request({"src", "a.txt"}, "/app/");
  r.chmod = 0600;
  r.chown = std::make_pair(1000u, 1001u);
  EXPECT_EQ(outline(r), (Lines{"d app 0755 1000:1001", "d app/sub 0600 1000:1001", "f app/sub/y 0600 1000:1001",
                               "f app/x 0600 1000:1001", "f app/a.txt 0600 1000:1001"}));
  r = request({"links"}, "/l/");
  r.chown = std::make_pair(5u, 6u);
  EXPECT_EQ(outline(r), (Lines{"d l 0755 5:6", "l l/to-a 0777 5:6"}));
}

TEST_F(BuildCopyTest, InlineFilesAreData) {
  CopyRequest r = request({}, "/etc/");
  r.inline_files = {{"greeting", "hi\n"}, {"other", ""}};
  r.chown = std::make_pair(3u, 4u);
  auto p = plan_copy(root_, image_.get(), r);
  ASSERT_TRUE(p) << p.error().what();
  EXPECT_EQ(build_copy_outline(*p), (Lines{"t etc/greeting 0644 3:4", "t etc/other 0644 3:4"}));
  EXPECT_EQ(p->entries[0].text, "hi\n");
  EXPECT_EQ(p->entries[0].mtime, 1234);
  r = request({}, "/etc/motd");
  r.inline_files = {{"EOF", "x"}};
  r.chmod = 0755;
  EXPECT_EQ(outline(r), Lines{"t etc/motd 0755 0:0"});
}

TEST_F(BuildCopyTest, UrlSourcesAreRefused) {
  for (bool add : {false, true}) {
    for (const char* src : {"https://example.com/a.tar.gz", "http://example.com/x", "git@github.com:o/r.git"}) {
      CopyRequest r = request({src}, "/x");
      r.add = add;
      std::string err = error_of(r);
      EXPECT_NE(err.find(src), std::string::npos) << err;
      EXPECT_NE(err.find("does not download"), std::string::npos) << err;
      EXPECT_EQ(err.rfind(add ? "ADD" : "COPY", 0), 0u) << err;
    }
  }
}

class BuildCopyArchiveTest : public BuildCopyTest {
 protected:
  void SetUp() override {
    BuildCopyTest::SetUp();
    std::string tgz = build_copy_targz({
        {'d', "pkg/", "", "", 0755},
        {'d', "pkg/bin/", "", "", 0750},
        {'f', "pkg/bin/tool", "#!tool\n", "", 0755, 5, 6},
        {'l', "pkg/link", "", "bin/tool", 0777},
        {'h', "pkg/hard", "", "pkg/bin/tool", 0755},
        {'f', "../evil", "escape", "", 0644},
        {'f', "ok/../../evil2", "escape", "", 0644},
        {'f', "./top.txt", "top", "", 0640},
    });
    ASSERT_FALSE(tgz.empty());
    file("ctx/pkg.tar.gz", tgz, 0644);
  }
};

TEST_F(BuildCopyArchiveTest, AddUnpacksALocalArchive) {
  CopyRequest r = request({"pkg.tar.gz"}, "/opt/");
  r.add = true;
  auto p = plan_copy(root_, image_.get(), r);
  ASSERT_TRUE(p) << p.error().what();
  EXPECT_EQ(build_copy_outline(*p), (Lines{"d opt 0755 0:0", "a opt 0644 0:0"}));
  std::vector<ReadEntry> e = layer_of(*p);
  EXPECT_EQ(layer_tar_outline(e), (Lines{"d opt", "d opt/pkg", "d opt/pkg/bin", "f opt/pkg/bin/tool",
                                         "l opt/pkg/link -> bin/tool", "h opt/pkg/hard => opt/pkg/bin/tool",
                                         "f opt/top.txt"}));
  ASSERT_EQ(e.size(), 7u);
  EXPECT_EQ(e[2].perm, 0750u);
  EXPECT_EQ(e[3].data, "#!tool\n");
  EXPECT_EQ(e[3].perm, 0755u);
  EXPECT_EQ(e[3].uid, 5);
  EXPECT_EQ(e[3].gid, 6);
  EXPECT_EQ(e[3].mtime, 1500000000);
  EXPECT_EQ(e[6].data, "top");
  // Without a trailing "/": still a directory to unpack into.
  r.dest = "/srv";
  auto q = plan_copy(root_, image_.get(), r);
  ASSERT_TRUE(q);
  EXPECT_EQ(build_copy_outline(*q), (Lines{"d srv 0755 0:0", "a srv 0644 0:0"}));
}

TEST_F(BuildCopyArchiveTest, CopyKeepsTheArchiveAsAFile) {
  EXPECT_EQ(outline(request({"pkg.tar.gz"}, "/opt/")), (Lines{"d opt 0755 0:0", "f opt/pkg.tar.gz 0644 0:0"}));
  // ADD of a file that is no archive copies it.
  CopyRequest r = request({"a.txt"}, "/opt/");
  r.add = true;
  EXPECT_EQ(outline(r), (Lines{"d opt 0755 0:0", "f opt/a.txt 0644 0:0"}));
}

TEST_F(BuildCopyArchiveTest, AddChownOwnsTheMembers) {
  CopyRequest r = request({"pkg.tar.gz"}, "/opt/");
  r.add = true;
  r.chown = std::make_pair(9u, 10u);
  auto p = plan_copy(root_, image_.get(), r);
  ASSERT_TRUE(p) << p.error().what();
  std::vector<ReadEntry> e = layer_of(*p);
  ASSERT_EQ(e.size(), 7u);
  for (size_t i = 1; i < e.size(); ++i) {
    if (e[i].type == 'h') continue;
    EXPECT_EQ(e[i].uid, 9) << e[i].path;
    EXPECT_EQ(e[i].gid, 10) << e[i].path;
  }
  // --chown=0:0 (root) must own them too.
  r.chown = std::make_pair(0u, 0u);
  p = plan_copy(root_, image_.get(), r);
  ASSERT_TRUE(p);
  e = layer_of(*p);
  ASSERT_EQ(e.size(), 7u);
  EXPECT_EQ(e[3].uid, 0) << e[3].path;
  EXPECT_EQ(e[3].gid, 0) << e[3].path;
}

TEST_F(BuildCopyTest, WritePlanWritesTheFiles) {
  CopyRequest r = request({"src", "links"}, "/app/");
  auto p = plan_copy(root_, image_.get(), r);
  ASSERT_TRUE(p) << p.error().what();
  std::vector<ReadEntry> e = layer_of(*p);
  EXPECT_EQ(layer_tar_outline(e), (Lines{"d app", "d app/sub", "f app/sub/y", "f app/x", "l app/to-a -> ../a.txt"}));
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].mtime, 1234);
  EXPECT_EQ(e[2].data, "yy");
  EXPECT_EQ(e[2].perm, 0600u);
  EXPECT_EQ(e[3].data, "x");
}

TEST_F(BuildCopyTest, PlanDigestFollowsContentModeAndPathNotTime) {
  auto digest = [&](const CopyRequest& r) {
    auto p = plan_copy(root_, image_.get(), r);
    EXPECT_TRUE(p) << p.error().what();
    if (!p) return std::string("(failed)");
    auto d = plan_digest(*p);
    EXPECT_TRUE(d) << d.error().what();
    return d ? *d : std::string("(failed)");
  };
  CopyRequest r = request({"src", "a.txt"}, "/app/");
  std::string first = digest(r);
  EXPECT_EQ(first.rfind("sha256:", 0), 0u) << first;
  EXPECT_EQ(digest(r), first);
  // Times: the files' and the request's.
  struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (base_ + "/ctx/src/x").c_str(), ts, 0), 0);
  ASSERT_EQ(::utimensat(AT_FDCWD, (base_ + "/ctx/a.txt").c_str(), ts, 0), 0);
  CopyRequest later = r;
  later.now = 99999;
  EXPECT_EQ(digest(later), first);
  // Content of the same size.
  file("ctx/src/x", "z", 0644);
  std::string changed = digest(r);
  EXPECT_NE(changed, first);
  file("ctx/src/x", "x", 0644);
  EXPECT_EQ(digest(r), first);
  // Mode.
  ASSERT_EQ(::chmod((base_ + "/ctx/src/x").c_str(), 0755), 0);
  EXPECT_NE(digest(r), first);
  ASSERT_EQ(::chmod((base_ + "/ctx/src/x").c_str(), 0644), 0);
  EXPECT_EQ(digest(r), first);
  // Path.
  CopyRequest moved = request({"src", "a.txt"}, "/app2/");
  EXPECT_NE(digest(moved), first);
  // Owner.
  CopyRequest owned = r;
  owned.chown = std::make_pair(1u, 1u);
  EXPECT_NE(digest(owned), first);
}

TEST_F(BuildCopyTest, ChownNumbersAndNames) {
  auto ids = resolve_chown(image_.get(), "1000");
  ASSERT_TRUE(ids) << ids.error().what();
  EXPECT_EQ(*ids, std::make_pair(1000u, 1000u));
  ids = resolve_chown(image_.get(), "1000:50");
  ASSERT_TRUE(ids);
  EXPECT_EQ(*ids, std::make_pair(1000u, 50u));
  ids = resolve_chown(-1, "0:0");
  ASSERT_TRUE(ids);
  EXPECT_EQ(*ids, std::make_pair(0u, 0u));
  KERN_SKIP_WITHOUT_OPENAT2();
  ids = resolve_chown(image_.get(), "app");
  ASSERT_TRUE(ids) << ids.error().what();
  EXPECT_EQ(*ids, std::make_pair(1200u, 1300u));
  ids = resolve_chown(image_.get(), "app:staff");
  ASSERT_TRUE(ids) << ids.error().what();
  EXPECT_EQ(*ids, std::make_pair(1200u, 50u));
  ids = resolve_chown(image_.get(), "42:staff");
  ASSERT_TRUE(ids) << ids.error().what();
  EXPECT_EQ(*ids, std::make_pair(42u, 50u));
}

TEST_F(BuildCopyTest, ChownUnknownNamesAreErrors) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto ids = resolve_chown(image_.get(), "nobody");
  ASSERT_FALSE(ids);
  EXPECT_EQ(ids.error().kind(), ErrorKind::usage);
  EXPECT_NE(ids.error().what().find("nobody"), std::string::npos) << ids.error().what();
  ids = resolve_chown(image_.get(), "app:wheel");
  ASSERT_FALSE(ids);
  EXPECT_NE(ids.error().what().find("wheel"), std::string::npos) << ids.error().what();
  ids = resolve_chown(-1, "app");
  ASSERT_FALSE(ids);
  EXPECT_NE(ids.error().what().find("app"), std::string::npos);
  // Not a number: too large for an id.
  ids = resolve_chown(image_.get(), "99999999999");
  EXPECT_FALSE(ids);
}

}  // namespace
}  // namespace kern::cli
