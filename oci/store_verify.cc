// Checking the store's content; see store_verify.h.
#include "oci/store_verify.h"

#include <fcntl.h>
#include <unistd.h>

#include "oci/digest.h"
#include "oci/layer_split.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"

namespace kern::oci {
namespace {

void check_blob(const Store& store, const std::string& digest, VerifyResult& res) {
  std::string path = store.blob_path(digest);
  ++res.blobs;
  auto fd = sys::open_at(AT_FDCWD, path, O_RDONLY | O_NOFOLLOW);
  auto got = fd ? sha256_of_fd(fd->get()) : Result<std::string>(fail(std::move(fd).error()));
  if (!got) {
    res.bad.push_back({"blob", path, got.error().what()});
  } else if (*got != digest) {
    res.bad.push_back({"blob", path, "expected " + digest + ", actual " + *got});
  }
}

void check_tree(const Store& store, const std::string& tree, VerifyResult& res) {
  std::string path = store.tree_path(tree);
  ++res.trees;
  auto text = sys::read_file(AT_FDCWD, store.recipes_path(tree), size_t{1} << 30);
  if (!text) {
    if (text.error().sys_errno() == ENOENT) ++res.trees_without_recipe;
    else res.bad.push_back({"tree", path, text.error().what()});
    return;
  }
  auto recipes = decode_recipes(*text);
  if (!recipes) {
    res.bad.push_back({"tree", path, recipes.error().what()});
    return;
  }
  // Held shared while read, as a box holds it: no gc or rmi removes the tree meanwhile.
  auto lock = store.lock_tree_shared(tree);
  if (!lock) return;  // removed since the listing
  auto dir = sys::open_at(AT_FDCWD, path, O_PATH | O_DIRECTORY | O_NOFOLLOW);
  if (!dir) {
    res.bad.push_back({"tree", path, dir.error().what()});
    return;
  }
  for (const auto& r : *recipes) {
    auto got = replay_recipe(r, dir->get(), -1);
    if (!got) {
      res.bad.push_back({"tree", path, got.error().what()});
      return;
    }
    if (*got != r.diff_id) {
      res.bad.push_back({"tree", path, "layer re-created from it: expected " + r.diff_id + ", actual " + *got});
      return;
    }
  }
}

}  // namespace

bool image_intact(const Store& store, const ImageRecord& rec, std::vector<std::string>& bad_blobs) {
  VerifyResult res;
  std::vector<std::string> blobs{rec.digest, rec.config_digest};
  blobs.insert(blobs.end(), rec.layers.begin(), rec.layers.end());
  for (const auto& d : blobs) {
    if (!store.has_blob(d)) continue;
    size_t before = res.bad.size();
    check_blob(store, d, res);
    if (res.bad.size() > before) bad_blobs.push_back(d);
  }
  check_tree(store, rec.tree, res);
  return res.bad.empty();
}

Result<VerifyResult> verify_store(const Store& store, bool remove) {
  VerifyResult res;
  KERN_TRY_ASSIGN(UniqueFd lock, store.lock_store(remove));
  KERN_TRY_ASSIGN(Store::Listing refs, store.list_refs());
  KERN_TRY_ASSIGN(Store::Listing images, store.list_images());
  for (const Store::Listing* l : {&refs, &images}) {
    res.records += l->records.size() + l->unreadable.size();
    for (const auto& e : l->unreadable) {
      // A record whose content is bad gets its path (and goes with `remove`); one that could not
      // be read for another reason (EACCES, EIO) may read next time and stays.
      std::string path;
      for (const auto& rel : l->corrupt)
        if (e.what().find(store.root() + "/" + rel) != std::string::npos) path = store.root() + "/" + rel;
      res.bad.push_back({"record", path, e.what()});
    }
  }
  KERN_TRY_ASSIGN(std::vector<std::string> blobs, store.list_blobs());
  for (const auto& b : blobs) check_blob(store, b, res);
  KERN_TRY_ASSIGN(std::vector<std::string> trees, store.list_trees());
  for (const auto& t : trees) check_tree(store, t, res);
  if (!remove) return res;
  for (auto& b : res.bad) {
    if (b.what == "blob" || (b.what == "record" && !b.path.empty())) {
      b.removed = ::unlink(b.path.c_str()) == 0;
    } else if (b.what == "tree") {
      std::string tree = b.path.substr(b.path.rfind('/') + 1);
      auto lk = store.try_lock_tree_exclusive(tree);
      b.removed = lk && lk->valid() && store.remove_tree(tree);
    }
  }
  return res;
}

}  // namespace kern::oci
