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

struct VcpuProfile {  // [[vcpu]] -> token vcpu:NAME
  std::string name;
  std::string backend;  // a [[cpu]] id or "host"
  std::optional<double> cpus;
  std::string cpuset;             // "" = not set; exclusive with numa
  std::optional<unsigned> numa;   // NUMA node: cpuset.cpus from the node, cpuset.mems = node
  std::optional<uint64_t> memory;  // bytes
  std::optional<int> nice;
  KeyLocations at;
};

struct DiskBackend {  // [[disk]]
  std::string id;     // "disk:NAME"
  std::string path;   // absolute directory on the host
  KeyLocations at;
};

struct VdiskProfile {  // [[vdisk]] -> token vdisk:NAME, mounted at /vdisk/NAME
  std::string name;
  std::string backend;  // "ram" or a [[disk]] id
  uint64_t size = 0;    // bytes
  KeyLocations at;
};

struct GpioBackend {  // [[gpio]]
  std::string id;     // "gpio:NAME"
  KeyLocations at;
};

// One device entry as written ("1", "i2c-1", "/dev/i2c-1", ...).
struct DeviceEntry {
  std::string text;
  Location at;
};

enum class DeviceClass { chip, i2c, spi, uart, extra };
std::string_view device_class_key(DeviceClass c);  // "chips", "i2c", "spi", "uart", "extra"

struct VgpioProfile {  // [[vgpio]] -> token vgpio:NAME
  std::string name;
  std::string backend;  // a [[gpio]] id or "host"
  std::vector<DeviceEntry> chips, i2c, spi, uart, extra;
  KeyLocations at;
  const std::vector<DeviceEntry>& entries(DeviceClass c) const;
};

struct ProfileSet {
  std::string file;  // the path it was read from; "" when no file was read
  std::vector<CpuBackend> cpu;
  std::vector<VcpuProfile> vcpu;
  std::vector<DiskBackend> disk;
  std::vector<VdiskProfile> vdisk;
  std::vector<GpioBackend> gpio;
  std::vector<VgpioProfile> vgpio;

  const CpuBackend* find_cpu(std::string_view id) const;
  const VcpuProfile* find_vcpu(std::string_view name) const;
  const DiskBackend* find_disk(std::string_view id) const;
  const VdiskProfile* find_vdisk(std::string_view name) const;
  const GpioBackend* find_gpio(std::string_view id) const;
  const VgpioProfile* find_vgpio(std::string_view name) const;

  // "FILE:LINE:COLUMN" (or "FILE" when the location is unknown); the file name sanitized.
  std::string where(Location loc) const;
};

// One problem found in a file, with its location. Errors make the file unusable; warnings
// (a listed device node missing on this host) do not.
struct Diagnostic {
  Location at;
  std::string message;  // already sanitized: safe to print
  bool warning = false;
};

}  // namespace kern::profiles
