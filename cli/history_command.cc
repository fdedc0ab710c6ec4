// `kern history IMAGE [--no-trunc] [-q] [--format json]`: the steps that made an image, newest
// first, as `docker history` prints them: the image id on the top step ("<missing>" below it,
// as for any pulled image), when, the instruction, the size of the layer it made (0B for a step
// that made none) and its comment. From the image config's history; an image without one gets a
// line per layer.
#include <unistd.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/images_format.h"
#include "cli/text_columns.h"
#include "cli/verb.h"
#include "oci/manifest.h"
#include "oci/store.h"
#include "oci/store_ops.h"
#include "runtime/sys/fdio.h"

namespace kern::cli {
namespace {
namespace history_verb {

using json = nlohmann::json;

std::string g_image, g_format;
bool g_no_trunc = false, g_quiet = false;

struct Step {
  std::string created, created_by, comment;
  int64_t size = 0;
  bool empty_layer = false;
};

std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\t') c = ' ';
  return s;
}

Result<int> run_history() {
  if (!g_format.empty() && g_format != "json")
    return fail(Error(ErrorKind::usage, 0, "--format \"" + g_format + "\": kern history prints a table or json")
                    .with_hint("--format json"));
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(false));
  KERN_TRY_ASSIGN(oci::ImageRecord rec, oci::lookup_image(store, g_image));
  KERN_TRY_ASSIGN(std::string manifest_text, store.read_blob(rec.digest, size_t{4} << 20));
  KERN_TRY_ASSIGN(oci::Manifest m, oci::parse_manifest(manifest_text));
  KERN_TRY_ASSIGN(std::string config_text, store.read_blob(rec.config_digest, size_t{16} << 20));
  json cfg = json::parse(config_text, nullptr, false);
  std::vector<Step> steps;
  size_t layer = 0;
  if (cfg.is_object() && cfg.contains("history") && cfg["history"].is_array()) {
    for (const auto& h : cfg["history"]) {
      if (!h.is_object()) continue;
      Step s;
      s.created = h.value("created", "");
      s.created_by = h.value("created_by", "");
      s.comment = h.value("comment", "");
      s.empty_layer = h.value("empty_layer", false);
      if (!s.empty_layer && layer < m.layers.size()) s.size = m.layers[layer++].size;
      steps.push_back(std::move(s));
    }
  }
  if (steps.empty())
    for (const auto& l : m.layers) steps.push_back({rec.created, "", "", l.size, false});
  std::string id = rec.config_digest;
  std::string out;
  if (g_format == "json") {
    json arr = json::array();
    for (size_t i = steps.size(); i-- > 0;) {
      const Step& s = steps[i];
      arr.push_back({{"id", i + 1 == steps.size() ? id : "<missing>"}, {"created", s.created},
                     {"created_by", s.created_by}, {"size", s.size}, {"comment", s.comment},
                     {"empty_layer", s.empty_layer}});
    }
    out = arr.dump(2) + "\n";
  } else if (g_quiet) {
    for (size_t i = steps.size(); i-- > 0;)
      out += (i + 1 == steps.size() ? (g_no_trunc ? id : id.substr(7, 12)) : std::string("<missing>")) + "\n";
  } else {
    std::vector<std::vector<std::string>> rows{{"IMAGE", "CREATED", "CREATED BY", "SIZE", "COMMENT"}};
    std::time_t now = std::time(nullptr);
    for (size_t i = steps.size(); i-- > 0;) {
      const Step& s = steps[i];
      std::string by = one_line(s.created_by);
      if (!g_no_trunc && by.size() > 45) by = by.substr(0, 44) + "…";
      rows.push_back({i + 1 == steps.size() ? (g_no_trunc ? id : id.substr(7, 12)) : "<missing>",
                      s.created.empty() ? "N/A" : created_since(s.created, now), by,
                      human_size(static_cast<uint64_t>(s.size)), one_line(s.comment)});
    }
    out = align_columns(rows);
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_history(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("history", "show the steps that made an image");
  c->add_option("IMAGE", g_image, "image name or id")->required();
  c->add_flag("--no-trunc", g_no_trunc, "do not shorten ids and instructions");
  c->add_flag("-q,--quiet", g_quiet, "only the image ids");
  c->add_option("--format", g_format, "json: one JSON array");
  c->callback([&ctx] { ctx.action = run_history; });
}

const VerbRegistration reg{44, "history", &register_history};

}  // namespace history_verb
}  // namespace
}  // namespace kern::cli
