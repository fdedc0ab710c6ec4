// resolve_for_box: the store lookup on every `kern box --image` start, and the import behind a
// miss. See image_resolver.h.
#include "oci/image_resolver.h"

#include "oci/image_record.h"
#include "oci/image_sources.h"
#include "oci/reference.h"
#include "oci/store.h"

namespace kern::oci {
namespace {

Result<ResolvedImage> from_record(const Store& store, const ImageRecord& rec, const std::string& ref) {
  KERN_TRY_ASSIGN(UniqueFd lock, store.lock_tree_shared(rec.tree));
  ResolvedImage out;
  out.ref = ref;
  out.digest = rec.digest;
  out.lower_dirs = {store.tree_path(rec.tree)};
  out.config = rec.config;
  if (rec.has_owners) out.ownership_file = store.owners_path(rec.tree);
  out.lock = std::move(lock);
  return out;
}

}  // namespace

Result<PullPolicy> parse_pull_policy(std::string_view text) {
  if (text == "missing") return PullPolicy::missing;
  if (text == "never") return PullPolicy::never;
  if (text == "always") return PullPolicy::always;
  return fail(ErrorKind::usage, 0, "--pull must be missing, never or always, not \"" + std::string(text) + "\"");
}

Result<ResolvedImage> resolve_for_box(const std::string& text, PullPolicy policy) {
  KERN_TRY_ASSIGN(Reference ref, parse_reference(text));
  const std::string key = ref.str();
  if (policy != PullPolicy::always) {
    // The fast path: one record, one lock, no libraries loaded.
    KERN_TRY_ASSIGN(Store store, Store::open(false));
    KERN_TRY_ASSIGN(auto rec, store.find_ref(key));
    bool fresh = rec && (ref.kind == Reference::Kind::registry || rec->source_stamp == source_stamp(ref));
    if (fresh) {
      auto r = from_record(store, *rec, key);
      if (r || r.error().sys_errno() != ENOENT) return r;
      // The tree went away (rmi/gc raced us): fall through to the import.
    }
    if (policy == PullPolicy::never)
      return fail(Error(ErrorKind::image, ENOENT,
                        "image " + key + (rec ? " changed since it was imported" : " is not in the local store"))
                      .with_hint("pull it with 'kern pull " + std::string(text) + "' or use --pull missing"));
  }
  KERN_TRY_ASSIGN(Store store, Store::open(true));
  KERN_TRY_ASSIGN(ImageRecord rec, import_reference(store, ref, false));
  return from_record(store, rec, key);
}

}  // namespace kern::oci
