// Image lookup, tag and removal; see store_ops.h.
#include "oci/store_ops.h"

#include <set>

#include "oci/reference.h"

namespace kern::oci {
namespace {

bool hex_prefix(std::string_view s) {
  if (s.rfind("sha256:", 0) == 0) s.remove_prefix(7);
  if (s.size() < 4 || s.size() > 64) return false;
  return s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace

Result<ImageRecord> lookup_image(const Store& store, const std::string& text) {
  auto ref = parse_reference(text);
  if (ref) {
    KERN_TRY_ASSIGN(auto rec, store.find_ref(ref->str()));
    if (rec) return std::move(*rec);
  }
  if (hex_prefix(text)) {
    std::string want = text.rfind("sha256:", 0) == 0 ? text : "sha256:" + text;
    KERN_TRY_ASSIGN(Store::Listing images, store.list_images());
    const ImageRecord* found = nullptr;
    for (const auto& img : images.records) {
      if (img.digest.compare(0, want.size(), want) != 0) continue;
      if (found && found->digest != img.digest)
        return fail(ErrorKind::image, 0, "image id \"" + text + "\" is ambiguous");
      found = &img;
    }
    if (found) return *found;
  }
  if (!ref && !hex_prefix(text)) return fail(std::move(ref).error());
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
    KERN_TRY_ASSIGN(ImageRecord rec, lookup_image(store, text));
    auto ref = parse_reference(text);
    KERN_TRY_ASSIGN(auto named, store.find_ref(ref ? ref->str() : std::string()));
    if (ref && named) {
      KERN_TRY(store.remove_ref(ref->str()));
      res.untagged.push_back(ref->str());
    } else {
      // Removal by id drops every name of the image.
      KERN_TRY_ASSIGN(Store::Listing all, store.list_refs());
      for (const auto& r : all.records)
        if (r.digest == rec.digest) {
          KERN_TRY(store.remove_ref(r.ref));
          res.untagged.push_back(r.ref);
        }
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

}  // namespace kern::oci
