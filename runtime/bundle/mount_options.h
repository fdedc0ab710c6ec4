// config.json mount options -> what mount(2) and mount_setattr(2) take. Pure; runs in the
// process that plans `kern oci create`.
//
// The options are the ones mount(8) and the OCI specification name: flags (ro, nosuid, ...),
// their negations, bind/rbind, propagation (private, rshared, ...), the recursive attributes of
// mount_setattr (rro, rnosuid, ...), idmap/ridmap, and tmpcopyup. Any other option is
// filesystem data ("mode=755", "size=64k"), passed on in order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/bundle/config.h"
#include "runtime/config_root.h"

namespace kern::bundle {

// MountOptions: runtime/config_root.h (the walker's input).

MountOptions parse_mount_options(const std::vector<std::string>& options);

// The options parse_mount_options knows and create carries out (for the features document);
// idmap and ridmap are known but refused at create, and left out here.
std::vector<std::string> carried_out_mount_options();

}  // namespace kern::bundle
