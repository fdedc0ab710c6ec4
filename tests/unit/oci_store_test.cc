// The store and the importer: docker-archive and OCI layout imports, digest checks, whiteouts
// across layers, crash leftovers, locks against rmi/gc, and resolve_for_box.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "oci/digest.h"
#include "oci/image_resolver.h"
#include "oci/image_sources.h"
#include "oci/store.h"
#include "oci/store_ops.h"
#include "oci_tar_builder.h"
#include "runtime/sys/syscall.h"
#include "tests/unit/openat2_probe.h"

namespace kern::oci {
namespace {

using testing::TarBuilder;
using json = nlohmann::json;

std::string hex(const std::string& digest) { return digest.substr(7); }

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-store-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    ::setenv("XDG_CACHE_HOME", (base_ + "/cache").c_str(), 1);
    cache_ = base_ + "/cache/kern";
  }
  void TearDown() override {
    ::unsetenv("XDG_CACHE_HOME");
    (void)sys::remove_tree(AT_FDCWD, base_);
  }
  static void write(const std::string& path, const std::string& data) { std::ofstream(path, std::ios::binary) << data; }
  static bool exists(const std::string& p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0;
  }
  static size_t count(const std::string& dir) {
    size_t n = 0;
    if (auto* d = ::opendir(dir.c_str())) {
      while (auto* e = ::readdir(d)) n += e->d_name[0] != '.';
      ::closedir(d);
    }
    return n;
  }
  std::string config_for(const std::vector<std::string>& plain_layers, const std::string& cmd = "/bin/sh") {
    json diff = json::array();
    for (const auto& l : plain_layers) diff.push_back(*sha256_of(l));
    return json{{"architecture", "amd64"}, {"os", "linux"},
                {"config", {{"Cmd", {cmd}}, {"Env", {"PATH=/bin", "K=v"}}, {"WorkingDir", "/w"}}},
                {"rootfs", {{"type", "layers"}, {"diff_ids", diff}}}}
        .dump();
  }
  // A docker-archive with these (plain tar) layers.
  std::string docker_archive(const std::vector<std::string>& layers, const std::string& tag,
                             std::string config = "") {
    if (config.empty()) config = config_for(layers);
    TarBuilder outer;
    json names = json::array();
    for (size_t i = 0; i < layers.size(); ++i) {
      std::string n = "l" + std::to_string(i) + "/layer.tar";
      outer.file(n, layers[i]);
      names.push_back(n);
    }
    outer.file("cfg.json", config);
    outer.file("manifest.json", json::array({{{"Config", "cfg.json"}, {"RepoTags", {tag}}, {"Layers", names}}}).dump());
    std::string path = base_ + "/img.tar";
    write(path, outer.build());
    return path;
  }
  // An OCI layout directory of (plain tar, blob as stored) layers; returns the manifest digest.
  std::string oci_layout(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& layers_in,
                         const std::string& tag = "latest") {
    ::mkdir(dir.c_str(), 0755);
    ::mkdir((dir + "/blobs").c_str(), 0755);
    ::mkdir((dir + "/blobs/sha256").c_str(), 0755);
    write(dir + "/oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
    auto blob = [&](const std::string& data) {
      std::string d = *sha256_of(data);
      write(dir + "/blobs/sha256/" + hex(d), data);
      return json{{"digest", d}, {"size", data.size()}};
    };
    json layers = json::array();
    std::vector<std::string> plain;
    for (const auto& [tar, stored] : layers_in) {
      plain.push_back(tar);
      json d = blob(stored);
      bool gz = static_cast<unsigned char>(stored[0]) == 0x1f;
      bool zst = static_cast<unsigned char>(stored[0]) == 0x28;
      d["mediaType"] = std::string("application/vnd.oci.image.layer.v1.tar") + (gz ? "+gzip" : zst ? "+zstd" : "");
      layers.push_back(d);
    }
    json cfg = blob(config_for(plain));
    cfg["mediaType"] = "application/vnd.oci.image.config.v1+json";
    json m = {{"schemaVersion", 2}, {"mediaType", "application/vnd.oci.image.manifest.v1+json"}, {"config", cfg}, {"layers", layers}};
    json md = blob(m.dump());
    md["mediaType"] = "application/vnd.oci.image.manifest.v1+json";
    md["annotations"] = {{"org.opencontainers.image.ref.name", tag}};
    write(dir + "/index.json", json{{"schemaVersion", 2}, {"manifests", {md}}}.dump());
    return md["digest"];
  }

  std::string base_, cache_;
};

TEST_F(StoreTest, LoadDockerArchiveAndResolve) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto layer = TarBuilder().dir("bin").file("bin/sh", "#!sh", 0755).file("etc/hostname", "x\n").build();
  auto path = docker_archive({layer}, "demo:1");
  auto store = Store::open(true);
  ASSERT_TRUE(store);
  auto recs = load_archive(*store, path);
  ASSERT_TRUE(recs) << recs.error().what();
  ASSERT_EQ(recs->size(), 1u);
  auto r = resolve_for_box("demo:1", PullPolicy::never);
  ASSERT_TRUE(r) << r.error().what();
  EXPECT_EQ(r->ref, "docker.io/library/demo:1");
  ASSERT_EQ(r->lower_dirs.size(), 1u);
  EXPECT_TRUE(exists(r->lower_dirs[0] + "/bin/sh"));
  EXPECT_EQ(r->config.cmd, std::vector<std::string>{"/bin/sh"});
  EXPECT_EQ(r->config.working_dir, "/w");
  EXPECT_TRUE(r->lock.valid());
  // The uncompressed layer's blob is not kept: the tree and its recipe re-create it.
  EXPECT_FALSE(exists(cache_ + "/blobs/sha256/" + hex(*sha256_of(layer))));
  EXPECT_TRUE(exists(r->lower_dirs[0] + ".recipes"));
  EXPECT_EQ(count(cache_ + "/staging"), 0u);
}

