// vgpio device refusal by identity and entry resolution; see device_policy.h.
#include "profiles/device_policy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <array>
#include <cerrno>
#include <sstream>

#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::profiles {
namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

Result<std::string> checked_dev_path(std::string_view text) {
  std::string shown = log::quoted(text);
  if (!starts_with(text, "/dev/") || text.size() == 5)
    return fail(ErrorKind::config, 0, "device path " + shown + " is not a node under /dev/");
  if (text.back() == '/') return fail(ErrorKind::config, 0, "device path " + shown + " ends with /");
  std::string_view rest = text.substr(5);
  size_t start = 0;
  while (start <= rest.size()) {
    size_t end = rest.find('/', start);
    if (end == std::string_view::npos) end = rest.size();
    std::string_view comp = rest.substr(start, end - start);
    if (comp.empty() || comp == "." || comp == "..")
      return fail(ErrorKind::config, 0, "device path " + shown + " has an empty, . or .. component");
    for (char c : comp)
      if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f)
        return fail(ErrorKind::config, 0, "device path " + shown + " contains a space or control character");
    start = end + 1;
  }
  return std::string(text);
}

// Names a simple node file name may take for the short forms: letters, digits, '-', '.', '_'.
bool simple_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '.' || c == '_'))
      return false;
  return s != "." && s != "..";
}

bool spi_pair(std::string_view s) {
  size_t dot = s.find('.');
  return dot != std::string_view::npos && all_digits(s.substr(0, dot)) && all_digits(s.substr(dot + 1));
}

// Misc (major 10) minors that are fixed by the kernel and give host control.
struct Fixed {
  unsigned minor;
  const char* what;
};
constexpr std::array<Fixed, 21> kMiscRefused{{
    {130, "watchdog (can reboot the host)"},
    {144, "nvram (host firmware settings)"},
    {184, "cpu/microcode (host CPU microcode)"},
    {196, "vfio (device passthrough)"},
    {223, "uinput (injects input events into the host)"},
    {224, "tpm (the host's TPM)"},
    {227, "mcelog (host machine checks)"},
    {228, "hpet (host timer registers)"},
    {229, "fuse (file systems served to the host)"},
    {231, "snapshot (the host's hibernation image)"},
    {232, "kvm (virtual machines)"},
    {234, "btrfs-control (host file system control)"},
    {235, "autofs (host automounter)"},
    {236, "mapper/control (device-mapper: host block devices)"},
    {237, "loop-control (creates host block devices)"},
    {238, "vhost-net (kernel virtio back ends)"},
    {239, "uhid (injects input events into the host)"},
    {241, "vhost-vsock (host vsock)"},
    {242, "rfkill (switches the host's radios)"},
    {243, "cuse (character devices served to the host)"},
    {246, "ublk-control (creates host block devices)"},
}};

// Kernel device names (DEVNAME, relative to /dev) refused whatever their number: the misc ones
// with a dynamic minor, and every dangerous node once more by name as a second line of defence.
constexpr std::array<std::string_view, 34> kNamesRefused{
    "mem", "kmem", "port", "kmsg", "kvm", "fuse", "uinput", "uhid", "console", "tty", "ptmx",
    "vfio/", "vhost-", "vsock", "userfaultfd", "iommu", "cpu/", "snapshot", "watchdog",
    "loop-control", "mapper/control", "btrfs-control", "autofs", "hpet", "mcelog", "nvram",
    "rfkill", "tpm", "sgx_", "ublk", "vga_arbiter", "cachefiles", "nvme-fabrics", "vboxdrv",
};

// Dynamic majors refused by their /proc/devices name.
constexpr std::array<std::string_view, 16> kDriversRefused{
    "vfio", "vfio-dev", "iommufd", "nvme", "nvme-generic", "bsg", "watchdog", "tpm", "tpmrm",
    "rtc", "mei", "ipmidev", "dax", "ubi", "ublk-char", "kvm",
};

}  // namespace

