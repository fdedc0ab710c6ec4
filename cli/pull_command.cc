// `kern pull REF`: fetch an image from a registry (or import an oci:/docker-archive: source)
// into the local store. Prints "REF DIGEST" on stdout.
#include <unistd.h>

#include "cli/verb.h"
#include "oci/image_sources.h"
#include "oci/reference.h"
#include "oci/store.h"
#include "runtime/sys/fdio.h"

namespace kern::cli {
namespace {

std::string g_ref;
bool g_quiet = false;

Result<int> run_pull() {
  KERN_TRY_ASSIGN(oci::Reference ref, oci::parse_reference(g_ref));
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  KERN_TRY_ASSIGN(oci::ImageRecord rec, oci::import_reference(store, ref, g_quiet));
  KERN_TRY(sys::write_all(STDOUT_FILENO, ref.str() + " " + rec.digest + "\n", "stdout"));
  return 0;
}

void register_pull(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("pull", "fetch an image into the local store");
  c->add_option("REF", g_ref, "[registry/]repo[:tag][@sha256:...], oci:DIR[:TAG] or docker-archive:FILE")->required();
  c->add_flag("-q,--quiet", g_quiet, "no progress output");
  c->callback([&ctx] { ctx.action = run_pull; });
}

const VerbRegistration reg{40, "pull", &register_pull};

}  // namespace
}  // namespace kern::cli