TEST_F(StoreTest, DockerArchiveWithCompressedLayerIsStagedAndVerified) {
  KERN_SKIP_WITHOUT_OPENAT2();
  // Layers of a docker save archive are plain tar and read in place; a gzip'ed one is copied
  // out, hashed, and still checked against its diff_id.
  auto plain = TarBuilder().file("gz/f", std::string(5000, 'g')).build();
  auto gz = TarBuilder().file("gz/f", std::string(5000, 'g')).build("gzip");
  auto other = TarBuilder().file("p/f", std::string(5000, 'p')).build();
  TarBuilder outer;
  outer.file("a/layer.tar", gz).file("b/layer.tar", other).file("cfg.json", config_for({plain, other}));
  outer.file("manifest.json", R"([{"Config":"cfg.json","RepoTags":["mixed:1"],"Layers":["a/layer.tar","b/layer.tar"]}])");
  std::string path = base_ + "/mixed.tar";
  write(path, outer.build());
  auto store = Store::open(true);
  ASSERT_TRUE(store);
  auto recs = load_archive(*store, path);
  ASSERT_TRUE(recs) << recs.error().what();
  auto r = resolve_for_box("mixed:1", PullPolicy::never);
  ASSERT_TRUE(r) << r.error().what();
  EXPECT_TRUE(exists(r->lower_dirs[0] + "/gz/f"));
  EXPECT_TRUE(exists(r->lower_dirs[0] + "/p/f"));
  EXPECT_TRUE(exists(cache_ + "/blobs/sha256/" + hex(*sha256_of(gz))));
  // The plain layer is re-created from the tree; the gzip'ed blob is what the manifest names.
  EXPECT_FALSE(exists(cache_ + "/blobs/sha256/" + hex(*sha256_of(other))));
}

TEST_F(StoreTest, PullNeverOnMissingImageCreatesNothing) {
  auto r = resolve_for_box("nothere:1", PullPolicy::never);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::image);
  EXPECT_FALSE(exists(base_ + "/cache"));
}

TEST_F(StoreTest, DiffIdMismatchRefused) {
  auto layer = TarBuilder().file("a", "1").build();
  auto other = TarBuilder().file("b", "2").build();
  auto path = docker_archive({layer}, "bad:1", config_for({other}));
  auto store = Store::open(true);
  ASSERT_TRUE(store);
  auto recs = load_archive(*store, path);
  ASSERT_FALSE(recs);
  EXPECT_NE(recs.error().what().find("digest mismatch"), std::string::npos) << recs.error().what();
  EXPECT_EQ(count(cache_ + "/trees"), 0u);
  EXPECT_EQ(count(cache_ + "/refs"), 0u);
  EXPECT_EQ(count(cache_ + "/staging"), 0u);
}

