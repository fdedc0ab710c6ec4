// `kern image prune [-a] [--json]`: remove the images without a name (with -a, every image no
// box is using) and the trees and blobs no image needs any more; print what went and the space
// freed.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/images_format.h"
#include "cli/verb.h"
#include "oci/store.h"
#include "oci/store_ops.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {
namespace images_prune_verb {

bool g_all = false, g_json = false;

Result<int> run_prune() {
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  KERN_TRY_ASSIGN(oci::RemoveResult res, oci::prune_images(store, g_all));
  std::string out;
  if (g_json) {
    nlohmann::json j = {{"untagged", res.untagged},       {"deleted", res.deleted},
                        {"trees", res.gc.trees},          {"blobs", res.gc.blobs},
                        {"reclaimed_bytes", res.gc.bytes}, {"busy_trees", res.gc.busy_trees}};
    out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else {
    if (!res.untagged.empty() || !res.deleted.empty()) out += "Deleted Images:\n";
    for (const auto& u : res.untagged) out += "untagged: " + log::sanitize(u) + "\n";
    for (const auto& d : res.deleted) out += "deleted: " + d + "\n";
    if (!out.empty()) out += "\n";
    out += "Total reclaimed space: " + human_size(res.gc.bytes) + "\n";
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  if (res.gc.busy_trees > 0)
    log::note(std::to_string(res.gc.busy_trees) + " image tree(s) in use by a running box kept");
  return 0;
}

void register_image(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("image", "manage images (see also images, rmi, load, save)");
  c->require_subcommand(1);
  CLI::App* p = c->add_subcommand("prune", "remove unnamed images and the layers no image uses");
  p->add_flag("-a,--all", g_all, "also every named image no box is using");
  p->add_flag("--json", g_json, "a JSON object: untagged, deleted, trees, blobs, reclaimed_bytes");
  p->callback([&ctx] { ctx.action = run_prune; });
}

const VerbRegistration reg{48, "image", &register_image};

}  // namespace images_prune_verb
}  // namespace
}  // namespace kern::cli
