// `kern commit [-m MSG] [-a AUTHOR] [-c INSTRUCTION]... BOX [IMAGE[:TAG]]`: a new image from what a
// detached box wrote in its root (its kept upper layer, box_upper.h) on top of the image it
// started from, as `docker commit` makes one. The config is the image's, changed by -c with the
// Dockerfile instructions that change only a config (CMD, ENTRYPOINT, ENV, EXPOSE, LABEL, USER,
// VOLUME, WORKDIR, ...; build_config.h). A running box is not paused: what it writes meanwhile
// may be half in the layer (kern pause BOX first).
#include <unistd.h>

#include <ctime>

#include "cli/box_upper.h"
#include "cli/build_config.h"
#include "cli/verb.h"
#include "oci/build/dockerfile.h"
#include "oci/image_commit.h"
#include "oci/store_ops.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {
namespace commit_verb {

std::string g_box, g_image, g_message, g_author;
std::vector<std::string> g_changes;

Result<int> run_commit() {
  KERN_TRY_ASSIGN(BoxUpper b, open_box_upper(g_box, "commit"));
  if (!record_exited(b.record))
    log::note("the box \"" + b.record.name + "\" is running and is not paused: kern pause it first for a still copy");
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  KERN_TRY_ASSIGN(oci::ImageDraft draft, oci::draft_from(store, &b.image));
  for (const auto& text : g_changes) {
    KERN_TRY_ASSIGN(oci::build::Instruction in, oci::build::parse_instruction(text, 0, '\\'));
    if (!config_instruction(in.keyword) || in.keyword == "ONBUILD" || in.keyword == "MAINTAINER")
      return fail(Error(ErrorKind::usage, 0, "-c \"" + log::sanitize(text) + "\": " + in.keyword + " cannot change a commit")
                      .with_hint("-c takes CMD, ENTRYPOINT, ENV, EXPOSE, LABEL, ONBUILD, USER, VOLUME, WORKDIR, STOPSIGNAL, HEALTHCHECK, SHELL"));
    KERN_TRY(apply_config_instruction(draft.config, in, {}, '\\'));
  }
  KERN_TRY_ASSIGN(oci::Staging staging, store.begin_staging());
  KERN_TRY_ASSIGN(UniqueFd out, staging.create("layer.tar", O_WRONLY));
  KERN_TRY_ASSIGN(oci::LayerTar tar, oci::LayerTar::create(out.get()));
  KERN_TRY_ASSIGN(oci::UpperLayerStats stats, oci::write_upper_layer(b.source(), tar));
  KERN_TRY_ASSIGN(oci::LayerDigest d, tar.finish());
  std::string now = oci::rfc3339(static_cast<int64_t>(std::time(nullptr)));
  if (!g_author.empty()) draft.config["author"] = g_author;
  draft.config["created"] = now;
  oci::add_history(draft.config, now, "kern commit " + b.record.name + ": " + b.record.command, stats.entries == 0, g_message);
  std::vector<oci::WrittenLayer> layers;
  if (stats.entries > 0) layers.push_back({d, staging.fd(), "layer.tar"});
  KERN_TRY_ASSIGN(oci::ImageRecord rec, oci::commit_image(store, draft, layers, {}));
  if (!g_image.empty()) {
    KERN_TRY_ASSIGN(std::string named, oci::tag_image(store, rec.digest, g_image));
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, rec.config_digest + "\n", "stdout"));
  return 0;
}

void register_commit(CLI::App& app, VerbContext& ctx) {
  g_changes.clear();
  CLI::App* c = app.add_subcommand("commit", "make an image of what a detached box wrote");
  c->add_option("-m,--message", g_message, "the commit message (the history's comment)");
  c->add_option("-a,--author", g_author, "the author");
  c->add_option("-c,--change", g_changes, "a config instruction, as in a Dockerfile (repeatable)")->allow_extra_args(false);
  c->add_option("BOX", g_box, "the box's name")->required();
  c->add_option("IMAGE", g_image, "the new image's name, [registry/]repo[:tag]");
  c->callback([&ctx] { ctx.action = run_commit; });
}

const VerbRegistration reg{44, "commit", &register_commit};

}  // namespace commit_verb
}  // namespace
}  // namespace kern::cli