TEST_F(StoreTest, BlobDigestMismatchRefused) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto layer = TarBuilder().file("a", "1").build();
  std::string dir = base_ + "/layout";
  oci_layout(dir, {{layer, layer}});
  // Same length, other bytes, under the old name: a tampered blob.
  std::string tampered = layer;
  tampered[600] ^= 1;
  write(dir + "/blobs/sha256/" + hex(*sha256_of(layer)), tampered);
  auto r = resolve_for_box("oci:" + dir, PullPolicy::missing);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what().find("digest mismatch"), std::string::npos) << r.error().what();
  EXPECT_EQ(count(cache_ + "/trees"), 0u);
  EXPECT_EQ(count(cache_ + "/refs"), 0u);
  EXPECT_EQ(count(cache_ + "/staging"), 0u);
  EXPECT_FALSE(exists(cache_ + "/blobs/sha256/" + hex(*sha256_of(layer))));
}

TEST_F(StoreTest, OciLayoutThreeLayersWithWhiteouts) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto l1 = TarBuilder().file("data/keep", "k").file("data/gone", "g").file("data/opq/old", "o").build();
  auto l2 = TarBuilder().file("data/.wh.gone", "").file("data/opq/.wh..wh..opq", "").file("data/opq/new", "n").build();
  auto l3 = TarBuilder().file("etc/motd", "3").build();
  std::string dir = base_ + "/layout";
  std::string digest = oci_layout(dir, {{l1, l1}, {l2, l2}, {l3, l3}}, "v1");
  auto r = resolve_for_box("oci:" + dir + ":v1", PullPolicy::missing);
  ASSERT_TRUE(r) << r.error().what();
  EXPECT_EQ(r->digest, digest);
  const std::string& t = r->lower_dirs[0];
  EXPECT_TRUE(exists(t + "/data/keep"));
  EXPECT_FALSE(exists(t + "/data/gone"));
  EXPECT_FALSE(exists(t + "/data/opq/old"));
  EXPECT_TRUE(exists(t + "/data/opq/new"));
  EXPECT_TRUE(exists(t + "/etc/motd"));
  // The second resolve takes the fast path: the same tree, nothing re-imported.
  auto again = resolve_for_box("oci:" + dir + ":v1", PullPolicy::never);
  ASSERT_TRUE(again) << again.error().what();
  EXPECT_EQ(again->lower_dirs, r->lower_dirs);
  EXPECT_FALSE(resolve_for_box("oci:" + dir + ":v2", PullPolicy::missing));
}

TEST_F(StoreTest, GzipAndZstdLayers) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto plain = TarBuilder().file("z", std::string(100000, 'z')).build();
  for (std::string filter : {"gzip", "zstd"}) {
    auto stored = TarBuilder().file("z", std::string(100000, 'z')).build(filter);
    std::string dir = base_ + "/layout-" + filter;
    oci_layout(dir, {{plain, stored}});
    auto r = resolve_for_box("oci:" + dir, PullPolicy::missing);
    ASSERT_TRUE(r) << filter << ": " << r.error().what();
    struct stat st;
    ASSERT_EQ(::stat((r->lower_dirs[0] + "/z").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 100000);
  }
}

TEST_F(StoreTest, StaleStagingCleanedLiveStagingKept) {
  auto store = Store::open(true);
  ASSERT_TRUE(store);
  ASSERT_EQ(::mkdir((cache_ + "/staging/s-crashed").c_str(), 0700), 0);
  write(cache_ + "/staging/s-crashed/half", "x");
  auto live = store->begin_staging();
  ASSERT_TRUE(live);
  EXPECT_EQ(store->clean_stale_staging(), 1u);
  EXPECT_FALSE(exists(cache_ + "/staging/s-crashed"));
  EXPECT_TRUE(exists(live->path()));
}

