// The flags of `kern box` (kern-box(1)), shared with `kern kernel start`.
#include "cli/box_options.h"

namespace kern::cli {

// Repeatable options take exactly one value per occurrence (allow_extra_args(false)): a bare
// word after `-v A:B` is the box name or a profile token, never a second volume.
//
// The flags are spread over CLI11 option groups (nameless to the parser: a flag in a group is
// the verb's own) because CLI11 checks every new option against every option already in the
// same app: with ~45 flags in one app that check was about 40% of the instructions kern ran
// before the box's spec was even built. --help shows each group under its heading. A box start
// that builds only the flags it names (flag_filter.h) has a few of them: they go on the verb
// itself, sparing a group's construction (its help flag made and removed) for each heading.
CLI::App* flag_group(CLI::App* c, const std::string& title, const FlagFilter& f) {
  if (!f.everything()) return c;
  CLI::App* g = c->add_option_group(title);
  g->set_help_flag();  // a group copies the verb's --help: one is enough
  return g;
}

void add_box_flags(CLI::App* c, BoxOptions& o, const FlagFilter& f) {
  add_option(c, f, "positionals", o.positionals,
             "[NAME] and vcpu:/vdisk:/vgpio: profile tokens; after a flag, another bare word starts the command");
  add_option(c, f, "--image", o.image, "image reference to run");
  add_option(c, f, "--rootfs", o.rootfs, "directory to use as the (read-only) lower root");
  add_option(c, f, "--pull", o.pull, "missing|never|always");
  one_value(add_option(c, f, "-e,--env", o.env, "K=V"));
  one_value(add_option(c, f, "--env-file", o.env_files, "file of K=V lines"));
  add_option(c, f, "-w,--workdir", o.workdir, "working directory in the box");
  add_option(c, f, "-u,--user", o.user, "UID[:GID] in the box");
  add_option(c, f, "--hostname", o.hostname, "hostname (default: the box name)");
  add_option(c, f, "--timeout", o.timeout, "SIGTERM after N s (or 2s, 500ms, 1m), SIGKILL 2 s later; 0 = none");
  add_option(c, f, "--config", o.config, "kern.toml for profile tokens");
  add_flag(c, f, "--plan", o.plan, "print the isolation sequence, run nothing");
  add_flag(c, f, "--show-config", o.show_config, "print the resolved configuration, run nothing");
  add_flag(c, f, "-q,--quiet", o.quiet, "no status line");
  add_flag(c, f, "-i,--interactive", o.interactive, "keep stdin open on the pty");
  add_flag(c, f, "-t,--tty", o.tty, "allocate a pty");
  add_option(c, f, "--report-fd", o.report_fd, "JSON lines: started and exited records");

  CLI::App* fs = flag_group(c, "File systems", f);
  add_flag(fs, f, "--read-only,--ro", o.read_only, "read-only root file system");
  one_value(add_option(fs, f, "-v,--volume", o.volumes, "bind SRC:DST[:ro|:rw]; a SRC without '/' is a named volume (kern volume)"));
  one_value(add_option(fs, f, "--tmpfs", o.tmpfs, "PATH[:SIZE] fresh tmpfs"));
  one_value(add_option(fs, f, "--mount", o.mounts,
                       "type=bind|volume,source=SRC|NAME,target=DST[,readonly] or type=tmpfs,target=DST[,tmpfs-size=SIZE]"));

  CLI::App* sec = flag_group(c, "Privileges", f);
  one_value(add_option(sec, f, "--cap-drop", o.cap_drop, "capability to drop, or ALL"));
  one_value(add_option(sec, f, "--cap-add", o.cap_add, "capability to add, or ALL"));
  add_option(sec, f, "--security-profile", o.security_profile, "untrusted");
  add_flag(sec, f, "--uid-range", o.uid_range, "map a subordinate id range (newuidmap)");

  CLI::App* net = flag_group(c, "Network", f);
  if (auto* op = add_option(net, f, "--net,--network", o.net, "none (default), host, private, or a network of kern network create; bare --net means host"))
    op->expected(0, 1);
  add_option(net, f, "--pod", o.pod, "join a pod of kern pod create: its network, ipc and uts namespaces");
  one_value(add_option(net, f, "--network-alias", o.network_alias, "another name of the box in its pod's or network's /etc/hosts"));
  add_net_flags(net, o.netx, f);

  add_limit_flags(flag_group(c, "Limits", f), o.limits, f);
  add_docker_flags(flag_group(c, "Docker compatibility", f), o.docker, f);
}

}  // namespace kern::cli
