// resolve_for_box: the store lookup on every `kern box --image` start, and the import behind a
// miss. See image_resolver.h.
#include "oci/image_resolver.h"

#include "oci/image_record.h"
#include "oci/image_sources.h"
#include "oci/reference.h"
#include "oci/store.h"
#include "oci/store_ops.h"

namespace kern::oci {
namespace {

Result<ResolvedImage> from_record(const Store& store, const ImageRecord& rec, const std::string& ref) {
  KERN_TRY_ASSIGN(UniqueFd lock, store.lock_tree_shared(rec.tree));
  ResolvedImage out;
  out.ref = ref;
  out.digest = rec.digest;
  out.lower_dirs = {store.tree_path(rec.tree)};
  out.config = rec.config;
  out.architecture = rec.architecture;
  if (rec.has_owners) out.ownership_file = store.owners_path(rec.tree);
  out.lock = std::move(lock);
  return out;
}

// The image `kern images` printed the id or digest of, as the box's image; nullopt when no image
// of the store has that id.
Result<std::optional<ResolvedImage>> resolve_id(const Store& store, const std::string& text) {
  KERN_TRY_ASSIGN(auto rec, find_image_by_id(store, text));
  if (!rec) return std::optional<ResolvedImage>();
  KERN_TRY_ASSIGN(ResolvedImage r, from_record(store, *rec, rec->config_digest.empty() ? rec->digest : rec->config_digest));
  return std::optional<ResolvedImage>(std::move(r));
}

}  // namespace

Result<PullPolicy> parse_pull_policy(std::string_view text) {
  if (text == "missing") return PullPolicy::missing;
  if (text == "never") return PullPolicy::never;
  if (text == "always") return PullPolicy::always;
  return fail(ErrorKind::usage, 0, "--pull must be missing, never or always, not \"" + std::string(text) + "\"");
}

Result<ResolvedImage> resolve_for_box(const std::string& text, PullPolicy policy) {
  auto parsed = parse_reference(text);
  // "sha256:<hex>" names an image of the store by digest (as `kern images --json` prints it),
  // never a repository "sha256" to pull.
  if (!parsed || (text.rfind("sha256:", 0) == 0 && looks_like_image_id(text))) {
    if (!looks_like_image_id(text)) return fail(std::move(parsed).error());
    KERN_TRY_ASSIGN(Store store, Store::open(false));
    KERN_TRY_ASSIGN(auto by_id, resolve_id(store, text));
    if (by_id) return std::move(*by_id);
    return fail(Error(ErrorKind::image, ENOENT, "no image with id " + text + " in the local store")
                    .with_hint("see 'kern images'"));
  }
  const Reference& ref = *parsed;
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
    // An id such as `kern images` prints ("3f57d9401f8d") is also a valid name; no image of that
    // name is here, so it names the local image with that id rather than a registry's.
    if (!rec) {
      KERN_TRY_ASSIGN(auto by_id, resolve_id(store, text));
      if (by_id) return std::move(*by_id);
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