// An import that starts again in a fresh staging dir (the base tree could not be linked)
// leaves nothing of the first one.
TEST_F(StoreTest, AStagingDirReplacedByAnotherIsRemoved) {
  auto store = Store::open(true);
  ASSERT_TRUE(store);
  std::string old_path, new_path;
  {
    auto first = store->begin_staging();
    ASSERT_TRUE(first);
    old_path = first->path();
    write(old_path + "/half", "x");
    auto second = store->begin_staging();
    ASSERT_TRUE(second);
    new_path = second->path();
    *first = std::move(*second);
    EXPECT_FALSE(exists(old_path));
    EXPECT_TRUE(exists(new_path));
    EXPECT_EQ(first->path(), new_path);
  }
  EXPECT_FALSE(exists(new_path));
}

TEST_F(StoreTest, RmiKeepsTreeInUseAndGcTakesItLater) {
  auto layer = TarBuilder().file("f", "1").build();
  auto path = docker_archive({layer}, "used:1");
  auto store = Store::open(true);
  ASSERT_TRUE(store);
  ASSERT_TRUE(load_archive(*store, path));
  auto box = resolve_for_box("used:1", PullPolicy::never);
  ASSERT_TRUE(box);
  std::string tree = box->lower_dirs[0];
  auto rm = remove_images(*store, {"used:1"});
  ASSERT_TRUE(rm) << rm.error().what();
  EXPECT_EQ(rm->untagged.size(), 1u);
  EXPECT_EQ(rm->gc.busy_trees, 1u);
  EXPECT_TRUE(exists(tree + "/f"));  // the running box still has its root
  EXPECT_FALSE(resolve_for_box("used:1", PullPolicy::never));
  box->lock.reset();  // the box ends
  auto lock = store->lock_store(true);
  auto gc = store->collect(true);
  ASSERT_TRUE(gc);
  EXPECT_EQ(gc->trees, 1u);
  EXPECT_FALSE(exists(tree));
  EXPECT_EQ(count(cache_ + "/blobs/sha256"), 0u);
}

TEST_F(StoreTest, TagSharesTheImageAndRmiKeepsSharedLayers) {
  auto layer = TarBuilder().file("f", "1").build();
  auto store = Store::open(true);
  ASSERT_TRUE(store);
  ASSERT_TRUE(load_archive(*store, docker_archive({layer}, "a:1")));
  auto named = tag_image(*store, "a:1", "localhost:5000/b:2");
  ASSERT_TRUE(named) << named.error().what();
  EXPECT_EQ(*named, "localhost:5000/b:2");
  auto rm = remove_images(*store, {"a:1"});
  ASSERT_TRUE(rm);
  EXPECT_TRUE(rm->deleted.empty());
  auto b = resolve_for_box("localhost:5000/b:2", PullPolicy::never);
  ASSERT_TRUE(b) << b.error().what();
  EXPECT_TRUE(exists(b->lower_dirs[0] + "/f"));
}