Result<std::string> resolve_device_entry(DeviceClass c, std::string_view text) {
  std::string shown = log::quoted(text);
  if (starts_with(text, "/")) return checked_dev_path(text);
  switch (c) {
    case DeviceClass::chip:
      if (all_digits(text)) return "/dev/gpiochip" + std::string(text);
      if (starts_with(text, "gpiochip") && all_digits(text.substr(8))) return "/dev/" + std::string(text);
      return fail(ErrorKind::config, 0, "GPIO chip " + shown + ": expected N, gpiochipN or a /dev path");
    case DeviceClass::i2c:
      if (all_digits(text)) return "/dev/i2c-" + std::string(text);
      if (starts_with(text, "i2c-") && all_digits(text.substr(4))) return "/dev/" + std::string(text);
      return fail(ErrorKind::config, 0, "I2C bus " + shown + ": expected N, i2c-N or a /dev path");
    case DeviceClass::spi:
      if (spi_pair(text)) return "/dev/spidev" + std::string(text);
      if (starts_with(text, "spidev") && spi_pair(text.substr(6))) return "/dev/" + std::string(text);
      return fail(ErrorKind::config, 0, "SPI device " + shown + ": expected B.C, spidevB.C or a /dev path");
    case DeviceClass::uart:
      if (starts_with(text, "tty") && simple_name(text)) return "/dev/" + std::string(text);
      return fail(ErrorKind::config, 0, "UART " + shown + ": expected ttyNAME or a /dev path");
    case DeviceClass::adc:  // Industrial I/O: converters appear as /dev/iio:deviceN
      if (all_digits(text)) return "/dev/iio:device" + std::string(text);
      if (starts_with(text, "iio:device") && all_digits(text.substr(10))) return "/dev/" + std::string(text);
      return fail(ErrorKind::config, 0, "ADC " + shown + ": expected N, iio:deviceN or a /dev path");
    case DeviceClass::camera:
      if (all_digits(text)) return "/dev/video" + std::string(text);
      if ((starts_with(text, "video") && all_digits(text.substr(5))) ||
          (starts_with(text, "media") && all_digits(text.substr(5))))
        return "/dev/" + std::string(text);
      return fail(ErrorKind::config, 0, "camera " + shown + ": expected N, videoN, mediaN or a /dev path");
    case DeviceClass::audio:  // ALSA nodes: controlC0, pcmC0D0p, timer, seq
      if (simple_name(text)) return "/dev/snd/" + std::string(text);
      return fail(ErrorKind::config, 0, "audio node " + shown + ": expected a name under /dev/snd or a /dev path");
    case DeviceClass::midi:
      if (starts_with(text, "midiC") && simple_name(text)) return "/dev/snd/" + std::string(text);
      if (starts_with(text, "midi") && all_digits(text.substr(4))) return "/dev/" + std::string(text);
      return fail(ErrorKind::config, 0, "MIDI port " + shown + ": expected midiCcDd, midiN or a /dev path");
    case DeviceClass::usb: {  // usbfs nodes: BUS/DEV, both three digits in /dev/bus/usb
      size_t slash = text.find('/');
      if (slash != std::string_view::npos && all_digits(text.substr(0, slash)) && all_digits(text.substr(slash + 1)) &&
          slash <= 3 && text.size() - slash - 1 <= 3) {
        auto pad = [](std::string_view d) { return std::string(3 - d.size(), '0') + std::string(d); };
        return "/dev/bus/usb/" + pad(text.substr(0, slash)) + "/" + pad(text.substr(slash + 1));
      }
      return fail(ErrorKind::config, 0, "USB device " + shown + ": expected BUS/DEVICE (\"001/004\") or a /dev path");
    }
    case DeviceClass::input:
      if (simple_name(text)) return "/dev/input/" + std::string(text);
      return fail(ErrorKind::config, 0, "input node " + shown + ": expected a name under /dev/input or a /dev path");
    case DeviceClass::display:  // DRM: renderD128 (card0 is a primary node, refused by identity)
      if (simple_name(text)) return "/dev/dri/" + std::string(text);
      return fail(ErrorKind::config, 0, "display node " + shown + ": expected a name under /dev/dri or a /dev path");
    case DeviceClass::bluetooth:
      if (starts_with(text, "rfcomm") && all_digits(text.substr(6))) return "/dev/" + std::string(text);
      return fail(ErrorKind::config, 0, "Bluetooth node " + shown + ": expected rfcommN or a /dev path");
    case DeviceClass::extra:
      return fail(ErrorKind::config, 0, "extra node " + shown + ": expected an absolute /dev path");
  }
  return fail(ErrorKind::internal, 0, "unknown device class");
}

bool names_no_device_node(DeviceClass c, std::string_view text) {
  return c == DeviceClass::bluetooth && starts_with(text, "hci") && all_digits(text.substr(3));
}

