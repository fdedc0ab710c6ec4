// Writing an image of the store as a `docker save` archive (kern save): manifest.json, the
// config as <hex>.json and each layer uncompressed as <diff_id hex>/layer.tar, which
// `docker load`, `podman load`, `skopeo` and `kern load` read. Any process, before clone.
#pragma once

#include <string>
#include <vector>

#include "oci/image_record.h"
#include "oci/store.h"

namespace kern::oci {

// "docker.io/library/busybox:latest" -> "busybox:latest", "docker.io/u/a:t" -> "u/a:t"; other
// registries keep their host.
std::string familiar_name(const std::string& ref);

// Writes the archive to `out_fd`. `names` (normalised references) become RepoTags.
Status save_docker_archive(const Store& store, const ImageRecord& image, const std::vector<std::string>& names,
                           int out_fd);

}  // namespace kern::oci
