// Checks a parsed ProfileSet as a whole (kern.toml(5)): ids and names well formed and
// unique, backends referenced by profiles exist, slices fit their budget, cpusets parse and
// exclude numa, disk paths are absolute, vgpio entries resolve to /dev paths, and every listed
// node that exists on this host is one that may be granted (device_policy.h). A listed node that
// is missing here is a warning, not an error: the file may be meant for another machine.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "profiles/device_policy.h"
#include "profiles/profile_types.h"

namespace kern::profiles {

using DeviceInspector = std::function<DeviceIdentity(const std::string& path)>;

// Problems in file order. `inspect` is inspect_device() outside tests.
std::vector<Diagnostic> validate_profiles(const ProfileSet& set, const DeviceInspector& inspect);

}  // namespace kern::profiles
