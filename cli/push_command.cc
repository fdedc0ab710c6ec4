// `kern push [-q] [--tls-verify=false] [--cert-dir DIR] IMAGE [DESTINATION]`: send an image of
// the store to its registry, under its own name or under DESTINATION (oci/image_push.h). Prints
// "TAG: digest: sha256:... size: N" on stdout as docker push does, or with -q the digest only.
// Per-blob progress goes to stderr (oci/progress.h), none with -q.
#include <unistd.h>

#include "cli/tls_flags.h"
#include "cli/verb.h"
#include "oci/image_push.h"
#include "oci/progress.h"
#include "oci/reference.h"
#include "oci/store.h"
#include "oci/store_ops.h"
#include "runtime/sys/fdio.h"

namespace kern::cli {
namespace {
namespace push_verb {

std::string g_image, g_destination;
bool g_quiet = false;
TlsFlags g_tls;

Result<oci::Reference> destination() {
  std::string text = g_destination.empty() ? g_image : g_destination;
  auto ref = oci::parse_reference(text);
  if (!ref || ref->kind != oci::Reference::Kind::registry || !ref->digest.empty() || ref->tag.empty()) {
    std::string why = g_destination.empty() ? "\"" + g_image + "\" names no registry repository and tag to push to"
                                            : "\"" + g_destination + "\" is not a registry reference with a tag";
    return fail(Error(ErrorKind::usage, 0, why)
                    .with_hint("give the destination: kern push " + g_image + " REGISTRY/REPOSITORY:TAG"));
  }
  return *ref;
}

Result<int> run_push() {
  KERN_TRY_ASSIGN(oci::TlsRequest tls, tls_request(g_tls));
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(false));
  auto image = oci::lookup_image(store, g_image);
  if (!image && image.error().sys_errno() == ENOENT)
    return fail(std::move(image).error().with_hint("'kern images' lists the images here; 'kern pull' or 'kern load' "
                                                   "brings one, 'kern tag' names it for a registry"));
  if (!image) return fail(std::move(image).error());
  KERN_TRY_ASSIGN(oci::Reference dest, destination());
  auto display = oci::progress::stderr_display(g_quiet ? oci::progress::Mode::none : oci::progress::Mode::lines);
  oci::PushResult result;
  {
    oci::progress::Scope scope(display.get());
    auto r = oci::push_image(store, *image, dest, oci::PushOptions{tls});
    if (!r) return fail(std::move(r).error().with_context("pushing " + dest.str()));
    result = std::move(*r);
  }
  display.reset();  // the last redraw before stdout
  std::string line = g_quiet ? result.digest
                             : dest.tag + ": digest: " + result.digest + " size: " + std::to_string(result.size);
  KERN_TRY(sys::write_all(STDOUT_FILENO, line + "\n", "stdout"));
  return 0;
}

void register_push(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("push", "send an image of the store to a registry");
  c->add_option("IMAGE", g_image, "the image: a name like registry/repo:tag, or an id")->required();
  c->add_option("DESTINATION", g_destination, "push under this registry/repo[:tag] instead of IMAGE's name");
  c->add_flag("-q,--quiet", g_quiet, "no progress output; print only the manifest digest");
  add_tls_flags(c, g_tls);
  c->callback([&ctx] { ctx.action = run_push; });
}

const VerbRegistration reg{41, "push", &register_push};

}  // namespace push_verb
}  // namespace
}  // namespace kern::cli