TEST_F(StoreTest, ConcurrentImportsOfTheSameImage) {
  auto layer = TarBuilder().file("f", std::string(1 << 20, 'c')).build();
  std::string path = docker_archive({layer}, "race:1");
  std::vector<pid_t> kids;
  for (int i = 0; i < 3; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      auto s = Store::open(true);
      if (!s) _exit(2);
      auto r = load_archive(*s, path);
      if (!r) std::fprintf(stderr, "import failed: %s\n", r.error().what().c_str());
      _exit(r ? 0 : 1);
    }
    kids.push_back(pid);
  }
  for (pid_t p : kids) {
    int status = 0;
    ::waitpid(p, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto r = resolve_for_box("race:1", PullPolicy::never);
  ASSERT_TRUE(r) << r.error().what();
  EXPECT_EQ(count(cache_ + "/trees"), 3u);  // the tree, its recipes and its lock file
  EXPECT_EQ(count(cache_ + "/staging"), 0u);
}

TEST_F(StoreTest, ImageOnTopOfAStoredBaseLinksItsFilesAndKeepsItsOwnership) {
  KERN_SKIP_WITHOUT_OPENAT2();
  auto base = TarBuilder().dir("bin").file("bin/sh", "#!sh", 0755).file("home/u/f", "mine\n", 0640, 1000, 1000).build();
  auto top = TarBuilder().file("app", "app\n").build();
  auto store = Store::open(true);
  ASSERT_TRUE(store);
  ASSERT_TRUE(load_archive(*store, docker_archive({base}, "base:1")));
  auto b = resolve_for_box("base:1", PullPolicy::never);
  ASSERT_TRUE(b) << b.error().what();
  ASSERT_TRUE(load_archive(*store, docker_archive({base, top}, "app:1")));
  auto a = resolve_for_box("app:1", PullPolicy::never);
  ASSERT_TRUE(a) << a.error().what();
  ASSERT_NE(a->lower_dirs[0], b->lower_dirs[0]);
  struct stat sb, sa;
  ASSERT_EQ(::stat((b->lower_dirs[0] + "/bin/sh").c_str(), &sb), 0);
  ASSERT_EQ(::stat((a->lower_dirs[0] + "/bin/sh").c_str(), &sa), 0);
  EXPECT_EQ(sa.st_ino, sb.st_ino);
  EXPECT_TRUE(exists(a->lower_dirs[0] + "/app"));
  // The base's ownership records come along with its files.
  std::ifstream owners(a->lower_dirs[0] + ".owners.jsonl");
  std::string text((std::istreambuf_iterator<char>(owners)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"/home/u/f\""), std::string::npos) << text;
  EXPECT_NE(text.find("1000"), std::string::npos) << text;
}


// A record whose content is bad blocks nothing: gc, rmi and the listings name it and go on (gc
// keeps unnamed images while a name record is bad: it may have named one), and rmi of a bad name
// or gc removes it. A record directory that cannot be listed still stops gc.
class StoreUnreadableTest : public StoreTest {
 protected:
  // Loads a:1 and b:1 (different layers) and returns the path of b:1's name record.
  std::string two_images() {
    auto store = Store::open(true);
    EXPECT_TRUE(store);
    EXPECT_TRUE(load_archive(*store, docker_archive({TarBuilder().file("a", "1").build()}, "a:1")));
    EXPECT_TRUE(load_archive(*store, docker_archive({TarBuilder().file("b", "2").build()}, "b:1")));
    std::string found;
    if (auto* d = ::opendir((cache_ + "/refs").c_str())) {
      while (auto* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::string p = cache_ + "/refs/" + e->d_name;
        std::ifstream f(p);
        std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        if (text.find("docker.io/library/b:1") != std::string::npos) found = p;
      }
      ::closedir(d);
    }
    EXPECT_FALSE(found.empty());
    return found;
  }
  size_t files() { return count(cache_ + "/blobs/sha256") + count(cache_ + "/trees") + count(cache_ + "/images"); }
};

TEST_F(StoreUnreadableTest, GcPastABadNameRecordNamesItAndKeepsTheUnnamedImages) {
  std::string b_ref = two_images();
  size_t before = files();
  write(b_ref, "{\"ref\":");  // b:1's only name: the image it named is kept, as unknown
  auto store = Store::open(true);
  ASSERT_TRUE(store);
  auto lock = store->lock_store(true);
  auto gc = store->collect(true);
  ASSERT_TRUE(gc) << gc.error().what();
  ASSERT_EQ(gc->bad_records.size(), 1u);
  EXPECT_NE(gc->bad_records[0].find(b_ref), std::string::npos) << gc->bad_records[0];
  EXPECT_TRUE(gc->kept_unnamed);
  EXPECT_EQ(files(), before);
  EXPECT_TRUE(exists(b_ref));
  // gc as the verb runs it removes the bad record, and still keeps the unnamed image this time.
  auto gc2 = store->collect(true, true);
  ASSERT_TRUE(gc2) << gc2.error().what();
  EXPECT_EQ(gc2->removed_bad, 1u);
  EXPECT_FALSE(exists(b_ref));
  EXPECT_EQ(files(), before);
  EXPECT_TRUE(resolve_for_box("a:1", PullPolicy::never));
}

TEST_F(StoreUnreadableTest, GcGoesOnPastABadImageRecordAndNamesIt) {
  std::string b_ref = two_images();
  // An unnamed image with a bad record is unusable: gc names it and takes what only it used.
  auto store = Store::open(true);
  ASSERT_TRUE(store);
  ASSERT_TRUE(remove_images(*store, {"a:1"}));
  auto layer = TarBuilder().file("c", "3").build();
  ASSERT_TRUE(load_archive(*store, docker_archive({layer}, "c:1")));
  ASSERT_TRUE(store->remove_ref("docker.io/library/c:1"));
  std::string img;
  if (auto* d = ::opendir((cache_ + "/images").c_str())) {
    while (auto* e = ::readdir(d))
      if (e->d_name[0] != '.' && img.empty()) img = cache_ + "/images/" + e->d_name;
    ::closedir(d);
  }
  write(img, "[]");
  size_t before = files();
  auto lock = store->lock_store(true);
  auto gc = store->collect(true);
  ASSERT_TRUE(gc) << gc.error().what();
  ASSERT_EQ(gc->bad_records.size(), 1u);
  EXPECT_NE(gc->bad_records[0].find(img), std::string::npos) << gc->bad_records[0];
  EXPECT_FALSE(gc->kept_unnamed);
  EXPECT_LT(files(), before);
  EXPECT_TRUE(resolve_for_box("b:1", PullPolicy::never));
  (void)b_ref;
}

TEST_F(StoreUnreadableTest, GcRemovesNothingWhenTheRecordDirectoryCannotBeListed) {
  two_images();
  size_t before = files();
  ASSERT_EQ(::rename((cache_ + "/refs").c_str(), (cache_ + "/refs.away").c_str()), 0);
  write(cache_ + "/refs", "");  // not a directory: before, it listed as empty and gc took all
  auto store = Store::open(true);
  ASSERT_TRUE(store);
  auto lock = store->lock_store(true);
  auto gc = store->collect(true);
  ASSERT_FALSE(gc);
  EXPECT_NE(gc.error().what().find("refs"), std::string::npos) << gc.error().what();
  EXPECT_EQ(files(), before);
}

TEST_F(StoreUnreadableTest, ListingsNameEachUnreadableRecord) {
  std::string b_ref = two_images();
  write(b_ref, "not json");
  auto store = Store::open(false);
  ASSERT_TRUE(store);
  auto refs = store->list_refs();
  ASSERT_TRUE(refs) << refs.error().what();
  ASSERT_EQ(refs->records.size(), 1u);
  EXPECT_EQ(refs->records[0].ref, "docker.io/library/a:1");
  ASSERT_EQ(refs->unreadable.size(), 1u);
  EXPECT_NE(refs->unreadable[0].what().find(b_ref.substr(cache_.size() + 1)), std::string::npos)
      << refs->unreadable[0].what();
}

TEST_F(StoreUnreadableTest, RmiGoesOnPastABadRecordAndRemovesABadName) {
  std::string b_ref = two_images();
  write(b_ref, "{");
  auto store = Store::open(true);
  ASSERT_TRUE(store);
  auto rm = remove_images(*store, {"a:1"});
  ASSERT_TRUE(rm) << rm.error().what();
  EXPECT_EQ(rm->untagged, std::vector<std::string>{"docker.io/library/a:1"});
  ASSERT_EQ(rm->gc.bad_records.size(), 1u);
  EXPECT_NE(rm->gc.bad_records[0].find(b_ref), std::string::npos) << rm->gc.bad_records[0];
  EXPECT_FALSE(resolve_for_box("a:1", PullPolicy::never));
  auto rm_bad = remove_images(*store, {"b:1"});
  ASSERT_TRUE(rm_bad) << rm_bad.error().what();
  EXPECT_EQ(rm_bad->removed_bad.size(), 1u);
  EXPECT_FALSE(exists(b_ref));
}

TEST_F(StoreTest, ARecordOverTheReadLimitIsNeverWritten) {
  auto store = Store::open(true);
  ASSERT_TRUE(store);
  ImageRecord r;
  r.digest = "sha256:" + std::string(64, 'a');
  r.tree = std::string(64, 'b');
  r.config.env.assign(5000, "V=" + std::string(1000, 'x'));
  Status st = store->write_image(r);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().what().find("4 MiB"), std::string::npos) << st.error().what();
  EXPECT_FALSE(exists(cache_ + "/images/" + std::string(64, 'a') + ".json"));
  r.config.env.resize(100);
  ASSERT_TRUE(store->write_image(r));
  auto back = store->find_image(r.digest);
  ASSERT_TRUE(back) << back.error().what();
  ASSERT_TRUE(*back);
  EXPECT_EQ((*back)->config.env.size(), 100u);
}

}  // namespace
}  // namespace kern::oci
