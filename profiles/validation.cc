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
  void note(Location at, std::string msg) { out_.push_back({at, std::move(msg), false, true}); }

  // "cpu:NAME" ids.
  void id(std::string_view kind, const std::string& id, const KeyLocations& at, std::set<std::string>& seen) {
    if (id.empty()) return;  // missing: already reported by the parser
    std::string prefix = std::string(kind) + ":";
    std::string shown = log::quoted(id);
    if (id.rfind(prefix, 0) != 0 || !valid_profile_name(std::string_view(id).substr(prefix.size())))
      error(at.of("id"), "[[" + std::string(kind) + "]] id " + shown + ": expected " + prefix +
                              "NAME with NAME of [A-Za-z0-9._-], starting with a letter or digit");
    else if (!seen.insert(id).second)
      error(at.of("id"), "[[" + std::string(kind) + "]] id " + shown + " is defined twice");
  }

  void name(std::string_view kind, const std::string& name, const KeyLocations& at, std::set<std::string>& seen) {
    if (name.empty() && at.keys.count("name") == 0) return;  // missing: reported by the parser
    std::string shown = log::quoted(name);
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

std::string port_key(const UsbPort& u) { return std::to_string(u.bus.value_or(-1)) + "-" + u.port; }

// The keys [[gpio]] and [[vgpio]] share: entries resolve, pins fit total_pins, and a [[vgpio]]
// takes only what its [[gpio]] backend lists (for each class the backend lists at all) and no
// USB port the backend marks reserved.
void check_gpio_resources(Checker& c, std::string_view kind, const GpioResources& r, const GpioBackend* backend) {
  std::string open = "[[" + std::string(kind) + "]] ";
  for (DeviceClass dc : kDeviceClasses) {
    const auto& mine = r.entries(dc);
    std::set<std::string> inventory;
    if (backend) {
      for (const DeviceEntry& e : backend->entries(dc)) {
        if (names_no_device_node(dc, e.text)) inventory.insert(e.text);
        else if (auto p = resolve_device_entry(dc, e.text)) inventory.insert(*p);
      }
    }
    for (const DeviceEntry& e : mine) {
      std::string key = open + std::string(device_class_key(dc)) + ": ";
      std::string resolved = e.text;
      if (!names_no_device_node(dc, e.text)) {
        auto p = resolve_device_entry(dc, e.text);
        if (!p) {
          c.error(e.at, key + p.error().message());
          continue;
        }
        resolved = *p;
      }
      if (!inventory.empty() && inventory.count(resolved) == 0)
        c.error(e.at, key + log::quoted(resolved) + " is not in the " + std::string(device_class_key(dc)) + " of " + log::quoted(backend->id) +
                          " (" + "its [[gpio]] lists what a [[vgpio]] may take)");
    }
  }
  std::optional<int64_t> total = r.total_pins;
  if (!total && backend) total = backend->total_pins;
  std::set<int64_t> pins, allowed;
  if (backend)
    for (const PinEntry& e : backend->pins) allowed.insert(e.pin);
  for (const PinEntry& e : r.pins) {
    std::string key = open + "pins: ";
    if (total && e.pin >= *total)
      c.error(e.at, key + "pin " + std::to_string(e.pin) + " is out of range: total_pins is " + std::to_string(*total) +
                        " (pins 0 to " + std::to_string(*total - 1) + ")");
    else if (!pins.insert(e.pin).second)
      c.error(e.at, key + "pin " + std::to_string(e.pin) + " is listed twice");
    else if (!allowed.empty() && allowed.count(e.pin) == 0)
      c.error(e.at, key + "pin " + std::to_string(e.pin) + " is not in the pins of " + log::quoted(backend->id));
  }
  std::set<std::string> ports;
  for (const UsbPort& u : r.usb_ports) {
    std::string shown = "bus " + (u.bus ? std::to_string(*u.bus) : std::string("?")) + " port " + log::quoted(u.port);
    if (!ports.insert(port_key(u)).second) {
      c.error(u.at.table, open + "usb_ports: " + shown + " is listed twice");
      continue;
    }
    if (!backend) continue;
    for (const UsbPort& b : backend->usb_ports)
      if (b.reserved && port_key(b) == port_key(u))
        c.error(u.at.table, open + "usb_ports: " + shown + " is reserved by " + log::quoted(backend->id) +
                                (b.name.empty() ? std::string() : " (" + log::quoted(b.name) + ")"));
  }
}

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
      c.error(b.at.of("path"), "[[disk]] path " + log::quoted(b.path) + ": expected an absolute path without . or .. components");
    else if (b.path == "/")
      c.error(b.at.of("path"), "[[disk]] path \"/\": name a directory for kern's scratch disks, not the root");
  }
  const DiskBackend* first_default = nullptr;
  for (const DiskBackend& b : set.disk) {
    if (!b.is_default) continue;
    if (first_default)
      c.error(b.at.of("default"), "[[disk]] " + log::quoted(b.id) + ": default = true is already set by " +
                                      log::quoted(first_default->id) + " (" + set.where(first_default->at.of("default")) + ")");
    else
      first_default = &b;
  }
  for (const DiskBackend& b : set.disk) {
    if (b.device.empty()) continue;
    auto path = resolve_device_entry(DeviceClass::extra, b.device);
    if (!path) {
      c.error(b.at.of("device"), "[[disk]] device: " + path.error().message());
      continue;
    }
    DeviceIdentity id = inspect(*path);
    if (!id.exists)
      c.warning(b.at.of("device"), "[[disk]] device " + log::quoted(*path) + " does not exist on this host: "
                                   "io caps of vdisks on " + log::quoted(b.id) + " will not be applied");
    else if (!id.is_block)
      c.error(b.at.of("device"), "[[disk]] device " + log::quoted(*path) + " (" + describe_identity(id) + ") is not a block device");
  }
  for (const GpioBackend& b : set.gpio) {
    c.id("gpio", b.id, b.at, gpio_ids);
    check_gpio_resources(c, "gpio", b, nullptr);
  }

  for (const VcpuProfile& p : set.vcpu) {
    c.name("vcpu", p.name, p.at, vcpu_names);
    const CpuBackend* backend = nullptr;
    if (!p.backend.empty() && p.backend != "host") {
      backend = set.find_cpu(p.backend);
      if (!backend)
        c.error(p.at.of("backend"), "[[vcpu]] backend " + log::quoted(p.backend) + " is not a [[cpu]] id or \"host\"");
    }
    if (backend && backend->cores && p.cpus && *p.cpus > *backend->cores + 1e-9)
      c.error(p.at.of("cpus"), "[[vcpu]] cpus " + format_cpus(*p.cpus) + " is more than the " +
                                   format_cpus(*backend->cores) + " cores of " + log::quoted(backend->id));
    if (!p.cpuset.empty()) {
      auto list = parse_cpu_list(p.cpuset);
      if (!list) c.error(p.at.of("cpuset"), "[[vcpu]] cpuset: " + list.error().message());
      if (p.numa)
        c.error(p.at.of("numa"), "[[vcpu]] cpuset and numa are exclusive: set one of them");
    }
  }

  for (const VdiskProfile& p : set.vdisk) {
    c.name("vdisk", p.name, p.at, vdisk_names);
    const DiskBackend* disk = nullptr;
    if (p.backend.empty()) {
      disk = set.default_disk();
      if (!disk)
        c.error(p.at.table, "[[vdisk]]: missing required key \"backend\" (\"ram\" or a [[disk]] id; it may "
                            "only be left out when a [[disk]] has default = true)");
    } else if (p.backend != "ram") {
      disk = set.find_disk(p.backend);
      if (!disk)
        c.error(p.at.of("backend"), "[[vdisk]] backend " + log::quoted(p.backend) + " is not \"ram\" or a [[disk]] id");
    }
    if (p.backend == "ram" && p.persistent.value_or(false))
      c.error(p.at.of("persistent"), "[[vdisk]] persistent = true needs a [[disk]] backend: a \"ram\" tmpfs "
                                     "ends with the box");
    if (!disk) continue;
    std::string of = " of " + log::quoted(disk->id) + " (" + set.where(disk->at.of("size")) + ")";
    if (disk->size && p.size > *disk->size)
      c.error(p.at.of("size"), "[[vdisk]] size " + format_size(p.size) + " is more than the size " +
                                   format_size(*disk->size) + of);
    if (disk->iops && p.iops && *p.iops > *disk->iops)
      c.error(p.at.of("iops"), "[[vdisk]] iops " + std::to_string(*p.iops) + " is more than the iops " +
                                   std::to_string(*disk->iops) + " of " + log::quoted(disk->id));
    if (disk->bandwidth && p.bandwidth && *p.bandwidth > *disk->bandwidth)
      c.error(p.at.of("bandwidth"), "[[vdisk]] bandwidth " + format_size(*p.bandwidth) + "/s is more than the bandwidth " +
                                        format_size(*disk->bandwidth) + "/s of " + log::quoted(disk->id));
  }

  for (const VgpioProfile& p : set.vgpio) {
    c.name("vgpio", p.name, p.at, vgpio_names);
    const GpioBackend* backend = nullptr;
    if (!p.backend.empty() && p.backend != "host") {
      backend = set.find_gpio(p.backend);
      if (!backend)
        c.error(p.at.of("backend"), "[[vgpio]] backend " + log::quoted(p.backend) + " is not a [[gpio]] id or \"host\"");
    }
    check_gpio_resources(c, "vgpio", p, backend);
    std::set<std::string> paths;
    for (DeviceClass dc : kDeviceClasses) {
      for (const DeviceEntry& e : p.entries(dc)) {
        std::string key = "[[vgpio]] " + std::string(device_class_key(dc)) + ": ";
        if (names_no_device_node(dc, e.text)) continue;  // noted (key_notes.h)
        auto path = resolve_device_entry(dc, e.text);
        if (!path) continue;  // reported by check_gpio_resources
        if (!paths.insert(*path).second) {
          c.error(e.at, key + log::quoted(*path) + " is listed twice in this profile");
          continue;
        }
        DeviceIdentity id = inspect(*path);
        if (!id.exists) {
          c.warning(e.at, key + log::quoted(*path) + " does not exist on this host: it will be skipped");
          continue;
        }
        if (auto why = refusal_reason(id))
          c.error(e.at, key + log::quoted(*path) + " (" + describe_identity(id) + ") is refused: " + *why);
      }
    }
    if (!p.name.empty() && p.at.keys.size() <= (p.at.keys.count("backend") ? 2u : 1u))
      c.error(p.at.table, "[[vgpio]] " + log::quoted(p.name) + " lists no device (chips, i2c, spi, uart, extra or another key of kern.toml(5))");
  }

  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return a.at.line != b.at.line ? a.at.line < b.at.line : a.at.column < b.at.column;
  });
  return out;
}

}  // namespace kern::profiles
