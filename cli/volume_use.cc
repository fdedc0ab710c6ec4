// Named volumes at a box's start, and their users; see volume_use.h.
#include "cli/volume_use.h"

#include "runtime/registry.h"
#include "runtime/sys/paths.h"

namespace kern::cli {

Result<std::vector<std::string>> ensure_box_volumes(BoxSpec& spec) {
  std::vector<std::string> made;
  VolumeStore store(VolumeStore::default_root());
  for (auto& b : spec.binds) {
    if (b.volume.empty()) continue;
    bool created = false;
    auto v = store.create(b.volume, {}, &created);
    if (!v) {
      discard_new_volumes(made);
      return fail(std::move(v).error());
    }
    if (created) made.push_back(b.volume);
    b.source = v->mountpoint;
    b.copy_up = store.is_empty(b.volume);
  }
  return made;
}

void discard_new_volumes(const std::vector<std::string>& made) {
  VolumeStore store(VolumeStore::default_root());
  for (const auto& name : made)
    if (store.is_empty(name)) (void)store.remove(name);
}

std::map<std::string, std::vector<std::string>> volume_users() {
  std::map<std::string, std::vector<std::string>> users;
  auto rt = paths::runtime_dir();
  if (!rt) return users;
  for (const auto& b : list_boxes_all(*rt, false))
    for (const auto& v : b.volumes) users[v].push_back(b.name);
  return users;
}

}  // namespace kern::cli
