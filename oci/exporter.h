// Writing an image of the store as a `docker save` archive (kern save): manifest.json, the
// config as <hex>.json and each layer uncompressed as <diff_id hex>/layer.tar, which
// `docker load`, `podman load`, `skopeo` and `kern load` read. Any process, before clone.
#pragma once

#include <string>
#include <vector>

#include "oci/image_record.h"
#include "oci/store.h"

namespace kern::oci {

// One image to write and the names it gets.
struct SaveItem {
  ImageRecord image;
  std::vector<std::string> names;
};

// Writes the archive to `out_fd`: one manifest.json entry per image (images with the same config
// are one entry with all their names), each config and each layer once. `names` (normalised
// references) become RepoTags, fully qualified: Docker reads "docker.io/library/busybox:latest"
// as "busybox:latest", while Podman would turn a short "busybox:latest" into
// "localhost/busybox:latest". A layer whose blob the store did not keep is re-created from the
// image's tree (layer_split.h) and checked against its diff_id.
Status save_docker_archive(const Store& store, const std::vector<SaveItem>& items, int out_fd);

}  // namespace kern::oci
