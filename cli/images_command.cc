// `kern images [--json]`: the images in the local store, one line per name (and one for each
// image that has none).
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/verb.h"
#include "oci/reference.h"
#include "oci/store.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {

bool g_json = false;

std::string human_size(uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%.1fGB", b / 1073741824.0);
  else if (b >= (1ull << 20)) std::snprintf(buf, sizeof buf, "%.1fMB", b / 1048576.0);
  else std::snprintf(buf, sizeof buf, "%.1fkB", b / 1024.0);
  return buf;
}

// "docker.io/library/busybox:latest" -> ("docker.io/library/busybox", "latest").
std::pair<std::string, std::string> split_ref(const std::string& ref) {
  auto r = oci::parse_reference(ref);
  if (!r || r->kind != oci::Reference::Kind::registry) return {ref, "-"};
  return {r->name(), r->tag.empty() ? "<none>" : r->tag};
}

Result<int> run_images() {
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
  std::vector<oci::ImageRecord> rows = refs;
  for (const auto& img : images)
    if (!named.count(img.digest)) rows.push_back(img);
  std::string out;
  if (g_json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : rows) {
      arr.push_back({{"ref", r.ref.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.ref)},
                     {"digest", r.digest},
                     {"id", r.digest.substr(7, 12)},
                     {"config_digest", r.config_digest},
                     {"size", r.size},
                     {"created", r.created},
                     {"os", r.os},
                     {"architecture", r.architecture},
                     {"layers", r.layers.size()}});
    }
    out = arr.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else {
    char line[1024];
    std::snprintf(line, sizeof line, "%-44s %-16s %-14s %-10s %s\n", "REPOSITORY", "TAG", "IMAGE ID", "SIZE", "CREATED");
    out = line;
    for (const auto& r : rows) {
      auto [repo, tag] = r.ref.empty() ? std::pair<std::string, std::string>{"<none>", "<none>"} : split_ref(r.ref);
      std::snprintf(line, sizeof line, "%-44s %-16s %-14s %-10s %s\n", log::sanitize(repo).c_str(),
                    log::sanitize(tag).c_str(), r.digest.substr(7, 12).c_str(), human_size(r.size).c_str(),
                    log::sanitize(r.created.substr(0, 19)).c_str());
      out += line;
    }
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_images(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("images", "list the images in the local store");
  c->add_flag("--json", g_json, "JSON array");
  c->callback([&ctx] { ctx.action = run_images; });
}

const VerbRegistration reg{41, "images", &register_images};

}  // namespace
}  // namespace kern::cli
