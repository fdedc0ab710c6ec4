// Importing an image into the store; see importer.h.
#include "oci/importer.h"

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/digest.h"
#include "oci/layer_split.h"
#include "oci/layer_unpack.h"
#include "oci/reference.h"
#include "oci/store_verify.h"
#include "oci/tree_writer.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"

namespace kern::oci {
namespace {

constexpr size_t kConfigLimit = 8 << 20;

Status verify(const std::string& what, const std::string& got, const std::string& want) {
  if (got == want) return {};
  return fail(ErrorKind::image, 0, what + ": digest mismatch: expected " + want + ", got " + got);
}

// The flattened tree's id. With the config's diff_ids (the digests of the uncompressed layers)
// it is the OCI ChainID of the stack, so that the same layers give the same tree whatever
// transport brought them (a docker-archive names layers by diff_id, an OCI archive or a
// registry by compressed digest): ChainID(L0) = DiffID(L0), ChainID(Ln) = sha256(ChainID(Ln-1)
// + " " + DiffID(Ln)). A one-layer image's tree is keyed by that layer's diff_id. Without
// diff_ids (nothing to verify them by) the key is the chain of blob digests, which no ChainID
// can equal (it hashes newline-separated digests).
Result<std::string> tree_id(const Manifest& m, const ParsedConfig& cfg) {
  if (!m.layers.empty() && cfg.diff_ids.size() == m.layers.size()) {
    std::string chain = cfg.diff_ids[0];
    if (!valid_digest(chain)) return fail(ErrorKind::image, 0, "image config: invalid diff_id " + chain);
    for (size_t i = 1; i < cfg.diff_ids.size(); ++i) {
      if (!valid_digest(cfg.diff_ids[i]))
        return fail(ErrorKind::image, 0, "image config: invalid diff_id " + cfg.diff_ids[i]);
      KERN_TRY_ASSIGN(chain, sha256_of(chain + " " + cfg.diff_ids[i]));
    }
    return std::string(digest_hex(chain));
  }
  std::string chain;
  for (const auto& l : m.layers) chain += l.digest + "\n";
  KERN_TRY_ASSIGN(std::string d, sha256_of(chain));
  return std::string(digest_hex(d));
}

// A layer blob the source gave us, to be moved into the store unless the tree can re-create it.
struct PendingBlob {
  int dirfd = -1;
  std::string name, digest;  // an empty name: not copied while unpacking (see copy_layer_blob)
  bool is_diff = false;  // the blob is the uncompressed tar itself (its digest is the diff_id)
  size_t layer = 0;
};

// Copies layer `i`'s blob from the source into the store, checking its digest: for an
// uncompressed layer that was not copied while it was unpacked (the tree was expected to
// re-create it) and whose recipe turned out incomplete.
Status copy_layer_blob(const Store& store, BlobSource& src, const Staging& staging, const Descriptor& d,
                       size_t i) {
  auto in = src.open_layer(d, staging, i);
  if (!in) return fail(std::move(in).error());
  if (!in->staged_name.empty()) return store.commit_blob(in->staged_dirfd, in->staged_name, d.digest);
  std::string name = "blob-" + std::to_string(i);
  KERN_TRY_ASSIGN(UniqueFd out, staging.create(name, O_WRONLY));
  KERN_TRY_ASSIGN(Sha256 hash, Sha256::create());
  std::vector<char> buf(1 << 20);
  for (int64_t left = in->length;;) {
    size_t want = left < 0 ? buf.size() : static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(buf.size())));
    if (want == 0) break;
    ssize_t n = ::read(in->fd.get(), buf.data(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno("read (layer blob)", ErrorKind::image);
    if (n == 0) break;
    hash.update(buf.data(), static_cast<size_t>(n));
    KERN_TRY(sys::write_all(out.get(), std::string_view(buf.data(), static_cast<size_t>(n)), staging.file(name)));
    if (left > 0) left -= n;
  }
  KERN_TRY(verify("layer " + d.digest.substr(0, 19), hash.finish(), d.digest));
  return store.commit_blob(staging.fd(), name, d.digest);
}

// The stored tree of this image's lowest `layers` layers (another image's), to start from.
struct BaseTree {
  std::string tree;
  size_t layers = 0;
  uint64_t size = 0;
  bool has_owners = false;
};

// The longest proper prefix of the layer stack that is in the store as a tree of its own.
std::optional<BaseTree> find_base(const Store& store, const ParsedConfig& cfg, size_t n) {
  if (n < 2 || cfg.diff_ids.size() != n) return std::nullopt;
  std::vector<std::string> chain{cfg.diff_ids[0]};
  for (size_t i = 1; i + 1 < n; ++i) {
    auto c = sha256_of(chain.back() + " " + cfg.diff_ids[i]);
    if (!c) return std::nullopt;
    chain.push_back(*c);
  }
  auto images = store.list_images();
  if (!images) return std::nullopt;
  for (size_t k = chain.size(); k-- > 0;) {
    if (!valid_digest(chain[k])) return std::nullopt;
    std::string id(digest_hex(chain[k]));
    if (!store.has_tree(id)) continue;
    for (const auto& o : images->records)
      if (o.tree == id) return BaseTree{id, k + 1, o.size, o.has_owners};
  }
  return std::nullopt;
}

// Links the base tree into the writer and takes over the recipes of its layers.
Status seed_base(const Store& store, TreeWriter& writer, const BaseTree& base, std::vector<SplitRecipe>& inherited) {
  KERN_TRY_ASSIGN(UniqueFd src, sys::open_at(AT_FDCWD, store.tree_path(base.tree), O_RDONLY | O_DIRECTORY));
  std::string owners;
  if (base.has_owners) {
    KERN_TRY_ASSIGN(owners, sys::read_file(AT_FDCWD, store.owners_path(base.tree), size_t{256} << 20));
  }
  KERN_TRY(writer.seed_from(src.get(), owners, base.size));
  auto text = sys::read_file(AT_FDCWD, store.recipes_path(base.tree), size_t{1} << 30);
  if (text) {
    KERN_TRY_ASSIGN(inherited, decode_recipes(*text));
  }
  return {};
}

Status unpack_layers(const Store& store, BlobSource& src, const Staging& staging, const Manifest& m,
                     const ParsedConfig& cfg, const std::string& tree, ImageRecord& rec,
                     const std::function<void(size_t, size_t, const Descriptor&)>& progress,
                     const BaseTree* base, bool& retry_without_base, bool replace_tree) {
  retry_without_base = false;
  if (::mkdirat(staging.fd(), "tree", 0755) != 0)
    return fail_errno("mkdir " + staging.path() + "/tree", ErrorKind::image);
  KERN_TRY_ASSIGN(UniqueFd tree_fd, sys::open_at(staging.fd(), "tree", O_PATH | O_DIRECTORY));
  KERN_TRY_ASSIGN(TreeWriter writer, TreeWriter::open(tree_fd.get()));
  bool check_diff_ids = cfg.diff_ids.size() == m.layers.size();
  // Recipes need the diff_ids: they are what a re-created layer is checked against.
  writer.track_files(check_diff_ids);
  std::vector<SplitRecipe> raw(m.layers.size()), inherited;
  std::vector<std::vector<TreeWriter::WrittenFile>> files(m.layers.size());
  std::vector<PendingBlob> pending;
  size_t first = 0;
  if (base) {
    if (!seed_base(store, writer, *base, inherited)) {
      retry_without_base = true;
      return fail(ErrorKind::image, 0, "the lower layers' tree cannot be linked");
    }
    first = base->layers;
  }
  for (size_t i = first; i < m.layers.size(); ++i) {
    const Descriptor& d = m.layers[i];
    if (progress) progress(i, m.layers.size(), d);
    std::string ctx = "layer " + d.digest.substr(0, 19);
    LayerPipeOptions opts;
    opts.hash_output = check_diff_ids;
    opts.progress_id = d.digest;
    TarSplitter split;
    if (check_diff_ids) opts.split = &split;
    UniqueFd blob, tee;
    std::string tee_name;
    int tee_dirfd = staging.fd();
    if (store.has_blob(d.digest)) {
      // Verified when it entered the store.
      KERN_TRY_ASSIGN(blob, sys::open_at(AT_FDCWD, store.blob_path(d.digest), O_RDONLY));
      opts.hash_input = check_diff_ids;  // lets an uncompressed layer's diff_id come for free
    } else {
      auto in = src.open_layer(d, staging, i);
      if (!in) return fail(std::move(in).error().with_context(ctx));
      blob = std::move(in->fd);
      opts.length = in->length;
      if (in->staged_name.empty() && check_diff_ids && d.digest == cfg.diff_ids[i]) {
        // The blob is the layer's tar (verified as the diff_id while unpacking): the tree will
        // most likely re-create it, so it is not copied now (copy_layer_blob if not).
        pending.push_back({-1, "", d.digest, true, i});
        opts.hash_input = false;
      } else if (in->staged_name.empty()) {
        tee_name = "layer-" + std::to_string(i);
        KERN_TRY_ASSIGN(tee, staging.create(tee_name, O_WRONLY));
        opts.tee_fd = tee.get();
        opts.hash_input = true;
      } else {
        tee_name = in->staged_name;
        tee_dirfd = in->staged_dirfd;
        opts.hash_input = check_diff_ids;
      }
    }
    opts.fd = blob.get();
    auto r = unpack_layer(writer, opts, check_diff_ids ? &files[i] : nullptr);
    if (!r) return fail(std::move(r).error().with_context(ctx + " unpacked into " + staging.file("tree")));
    if (opts.tee_fd >= 0) KERN_TRY(verify(ctx, r->input_digest, d.digest));
    if (check_diff_ids) KERN_TRY(verify(ctx + " (uncompressed)", r->output_digest, cfg.diff_ids[i]));
    if (check_diff_ids && split.ok()) {
      raw[i].diff_id = cfg.diff_ids[i];
      raw[i].segments = split.take();
    }
    if (!tee_name.empty())
      pending.push_back({tee_dirfd, tee_name, d.digest, check_diff_ids && d.digest == cfg.diff_ids[i], i});
  }
  Status fin = writer.finish(staging.fd(), "owners.jsonl");
  if (!fin) return fail(std::move(fin).error().with_context("finishing the tree in " + staging.path()));
  std::vector<bool> complete;
  std::vector<SplitRecipe> recipes = resolve_recipes(writer, std::move(raw), files, complete);
  // A layer of the base keeps its recipe while every file it names is still the base's (nothing
  // above replaced it); without one, its blob must be in the store, or the image could not be
  // saved: then it is unpacked in full instead.
  for (size_t j = 0; j < first; ++j) {
    auto r = std::find_if(inherited.begin(), inherited.end(),
                          [&](const SplitRecipe& x) { return x.diff_id == cfg.diff_ids[j]; });
    bool ok = r != inherited.end() && writer.dirs_searchable() &&
              std::all_of(r->segments.begin(), r->segments.end(), [&](const SplitSegment& seg) {
                return seg.kind != SplitSegment::Kind::content ||
                       writer.intact(TreeWriter::WrittenFile{seg.bytes, 0, true});
              });
    if (ok) {
      recipes.push_back(*r);
    } else if (!store.has_blob(m.layers[j].digest)) {
      retry_without_base = true;
      return fail(ErrorKind::image, 0, "a lower layer could not be saved from this tree");
    }
  }
  // An uncompressed blob the tree re-creates byte for byte is not kept: that copy was half of
  // a docker-archive's disk use. A compressed one stays (its digest is what the manifest names).
  for (const auto& p : pending) {
    if (p.is_diff && complete[p.layer]) continue;
    if (p.name.empty()) KERN_TRY(copy_layer_blob(store, src, staging, m.layers[p.layer], p.layer));
    else KERN_TRY(store.commit_blob(p.dirfd, p.name, p.digest));
  }
  if (!recipes.empty()) KERN_TRY(staging.write("recipes", encode_recipes(recipes)));
  rec.size = writer.stats().bytes;
  rec.has_owners = writer.stats().ownership_records > 0;
  return store.commit_tree(staging, "tree", rec.has_owners ? "owners.jsonl" : "", tree,
                           recipes.empty() ? "" : "recipes", replace_tree);
}

// An image whose tree was already in the store (another image's, or its own from an earlier
// import) gets no unpacking, so nothing above checked that it can be saved: a layer whose blob
// this image names is not stored and that the tree has no recipe for (a later layer replaced a
// file of it, and the image that made the tree kept its own, compressed, blob instead) is copied
// from the source now. This is also what repairs such an image when it is loaded again.
Status keep_layers_savable(const Store& store, BlobSource& src, const Manifest& m, const std::string& tree) {
  std::vector<size_t> missing;
  for (size_t i = 0; i < m.layers.size(); ++i)
    if (!store.has_blob(m.layers[i].digest)) missing.push_back(i);
  if (missing.empty()) return {};
  KERN_TRY_ASSIGN(std::string config, store.read_blob(m.config.digest, kConfigLimit));
  KERN_TRY_ASSIGN(ParsedConfig cfg, parse_image_config(config));
  std::vector<RecipeSummary> recipes;
  auto text = sys::read_file(AT_FDCWD, store.recipes_path(tree), size_t{1} << 30);
  if (!text && text.error().sys_errno() != ENOENT) return fail(std::move(text).error());
  if (text) {
    KERN_TRY_ASSIGN(recipes, summarise_recipes(*text));
  }
  std::optional<Staging> staging;
  for (size_t i : missing) {
    bool recreated = cfg.diff_ids.size() == m.layers.size() &&
                     std::any_of(recipes.begin(), recipes.end(),
                                 [&](const RecipeSummary& r) { return r.diff_id == cfg.diff_ids[i]; });
    if (recreated) continue;
    if (!staging) {
      KERN_TRY_ASSIGN(Staging s, store.begin_staging());
      staging.emplace(std::move(s));
    }
    KERN_TRY(copy_layer_blob(store, src, *staging, m.layers[i], i));
  }
  return {};
}

}  // namespace

Status name_image(const Store& store, const ImageRecord& image, const std::string& ref,
                  const std::string& source_stamp) {
  ImageRecord named = image;
  named.ref = ref;
  named.source_stamp = source_stamp;
  return store.write_ref(named);
}

namespace {

// Held while this import builds its tree; the lock's directory goes with it.
struct BuildLock {
  const Store& store;
  std::string tree;
  UniqueFd fd;
  ~BuildLock() {
    if (fd.valid()) store.end_build(tree);
  }
};

// What an import added to the store, so that a failed one takes it away again.
struct Added {
  std::string tree;                // a tree that was not there before (empty: none)
  std::vector<std::string> blobs;  // blobs that were not there before
  bool image_record = false;       // the image record is new
};

// Records the image with its names. Fails before it writes anything when a record would be
// larger than a read takes back.
Status write_records(const Store& store, const ImageRecord& rec, const ImportInput& in, Added& added) {
  for (const auto& name : in.names) {
    ImageRecord named = rec;
    named.ref = name;
    named.source_stamp = in.source_stamp;
    KERN_TRY(store.check_record_size(named));
  }
  if (added.image_record) KERN_TRY(store.write_image(rec));
  for (const auto& name : in.names) KERN_TRY(name_image(store, rec, name, in.source_stamp));
  return {};
}

// Imports the image anew; with `repair`, the stored copy was found damaged: its tree is unpacked
// again from the source and swapped in.
Status import_new(const Store& store, BlobSource& src, const ImportInput& in, const Manifest& m,
                  const std::function<void(size_t, size_t, const Descriptor&)>& progress, ImageRecord& rec,
                  Added& added, bool repair) {
  KERN_TRY_ASSIGN(Staging staging, store.begin_staging());
  std::string config;
  if (store.has_blob(m.config.digest)) {
    KERN_TRY_ASSIGN(config, store.read_blob(m.config.digest, kConfigLimit));
  } else {
    KERN_TRY_ASSIGN(config, src.read_blob(m.config, kConfigLimit));
    KERN_TRY_ASSIGN(std::string got, sha256_of(config));
    KERN_TRY(verify("image config", got, m.config.digest));
  }
  KERN_TRY_ASSIGN(ParsedConfig cfg, parse_image_config(config));
  if (!cfg.diff_ids.empty() && cfg.diff_ids.size() != m.layers.size())
    return fail(ErrorKind::image, 0,
                "image config lists " + std::to_string(cfg.diff_ids.size()) + " layers, the manifest " +
                    std::to_string(m.layers.size()));
  KERN_TRY_ASSIGN(std::string tree, tree_id(m, cfg));
  for (const std::string* d : {&m.config.digest, &in.manifest_digest})
    if (!store.has_blob(*d)) added.blobs.push_back(*d);
  for (const auto& l : m.layers)
    if (!store.has_blob(l.digest)) added.blobs.push_back(l.digest);
  added.image_record = true;
  rec.digest = in.manifest_digest;
  rec.manifest_media_type = in.manifest_media_type.empty() ? m.media_type : in.manifest_media_type;
  rec.config_digest = m.config.digest;
  for (const auto& l : m.layers) {
    rec.layers.push_back(l.digest);
    rec.layer_media_types.push_back(l.media_type);
  }
  rec.tree = tree;
  rec.created = cfg.created;
  rec.os = cfg.os;
  rec.architecture = cfg.architecture;
  rec.config = cfg.config;
  // Refused before any work when its records could not be read back.
  KERN_TRY(store.check_record_size(rec));
  // Another import building this tree, or the layers below it, is waited for: its tree is
  // then linked or shared rather than unpacked a second time.
  BuildLock build{store, tree, store.lock_build(tree)};
  if (!store.has_tree(tree) && m.layers.size() > 1 && cfg.diff_ids.size() == m.layers.size()) {
    std::string chain = cfg.diff_ids[0];
    for (size_t i = 1; i + 1 < m.layers.size() && valid_digest(chain); ++i) {
      store.wait_build(std::string(digest_hex(chain)));
      auto next = sha256_of(chain + " " + cfg.diff_ids[i]);
      if (!next) break;
      chain = *next;
    }
    if (valid_digest(chain)) store.wait_build(std::string(digest_hex(chain)));
  }
  bool shared_tree = store.has_tree(tree) && !repair;
  if (shared_tree) {
    // Same layers as an image we have: the tree is shared.
    KERN_TRY_ASSIGN(Store::Listing others, store.list_images());
    for (const auto& o : others.records)
      if (o.tree == tree) {
        rec.size = o.size;
        rec.has_owners = o.has_owners;
        break;
      }
  } else {
    // Layers below ours that another image's tree holds are linked from it, not unpacked
    // again; when that cannot be done (or would lose a way to save a lower layer), the whole
    // stack is unpacked in a fresh staging dir.
    if (!repair) added.tree = tree;
    // A repair links nothing: a damaged file may be a link to another tree's.
    std::optional<BaseTree> base = repair ? std::nullopt : find_base(store, cfg, m.layers.size());
    bool retry = false;
    Status st = unpack_layers(store, src, staging, m, cfg, tree, rec, progress, base ? &*base : nullptr, retry, repair);
    if (!st && retry) {
      KERN_TRY_ASSIGN(Staging fresh, store.begin_staging());
      staging = std::move(fresh);
      st = unpack_layers(store, src, staging, m, cfg, tree, rec, progress, nullptr, retry, repair);
    }
    KERN_TRY(std::move(st));
  }
  KERN_TRY(store.put_blob(staging, m.config.digest, config));
  KERN_TRY(store.put_blob(staging, in.manifest_digest, in.manifest));
  if (shared_tree) KERN_TRY(keep_layers_savable(store, src, m, tree));
  return write_records(store, rec, in, added);
}

}  // namespace

Result<ImageRecord> import_image(const Store& store, BlobSource& src, const ImportInput& in,
                                 const std::function<void(size_t, size_t, const Descriptor&)>& progress) {
  KERN_TRY_ASSIGN(UniqueFd lock, store.lock_store(false));
  store.clean_stale_staging();
  KERN_TRY_ASSIGN(Manifest m, parse_manifest(in.manifest));

  ImageRecord rec;
  Added added;
  auto found = store.find_image(in.manifest_digest);
  // A record of this image whose content is bad is written again, as a repair.
  if (!found && !record_corrupt(found.error())) return fail(std::move(found).error());
  std::optional<ImageRecord> existing = found ? std::move(*found) : std::nullopt;
  Status st;
  std::vector<std::string> bad_blobs;
  if (existing && store.has_tree(existing->tree) && image_intact(store, *existing, bad_blobs)) {
    rec = std::move(*existing);
    st = keep_layers_savable(store, src, m, rec.tree);
    if (st) st = write_records(store, rec, in, added);
  } else {
    // A stored copy that does not match its digests is replaced by this one: damaged blobs are
    // of no use to any image, and the tree is unpacked again and swapped in.
    bool repair = existing && store.has_tree(existing->tree);
    for (const auto& b : bad_blobs) (void)store.remove_blob(b);
    st = import_new(store, src, in, m, progress, rec, added, repair);
  }
  if (st) return rec;
  // A failed import (ENOSPC after the tree was committed, a record too large) takes away what it
  // added that no record refers to, under the exclusive lock: no other import is then between
  // committing a tree and recording it.
  if (!existing && added.image_record) {
    bool named = false;
    for (const auto& name : in.names) {
      auto r = store.find_ref(name);
      named |= !r || (*r && (*r)->digest == rec.digest);
    }
    if (!named) (void)store.remove_image(rec.digest);
  }
  while (::flock(lock.get(), LOCK_EX) != 0 && errno == EINTR) {
  }
  store.drop_unreferenced(added.tree, added.blobs);
  return fail(std::move(st).error());
}

}  // namespace kern::oci
