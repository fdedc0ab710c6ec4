// `kern images [REPO[:TAG]] [-q] [--format F] [--filter reference=P|dangling=B] [--json]`: the
// images in the local store, one line per name (and one for each image that has none). IMAGE ID
// is the config digest, as Docker's; the formatting lives in images_format.h.
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/images_format.h"
#include "cli/verb.h"
#include "oci/store.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {
namespace images_verb {

bool g_json = false, g_quiet = false, g_all = false;
std::string g_format, g_repo;
std::vector<std::string> g_filters;

struct Filters {
  std::vector<std::string> references;
  int dangling = -1;  // -1 either, 0 named only, 1 unnamed only
};

Result<Filters> parse_filters() {
  Filters f;
  if (!g_repo.empty()) f.references.push_back(g_repo);
  for (const auto& text : g_filters) {
    size_t eq = text.find('=');
    std::string key = text.substr(0, eq), val = eq == std::string::npos ? std::string() : text.substr(eq + 1);
    if (key == "reference" && !val.empty()) {
      f.references.push_back(val);
    } else if (key == "dangling" && (val == "true" || val == "false")) {
      f.dangling = val == "true";
    } else {
      return fail(Error(ErrorKind::usage, 0, "--filter \"" + text + "\": unknown filter")
                      .with_hint("kern images filters by reference=PATTERN and dangling=true|false"));
    }
  }
  return f;
}

bool keep(const ImageRow& row, const Filters& f) {
  if (f.dangling == 1 && !row.ref.empty()) return false;
  if (f.dangling == 0 && row.ref.empty()) return false;
  if (f.references.empty()) return true;
  return std::any_of(f.references.begin(), f.references.end(),
                     [&](const std::string& p) { return reference_matches(row, p); });
}

Result<int> run_images() {
  KERN_TRY_ASSIGN(Filters filters, parse_filters());
  std::optional<GoTemplate> format;
  if (!g_format.empty()) {
    KERN_TRY_ASSIGN(GoTemplate f, parse_image_format(g_format));
    format = std::move(f);
  }
  if ((g_json || g_quiet) && format)
    return fail(ErrorKind::usage, 0, "--format cannot be combined with " + std::string(g_json ? "--json" : "-q"));
  KERN_TRY_ASSIGN(oci::Store store, oci::Store::open(false));
  KERN_TRY_ASSIGN(oci::Store::Listing ref_list, store.list_refs());
  KERN_TRY_ASSIGN(oci::Store::Listing image_list, store.list_images());
  for (const auto* l : {&ref_list, &image_list})
    for (const auto& e : l->unreadable) log::warning("left out of the listing, cannot be read: " + e.what());
  std::vector<oci::ImageRecord>& refs = ref_list.records;
  const std::vector<oci::ImageRecord>& images = image_list.records;
  std::sort(refs.begin(), refs.end(), [](const auto& a, const auto& b) { return a.ref < b.ref; });
  std::set<std::string> named;
  for (const auto& r : refs) named.insert(r.digest);
  std::vector<const oci::ImageRecord*> records;
  for (const auto& r : refs) records.push_back(&r);
  // kern build's step images (its cache) are listed with -a only, as Docker's intermediate ones.
  for (const auto& img : images)
    if (!named.count(img.digest) && (g_all || !img.intermediate)) records.push_back(&img);
  std::vector<ImageRow> rows;
  std::vector<const oci::ImageRecord*> kept;
  for (const auto* r : records) {
    ImageRow row = image_row(*r);
    if (!keep(row, filters)) continue;
    row.repository = log::sanitize(row.repository);
    row.tag = log::sanitize(row.tag);
    row.created = log::sanitize(row.created);
    rows.push_back(std::move(row));
    kept.push_back(r);
  }
  std::string out;
  if (g_json) {
    nlohmann::json arr = nlohmann::json::array();
    for (size_t i = 0; i < rows.size(); ++i) {
      const oci::ImageRecord& r = *kept[i];
      arr.push_back({{"ref", r.ref.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.ref)},
                     {"digest", r.digest},
                     {"id", rows[i].id},
                     {"config_digest", r.config_digest},
                     {"size", r.size},
                     {"created", r.created},
                     {"os", r.os},
                     {"architecture", r.architecture},
                     {"layers", r.layers.size()}});
    }
    out = arr.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else if (g_quiet) {
    // Each image once, though it may have several names (what `kern rmi $(kern images -q)` wants).
    std::set<std::string> seen;
    for (const auto& r : rows)
      if (seen.insert(r.id).second) out += r.id + "\n";
  } else {
    KERN_TRY_ASSIGN(out, render_images(rows, format ? &*format : nullptr, std::time(nullptr)));
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_images(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("images", "list the images in the local store");
  c->add_option("REPOSITORY", g_repo, "only names matching REPO[:TAG] (a shell pattern)");
  c->add_flag("-a,--all", g_all, "also the images kern build made for its steps");
  c->add_flag("--json", g_json, "JSON array");
  c->add_flag("-q,--quiet", g_quiet, "image IDs only, each once");
  c->add_option("--format", g_format,
                "a Go template of {{.Repository}} {{.Tag}} {{.ID}} {{.Digest}} {{.CreatedSince}} "
                "{{.CreatedAt}} {{.Size}} ({{json .}} too); \"table ...\" adds a header; \"json\" one object a line");
  c->add_option("-f,--filter", g_filters, "reference=PATTERN or dangling=true|false (repeatable)");
  c->callback([&ctx] { ctx.action = run_images; });
}

const VerbRegistration reg{41, "images", &register_images};

}  // namespace images_verb
}  // namespace
}  // namespace kern::cli
