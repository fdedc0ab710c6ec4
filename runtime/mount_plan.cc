// Builds the mount plan from a BoxSpec; see mount_plan.h. Pure.
#include "runtime/mount_plan.h"

#include "runtime/net/private_net_plan.h"

namespace kern {

const std::vector<std::string>& masked_proc_files() {
  // Each leaks host state or gives a handle on the host kernel; a box never needs them.
  static const std::vector<std::string> files = {
      "/proc/kcore",       "/proc/keys",        "/proc/timer_list", "/proc/sched_debug",
      "/proc/latency_stats", "/proc/kallsyms",  "/proc/kmsg",       "/proc/sysrq-trigger",
  };
  return files;
}

const std::vector<std::string>& masked_proc_dirs() {
  static const std::vector<std::string> dirs = {"/proc/acpi", "/proc/scsi", "/proc/firmware",
                                                "/proc/bus", "/proc/fs", "/proc/irq"};
  return dirs;
}

const std::vector<std::string>& safe_dev_nodes() {
  static const std::vector<std::string> nodes = {"null", "zero", "full", "random", "urandom", "tty"};
  return nodes;
}

std::vector<MountStep> build_mount_plan(const BoxSpec& spec) {
  std::vector<MountStep> plan;
  auto add = [&plan](MountStep s) { plan.push_back(std::move(s)); };

  add({.kind = MountStepKind::make_private, .target = "/", .origin = "default"});
  if (spec.upper_on_host)
    add({.kind = MountStepKind::scratch_dirs, .target = "scratch", .mode = 0700, .origin = "--restart"});
  else
    add({.kind = MountStepKind::scratch_tmpfs, .target = "scratch", .mode = 0700, .origin = "default"});
  std::string lowers;
  for (const auto& l : spec.lower_dirs) lowers += (lowers.empty() ? "" : ":") + l;
  // Always an overlay, even for --read-only: mount points missing from the image (/proc, /dev)
  // are created in the private upper, never in the shared lower directory.
  add({.kind = MountStepKind::overlay_root, .target = "root", .source = lowers, .origin = "default"});

  add({.kind = MountStepKind::proc, .target = "/proc", .origin = "default"});
  for (const auto& f : masked_proc_files())
    add({.kind = MountStepKind::mask_file, .target = f, .source = "/dev/null", .origin = "default"});
  for (const auto& d : masked_proc_dirs())
    add({.kind = MountStepKind::mask_dir, .target = d, .read_only = true, .origin = "default"});
  // Written through the box's own procfs, as the box's root in its own namespaces, before
  // /proc/sys is made read-only: only knobs of those namespaces are accepted (cli/sysctl_flags.h).
  for (const auto& [path, value] : spec.sysctls)
    add({.kind = MountStepKind::proc_write, .target = path, .origin = "--sysctl", .content = value});
  add({.kind = MountStepKind::readonly_rebind, .target = "/proc/sys", .read_only = true,
       .origin = "default"});

  add({.kind = MountStepKind::dev_tmpfs, .target = "/dev", .mode = 0755, .origin = "default"});
  for (const auto& n : safe_dev_nodes())
    add({.kind = MountStepKind::dev_node, .target = "/dev/" + n, .source = "/dev/" + n,
         .origin = "default"});
  add({.kind = MountStepKind::devpts, .target = "/dev/pts", .origin = "default"});
  add({.kind = MountStepKind::dev_symlinks, .target = "/dev", .origin = "default"});
  add({.kind = MountStepKind::tmpfs, .target = "/dev/shm", .size = 64ull << 20, .mode = 01777,
       .origin = "default"});
  for (size_t i = 0; i < spec.devices.size(); ++i)
    add({.kind = MountStepKind::device_grant, .target = spec.devices[i].box_path,
         .source = spec.devices[i].host_path, .index = static_cast<int>(i),
         .origin = spec.devices[i].origin});

  if (spec.net != NetMode::host)
    add({.kind = MountStepKind::sysfs, .target = "/sys", .read_only = true, .origin = "default"});

  // The box's name service files for a network of its own (--net private) or the host's
  // (--net host), as engines give them: written on the box's own scratch tmpfs and bound over
  // the image's, so that a tree whose /etc the box cannot write (owned by root or another user,
  // unmapped in the box) gets them too and the image is not changed. Before the caller's -v and
  // --tmpfs so that theirs win; read-only with --read-only. --net none keeps the image's: the
  // box has loopback only and no resolver to name.
  auto file = [&](const std::string& origin, const char* target, std::string content) {
    add({.kind = MountStepKind::bind_file, .target = target, .mode = 0644, .read_only = spec.read_only,
         .origin = origin, .content = std::move(content)});
  };
  if (spec.net == NetMode::private_net) {
    const PrivateNet& n = spec.private_net;
    file("--net private", "/etc/hostname", net::hostname_text(spec.hostname));
    file("--net private", "/etc/hosts", net::hosts_text(n, spec.hostname));
    file("--net private", "/etc/resolv.conf", net::resolv_conf_text(n));
  } else if (spec.net == NetMode::host && spec.host_name_files) {
    const BoxSpec::HostNameFiles& h = *spec.host_name_files;
    file("--net host", "/etc/hostname", net::hostname_text(spec.hostname));
    // The host's lines, then the box's own name (its hostname is its own, the network the host's).
    std::string hosts = h.hosts;
    if (!hosts.empty() && hosts.back() != '\n') hosts += "\n";
    if (!spec.hostname.empty()) hosts += "127.0.1.1\t" + spec.hostname + "\n";
    file("--net host", "/etc/hosts", hosts);
    if (!h.resolv_conf.empty()) file("--net host", "/etc/resolv.conf", h.resolv_conf);
  }

  // /tmp is a fresh tmpfs unless the caller mounts something of their own there (or asks for
  // the image's, as kern build's RUN does).
  bool own_tmp = spec.image_tmp;
  for (const auto& t : spec.tmpfs) own_tmp |= (t.dest == "/tmp");
  for (const auto& b : spec.binds) own_tmp |= (b.dest == "/tmp");
  if (!own_tmp)
    add({.kind = MountStepKind::tmpfs, .target = "/tmp", .mode = 01777, .origin = "default"});
  // --secret: a tmpfs of the box's own at /run/secrets (never the scratch dir, which --restart
  // keeps on the host's disk), each secret a new 0400 file of the workload's, then read-only.
  // Before the caller's --tmpfs and -v: one over /run or /run/secrets hides them.
  if (!spec.secrets.empty()) {
    uint64_t bytes = 64 << 10;
    for (const auto& sec : spec.secrets) bytes += sec.second.size() + 4096;
    add({.kind = MountStepKind::tmpfs, .target = "/run/secrets", .size = bytes, .mode = 0755, .origin = "--secret"});
    for (const auto& [name, content] : spec.secrets)
      add({.kind = MountStepKind::secret_file, .target = "/run/secrets/" + name, .mode = 0400, .origin = "--secret",
           .content = content, .uid = static_cast<uint32_t>(spec.uid), .gid = static_cast<uint32_t>(spec.gid)});
    add({.kind = MountStepKind::readonly_rebind, .target = "/run/secrets", .read_only = true, .origin = "--secret"});
  }
  for (const auto& t : spec.tmpfs)
    add({.kind = MountStepKind::tmpfs, .target = t.dest, .size = t.size_bytes, .mode = 01777,
         .origin = t.origin.empty() ? "--tmpfs" : t.origin});
  for (size_t i = 0; i < spec.binds.size(); ++i)
    add({.kind = MountStepKind::bind, .target = spec.binds[i].dest, .source = spec.binds[i].source,
         .read_only = spec.binds[i].read_only, .index = static_cast<int>(i),
         .origin = !spec.binds[i].volume.empty() ? "volume " + spec.binds[i].volume
                   : spec.binds[i].origin.empty() ? "-v" : spec.binds[i].origin,
         .copy_up = spec.binds[i].copy_up, .skip_unreachable = spec.binds[i].skip_unreachable});

  // Read-only last, so that the mount points above could still be created in the upper layer.
  if (spec.read_only)
    add({.kind = MountStepKind::remount_root_ro, .target = "/", .read_only = true,
         .origin = "--read-only"});
  add({.kind = MountStepKind::pivot_root, .target = "/", .origin = "default"});
  return plan;
}

std::string step_kind_name(MountStepKind kind) {
  switch (kind) {
    case MountStepKind::make_private: return "make-private";
    case MountStepKind::scratch_tmpfs: return "scratch-tmpfs";
    case MountStepKind::scratch_dirs: return "scratch-dirs";
    case MountStepKind::overlay_root: return "overlay-root";
    case MountStepKind::proc: return "proc";
    case MountStepKind::mask_file: return "mask-file";
    case MountStepKind::mask_dir: return "mask-dir";
    case MountStepKind::proc_write: return "proc-write";
    case MountStepKind::secret_file: return "secret-file";
    case MountStepKind::readonly_rebind: return "readonly-rebind";
    case MountStepKind::dev_tmpfs: return "dev-tmpfs";
    case MountStepKind::dev_node: return "dev-node";
    case MountStepKind::devpts: return "devpts";
    case MountStepKind::dev_symlinks: return "dev-symlinks";
    case MountStepKind::tmpfs: return "tmpfs";
    case MountStepKind::sysfs: return "sysfs-ro";
    case MountStepKind::bind: return "bind";
    case MountStepKind::device_grant: return "device";
    case MountStepKind::bind_file: return "bind-file";
    case MountStepKind::remount_root_ro: return "remount-root-ro";
    case MountStepKind::pivot_root: return "pivot-root";
    case MountStepKind::root_propagation: return "root-propagation";
    case MountStepKind::bind_root: return "bind-root";
    case MountStepKind::config_mount: return "mount";
    case MountStepKind::default_devices: return "default-devices";
    case MountStepKind::config_device: return "device";
    case MountStepKind::dev_links: return "dev-links";
    case MountStepKind::readonly_dev: return "readonly-dev";
    case MountStepKind::hooks_before_enter: return "hooks";
    case MountStepKind::enter_root: return "pivot-root";
    case MountStepKind::sysctl: return "sysctl";
    case MountStepKind::config_readonly: return "readonly";
    case MountStepKind::config_mask: return "mask";
    case MountStepKind::root_readonly: return "root-readonly";
    case MountStepKind::final_propagation: return "root-propagation";
    case MountStepKind::oom_score_adj: return "oom-score-adj";
  }
  return "?";
}

std::string describe_step(const MountStep& s) {
  std::string out = step_kind_name(s.kind) + " " + s.target;
  if (!s.source.empty()) out += " <- " + s.source;
  if (s.size != 0) out += " size=" + std::to_string(s.size);
  if (s.kind == MountStepKind::bind_file || s.kind == MountStepKind::secret_file)
    out += " (" + std::to_string(s.content.size()) + " bytes)";
  if (s.kind == MountStepKind::proc_write) out += " = " + s.content;
  if (s.read_only) out += " ro";
  if (s.copy_up) out += " copy-up";
  if (!s.origin.empty() && s.origin != "default") out += " (" + s.origin + ")";
  return out;
}

}  // namespace kern
