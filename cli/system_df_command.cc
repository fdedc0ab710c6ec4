// `kern system df [--json]`: the disk space of the image store (images, their layer trees,
// blobs), of the boxes and of the named volumes, with what `kern image prune -a` and `kern volume
// prune` would free now.
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/images_format.h"
#include "cli/verb.h"
#include "cli/volume_use.h"
#include "oci/store.h"
#include "oci/store_ops.h"
#include "runtime/registry.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/paths.h"
#include "runtime/volume_store.h"

namespace kern::cli {
namespace {
namespace system_df_verb {

bool g_json = false;

std::string percent(uint64_t part, uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, " (%d%%)", whole ? static_cast<int>(part * 100 / whole) : 0);
  return buf;
}

Result<int> run_df() {
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  KERN_TRY_ASSIGN(oci::DiskUsage u, oci::disk_usage(store));
  oci::warn_bad_records(u.bad_records, "not counted; 'kern gc' removes it");
  size_t boxes = 0, running = 0;
  if (auto rt = paths::runtime_dir()) {
    for (const auto& b : list_boxes_all(*rt, false)) {
      ++boxes;
      running += !record_exited(b);
    }
  }
  // Named volumes: active is one a listed box mounts; the others are what kern volume prune frees.
  size_t volumes = 0, active_volumes = 0;
  uint64_t volume_bytes = 0, volume_reclaimable = 0;
  auto users = volume_users();
  for (const auto& v : VolumeStore(VolumeStore::default_root()).list()) {
    uint64_t bytes = tree_bytes(v.mountpoint);
    ++volumes;
    volume_bytes += bytes;
    if (users.count(v.name)) ++active_volumes;
    else volume_reclaimable += bytes;
  }
  uint64_t size = u.tree_bytes + u.blob_bytes;
  uint64_t reclaimable = u.reclaimable_tree_bytes + u.reclaimable_blob_bytes;
  std::string out;
  if (g_json) {
    nlohmann::json j = {
        {"images", {{"total", u.images}, {"active", u.active_images}, {"size", size}, {"reclaimable", reclaimable}}},
        {"layers", {{"total", u.trees}, {"active", u.active_trees}, {"size", u.tree_bytes},
                    {"reclaimable", u.reclaimable_tree_bytes}}},
        {"blobs", {{"total", u.blobs}, {"size", u.blob_bytes}, {"reclaimable", u.reclaimable_blob_bytes}}},
        {"boxes", {{"total", boxes}, {"active", running}}},
        {"volumes", {{"total", volumes}, {"active", active_volumes}, {"size", volume_bytes},
                     {"reclaimable", volume_reclaimable}}}};
    out = j.dump() + "\n";
  } else {
    char line[256];
    auto row = [&](const char* type, size_t total, const std::string& active, const std::string& sz,
                   const std::string& rec) {
      std::snprintf(line, sizeof line, "%-14s %-7zu %-8s %-10s %s\n", type, total, active.c_str(), sz.c_str(), rec.c_str());
      out += line;
    };
    std::snprintf(line, sizeof line, "%-14s %-7s %-8s %-10s %s\n", "TYPE", "TOTAL", "ACTIVE", "SIZE", "RECLAIMABLE");
    out = line;
    row("Images", u.images, std::to_string(u.active_images), human_size(size),
        human_size(reclaimable) + percent(reclaimable, size));
    row("Layers", u.trees, std::to_string(u.active_trees), human_size(u.tree_bytes),
        human_size(u.reclaimable_tree_bytes) + percent(u.reclaimable_tree_bytes, u.tree_bytes));
    row("Blobs", u.blobs, "-", human_size(u.blob_bytes),
        human_size(u.reclaimable_blob_bytes) + percent(u.reclaimable_blob_bytes, u.blob_bytes));
    // A box's writable layer lives only as long as the box, in its own temporary directory.
    row("Boxes", boxes, std::to_string(running), "-", "-");
    row("Local Volumes", volumes, std::to_string(active_volumes), human_size(volume_bytes),
        human_size(volume_reclaimable) + percent(volume_reclaimable, volume_bytes));
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_system(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("system", "about kern's use of this machine");
  c->require_subcommand(1);
  CLI::App* d = c->add_subcommand("df", "disk space of images, layers, blobs, boxes and volumes");
  d->add_flag("--json", g_json, "a JSON object");
  d->callback([&ctx] { ctx.action = run_df; });
}

const VerbRegistration reg{49, "system", &register_system};

}  // namespace system_df_verb
}  // namespace
}  // namespace kern::cli
