// Writing an image of the store as a `docker save` archive (kern save): manifest.json, the
// config as <hex>.json and each layer uncompressed as <diff_id hex>/layer.tar, which
// `docker load`, `podman load`, `skopeo` and `kern load` read. Any process, before clone.
#pragma once

#include <string>
#include <vector>

#include "oci/image_record.h"
#include "oci/store.h"

namespace kern::oci {

// Writes the archive to `out_fd`. `names` (normalised references) become RepoTags, fully
// qualified: Docker reads "docker.io/library/busybox:latest" as "busybox:latest", while Podman
// would turn a short "busybox:latest" into "localhost/busybox:latest".
Status save_docker_archive(const Store& store, const ImageRecord& image, const std::vector<std::string>& names,
                           int out_fd);

}  // namespace kern::oci
