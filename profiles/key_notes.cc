// Notes for keys without an effect here; see key_notes.h.
#include "profiles/key_notes.h"

#include "profiles/device_policy.h"

namespace kern::profiles {
namespace {

class Notes {
 public:
  explicit Notes(std::vector<Diagnostic>& out) : out_(out) {}
  void add(const KeyLocations& at, std::string_view table, std::string_view key, const std::string& why) {
    if (at.keys.count(key) == 0) return;
    out_.push_back({at.of(key), std::string(table) + " " + std::string(key) + ": no effect here: " + why, false, true});
  }

 private:
  std::vector<Diagnostic>& out_;
};

const char* why_inert(std::string_view key) {
  if (key == "pwm") return "PWM outputs are driven through /sys/class/pwm, and a box gets no writable /sys; kern grants /dev nodes only";
  if (key == "onewire") return "1-Wire devices are read through /sys/bus/w1, and a box gets no writable /sys; kern grants /dev nodes only";
  if (key == "leds") return "LEDs are driven through /sys/class/leds, and a box gets no writable /sys; kern grants /dev nodes only";
  if (key == "can") return "CAN buses are network interfaces, and a box has a network namespace of its own (--net host shares the host's)";
  return "network interfaces are not device nodes, and a box has a network namespace of its own (--net host shares the host's)";
}

void gpio_notes(Notes& n, const KeyLocations& at, std::string_view table, const GpioResources& r, bool profile,
                std::vector<Diagnostic>& out) {
  n.add(at, table, "pins",
        profile ? "kern cannot hand out single GPIO lines (a gpiochip node gives every line of its chip: list it in "
                  "chips); the pins are checked against total_pins and the backend's pins"
                : "kern cannot hand out single GPIO lines; the pins bound what a [[vgpio]] on this backend may list");
  for (std::string_view key : kInertGpioKeys) n.add(at, table, key, why_inert(key));
  n.add(at, table, "usb_ports",
        "kern grants USB devices by their node (usb = [\"001/004\"]), not by physical port; a [[vgpio]] port that "
        "its [[gpio]] marks reserved is refused");
  for (const DeviceEntry& e : r.bluetooth)
    if (names_no_device_node(DeviceClass::bluetooth, e.text))
      out.push_back({e.at,
                     std::string(table) + " bluetooth: \"" + e.text.substr(0, 16) +
                         "\": no effect here: Bluetooth adapters are reached through sockets, not a /dev node, "
                         "and a box has a network namespace of its own",
                     false, true});
  if (!profile) {
    bool any = false;
    for (DeviceClass dc : kDeviceClasses) any = any || !r.entries(dc).empty();
    if (any)
      out.push_back({at.table, std::string(table) +
                                   ": the device lists of a backend grant nothing themselves: they bound what a "
                                   "[[vgpio]] on it may list",
                     false, true});
  }
}

}  // namespace

std::vector<Diagnostic> no_effect_notes(const ProfileSet& set) {
  std::vector<Diagnostic> out;
  Notes n(out);
  const KernSettings& k = set.kern;
  n.add(k.at, "[kern]", "log_level",
        "kern prints errors, warnings and notes only, on stderr; KERN_QUIET (or -q) silences the warnings and notes");
  n.add(k.at, "[kern]", "crash_recovery",
        "kern always removes what a killed kern left behind (processes, cgroups, mounts, scratch) at the next start; "
        "it cannot be turned off");
  for (const VcpuProfile& p : set.vcpu)
    if (p.nice && *p.nice < 0 && p.at.keys.count("nice"))
      out.push_back({p.at.of("nice"),
                     "[[vcpu]] nice " + std::to_string(*p.nice) +
                         ": partly in effect: lowering a nice value needs CAP_SYS_NICE on the host, which a box never "
                         "has; the box gets it as cpu.weight.nice where it has a cgroup, its processes keep the caller's "
                         "nice",
                     false, true});
  for (const CpuBackend& c : set.cpu) {
    n.add(c.at, "[[cpu]]", "memory", "a [[cpu]] budget bounds its profiles' cpus (by cores); each [[vcpu]] sets its own memory");
    n.add(c.at, "[[cpu]]", "cpuset", "a [[cpu]] budget bounds its profiles' cpus (by cores); each [[vcpu]] sets its own cpuset");
    n.add(c.at, "[[cpu]]", "numa", "a [[cpu]] budget bounds its profiles' cpus (by cores); each [[vcpu]] sets its own numa");
  }
  for (const DiskBackend& d : set.disk) n.add(d.at, "[[disk]]", "model", "a description; kern reads nothing from it");
  for (const VdiskProfile& p : set.vdisk) {
    if (p.backend != "ram") continue;
    n.add(p.at, "[[vdisk]]", "iops", "a \"ram\" vdisk is a tmpfs, not a block device: io.max has nothing to cap");
    n.add(p.at, "[[vdisk]]", "bandwidth", "a \"ram\" vdisk is a tmpfs, not a block device: io.max has nothing to cap");
    if (p.persistent && !*p.persistent)
      n.add(p.at, "[[vdisk]]", "persistent", "a \"ram\" vdisk always ends with the box");
  }
  for (const GpioBackend& b : set.gpio) gpio_notes(n, b.at, "[[gpio]]", b, false, out);
  for (const VgpioProfile& p : set.vgpio) gpio_notes(n, p.at, "[[vgpio]]", p, true, out);
  return out;
}

}  // namespace kern::profiles
