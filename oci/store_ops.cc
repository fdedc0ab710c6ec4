// Image lookup, tag and removal; see store_ops.h.
#include "oci/store_ops.h"

#include <map>
#include <set>

#include "oci/reference.h"
#include "runtime/sys/log.h"

namespace kern::oci {
bool looks_like_image_id(std::string_view s) {
  if (s.rfind("sha256:", 0) == 0) s.remove_prefix(7);
  if (s.size() < 4 || s.size() > 64) return false;
  return s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

Result<std::optional<ImageRecord>> find_image_by_id(const Store& store, const std::string& text) {
  if (!looks_like_image_id(text)) return std::optional<ImageRecord>();
  std::string want = text.rfind("sha256:", 0) == 0 ? text : "sha256:" + text;
  KERN_TRY_ASSIGN(Store::Listing images, store.list_images());
  // The IMAGE ID kern images shows is the config digest's (Docker's); the manifest digest is
  // accepted too. Records that share a config (one image brought by two transports) are one
  // image: the first is as good as the other.
  for (bool by_config : {true, false}) {
    const ImageRecord* found = nullptr;
    for (const auto& img : images.records) {
      const std::string& d = by_config ? img.config_digest : img.digest;
      if (d.compare(0, want.size(), want) != 0) continue;
      if (found && (by_config ? found->config_digest : found->digest) != d)
        return fail(ErrorKind::image, 0, "image id \"" + text + "\" is ambiguous");
      if (!found) found = &img;
    }
    if (found) return std::optional<ImageRecord>(*found);
  }
  return std::optional<ImageRecord>();
}

Result<ImageRecord> lookup_image(const Store& store, const std::string& text) {
  auto ref = parse_reference(text);
  if (ref) {
    KERN_TRY_ASSIGN(auto rec, store.find_ref(ref->str()));
    if (rec) return std::move(*rec);
  }
  KERN_TRY_ASSIGN(auto by_id, find_image_by_id(store, text));
  if (by_id) return std::move(*by_id);
  if (!ref && !looks_like_image_id(text)) return fail(std::move(ref).error());
  return fail(Error(ErrorKind::image, ENOENT, "no image " + (ref ? ref->str() : text) + " in the local store")
                  .with_hint("see 'kern images'"));
}

Result<std::string> tag_image(const Store& store, const std::string& src, const std::string& dst) {
  KERN_TRY_ASSIGN(ImageRecord rec, lookup_image(store, src));
  KERN_TRY_ASSIGN(Reference to, parse_reference(dst));
  if (to.kind != Reference::Kind::registry || !to.digest.empty())
    return fail(ErrorKind::usage, 0, "a tag must be a name like repo:tag, not \"" + dst + "\"");
  KERN_TRY_ASSIGN(UniqueFd lock, store.lock_store(false));
  // The image record may only exist as a name's copy; make sure the image itself is recorded.
  KERN_TRY_ASSIGN(auto img, store.find_image(rec.digest));
  if (!img) KERN_TRY(store.write_image(rec));
  rec.ref = to.str();
  rec.source_stamp.clear();
  KERN_TRY(store.write_ref(rec));
  return to.str();
}

Result<RemoveResult> remove_images(const Store& store, const std::vector<std::string>& refs) {
  KERN_TRY_ASSIGN(UniqueFd lock, store.lock_store(true));
  {
    // Whether an image keeps another name, and what gc may then take, cannot be known while a
    // record cannot be read: remove nothing at all.
    KERN_TRY_ASSIGN(Store::Listing names, store.list_refs());
    KERN_TRY_ASSIGN(Store::Listing images, store.list_images());
    KERN_TRY(refuse_unreadable(store, {&names, &images}, "rmi removes nothing"));
  }
  RemoveResult res;
  std::set<std::string> touched;
  for (const auto& text : refs) {
    auto ref = parse_reference(text);
    if (ref) {
      // A name whose record is bad is removed as it is: that is the way out for it.
      auto named = store.find_ref(ref->str());
      if (!named && record_corrupt(named.error())) {
        KERN_TRY(store.remove_ref(ref->str()));
        res.untagged.push_back(ref->str());
        res.removed_bad.push_back(named.error().what());
        continue;
      }
    }
    KERN_TRY_ASSIGN(ImageRecord rec, lookup_image(store, text));
    KERN_TRY_ASSIGN(auto named, store.find_ref(ref ? ref->str() : std::string()));
    if (ref && named) {
      KERN_TRY(store.remove_ref(ref->str()));
      res.untagged.push_back(ref->str());
    } else {
      // Removal by id drops every name of the image (of each record with its config).
      KERN_TRY_ASSIGN(Store::Listing all, store.list_refs());
      for (const auto& r : all.records)
        if (r.digest == rec.digest || r.config_digest == rec.config_digest) {
          KERN_TRY(store.remove_ref(r.ref));
          res.untagged.push_back(r.ref);
          touched.insert(r.digest);
        }
      KERN_TRY_ASSIGN(Store::Listing imgs, store.list_images());
      for (const auto& r : imgs.records)
        if (r.config_digest == rec.config_digest) touched.insert(r.digest);
    }
    touched.insert(rec.digest);
  }
  KERN_TRY_ASSIGN(Store::Listing remaining, store.list_refs());
  for (const auto& digest : touched) {
    bool still_named = false;
    for (const auto& r : remaining.records) still_named |= r.digest == digest;
    if (still_named) continue;
    KERN_TRY(store.remove_image(digest));
    res.deleted.push_back(digest);
  }
  KERN_TRY_ASSIGN(res.gc, store.collect(false));
  return res;
}

namespace {

// Whether a box holds the tree (its shared lock); a tree that is not there is not in use.
Result<bool> tree_busy(const Store& store, const std::string& tree) {
  if (!store.has_tree(tree)) return false;
  KERN_TRY_ASSIGN(UniqueFd lk, store.try_lock_tree_exclusive(tree));
  return !lk.valid();
}

}  // namespace

Result<RemoveResult> prune_images(const Store& store, bool all) {
  KERN_TRY_ASSIGN(UniqueFd lock, store.lock_store(true));
  KERN_TRY_ASSIGN(Store::Listing names, store.list_refs());
  KERN_TRY_ASSIGN(Store::Listing images, store.list_images());
  KERN_TRY(refuse_unreadable(store, {&names, &images}, "image prune removes nothing"));
  RemoveResult res;
  if (all) {
    for (const auto& r : names.records) {
      KERN_TRY_ASSIGN(bool busy, tree_busy(store, r.tree));
      if (busy) continue;
      KERN_TRY(store.remove_ref(r.ref));
      res.untagged.push_back(r.ref);
    }
  }
  KERN_TRY_ASSIGN(res.gc, store.collect(true));
  res.deleted = res.gc.deleted_images;
  return res;
}

Result<DiskUsage> disk_usage(const Store& store) {
  DiskUsage u;
  KERN_TRY_ASSIGN(UniqueFd lock, store.lock_store(false));
  KERN_TRY_ASSIGN(Store::Listing names, store.list_refs());
  KERN_TRY_ASSIGN(Store::Listing images, store.list_images());
  KERN_TRY(refuse_unreadable(store, {&names, &images}, "system df cannot count"));
  for (const Store::Listing* l : {&names, &images})
    for (const Error& e : l->unreadable) u.bad_records.push_back(e.what());
  // Every record (a name's copy stands for an image record that was lost) by manifest digest.
  std::map<std::string, const ImageRecord*> by_digest;
  for (const auto& r : images.records) by_digest[r.digest] = &r;
  for (const auto& r : names.records) by_digest.emplace(r.digest, &r);
  std::map<std::string, bool> trees;  // tree -> busy
  std::set<std::string> busy_blobs;
  for (const auto& [digest, r] : by_digest) {
    ++u.images;
    auto it = trees.find(r->tree);
    if (it == trees.end()) {
      KERN_TRY_ASSIGN(bool busy, tree_busy(store, r->tree));
      it = trees.emplace(r->tree, busy).first;
    }
    if (!it->second) continue;
    ++u.active_images;
    busy_blobs.insert(r->digest);
    busy_blobs.insert(r->config_digest);
    busy_blobs.insert(r->layers.begin(), r->layers.end());
  }
  std::set<std::pair<dev_t, ino_t>> seen;
  // Trees no image names any more count too (gc or prune removes them).
  KERN_TRY_ASSIGN(std::vector<std::string> on_disk, store.list_trees());
  for (const auto& t : on_disk)
    if (!trees.count(t)) {
      KERN_TRY_ASSIGN(bool busy, tree_busy(store, t));
      trees.emplace(t, busy);
    }
  // Trees in use first: a file a busy tree shares with an idle one is not reclaimable.
  for (bool pass_busy : {true, false})
    for (const auto& [tree, busy] : trees) {
      if (busy != pass_busy || !store.has_tree(tree)) continue;
      uint64_t n = store.tree_disk_use(tree, seen);
      ++u.trees;
      u.tree_bytes += n;
      if (busy) ++u.active_trees;
      else u.reclaimable_tree_bytes += n;
    }
  KERN_TRY_ASSIGN(std::vector<std::string> blobs, store.list_blobs());
  for (const auto& digest : blobs) {
    uint64_t n = store.disk_use("blobs/sha256/" + std::string(digest.substr(7)), seen);
    ++u.blobs;
    u.blob_bytes += n;
    if (!busy_blobs.count(digest)) u.reclaimable_blob_bytes += n;
  }
  return u;
}

void warn_bad_records(const std::vector<std::string>& bad, const std::string& fate) {
  for (const auto& b : bad) log::warning(b + " (" + fate + ")");
}

}  // namespace kern::oci
