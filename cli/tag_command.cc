// `kern tag SRC DST`: give an image in the store another name.
#include "cli/verb.h"
#include "oci/store.h"
#include "oci/store_ops.h"

namespace kern::cli {
namespace {
namespace tag_verb {

std::string g_src, g_dst;

Result<int> run_tag() {
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  KERN_TRY(oci::tag_image(store, g_src, g_dst));
  return 0;
}

void register_tag(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("tag", "name an image in the local store");
  c->add_option("SRC", g_src, "image name or id")->required();
  c->add_option("DST", g_dst, "new name, [registry/]repo[:tag]")->required();
  c->callback([&ctx] { ctx.action = run_tag; });
}

const VerbRegistration reg{43, "tag", &register_tag};

}  // namespace tag_verb
}  // namespace
}  // namespace kern::cli
