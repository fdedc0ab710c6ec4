// Which host device nodes a vgpio profile may grant (kern.toml(5)), decided by device
// identity (character/block, major:minor, and the names the kernel itself gives that number),
// never by the path the file wrote: /dev/mem renamed or symlinked is still 1:1 and still refused.
// Also the resolution of the short forms of a vgpio entry ("1" -> /dev/i2c-1).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "profiles/profile_types.h"
#include "runtime/sys/error.h"

namespace kern::profiles {

// What the kernel says a path is.
struct DeviceIdentity {
  bool exists = false;
  int err = 0;  // errno of stat() when !exists
  bool is_char = false;
  bool is_block = false;
  unsigned major = 0;
  unsigned minor = 0;
  std::string driver;       // the major's name in /proc/devices ("misc", "gpiochip"), may be ""
  std::string kernel_name;  // DEVNAME from /sys/dev/char/M:m/uevent ("kvm", "vfio/vfio"), may be ""
};

// "/dev/gpiochip0", "gpiochip0", "0" (chips); "1", "i2c-1", "/dev/i2c-1" (i2c); "0.0",
// "spidev0.0", "/dev/spidev0.0" (spi); "ttyS1", "/dev/ttyS1" (uart); "/dev/..." (extra).
// The result is an absolute, normalised path under /dev (no "..", no "//", not /dev itself).
// The newer classes: "0", "iio:device0" (adc); "0", "video0", "media0" (camera); a name under
// /dev/snd (audio); "midiC1D0", "midi0" (midi); "1/4", "001/004" under /dev/bus/usb (usb); a
// name under /dev/input (input) or /dev/dri (display); "rfcomm0" (bluetooth).
Result<std::string> resolve_device_entry(DeviceClass c, std::string_view text);

// True for an entry that names a kernel object reached without a /dev node ("hci0": Bluetooth
// adapters are sockets): accepted, grants nothing, noted.
bool names_no_device_node(DeviceClass c, std::string_view text);

// Empty when the node may be granted; otherwise why not ("/dev/mem: host physical memory").
// Pure.
std::optional<std::string> refusal_reason(const DeviceIdentity& id);

// stat() of the path (symlinks followed: what the launcher will open) plus the kernel's names
// for the number. Reads /proc/devices and /sys; never fails: a missing node has exists=false.
DeviceIdentity inspect_device(const std::string& path);

// "char 1:1", "block 8:0".
std::string describe_identity(const DeviceIdentity& id);

}  // namespace kern::profiles
