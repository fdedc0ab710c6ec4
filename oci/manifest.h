// OCI and Docker manifests, indexes and image configs: parsing and platform choice. Pure; any
// process. Everything here reads untrusted JSON and fails closed (ErrorKind::image) on what it
// does not understand: an unknown media type, a malformed digest, a missing field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "oci/image_resolver.h"
#include "runtime/sys/error.h"

namespace kern::oci {

namespace media {
inline constexpr std::string_view kOciManifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view kOciIndex = "application/vnd.oci.image.index.v1+json";
inline constexpr std::string_view kOciConfig = "application/vnd.oci.image.config.v1+json";
inline constexpr std::string_view kOciLayer = "application/vnd.oci.image.layer.v1.tar";
inline constexpr std::string_view kOciLayerGzip = "application/vnd.oci.image.layer.v1.tar+gzip";
inline constexpr std::string_view kOciLayerZstd = "application/vnd.oci.image.layer.v1.tar+zstd";
inline constexpr std::string_view kDockerManifest = "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr std::string_view kDockerList = "application/vnd.docker.distribution.manifest.list.v2+json";
inline constexpr std::string_view kDockerConfig = "application/vnd.docker.container.image.v1+json";
inline constexpr std::string_view kDockerLayer = "application/vnd.docker.image.rootfs.diff.tar.gzip";
}  // namespace media

// What the Accept header of a manifest request lists.
std::string manifest_accept_header();

struct Descriptor {
  std::string media_type;
  std::string digest;
  int64_t size = -1;
  std::string platform_os, platform_arch, platform_variant;  // index entries only
  std::string ref_name;  // annotation org.opencontainers.image.ref.name (layout indexes)
  std::string image_name;  // annotation io.containerd.image.name
};

struct Manifest {
  std::string media_type;
  Descriptor config;
  std::vector<Descriptor> layers;
};

struct Index {
  std::vector<Descriptor> manifests;
};

enum class ManifestKind { manifest, index };

// Decides whether `body` is an image manifest or an index, from its mediaType field, else the
// transport's content type, else its shape. schemaVersion 1 is refused.
Result<ManifestKind> manifest_kind(std::string_view body, std::string_view content_type = {});
Result<Manifest> parse_manifest(std::string_view body);
Result<Index> parse_index(std::string_view body);

// The host's platform in OCI terms: "amd64", "arm64", ...
std::string host_architecture();
// The index entry for linux/<arch> (variant checked when the index gives one and arch is arm).
Result<Descriptor> choose_platform(const Index& index, std::string_view arch);

// The layer media types kern unpacks (tar, gzip, zstd; OCI and Docker names).
bool supported_layer_type(std::string_view media_type);

struct ParsedConfig {
  ImageConfig config;
  std::vector<std::string> diff_ids;
  std::string os, architecture, created;
};
Result<ParsedConfig> parse_image_config(std::string_view body);

}  // namespace kern::oci
