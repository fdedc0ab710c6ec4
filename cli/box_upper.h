// What a detached box wrote, for kern diff and kern commit: its kept upper directory and the
// tree of the image it started from. Any process.
#pragma once

#include <string>

#include "oci/image_record.h"
#include "oci/store.h"
#include "oci/upper_layer.h"
#include "runtime/registry.h"
#include "runtime/sys/unique_fd.h"

namespace kern::cli {

struct BoxUpper {
  BoxRecord record;
  oci::Store store;
  oci::ImageRecord image;
  UniqueFd upper, lower, tree_lock;
  oci::LowerOwners owners;
  oci::UpperSource source() const;
};

// Refuses, naming why, a box that has no upper kern can read: a foreground box or warm kernel,
// a --rootfs box (no image to compare with), a --uid-range box (its upper is the box's own
// tmpfs), a box started by an older kern (its upper was never kept).
Result<BoxUpper> open_box_upper(const std::string& name, const std::string& verb);

}  // namespace kern::cli
