// `kern pull [-q] [--json] [--tls-verify=false] [--cert-dir DIR] REF`: fetch an image from a
// registry (through the mirrors registries.conf names for it) or import an oci:/docker-archive:
// source into the local store. Prints "REF DIGEST" on stdout, or with --json one object
// (cli/image_json.h). Per-layer progress goes to stderr (oci/progress.h), none with -q.
#include <unistd.h>

#include "cli/image_json.h"
#include "cli/tls_flags.h"
#include "cli/verb.h"
#include "oci/image_sources.h"
#include "oci/progress.h"
#include "oci/reference.h"
#include "oci/registry_source.h"
#include "oci/store.h"
#include "runtime/sys/fdio.h"

namespace kern::cli {
namespace {
namespace pull_verb {

std::string g_ref;
bool g_quiet = false;
bool g_json = false;
TlsFlags g_tls;

Result<int> run_pull() {
  KERN_TRY_ASSIGN(oci::Reference ref, oci::parse_reference(g_ref));
  KERN_TRY_ASSIGN(oci::PullOptions opts, [&]() -> Result<oci::PullOptions> {
    KERN_TRY_ASSIGN(oci::TlsRequest tls, tls_request(g_tls));
    return oci::PullOptions{tls};
  }());
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  auto display = oci::progress::stderr_display(g_quiet ? oci::progress::Mode::none : oci::progress::Mode::lines);
  oci::PullResult result;
  {
    oci::progress::Scope scope(display.get());
    if (ref.kind == oci::Reference::Kind::registry) {
      KERN_TRY_ASSIGN(result, oci::pull_image(store, ref, opts));
    } else {
      KERN_TRY_ASSIGN(result.image, oci::import_reference(store, ref, true));
    }
  }
  display.reset();  // the last redraw before stdout
  if (!g_json) {
    KERN_TRY(sys::write_all(STDOUT_FILENO, ref.str() + " " + result.image.digest + "\n", "stdout"));
    return 0;
  }
  KERN_TRY_ASSIGN(auto j, image_json(store, result.image, ref.str()));
  if (ref.kind == oci::Reference::Kind::registry) {
    j["source"] = result.served_by;
    j["mirror"] = result.mirror;
  }
  // A mirror's name comes from registries.conf: bytes that are not UTF-8 are replaced, never thrown on.
  KERN_TRY(sys::write_all(STDOUT_FILENO, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "stdout"));
  return 0;
}

void register_pull(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("pull", "fetch an image into the local store");
  c->add_option("REF", g_ref, "[registry/]repo[:tag][@sha256:...], oci:DIR[:TAG] or docker-archive:FILE")->required();
  c->add_flag("-q,--quiet", g_quiet, "no progress output");
  c->add_flag("--json", g_json, "print the pulled image as one JSON object");
  add_tls_flags(c, g_tls);
  c->callback([&ctx] { ctx.action = run_pull; });
}

const VerbRegistration reg{40, "pull", &register_pull};

}  // namespace pull_verb
}  // namespace
}  // namespace kern::cli
