// Cross-checks of a ProfileSet; see validation.h.
#include "profiles/validation.h"

#include <algorithm>
#include <set>

#include "profiles/profile_token.h"
#include "profiles/units.h"
#include "runtime/sys/log.h"

namespace kern::profiles {
namespace {

class Checker {
 public:
  explicit Checker(std::vector<Diagnostic>& out) : out_(out) {}
  void error(Location at, std::string msg) { out_.push_back({at, std::move(msg), false}); }
  void warning(Location at, std::string msg) { out_.push_back({at, std::move(msg), true}); }

  // "cpu:NAME" ids.
  void id(std::string_view kind, const std::string& id, const KeyLocations& at, std::set<std::string>& seen) {
    if (id.empty()) return;  // missing: already reported by the parser
    std::string prefix = std::string(kind) + ":";
    std::string shown = "\"" + log::sanitize(id) + "\"";
    if (id.rfind(prefix, 0) != 0 || !valid_profile_name(std::string_view(id).substr(prefix.size())))
      error(at.of("id"), "[[" + std::string(kind) + "]] id " + shown + ": expected " + prefix +
                              "NAME with NAME of [A-Za-z0-9._-], starting with a letter or digit");
    else if (!seen.insert(id).second)
      error(at.of("id"), "[[" + std::string(kind) + "]] id " + shown + " is defined twice");
  }

  void name(std::string_view kind, const std::string& name, const KeyLocations& at, std::set<std::string>& seen) {
    if (name.empty() && at.keys.count("name") == 0) return;  // missing: reported by the parser
    std::string shown = "\"" + log::sanitize(name) + "\"";
    if (!valid_profile_name(name))
      error(at.of("name"), "[[" + std::string(kind) + "]] name " + shown +
                               ": expected 1-64 of [A-Za-z0-9._-], starting with a letter or digit");
    else if (!seen.insert(name).second)
      error(at.of("name"), "[[" + std::string(kind) + "]] name " + shown + " is defined twice (token " +
                               std::string(kind) + ":" + name + " would be ambiguous)");
  }

 private:
  std::vector<Diagnostic>& out_;
};

std::string q(const std::string& s) { return "\"" + log::sanitize(s) + "\""; }

}  // namespace

std::vector<Diagnostic> validate_profiles(const ProfileSet& set, const DeviceInspector& inspect) {
  std::vector<Diagnostic> out;
  Checker c(out);
  std::set<std::string> cpu_ids, disk_ids, gpio_ids, vcpu_names, vdisk_names, vgpio_names;

  for (const CpuBackend& b : set.cpu) c.id("cpu", b.id, b.at, cpu_ids);
  for (const DiskBackend& b : set.disk) {
    c.id("disk", b.id, b.at, disk_ids);
    if (b.at.keys.count("path") == 0) continue;
    bool bad_comp = b.path.find("/../") != std::string::npos || b.path.ends_with("/..") ||
                    b.path.find("/./") != std::string::npos || b.path.ends_with("/.");
    if (b.path.empty() || b.path[0] != '/' || bad_comp)
      c.error(b.at.of("path"), "[[disk]] path " + q(b.path) + ": expected an absolute path without . or .. components");
    else if (b.path == "/")
      c.error(b.at.of("path"), "[[disk]] path \"/\": name a directory for kern's scratch disks, not the root");
  }
  for (const GpioBackend& b : set.gpio) c.id("gpio", b.id, b.at, gpio_ids);

  for (const VcpuProfile& p : set.vcpu) {
    c.name("vcpu", p.name, p.at, vcpu_names);
    const CpuBackend* backend = nullptr;
    if (!p.backend.empty() && p.backend != "host") {
      backend = set.find_cpu(p.backend);
      if (!backend)
        c.error(p.at.of("backend"), "[[vcpu]] backend " + q(p.backend) + " is not a [[cpu]] id or \"host\"");
    }
    if (backend && backend->cores && p.cpus && *p.cpus > *backend->cores + 1e-9)
      c.error(p.at.of("cpus"), "[[vcpu]] cpus " + format_cpus(*p.cpus) + " is more than the " +
                                   format_cpus(*backend->cores) + " cores of " + q(backend->id));
    if (!p.cpuset.empty()) {
      auto list = parse_cpu_list(p.cpuset);
      if (!list) c.error(p.at.of("cpuset"), "[[vcpu]] cpuset: " + list.error().message());
      if (p.numa)
        c.error(p.at.of("numa"), "[[vcpu]] cpuset and numa are exclusive: set one of them");
    }
  }

  for (const VdiskProfile& p : set.vdisk) {
    c.name("vdisk", p.name, p.at, vdisk_names);
    if (!p.backend.empty() && p.backend != "ram" && !set.find_disk(p.backend))
      c.error(p.at.of("backend"), "[[vdisk]] backend " + q(p.backend) + " is not \"ram\" or a [[disk]] id");
  }

  for (const VgpioProfile& p : set.vgpio) {
    c.name("vgpio", p.name, p.at, vgpio_names);
    if (!p.backend.empty() && p.backend != "host" && !set.find_gpio(p.backend))
      c.error(p.at.of("backend"), "[[vgpio]] backend " + q(p.backend) + " is not a [[gpio]] id or \"host\"");
    size_t total = 0;
    std::set<std::string> paths;
    for (DeviceClass dc : {DeviceClass::chip, DeviceClass::i2c, DeviceClass::spi, DeviceClass::uart, DeviceClass::extra}) {
      for (const DeviceEntry& e : p.entries(dc)) {
        ++total;
        std::string key = "[[vgpio]] " + std::string(device_class_key(dc)) + ": ";
        auto path = resolve_device_entry(dc, e.text);
        if (!path) {
          c.error(e.at, key + path.error().message());
          continue;
        }
        if (!paths.insert(*path).second) {
          c.error(e.at, key + q(*path) + " is listed twice in this profile");
          continue;
        }
        DeviceIdentity id = inspect(*path);
        if (!id.exists) {
          c.warning(e.at, key + q(*path) + " does not exist on this host: it will be skipped");
          continue;
        }
        if (auto why = refusal_reason(id))
          c.error(e.at, key + q(*path) + " (" + describe_identity(id) + ") is refused: " + *why);
      }
    }
    if (total == 0 && !p.name.empty())
      c.error(p.at.table, "[[vgpio]] " + q(p.name) + " lists no device (chips, i2c, spi, uart or extra)");
  }

  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return a.at.line != b.at.line ? a.at.line < b.at.line : a.at.column < b.at.column;
  });
  return out;
}

}  // namespace kern::profiles
