// `kern config list [--json]`: the profiles and backends of the kern.toml kern would read
// (--config, else KERN_CONFIG, else the XDG default), one per line or as one JSON document.
// A file with errors is refused like for a profile token: the first error, then `kern validate`.
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/profile_apply.h"
#include "cli/verb.h"
#include "profiles/units.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {
namespace config_verb {

std::string g_config;
bool g_json = false;

using nlohmann::json;

json devices_json(const profiles::VgpioProfile& p) {
  json d = json::object();
  for (auto c : profiles::kDeviceClasses) {
    json list = json::array();
    for (const auto& e : p.entries(c)) list.push_back(e.text);
    d[std::string(profiles::device_class_key(c))] = list;
  }
  return d;
}

std::string text_list(const profiles::ProfileSet& s) {
  std::ostringstream o;
  auto san = [](const std::string& x) { return log::sanitize(x); };
  for (const auto& b : s.cpu)
    o << "backend " << san(b.id) << (b.cores ? " cores=" + profiles::format_cpus(*b.cores) : "") << "\n";
  for (const auto& b : s.disk) o << "backend " << san(b.id) << " path=" << san(b.path) << "\n";
  for (const auto& b : s.gpio) o << "backend " << san(b.id) << "\n";
  for (const auto& p : s.vcpu) {
    o << "vcpu:" << san(p.name) << " backend=" << san(p.backend);
    if (p.cpus) o << " cpus=" << profiles::format_cpus(*p.cpus);
    if (!p.cpuset.empty()) o << " cpuset=" << san(p.cpuset);
    if (p.numa) o << " numa=" << *p.numa;
    if (p.memory) o << " memory=" << profiles::format_size(*p.memory);
    if (p.nice) o << " nice=" << *p.nice;
    o << "\n";
  }
  for (const auto& p : s.vdisk)
    o << "vdisk:" << san(p.name) << " backend=" << san(s.backend_of(p)) << " size=" << profiles::format_size(p.size)
      << " at=/vdisk/" << san(p.name) << "\n";
  for (const auto& p : s.vgpio) {
    o << "vgpio:" << san(p.name) << " backend=" << san(p.backend);
    for (auto c : profiles::kDeviceClasses) {
      const auto& list = p.entries(c);
      if (list.empty()) continue;
      o << " " << profiles::device_class_key(c) << "=";
      for (size_t i = 0; i < list.size(); ++i) o << (i ? "," : "") << san(list[i].text);
    }
    o << "\n";
  }
  return o.str();
}

json json_list(const profiles::ProfileSet& s) {
  json j;
  j["file"] = s.file;
  j["backends"] = json::array();
  for (const auto& b : s.cpu) j["backends"].push_back({{"id", b.id}, {"kind", "cpu"}, {"cores", b.cores ? json(*b.cores) : json(nullptr)}});
  for (const auto& b : s.disk) j["backends"].push_back({{"id", b.id}, {"kind", "disk"}, {"path", b.path}});
  for (const auto& b : s.gpio) j["backends"].push_back({{"id", b.id}, {"kind", "gpio"}});
  j["profiles"] = json::array();
  for (const auto& p : s.vcpu)
    j["profiles"].push_back({{"token", "vcpu:" + p.name}, {"kind", "vcpu"}, {"name", p.name}, {"backend", p.backend},
                             {"cpus", p.cpus ? json(*p.cpus) : json(nullptr)},
                             {"cpuset", p.cpuset.empty() ? json(nullptr) : json(p.cpuset)},
                             {"numa", p.numa ? json(*p.numa) : json(nullptr)},
                             {"memory_bytes", p.memory ? json(*p.memory) : json(nullptr)},
                             {"nice", p.nice ? json(*p.nice) : json(nullptr)}});
  for (const auto& p : s.vdisk)
    j["profiles"].push_back({{"token", "vdisk:" + p.name}, {"kind", "vdisk"}, {"name", p.name}, {"backend", s.backend_of(p)},
                             {"size_bytes", p.size}, {"mount", "/vdisk/" + p.name}});
  for (const auto& p : s.vgpio)
    j["profiles"].push_back({{"token", "vgpio:" + p.name}, {"kind", "vgpio"}, {"name", p.name}, {"backend", p.backend},
                             {"devices", devices_json(p)}});
  return j;
}

Result<int> run_config_list() {
  KERN_TRY_ASSIGN(profiles::ProfileSet set, load_profile_set(g_config));
  std::string out;
  if (g_json) {
    // Invalid UTF-8 from the file is replaced rather than failing the whole listing.
    out = json_list(set).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  } else {
    out = text_list(set);
  }
  KERN_TRY(sys::write_all(STDOUT_FILENO, out, "stdout"));
  return 0;
}

void register_config(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("config", "show the kern.toml profiles");
  c->require_subcommand(1);
  CLI::App* list = c->add_subcommand("list", "list the profiles and backends");
  list->add_flag("--json", g_json, "one JSON document");
  list->add_option("--config", g_config, "the kern.toml to read");
  list->callback([&ctx] { ctx.action = run_config_list; });
}

const VerbRegistration reg{72, "config", &register_config};

}  // namespace config_verb
}  // namespace
}  // namespace kern::cli
