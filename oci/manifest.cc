// Manifest, index and config parsing; see manifest.h.
#include "oci/manifest.h"

#include <sys/utsname.h>

#include <nlohmann/json.hpp>

#include "oci/reference.h"

namespace kern::oci {
namespace {

using json = nlohmann::json;

Unexpected<Error> bad(const std::string& what) { return fail(ErrorKind::image, 0, what); }

Result<json> parse_json(std::string_view body, const char* what) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bad(std::string("malformed ") + what + " (not a JSON object)");
  return j;
}

std::string str_field(const json& j, const char* key) {
  auto it = j.find(key);
  return (it != j.end() && it->is_string()) ? it->get<std::string>() : std::string();
}

Result<std::vector<std::string>> str_list(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) return bad(std::string("image config: ") + key + " is not a list");
  for (const auto& v : *it) {
    if (!v.is_string()) return bad(std::string("image config: ") + key + " has a non-string item");
    out.push_back(v.get<std::string>());
  }
  return out;
}

Result<Descriptor> parse_descriptor(const json& j, const char* what) {
  if (!j.is_object()) return bad(std::string(what) + ": descriptor is not an object");
  Descriptor d;
  d.media_type = str_field(j, "mediaType");
  d.digest = str_field(j, "digest");
  if (!valid_digest(d.digest)) return bad(std::string(what) + ": invalid digest \"" + d.digest.substr(0, 80) + "\"");
  auto size = j.find("size");
  if (size != j.end()) {
    if (!size->is_number_integer() || size->get<int64_t>() < 0) return bad(std::string(what) + ": invalid size");
    d.size = size->get<int64_t>();
  }
  auto plat = j.find("platform");
  if (plat != j.end() && plat->is_object()) {
    d.platform_os = str_field(*plat, "os");
    d.platform_arch = str_field(*plat, "architecture");
    d.platform_variant = str_field(*plat, "variant");
  }
  auto ann = j.find("annotations");
  if (ann != j.end() && ann->is_object()) {
    d.ref_name = str_field(*ann, "org.opencontainers.image.ref.name");
    d.image_name = str_field(*ann, "io.containerd.image.name");
  }
  return d;
}

}  // namespace

std::string manifest_accept_header() {
  return "Accept: " + std::string(media::kOciIndex) + ", " + std::string(media::kOciManifest) + ", " +
         std::string(media::kDockerList) + ", " + std::string(media::kDockerManifest);
}

Result<ManifestKind> manifest_kind(std::string_view body, std::string_view content_type) {
  KERN_TRY_ASSIGN(json j, parse_json(body, "manifest"));
  auto sv = j.find("schemaVersion");
  if (sv != j.end() && sv->is_number_integer() && sv->get<int>() == 1)
    return bad("Docker schema 1 manifests are not supported");
  std::string mt = str_field(j, "mediaType");
  if (mt.empty()) mt = std::string(content_type.substr(0, content_type.find(';')));
  if (mt == media::kOciIndex || mt == media::kDockerList) return ManifestKind::index;
  if (mt == media::kOciManifest || mt == media::kDockerManifest) return ManifestKind::manifest;
  if (!mt.empty() && mt != "application/json" && mt != "application/octet-stream")
    return bad("unsupported manifest media type \"" + mt.substr(0, 100) + "\"");
  if (j.contains("manifests")) return ManifestKind::index;
  if (j.contains("layers")) return ManifestKind::manifest;
  return bad("neither an image manifest nor an index");
}

Result<Manifest> parse_manifest(std::string_view body) {
  KERN_TRY_ASSIGN(json j, parse_json(body, "manifest"));
  Manifest m;
  m.media_type = str_field(j, "mediaType");
  auto cfg = j.find("config");
  if (cfg == j.end()) return bad("manifest has no config");
  KERN_TRY_ASSIGN(m.config, parse_descriptor(*cfg, "manifest config"));
  auto layers = j.find("layers");
  if (layers == j.end() || !layers->is_array()) return bad("manifest has no layer list");
  for (const auto& l : *layers) {
    KERN_TRY_ASSIGN(Descriptor d, parse_descriptor(l, "manifest layer"));
    if (!supported_layer_type(d.media_type))
      return bad("layer " + d.digest + " has unsupported media type \"" + d.media_type.substr(0, 100) + "\"");
    m.layers.push_back(std::move(d));
  }
  if (m.layers.size() > 1000) return bad("manifest has more than 1000 layers");
  return m;
}

