// The flags of `kern box` (kern-box(1)), shared with `kern kernel start`.
#include "cli/box_options.h"

namespace kern::cli {

// Repeatable options take exactly one value per occurrence (allow_extra_args(false)): a bare
// word after `-v A:B` is the box name or a profile token, never a second volume.
//
// The flags are spread over CLI11 option groups (nameless to the parser: a flag in a group is
// the verb's own) because CLI11 checks every new option against every option already in the
// same app: with ~45 flags in one app that check was about 40% of the instructions kern ran
// before the box's spec was even built. --help shows each group under its heading.
CLI::App* flag_group(CLI::App* c, const std::string& title) {
  CLI::App* g = c->add_option_group(title);
  g->set_help_flag();  // a group copies the verb's --help: one is enough
  return g;
}

void add_box_flags(CLI::App* c, BoxOptions& o) {
  c->add_option("positionals", o.positionals,
                "[NAME] and vcpu:/vdisk:/vgpio: profile tokens; after a flag, another bare word starts the command");
  c->add_option("--image", o.image, "image reference to run");
  c->add_option("--rootfs", o.rootfs, "directory to use as the (read-only) lower root");
  c->add_option("--pull", o.pull, "missing|never|always");
  c->add_option("-e,--env", o.env, "K=V")->allow_extra_args(false);
  c->add_option("--env-file", o.env_files, "file of K=V lines")->allow_extra_args(false);
  c->add_option("-w,--workdir", o.workdir, "working directory in the box");
  c->add_option("-u,--user", o.user, "UID[:GID] in the box");
  c->add_option("--hostname", o.hostname, "hostname (default: the box name)");
  c->add_option("--timeout", o.timeout, "SIGTERM after N s (or 2s, 500ms, 1m), SIGKILL 2 s later; 0 = none");
  c->add_option("--config", o.config, "kern.toml for profile tokens");
  c->add_flag("--plan", o.plan, "print the isolation sequence, run nothing");
  c->add_flag("--show-config", o.show_config, "print the resolved configuration, run nothing");
  c->add_flag("-q,--quiet", o.quiet, "no status line");
  c->add_flag("-i,--interactive", o.interactive, "keep stdin open on the pty");
  c->add_flag("-t,--tty", o.tty, "allocate a pty");
  c->add_option("--report-fd", o.report_fd, "JSON lines: started and exited records");

  CLI::App* fs = flag_group(c, "File systems");
  fs->add_flag("--read-only,--ro", o.read_only, "read-only root file system");
  fs->add_option("-v,--volume", o.volumes, "bind SRC:DST[:ro|:rw]")->allow_extra_args(false);
  fs->add_option("--tmpfs", o.tmpfs, "PATH[:SIZE] fresh tmpfs")->allow_extra_args(false);

  CLI::App* sec = flag_group(c, "Privileges");
  sec->add_option("--cap-drop", o.cap_drop, "capability to drop, or ALL")->allow_extra_args(false);
  sec->add_option("--cap-add", o.cap_add, "capability to add, or ALL")->allow_extra_args(false);
  sec->add_option("--security-profile", o.security_profile, "untrusted");
  sec->add_flag("--uid-range", o.uid_range, "map a subordinate id range (newuidmap)");

  CLI::App* net = flag_group(c, "Network");
  net->add_option("--net,--network", o.net, "none (default), host or private; bare --net means host")->expected(0, 1);
  add_net_flags(net, o.netx);

  add_limit_flags(flag_group(c, "Limits"), o.limits);
  add_docker_flags(flag_group(c, "Docker compatibility"), o.docker);
}

}  // namespace kern::cli
