// Named volumes at a box's start, and their users; see volume_use.h.
#include "cli/volume_use.h"

#include "runtime/registry.h"
#include "runtime/sys/paths.h"

namespace kern::cli {

namespace {

// The holds of this start's volumes (VolumeStore::hold): kept until kern exits, by when the
// box's record names them (a detached box's is written before kern box -d returns).
std::vector<UniqueFd>& held_volumes() {
  static std::vector<UniqueFd> held;
  return held;
}

// Volume NAME made or found, and held; `*created` says this call made it. A volume removed
// between its making and the hold is made again (once).
Result<VolumeInfo> make_and_hold(const VolumeStore& store, const std::string& name, bool* created) {
  for (int attempt = 0;; ++attempt) {
    KERN_TRY_ASSIGN(VolumeInfo v, store.create(name, {}, created));
    auto fd = store.hold(name);
    if (fd) {
      held_volumes().push_back(std::move(*fd));
      return v;
    }
    if (attempt > 0) return fail(std::move(fd).error());
  }
}

}  // namespace

Result<std::vector<std::string>> ensure_box_volumes(BoxSpec& spec) {
  std::vector<std::string> made;
  VolumeStore store(VolumeStore::default_root());
  for (auto& b : spec.binds) {
    if (b.volume.empty()) continue;
    bool created = false;
    auto v = make_and_hold(store, b.volume, &created);
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
  held_volumes().clear();  // this start's own holds would refuse the removal
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