std::string describe_identity(const DeviceIdentity& id) {
  std::string kind = id.is_block ? "block " : id.is_char ? "char " : "";
  if (kind.empty()) return "not a device node";
  return kind + std::to_string(id.major) + ":" + std::to_string(id.minor);
}

std::optional<std::string> refusal_reason(const DeviceIdentity& id) {
  if (id.is_block) return "a block device (host storage)";
  if (!id.is_char) return "not a character device node";
  const unsigned M = id.major, m = id.minor;
  switch (M) {
    case 1:
      if (m == 1) return "/dev/mem (host physical memory)";
      if (m == 2) return "/dev/kmem (host kernel memory)";
      if (m == 4) return "/dev/port (host I/O ports)";
      if (m == 11) return "/dev/kmsg (the host kernel log)";
      return "a memory device (the box already has its own null, zero, full, random and urandom)";
    case 4:
      if (m < 64) return "a virtual console (tty0-tty63) of the host";
      break;
    case 5:
      if (m == 0) return "/dev/tty (the caller's controlling terminal)";
      if (m == 1) return "/dev/console (the host console)";
      if (m == 2) return "/dev/ptmx (the box has its own)";
      return "a host terminal device";
    case 7: return "virtual console memory (vcs) of the host";
    case 10:
      for (const Fixed& f : kMiscRefused)
        if (f.minor == m) return std::string(f.what);
      break;
    case 13: return "an input device (host keyboards and mice)";
    case 21: return "SCSI generic (raw commands to host disks)";
    case 29: return "a frame buffer (the host's screen)";
    case 90: return "an MTD flash device (host firmware storage)";
    case 202: return "cpu/msr (host CPU registers)";
    case 203: return "cpu/cpuid";
    case 226:
      if (m < 64) return "a DRM primary node (modesetting of the host's displays)";
      if (m < 128) return "a DRM control node";
      break;
    default:
      if (M >= 136 && M <= 143) return "a host pseudo-terminal";
      break;
  }
  for (std::string_view d : kDriversRefused)
    if (id.driver == d) return "a " + std::string(d) + " device";
  if (!id.kernel_name.empty()) {
    for (std::string_view n : kNamesRefused) {
      bool prefix = n.back() == '/' || n.back() == '-' || n.back() == '_' || n == "tpm" || n == "ublk";
      if (prefix ? starts_with(id.kernel_name, n) : id.kernel_name == n)
        return "the kernel's " + log::sanitize(id.kernel_name) + " node";
    }
    // tty0..tty63 by name (also when a console driver sits at another number)
    if (starts_with(id.kernel_name, "tty") && all_digits(std::string_view(id.kernel_name).substr(3)))
      return "a virtual console of the host";
  }
  return std::nullopt;
}

DeviceIdentity inspect_device(const std::string& path) {
  DeviceIdentity id;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    id.err = errno;
    return id;
  }
  id.exists = true;
  id.is_char = S_ISCHR(st.st_mode);
  id.is_block = S_ISBLK(st.st_mode);
  if (!id.is_char && !id.is_block) return id;
  id.major = ::major(st.st_rdev);
  id.minor = ::minor(st.st_rdev);
  std::string mm = std::to_string(id.major) + ":" + std::to_string(id.minor);
  auto uevent = sys::read_file(AT_FDCWD, std::string(id.is_char ? "/sys/dev/char/" : "/sys/dev/block/") + mm + "/uevent", 64 * 1024);
  if (uevent) {
    std::istringstream in(*uevent);
    std::string line;
    while (std::getline(in, line))
      if (starts_with(line, "DEVNAME=")) id.kernel_name = line.substr(8);
  }
  if (id.is_char) {
    auto devices = sys::read_file(AT_FDCWD, "/proc/devices", 256 * 1024);
    if (devices) {
      std::istringstream in(*devices);
      std::string line;
      bool chars = false;
      while (std::getline(in, line)) {
        if (line == "Character devices:") { chars = true; continue; }
        if (line == "Block devices:") break;
        if (!chars) continue;
        std::istringstream ls(line);
        unsigned num = 0;
        std::string name;
        if ((ls >> num >> name) && num == id.major) {
          id.driver = name;
          break;
        }
      }
    }
  }
  return id;
}

}  // namespace kern::profiles
