// `kern gc`: remove from the store what no image name needs: unnamed images, unused trees and
// blobs, crash leftovers. Trees in use by a running box stay.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/verb.h"
#include "oci/store.h"
#include "oci/store_ops.h"
#include "runtime/box_lockdown.h"
#include "runtime/registry.h"
#include "runtime/sys/paths.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {
namespace gc_verb {

bool g_json = false;

Result<int> run_gc() {
  // The runtime entries and exec records SIGKILLed launchers left (no box's end reads them).
  if (auto rt = paths::runtime_dir()) {
    (void)list_boxes(*rt, true);
    reap_stale_lockdowns(*rt + "/lockdown");
  }
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  KERN_TRY_ASSIGN(UniqueFd lock, store.lock_store(true));
  KERN_TRY_ASSIGN(oci::Store::GcResult r, store.collect(true, true));
  oci::warn_bad_records(r.bad_records, "removed");
  if (r.kept_unnamed) log::note("unnamed images kept in this run: a removed name record may have named one");
  std::string out;
  if (g_json) {
    nlohmann::json j = {{"images", r.images}, {"trees", r.trees},   {"blobs", r.blobs},
                        {"bytes", r.bytes},   {"staging", r.staging}, {"busy_trees", r.busy_trees}};
    out = j.dump() + "\n";
  } else {
    char line[256];
    std::snprintf(line, sizeof line, "removed %zu image(s), %zu tree(s), %zu blob(s) (%.1f MB), %zu staging dir(s)\n",
                  r.images, r.trees, r.blobs, r.bytes / 1048576.0, r.staging);
    out = line;
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  if (r.busy_trees > 0) log::note(std::to_string(r.busy_trees) + " tree(s) in use by running boxes kept");
  return 0;
}

void register_gc(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("gc", "remove unused images, layers and leftovers from the local store");
  c->add_flag("--json", g_json, "a JSON object: images, trees, blobs, bytes, staging, busy_trees");
  c->callback([&ctx] { ctx.action = run_gc; });
}

const VerbRegistration reg{46, "gc", &register_gc};

}  // namespace gc_verb
}  // namespace
}  // namespace kern::cli
