// `kern volume`: the verb that holds the volume subcommands (cli/volume_verbs.h), and what they
// share: a volume's Docker-shaped object and the refusal of removing a volume in use.
#include <ctime>

#include "cli/volume_verbs.h"
#include "runtime/sys/log.h"

namespace kern::cli::volume_verbs {

nlohmann::ordered_json volume_object(const VolumeInfo& v) {
  char when[32] = "";
  std::time_t t = static_cast<std::time_t>(v.created_unix);
  struct tm tm {};
  if (::gmtime_r(&t, &tm) != nullptr) std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  nlohmann::ordered_json labels = nullptr;
  if (!v.labels.empty()) {
    labels = nlohmann::ordered_json::object();
    for (const auto& [k, val] : v.labels) labels[k] = val;
  }
  return {{"CreatedAt", when}, {"Driver", "local"},     {"Labels", labels}, {"Mountpoint", v.mountpoint},
          {"Name", v.name},    {"Options", nullptr},    {"Scope", "local"}};
}

VolumeStore volume_store() { return VolumeStore(VolumeStore::default_root()); }

Error volume_in_use(const std::string& name, const std::vector<std::string>& boxes) {
  std::string list;
  for (const auto& b : boxes) list += (list.empty() ? "" : ", ") + log::quoted(b);
  return Error(ErrorKind::config, 0, "volume " + log::quoted(name) + " is in use by " + list)
      .with_hint("kern rm the box(es) first (kern ps -a lists them)");
}

namespace {

void register_volume(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("volume", "manage named volumes (create, ls, inspect, rm, prune)");
  c->require_subcommand(1);
  add_create(c, ctx);
  add_ls(c, ctx);
  add_inspect(c, ctx);
  add_rm(c, ctx);
  add_prune(c, ctx);
}

const VerbRegistration reg{50, "volume", &register_volume};

}  // namespace
}  // namespace kern::cli::volume_verbs
