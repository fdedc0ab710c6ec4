// DEVICE:RATE of the block I/O flags; see io_limits.h.
#include "cli/io_limits.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>

#include "profiles/units.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {

Error bad_io(IoCap cap, const std::string& arg, const std::string& why) {
  return Error(ErrorKind::usage, 0, io_cap_flag(cap) + " " + log::sanitize(arg) + ": " + why);
}

Result<uint64_t> rate(IoCap cap, const std::string& arg, std::string_view text) {
  bool bytes = cap == IoCap::read_bps || cap == IoCap::write_bps;
  auto n = bytes ? profiles::parse_bps(text) : profiles::parse_iops(text);
  if (!n) return fail(bad_io(cap, arg, std::move(n).error().message()));
  return *n;
}

}  // namespace

std::string io_cap_flag(IoCap cap) {
  switch (cap) {
    case IoCap::read_bps: return "--device-read-bps";
    case IoCap::write_bps: return "--device-write-bps";
    case IoCap::read_iops: return "--device-read-iops";
    case IoCap::write_iops: return "--device-write-iops";
  }
  return "--device-io";
}

IoThrottle& io_entry(std::vector<IoThrottle>& list, uint32_t major, uint32_t minor, const std::string& name) {
  for (auto& e : list)
    if (e.major == major && e.minor == minor) return e;
  list.push_back(IoThrottle{major, minor, name});
  return list.back();
}

std::string partition_node(const std::string& sysfs, uint32_t major, uint32_t minor) {
  std::string node = sysfs + "/dev/block/" + std::to_string(major) + ":" + std::to_string(minor);
  return ::access((node + "/partition").c_str(), F_OK) == 0 ? node : std::string();
}

Status add_io_limit(std::vector<IoThrottle>& list, IoCap cap, const std::string& arg, const std::string& sysfs) {
  size_t colon = arg.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == arg.size())
    return fail(bad_io(cap, arg, "expected DEVICE:RATE, e.g. /dev/sda:10m"));
  std::string path = arg.substr(0, colon);
  if (path[0] != '/') return fail(bad_io(cap, arg, "the device must be an absolute path such as /dev/sda"));
  KERN_TRY_ASSIGN(uint64_t value, rate(cap, arg, std::string_view(arg).substr(colon + 1)));

  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return fail(Error(ErrorKind::usage, errno, io_cap_flag(cap) + ": stat \"" + log::sanitize(path) + "\""));
  if (!S_ISBLK(st.st_mode)) return fail(bad_io(cap, arg, "\"" + log::sanitize(path) + "\" is not a block device"));
  uint32_t ma = ::major(st.st_rdev), mi = ::minor(st.st_rdev);
  if (std::string node = partition_node(sysfs, ma, mi); !node.empty()) {
    // /sys/dev/block/MAJ:MIN links to .../block/DISK/PART.
    std::error_code ec;
    std::string disk = std::filesystem::read_symlink(node, ec).parent_path().filename();
    return fail(bad_io(cap, arg, "\"" + log::sanitize(path) + "\" is a partition; io.max caps whole disks" +
                                  (disk.empty() ? std::string() : ", name /dev/" + log::sanitize(disk))));
  }

  IoThrottle& t = io_entry(list, ma, mi, path);
  uint64_t* slot = cap == IoCap::read_bps ? &t.rbps : cap == IoCap::write_bps ? &t.wbps
                 : cap == IoCap::read_iops ? &t.riops : &t.wiops;
  if (*slot != 0) return fail(bad_io(cap, arg, "the device " + std::to_string(ma) + ":" + std::to_string(mi) + " is named twice"));
  *slot = value;
  return {};
}

void add_io_flags(CLI::App* c, IoFlags& io, const FlagFilter& f) {
  one_value(add_option(c, f, "--device-read-bps", io.read_bps, "DISK:RATE io.max rbps"));
  one_value(add_option(c, f, "--device-write-bps", io.write_bps, "DISK:RATE io.max wbps"));
  one_value(add_option(c, f, "--device-read-iops", io.read_iops, "DISK:N io.max riops"));
  one_value(add_option(c, f, "--device-write-iops", io.write_iops, "DISK:N io.max wiops"));
}

Status build_io_limits(const IoFlags& f, std::vector<IoThrottle>& list) {
  for (const auto& [cap, args] : {std::pair{IoCap::read_bps, &f.read_bps}, std::pair{IoCap::write_bps, &f.write_bps},
                                  std::pair{IoCap::read_iops, &f.read_iops}, std::pair{IoCap::write_iops, &f.write_iops}})
    for (const auto& a : *args) KERN_TRY(add_io_limit(list, cap, a));
  return {};
}

}  // namespace kern::cli
