// kern.toml as data (kern.toml(5)): backends ([[cpu]], [[disk]], [[gpio]]) and the profiles
// that profile tokens name ([[vcpu]], [[vdisk]], [[vgpio]]). Every entry remembers where each of
// its keys was written so that validation and application can name "file:line:column".
// Data only; the parser (toml_profiles.cc) fills it, validation.cc checks it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kern::profiles {

// 1-based position in the file; 0 = unknown.
struct Location {
  int line = 0;
  int column = 0;
};

// Where each key of one table was written, plus the table header itself ("" key).
struct KeyLocations {
  Location table;
  std::map<std::string, Location, std::less<>> keys;
  Location of(std::string_view key) const;  // the key's location, else the table's
};

struct CpuBackend {  // [[cpu]]
  std::string id;    // "cpu:NAME"
  std::optional<double> cores;
  KeyLocations at;
};

// [kern]: settings of kern itself rather than of a profile.
struct KernSettings {
  std::optional<int64_t> config_version;  // the schema version the file was written for (1)
  std::string log_level;                  // "" = not set; accepted, no effect (kern.toml(5))
  std::optional<bool> crash_recovery;     // accepted; kern always reaps a killed box's leftovers
  std::optional<bool> warn_uncapped;      // false: no uncapped warning when only default caps apply
  KeyLocations at;
  bool present = false;
};

struct VcpuProfile {  // [[vcpu]] -> token vcpu:NAME
  std::string name;
  std::string backend;  // a [[cpu]] id or "host"
  std::string extends;  // "" = none; else a [[vcpu]] name whose fields (but backend) are inherited
  std::vector<std::string> inherited;  // the keys taken from `extends` (resolve_extends), in order
  std::optional<double> cpus;
  std::string cpuset;             // "" = not set; exclusive with numa
  std::optional<unsigned> numa;   // NUMA node: cpuset.cpus from the node, cpuset.mems = node
  std::optional<uint64_t> memory;  // bytes
  std::optional<int> nice;
  KeyLocations at;
};

struct DiskBackend {  // [[disk]]
  std::string id;     // "disk:NAME" (key "id", or its alias "name")
  std::string path;   // absolute directory on the host
  bool is_default = false;          // `default`: the backend of a [[vdisk]] that names none
  std::optional<uint64_t> size;     // bytes: the budget [[vdisk]] sizes on it must fit
  std::optional<uint64_t> iops;     // operations/s: the budget a [[vdisk]]'s iops must fit
  std::optional<uint64_t> bandwidth;  // bytes/s: the budget a [[vdisk]]'s bandwidth must fit
  std::string device;               // "" = the disk under `path`; else a whole-disk /dev node
  std::string model;                // descriptive only
  KeyLocations at;
};

struct VdiskProfile {  // [[vdisk]] -> token vdisk:NAME, mounted at /vdisk/NAME
  std::string name;
  std::string backend;  // "ram" or a [[disk]] id ("" = the [[disk]] marked default)
  uint64_t size = 0;    // bytes
  std::optional<uint64_t> iops;       // io.max riops and wiops of the disk's device
  std::optional<uint64_t> bandwidth;  // io.max rbps and wbps of the disk's device
  std::optional<bool> persistent;     // true: the same directory for every box of this profile
  KeyLocations at;
};

// One device entry as written ("1", "i2c-1", "/dev/i2c-1", ...).
struct DeviceEntry {
  std::string text;
  Location at;
};

// Device classes whose entries name /dev nodes (device_policy.h resolves the short forms).
enum class DeviceClass { chip, i2c, spi, uart, adc, camera, audio, midi, usb, input, display, bluetooth, extra };
inline constexpr DeviceClass kDeviceClasses[] = {
    DeviceClass::chip,  DeviceClass::i2c,   DeviceClass::spi,     DeviceClass::uart,      DeviceClass::adc,
    DeviceClass::camera, DeviceClass::audio, DeviceClass::midi,   DeviceClass::usb,       DeviceClass::input,
    DeviceClass::display, DeviceClass::bluetooth, DeviceClass::extra};
std::string_view device_class_key(DeviceClass c);  // "chips", "i2c", ..., "extra": the TOML key

// Keys whose entries name kernel objects that are not /dev nodes (sysfs classes, network
// interfaces): accepted and checked for type, granted nothing (kern.toml(5) says why).
inline constexpr std::string_view kInertGpioKeys[] = {"pwm", "onewire", "can", "leds", "net"};

struct PinEntry {
  int64_t pin = 0;
  Location at;
};

struct UsbPort {  // usb_ports = [{ bus = 1, port = "1.2", usb = "3.0", name = "cam", reserved = true }]
  std::optional<int64_t> bus;
  std::string port;
  std::string usb;   // the port's USB version, descriptive
  std::string name;
  bool reserved = false;
  KeyLocations at;
};

// What a GPIO header and its buses hold: on [[gpio]] the board's inventory, on [[vgpio]] the
// part of it a box gets.
struct GpioResources {
  std::vector<DeviceEntry> chips, i2c, spi, uart, adc, camera, audio, midi, usb, input, display, bluetooth, extra;
  std::map<std::string, std::vector<DeviceEntry>, std::less<>> inert;  // kInertGpioKeys
  std::vector<PinEntry> pins;
  std::optional<int64_t> total_pins;
  std::vector<UsbPort> usb_ports;
  const std::vector<DeviceEntry>& entries(DeviceClass c) const;
  std::vector<DeviceEntry>& entries(DeviceClass c);
};

struct GpioBackend : GpioResources {  // [[gpio]]
  std::string id;     // "gpio:NAME"
  KeyLocations at;
};

struct VgpioProfile : GpioResources {  // [[vgpio]] -> token vgpio:NAME
  std::string name;
  std::string backend;  // a [[gpio]] id or "host"
  KeyLocations at;
};

struct ProfileSet {
  std::string file;  // the path it was read from; "" when no file was read
  KernSettings kern;
  std::vector<CpuBackend> cpu;
  std::vector<VcpuProfile> vcpu;
  std::vector<DiskBackend> disk;
  std::vector<VdiskProfile> vdisk;
  std::vector<GpioBackend> gpio;
  std::vector<VgpioProfile> vgpio;

  const CpuBackend* find_cpu(std::string_view id) const;
  const VcpuProfile* find_vcpu(std::string_view name) const;
  const DiskBackend* find_disk(std::string_view id) const;
  const DiskBackend* default_disk() const;  // the first [[disk]] with default = true
  // A vdisk's backend as written, or the default [[disk]]'s id when it names none ("" if none).
  std::string backend_of(const VdiskProfile& p) const;
  const VdiskProfile* find_vdisk(std::string_view name) const;
  const GpioBackend* find_gpio(std::string_view id) const;
  const VgpioProfile* find_vgpio(std::string_view name) const;

  // "FILE:LINE:COLUMN" (or "FILE" when the location is unknown); the file name sanitized.
  std::string where(Location loc) const;
};

// One problem found in a file, with its location. Errors make the file unusable; warnings
// (a listed device node missing on this host) and notes (a key that has no effect here) do not.
struct Diagnostic {
  Location at;
  std::string message;  // already sanitized: safe to print
  bool warning = false;
  bool note = false;
  bool loud = false;  // a note printed wherever the file is read, not only by `kern validate`
  bool is_error() const { return !warning && !note; }
};

}  // namespace kern::profiles