Result<Index> parse_index(std::string_view body) {
  KERN_TRY_ASSIGN(json j, parse_json(body, "index"));
  auto ms = j.find("manifests");
  if (ms == j.end() || !ms->is_array()) return bad("index has no manifest list");
  Index idx;
  for (const auto& m : *ms) {
    KERN_TRY_ASSIGN(Descriptor d, parse_descriptor(m, "index entry"));
    idx.manifests.push_back(std::move(d));
  }
  return idx;
}

std::string host_architecture() {
  struct utsname u;
  if (::uname(&u) != 0) return "amd64";
  std::string m = u.machine;
  if (m == "x86_64") return "amd64";
  if (m == "aarch64" || m == "arm64") return "arm64";
  if (m.rfind("armv", 0) == 0) return "arm";
  if (m == "i686" || m == "i386") return "386";
  if (m == "ppc64le") return "ppc64le";
  if (m == "s390x") return "s390x";
  if (m == "riscv64") return "riscv64";
  return m;
}

Result<Descriptor> choose_platform(const Index& index, std::string_view arch) {
  std::string seen;
  for (const auto& d : index.manifests) {
    if (d.platform_os == "linux" && d.platform_arch == arch) return d;
    if (!d.platform_os.empty()) {
      if (!seen.empty()) seen += ", ";
      seen += d.platform_os + "/" + d.platform_arch + (d.platform_variant.empty() ? "" : "/" + d.platform_variant);
    }
  }
  return bad("the image index has no linux/" + std::string(arch) + " manifest" +
             (seen.empty() ? std::string() : " (it has " + seen + ")"));
}

bool supported_layer_type(std::string_view t) {
  return t == media::kOciLayer || t == media::kOciLayerGzip || t == media::kOciLayerZstd ||
         t == media::kDockerLayer || t == "application/vnd.docker.image.rootfs.diff.tar" ||
         t == "application/vnd.docker.image.rootfs.diff.tar.zstd";
}

Result<ParsedConfig> parse_image_config(std::string_view body) {
  KERN_TRY_ASSIGN(json j, parse_json(body, "image config"));
  ParsedConfig p;
  p.os = str_field(j, "os");
  p.architecture = str_field(j, "architecture");
  p.created = str_field(j, "created");
  auto c = j.find("config");
  if (c != j.end() && c->is_object()) {
    KERN_TRY_ASSIGN(p.config.entrypoint, str_list(*c, "Entrypoint"));
    KERN_TRY_ASSIGN(p.config.cmd, str_list(*c, "Cmd"));
    KERN_TRY_ASSIGN(p.config.env, str_list(*c, "Env"));
    p.config.working_dir = str_field(*c, "WorkingDir");
    p.config.user = str_field(*c, "User");
    auto h = c->find("Healthcheck");
    if (h != c->end() && h->is_object()) {
      ImageHealthcheck hc;
      KERN_TRY_ASSIGN(hc.test, str_list(*h, "Test"));
      auto ns = [&](const char* key) -> uint64_t {
        auto v = h->find(key);
        return v != h->end() && v->is_number_unsigned() ? v->get<uint64_t>() : 0;
      };
      hc.interval_ns = ns("Interval");
      hc.timeout_ns = ns("Timeout");
      hc.start_period_ns = ns("StartPeriod");
      uint64_t retries = ns("Retries");
      hc.retries = retries > 1000000 ? 1000000 : static_cast<unsigned>(retries);
      if (!hc.test.empty()) p.config.healthcheck = std::move(hc);
    }
  }
  auto rootfs = j.find("rootfs");
  if (rootfs != j.end() && rootfs->is_object()) {
    KERN_TRY_ASSIGN(p.diff_ids, str_list(*rootfs, "diff_ids"));
    for (const auto& d : p.diff_ids)
      if (!valid_digest(d)) return bad("image config: invalid diff_id \"" + d.substr(0, 80) + "\"");
  }
  return p;
}

}  // namespace kern::oci
