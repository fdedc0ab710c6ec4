// Lookups on the kern.toml data; see profile_types.h.
#include "profiles/profile_types.h"

#include "runtime/sys/log.h"

namespace kern::profiles {

Location KeyLocations::of(std::string_view key) const {
  auto it = keys.find(key);
  return it != keys.end() ? it->second : table;
}

std::string_view device_class_key(DeviceClass c) {
  switch (c) {
    case DeviceClass::chip: return "chips";
    case DeviceClass::i2c: return "i2c";
    case DeviceClass::spi: return "spi";
    case DeviceClass::uart: return "uart";
    case DeviceClass::adc: return "adc";
    case DeviceClass::camera: return "camera";
    case DeviceClass::audio: return "audio";
    case DeviceClass::midi: return "midi";
    case DeviceClass::usb: return "usb";
    case DeviceClass::input: return "input";
    case DeviceClass::display: return "display";
    case DeviceClass::bluetooth: return "bluetooth";
    case DeviceClass::extra: return "extra";
  }
  return "extra";
}

std::vector<DeviceEntry>& GpioResources::entries(DeviceClass c) {
  switch (c) {
    case DeviceClass::chip: return chips;
    case DeviceClass::i2c: return i2c;
    case DeviceClass::spi: return spi;
    case DeviceClass::uart: return uart;
    case DeviceClass::adc: return adc;
    case DeviceClass::camera: return camera;
    case DeviceClass::audio: return audio;
    case DeviceClass::midi: return midi;
    case DeviceClass::usb: return usb;
    case DeviceClass::input: return input;
    case DeviceClass::display: return display;
    case DeviceClass::bluetooth: return bluetooth;
    case DeviceClass::extra: return extra;
  }
  return extra;
}

const std::vector<DeviceEntry>& GpioResources::entries(DeviceClass c) const {
  return const_cast<GpioResources*>(this)->entries(c);
}

namespace {
template <typename T>
const T* find_by(const std::vector<T>& v, std::string_view key, std::string T::*field) {
  for (const T& e : v)
    if (e.*field == key) return &e;
  return nullptr;
}
}  // namespace

const CpuBackend* ProfileSet::find_cpu(std::string_view id) const { return find_by(cpu, id, &CpuBackend::id); }
const VcpuProfile* ProfileSet::find_vcpu(std::string_view n) const { return find_by(vcpu, n, &VcpuProfile::name); }
const DiskBackend* ProfileSet::find_disk(std::string_view id) const { return find_by(disk, id, &DiskBackend::id); }
const VdiskProfile* ProfileSet::find_vdisk(std::string_view n) const { return find_by(vdisk, n, &VdiskProfile::name); }
const GpioBackend* ProfileSet::find_gpio(std::string_view id) const { return find_by(gpio, id, &GpioBackend::id); }
const VgpioProfile* ProfileSet::find_vgpio(std::string_view n) const { return find_by(vgpio, n, &VgpioProfile::name); }

const DiskBackend* ProfileSet::default_disk() const {
  for (const DiskBackend& d : disk)
    if (d.is_default) return &d;
  return nullptr;
}

std::string ProfileSet::backend_of(const VdiskProfile& p) const {
  if (!p.backend.empty()) return p.backend;
  const DiskBackend* d = default_disk();
  return d ? d->id : std::string();
}

std::string ProfileSet::where(Location loc) const {
  std::string out = log::sanitize(file.empty() ? std::string("kern.toml") : file);
  if (loc.line > 0) {
    out += ":" + std::to_string(loc.line);
    if (loc.column > 0) out += ":" + std::to_string(loc.column);
  }
  return out;
}

}  // namespace kern::profiles
