// `kern image prune [-a] [--json]`: remove the images without a name (with -a, every image no
// box is using) and the trees and blobs no image needs any more; print what went and the space
// freed. `kern image verify [--remove] [--json]`: check every stored blob, tree and record and
// name what is damaged (oci/store_verify.h).
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/docker_views.h"
#include "cli/go_template.h"
#include "cli/images_format.h"
#include "cli/image_json.h"
#include "cli/verb.h"
#include "oci/store.h"
#include "oci/store_ops.h"
#include "oci/store_verify.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {
namespace images_prune_verb {

bool g_all = false, g_json = false, g_remove = false;

Result<int> run_verify();

Result<int> run_prune() {
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  KERN_TRY_ASSIGN(oci::RemoveResult res, oci::prune_images(store, g_all));
  oci::warn_bad_records(res.gc.bad_records, "left alone; 'kern gc' removes it");
  if (res.gc.kept_unnamed) log::note("unnamed images kept while a name record is bad: it may have named one");
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

std::vector<std::string> g_inspect_refs;
std::string g_inspect_format;

// `kern image inspect REF...`: a JSON array, one object per image: what pull --json prints
// (reference, digests, layers, sizes) and the config a box starts from (entrypoint, cmd, env,
// working_dir, user, healthcheck); with -f TEMPLATE a line per image (cli/docker_views.h).
Result<int> run_inspect() {
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const auto& ref : g_inspect_refs) {
    KERN_TRY_ASSIGN(oci::ImageRecord rec, oci::lookup_image(store, ref));
    KERN_TRY_ASSIGN(nlohmann::ordered_json j, image_json(store, rec, rec.ref));
    const auto& c = rec.config;
    nlohmann::ordered_json cfg = {{"entrypoint", c.entrypoint}, {"cmd", c.cmd}, {"env", c.env},
                                  {"working_dir", c.working_dir}, {"user", c.user}};
    if (c.healthcheck)
      cfg["healthcheck"] = {{"test", c.healthcheck->test}, {"interval_ns", c.healthcheck->interval_ns},
                            {"timeout_ns", c.healthcheck->timeout_ns},
                            {"start_period_ns", c.healthcheck->start_period_ns}, {"retries", c.healthcheck->retries}};
    else
      cfg["healthcheck"] = nullptr;
    j["created"] = rec.created;
    j["config"] = std::move(cfg);
    all.push_back(std::move(j));
  }
  if (!g_inspect_format.empty()) {
    KERN_TRY_ASSIGN(GoTemplate t, parse_go_template(g_inspect_format, "kern image inspect", {}));
    std::vector<nlohmann::ordered_json> rows;
    for (const auto& j : all) rows.push_back(image_inspect_view(j));
    KERN_TRY_ASSIGN(std::string out, render_rows(t, rows, "kern image inspect", {}));
    KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
    return 0;
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, all.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n", "stdout"));
  return 0;
}

void register_image(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("image", "manage images (see also images, rmi, load, save)");
  c->require_subcommand(1);
  CLI::App* p = c->add_subcommand("prune", "remove unnamed images and the layers no image uses");
  p->add_flag("-a,--all", g_all, "also every named image no box is using");
  p->add_flag("--json", g_json, "a JSON object: untagged, deleted, trees, blobs, reclaimed_bytes");
  p->callback([&ctx] { ctx.action = run_prune; });
  CLI::App* i = c->add_subcommand("inspect", "describe images of the store as JSON (layers, sizes, config)");
  i->add_option("refs", g_inspect_refs, "image names or ids")->required();
  i->add_option("-f,--format", g_inspect_format,
                "a Go template per image: kern's keys and Docker's .Id .RepoTags .Created .Size .Os "
                ".Architecture .Config.Cmd ...");
  i->callback([&ctx] { ctx.action = run_inspect; });
  CLI::App* v = c->add_subcommand("verify", "check every stored blob, tree and record; name what is damaged");
  v->add_flag("--remove", g_remove, "take away what is damaged (the next load or pull brings it again)");
  v->add_flag("--json", g_json, "a JSON object: blobs, trees, trees_without_recipe, records, bad");
  v->callback([&ctx] { ctx.action = run_verify; });
}

Result<int> run_verify() {
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(true));
  KERN_TRY_ASSIGN(oci::VerifyResult res, oci::verify_store(store, g_remove));
  size_t left = 0;
  std::string out;
  nlohmann::json bad = nlohmann::json::array();
  for (const auto& b : res.bad) {
    left += b.removed ? 0 : 1;
    bad.push_back({{"kind", b.what}, {"path", b.path}, {"why", b.why}, {"removed", b.removed}});
    out += "bad " + b.what + (b.path.empty() ? "" : " " + log::quoted(b.path)) + ": " + log::sanitize(b.why) +
           (b.removed ? " (removed)" : "") + "\n";
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "checked %zu blob(s), %zu tree(s) (%zu through their layers' blobs only), %zu record(s): %zu bad\n",
                res.blobs, res.trees, res.trees_without_recipe, res.records, res.bad.size());
  out += line;
  if (g_json)
    out = nlohmann::json{{"blobs", res.blobs}, {"trees", res.trees}, {"trees_without_recipe", res.trees_without_recipe},
                         {"records", res.records}, {"bad", bad}}
              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  if (left > 0) {
    log::error(std::to_string(left) + " damaged item(s) in the image store " + log::quoted(store.root()));
    log::hint("'kern image verify --remove' takes them away; then load or pull the images again");
    return 1;
  }
  if (!res.bad.empty()) log::note("removed what was damaged: load or pull those images again");
  return 0;
}

const VerbRegistration reg{48, "image", &register_image};

}  // namespace images_prune_verb
}  // namespace
}  // namespace kern::cli
