// `kern rmi REF...`: remove image names; an image left without a name goes with its tree and
// blobs, except what another image shares or a running box uses (kern gc takes that later).
#include <unistd.h>

#include "cli/verb.h"
#include "oci/store.h"
#include "oci/store_ops.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {
namespace rmi_verb {

std::vector<std::string> g_refs;

Result<int> run_rmi() {
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  KERN_TRY_ASSIGN(oci::RemoveResult res, oci::remove_images(store, g_refs));
  oci::warn_bad_records(res.removed_bad, "removed");
  oci::warn_bad_records(res.gc.bad_records, "left alone; 'kern gc' removes it");
  std::string out;
  for (const auto& u : res.untagged) out += "Untagged: " + log::sanitize(u) + "\n";
  for (const auto& d : res.deleted) out += "Deleted: " + d + "\n";
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  if (res.gc.busy_trees > 0)
    log::note(std::to_string(res.gc.busy_trees) + " image tree(s) in use by a running box kept; 'kern gc' removes them later");
  return 0;
}

void register_rmi(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("rmi", "remove images from the local store");
  c->add_option("REF", g_refs, "image names or ids")->required();
  c->callback([&ctx] { ctx.action = run_rmi; });
}

const VerbRegistration reg{42, "rmi", &register_rmi};

}  // namespace rmi_verb
}  // namespace
}  // namespace kern::cli
