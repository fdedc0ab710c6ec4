// Pulling images from a registry; see registry_source.h.
#include "oci/registry_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "oci/blob_source.h"
#include "oci/digest.h"
#include "oci/importer.h"
#include "oci/progress.h"
#include "oci/registries_conf.h"
#include "oci/registry_client.h"
#include "runtime/sys/log.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"

namespace kern::oci {
namespace {

constexpr size_t kManifestLimit = 4 << 20;

class RegistrySource final : public BlobSource {
 public:
  explicit RegistrySource(RegistryClient& client) : client_(client) {}

  Result<std::string> read_blob(const Descriptor& d, size_t limit) override {
    std::string out;
    int64_t want = d.size >= 0 ? d.size : -1;
    if (want > static_cast<int64_t>(limit)) return fail(ErrorKind::image, EFBIG, "blob " + d.digest + " is too large");
    KERN_TRY(client_.get_blob(
        d.digest, want,
        [&](const char* p, size_t n) {
          if (out.size() + n > limit) return false;
          out.append(p, n);
          return true;
        },
        [&] { out.clear(); }));
    return out;
  }

  Result<LayerInput> open_layer(const Descriptor& d, const Staging& staging, size_t index) override {
    std::string name = "download-" + std::to_string(index);
    KERN_TRY_ASSIGN(UniqueFd out, sys::open_at(staging.fd(), name, O_RDWR | O_CREAT | O_EXCL, 0600));
    KERN_TRY_ASSIGN(Sha256 hash, Sha256::create());
    progress::Observer* progress = progress::current();
    if (progress) progress->start(d.digest, "downloading", d.size, false);
    int64_t got = 0;
    Status write_status;
    auto restart = [&]() -> void {
      got = 0;
      auto fresh = Sha256::create();
      if (fresh) hash = std::move(*fresh);
      if (::ftruncate(out.get(), 0) != 0 || ::lseek(out.get(), 0, SEEK_SET) != 0)
        write_status = fail_errno("truncate download", ErrorKind::image);
    };
    KERN_TRY(client_.get_blob(
        d.digest, d.size,
        [&](const char* p, size_t n) {
          hash.update(p, n);
          Status st = sys::write_all(out.get(), std::string_view(p, n), name);
          if (!st) {
            write_status = std::move(st);
            return false;
          }
          got += static_cast<int64_t>(n);
          if (progress) progress->update(d.digest, got);
          return true;
        },
        restart));
    if (progress) progress->finish(d.digest);
    if (!write_status) return fail(std::move(write_status).error());
    std::string digest = hash.finish();
    if (digest != d.digest)
      return fail(ErrorKind::image, 0, "blob digest mismatch: expected " + d.digest + ", got " + digest);
    if (::lseek(out.get(), 0, SEEK_SET) != 0) return fail_errno("lseek download", ErrorKind::image);
    LayerInput in;
    in.fd = std::move(out);
    in.staged_dirfd = staging.fd();
    in.staged_name = name;
    return in;
  }

 private:
  RegistryClient& client_;
};

Result<std::string> content_digest(const std::string& body) { return sha256_of(body); }

Result<ImageRecord> pull_from(const Store& store, const Reference& ref, const Reference& names,
                              ClientOptions copts) {
  KERN_TRY_ASSIGN(auto client, RegistryClient::create(ref, std::move(copts)));
  std::string wanted = ref.digest.empty() ? ref.tag : ref.digest;
  KERN_TRY_ASSIGN(HttpResponse resp, client->get_manifest(wanted));
  KERN_TRY_ASSIGN(std::string digest, content_digest(resp.body));
  if (!ref.digest.empty() && digest != ref.digest)
    return fail(ErrorKind::image, 0, ref.str() + ": the registry sent a manifest with digest " + digest);
  auto hdr = resp.headers.find("docker-content-digest");
  if (ref.digest.empty() && hdr != resp.headers.end() && valid_digest(hdr->second) && hdr->second != digest)
    return fail(ErrorKind::image, 0, ref.str() + ": manifest digest " + digest + " differs from the registry's " + hdr->second);
  std::string ctype = resp.headers.count("content-type") ? resp.headers["content-type"] : "";
  KERN_TRY_ASSIGN(ManifestKind kind, manifest_kind(resp.body, ctype));
  ImportInput in;
  if (kind == ManifestKind::index) {
    KERN_TRY_ASSIGN(Index idx, parse_index(resp.body));
    KERN_TRY_ASSIGN(Descriptor chosen, choose_platform(idx, host_architecture()));
    KERN_TRY_ASSIGN(HttpResponse m, client->get_manifest(chosen.digest));
    KERN_TRY_ASSIGN(std::string md, content_digest(m.body));
    if (md != chosen.digest)
      return fail(ErrorKind::image, 0, ref.str() + ": platform manifest digest mismatch (" + md + ")");
    KERN_TRY_ASSIGN(ManifestKind k2, manifest_kind(m.body, chosen.media_type));
    if (k2 != ManifestKind::manifest) return fail(ErrorKind::image, 0, ref.str() + ": nested image index");
    in.manifest = std::move(m.body);
    in.manifest_digest = md;
    in.manifest_media_type = chosen.media_type;
  } else {
    if (resp.body.size() > kManifestLimit) return fail(ErrorKind::image, EFBIG, "manifest too large");
    in.manifest = std::move(resp.body);
    in.manifest_digest = digest;
    in.manifest_media_type = ctype.substr(0, ctype.find(';'));
  }
  in.names = {names.str()};
  RegistrySource src(*client);
  return import_image(store, src, in);
}

}  // namespace

Result<PullResult> pull_image(const Store& store, const Reference& ref, const PullOptions& opts) {
  KERN_TRY_ASSIGN(RegistriesConf conf, load_registries_conf());
  KERN_TRY_ASSIGN(std::vector<PullEndpoint> endpoints, pull_endpoints(conf, ref));
  for (size_t i = 0; i < endpoints.size(); ++i) {
    const PullEndpoint& ep = endpoints[i];
    bool last = i + 1 == endpoints.size();
    std::string where = ep.ref.name();
    ClientOptions copts;
    KERN_TRY_ASSIGN(copts.tls, tls_settings_for(ep.ref.registry, opts.tls, ep.insecure));
    if (progress::Observer* p = progress::current(); p && ep.mirror)
      p->source("pulling " + ref.str() + " from mirror " + where);
    auto r = pull_from(store, ep.ref, ref, std::move(copts));
    if (r) {
      if (ep.mirror) log::note(ref.str() + " was served by mirror " + log::sanitize(where));
      return PullResult{std::move(*r), where, ep.mirror};
    }
    if (last) {
      if (i > 0) return fail(std::move(r).error().with_context("pulling from " + where + " after every mirror failed"));
      return fail(std::move(r).error());
    }
    log::warning("mirror " + log::sanitize(where) + " failed (" + log::sanitize(r.error().message()) +
                 "); trying " + log::sanitize(endpoints[i + 1].ref.name()));
  }
  return fail(ErrorKind::internal, 0, "no endpoint to pull " + ref.str() + " from");
}

Result<ImageRecord> pull_image(const Store& store, const Reference& ref, bool quiet) {
  std::unique_ptr<progress::Observer> display;
  std::optional<progress::Scope> scope;
  if (progress::current() == nullptr) {
    display = progress::stderr_display(quiet ? progress::Mode::none : progress::Mode::terminal_only);
    if (display) scope.emplace(display.get());
  }
  KERN_TRY_ASSIGN(PullResult r, pull_image(store, ref, PullOptions{}));
  return std::move(r.image);
}

}  // namespace kern::oci
