// `kern validate [--json] [PATH]`: checks a kern.toml (kern.toml(5)) and names FILE:LINE:COLUMN
// for every problem, and notes each key that has no effect on this host. PATH defaults to
// --config's default: KERN_CONFIG, else the XDG location. Exit 0 when the file is usable
// (warnings and notes allowed), 1 when it has errors or cannot be read. --json: one object on
// stdout (the profiles, the diagnostics) whatever the outcome, a missing or unreadable file
// included, and nothing on stderr for the file's own problems.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/verb.h"
#include "profiles/profile_loader.h"
#include "profiles/units.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {
namespace validate_verb {

using nlohmann::json;

std::string g_path;
bool g_quiet = false;
bool g_json = false;

template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json entries_json(const profiles::GpioResources& r) {
  json d = json::object();
  for (auto c : profiles::kDeviceClasses) {
    if (r.entries(c).empty()) continue;
    json list = json::array();
    for (const auto& e : r.entries(c)) list.push_back(e.text);
    d[std::string(profiles::device_class_key(c))] = list;
  }
  for (const auto& [key, list] : r.inert) {
    json l = json::array();
    for (const auto& e : list) l.push_back(e.text);
    d[key] = l;
  }
  if (!r.pins.empty()) {
    json pins = json::array();
    for (const auto& p : r.pins) pins.push_back(p.pin);
    d["pins"] = pins;
  }
  if (r.total_pins) d["total_pins"] = *r.total_pins;
  if (!r.usb_ports.empty()) {
    json ports = json::array();
    for (const auto& u : r.usb_ports)
      ports.push_back({{"bus", opt(u.bus)}, {"port", u.port}, {"usb", u.usb}, {"name", u.name}, {"reserved", u.reserved}});
    d["usb_ports"] = ports;
  }
  return d;
}

json set_json(const profiles::ProfileSet& s) {
  json kern = {{"config_version", opt(s.kern.config_version)},
               {"log_level", s.kern.log_level.empty() ? json(nullptr) : json(s.kern.log_level)},
               {"crash_recovery", opt(s.kern.crash_recovery)},
               {"warn_uncapped", s.kern.warn_uncapped.value_or(true)}};
  json backends = json::array(), profiles = json::array();
  for (const auto& b : s.cpu) backends.push_back({{"kind", "cpu"}, {"id", b.id}, {"cores", opt(b.cores)}});
  for (const auto& b : s.disk)
    backends.push_back({{"kind", "disk"}, {"id", b.id}, {"path", b.path}, {"default", b.is_default},
                        {"size", opt(b.size)}, {"iops", opt(b.iops)}, {"bandwidth", opt(b.bandwidth)},
                        {"device", b.device}, {"model", b.model}});
  for (const auto& b : s.gpio) {
    json j = {{"kind", "gpio"}, {"id", b.id}};
    j.update(entries_json(b));
    backends.push_back(j);
  }
  for (const auto& p : s.vcpu)
    profiles.push_back({{"kind", "vcpu"}, {"name", p.name}, {"token", "vcpu:" + p.name}, {"backend", p.backend},
                        {"extends", p.extends.empty() ? json(nullptr) : json(p.extends)}, {"inherited", p.inherited},
                        {"cpus", opt(p.cpus)}, {"cpuset", p.cpuset.empty() ? json(nullptr) : json(p.cpuset)},
                        {"numa", opt(p.numa)}, {"memory", opt(p.memory)}, {"nice", opt(p.nice)}});
  for (const auto& p : s.vdisk) {
    profiles.push_back({{"kind", "vdisk"}, {"name", p.name}, {"token", "vdisk:" + p.name},
                        {"backend", s.backend_of(p)}, {"size", p.size}, {"iops", opt(p.iops)},
                        {"bandwidth", opt(p.bandwidth)}, {"persistent", p.persistent.value_or(false)},
                        {"mount", "/vdisk/" + p.name}});
  }
  for (const auto& p : s.vgpio) {
    json j = {{"kind", "vgpio"}, {"name", p.name}, {"token", "vgpio:" + p.name}, {"backend", p.backend}};
    j.update(entries_json(p));
    profiles.push_back(j);
  }
  return {{"kern", kern}, {"backends", backends}, {"profiles", profiles}};
}

Status print_json(const json& doc) {
  // A path given on the command line need not be UTF-8: replaced, never thrown on.
  return sys::write_all(STDOUT_FILENO, doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n", "stdout");
}

// --json for a file that cannot be read at all: the same object, one error, no profiles.
Result<int> unreadable_json(const std::string& path, const Error& e) {
  json diag = {{"severity", "error"}, {"file", path}, {"line", 0}, {"column", 0},
               {"where", log::sanitize(path)}, {"message", e.what()}};
  json doc = {{"file", path}, {"ok", false}, {"errors", 1}, {"kern", nullptr}, {"backends", json::array()},
              {"profiles", json::array()}, {"diagnostics", json::array({diag})}, {"notes", json::array()}};
  KERN_TRY(print_json(doc));
  return kExitVerbFailed;
}

Result<int> run_validate() {
  std::string path = g_path.empty() ? paths::config_file() : g_path;
  auto loaded = profiles::check_profiles_file(path, profiles::inspect_device);
  if (!loaded && g_json) return unreadable_json(path, loaded.error());
  KERN_TRY_ASSIGN(profiles::LoadOutcome o, std::move(loaded));
  std::string shown = log::sanitize(path);
  if (!o.found) {
    Error missing(ErrorKind::config, ENOENT, "configuration \"" + shown + "\"");
    if (g_json) return unreadable_json(path, missing);
    return fail(std::move(missing));
  }
  size_t errors = o.error_count();
  if (g_json) {
    json diags = json::array(), notes = json::array();
    for (const auto& d : o.problems) {
      json j = {{"severity", d.is_error() ? "error" : d.warning ? "warning" : "note"},
                {"file", path}, {"line", d.at.line}, {"column", d.at.column},
                {"where", o.set.where(d.at)}, {"message", d.message}};
      (d.note ? notes : diags).push_back(j);
    }
    json doc = set_json(o.set);
    doc["file"] = path;
    doc["ok"] = errors == 0;
    doc["errors"] = errors;
    doc["diagnostics"] = diags;
    doc["notes"] = notes;
    KERN_TRY(print_json(doc));
    return errors > 0 ? kExitVerbFailed : 0;
  }
  for (const auto& d : o.problems) {
    std::string line = o.set.where(d.at) + ": " + d.message;
    if (d.note) log::note(line);
    else if (d.warning) log::warning(line);
    else log::error(line);
  }
  if (errors > 0) {
    log::error(shown + ": " + std::to_string(errors) + (errors == 1 ? " error" : " errors"));
    return kExitVerbFailed;
  }
  if (!g_quiet) {
    std::string summary = shown + ": ok (" + std::to_string(o.set.vcpu.size()) + " vcpu, " +
                          std::to_string(o.set.vdisk.size()) + " vdisk, " + std::to_string(o.set.vgpio.size()) +
                          " vgpio)\n";
    KERN_TRY(sys::write_all(STDOUT_FILENO, summary, "stdout"));
  }
  return 0;
}

void register_validate(CLI::App& app, VerbContext& ctx) {
  CLI::App* c = app.add_subcommand("validate", "check a kern.toml (default: the one kern would read)");
  c->add_option("path", g_path, "the file to check");
  c->add_flag("-q,--quiet", g_quiet, "print nothing when the file is valid");
  c->add_flag("--json", g_json, "one JSON object on stdout: profiles, errors, warnings and notes");
  c->callback([&ctx] { ctx.action = run_validate; });
}

const VerbRegistration reg{71, "validate", &register_validate};

}  // namespace validate_verb
}  // namespace
}  // namespace kern::cli
