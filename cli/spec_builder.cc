// Builds the BoxSpec; see spec_builder.h.
#include "cli/spec_builder.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <sstream>

#include "cli/bind_policy.h"
#include "cli/box_lookup.h"
#include "cli/device_flags.h"
#include "cli/env_file.h"
#include "cli/kern_dirs.h"
#include "cli/mount_flags.h"
#include "cli/pod_join.h"
#include "cli/secret_flags.h"
#include "cli/sysctl_flags.h"
#include "cli/ulimit_flags.h"
#include "oci/box_platform.h"
#include "oci/manifest.h"
#include "profiles/profile_token.h"
#include "profiles/units.h"
#include "runtime/sys/env.h"
#include "runtime/box_cwd.h"
#include "runtime/caps.h"
#include "runtime/registry.h"
#include "runtime/seccomp_filter.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/syscall.h"
#include "runtime/sys/log.h"
#include "runtime/volume_store.h"

namespace kern::cli {
namespace {

Error usage(const std::string& msg) { return Error(ErrorKind::usage, 0, msg); }

bool fd_open(int fd) { return fd > 2 && ::fcntl(fd, F_GETFD) >= 0; }

// NAME and profile tokens from the bare words before "--".
Status split_positionals(const BoxOptions& o, BoxSpec& spec, std::vector<std::string>& tokens) {
  std::string name;
  for (const auto& p : o.positionals) {
    if (profiles::looks_like_profile_token(p)) {
      tokens.push_back(p);
      continue;
    }
    if (!name.empty())
      return fail(usage("unexpected argument \"" + log::sanitize(p) + "\" after the box name \"" + name +
                        "\"")
                      .with_hint("put the command after \"--\": kern box " + name + " [FLAGS] -- " +
                                 log::sanitize(p) + " ..."));
    if (!valid_box_name(p)) {
      if (p.find(':') != std::string::npos)
        return fail(Error(ErrorKind::config, 0,
                          log::quoted(p) + " is not a profile token (vcpu:, vdisk:, vgpio:) "
                          "nor a box name"));
      return fail(usage("invalid box name " + log::quoted(p) + ": 1-64 of [A-Za-z0-9_.-], not starting with '-' or '.'"));
    }
    name = p;
  }
  KERN_TRY_ASSIGN(name, docker_box_name(o.docker, name));
  if (!name.empty() && !valid_box_name(name))
    return fail(usage("invalid box name \"" + log::sanitize(name) +
                      "\": 1-64 of [A-Za-z0-9_.-], not starting with '-' or '.'"));
  spec.name = name.empty() ? "box-" + std::to_string(::getpid()) : name;
  return {};
}

Result<std::string> canonical_dir(const std::string& path, const std::string& what) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr)
    return fail(ErrorKind::usage, errno, what + " \"" + log::sanitize(path) + "\"");
  struct stat st;
  if (::stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
    return fail(ErrorKind::usage, ENOTDIR, what + " \"" + log::sanitize(path) + "\"");
  std::string s = buf;
  // overlayfs splits its options at ',' and lowerdir at ':'.
  if (s.find_first_of(",:\\") != std::string::npos)
    return fail(ErrorKind::usage, 0, what + " \"" + log::sanitize(s) + "\": a path with ',', ':' or '\\' cannot be an overlay layer");
  return s;
}

bool numeric_id(const std::string& s, unsigned long& out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9) return false;
  out = std::strtoul(s.c_str(), nullptr, 10);
  return true;
}

// -u or the image's User (`what` names which) to the box's ids, looked up in the image's
// /etc/passwd (the topmost layer that has one). `home` gets that user's home directory from it
// when it names one (Docker's and podman's HOME for that user).
Status resolve_user(const std::string& user, const std::string& what, BoxSpec& spec, std::string& home) {
  if (user.empty()) return {};
  auto image_root = [&spec]() -> std::optional<UniqueFd> {
    for (const auto& dir : spec.lower_dirs) {
      auto root = sys::open_at(AT_FDCWD, dir, O_PATH | O_DIRECTORY);
      if (!root) continue;
      if (sys::open_beneath(root->get(), "etc/passwd", O_PATH, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS))
        return std::move(*root);
    }
    return std::nullopt;
  };
  auto root = image_root();
  PasswdLookup image_passwd = [&root](const std::string& name) -> std::optional<std::pair<unsigned long, unsigned long>> {
    return root ? passwd_ids(root->get(), name) : std::nullopt;
  };
  KERN_TRY_ASSIGN(auto ids, resolve_user_ids(user, image_passwd, spec.uid_range, what));
  spec.uid = ids.first;
  spec.gid = ids.second;
  spec.user_set = true;
  if (root) {
    if (auto h = passwd_home(root->get(), ids.first); h && !h->empty()) home = *h;
  }
  return {};
}

// A bind of -v or --mount (named by `what`): the source canonicalised on the host and checked
// against the refusals before it joins the spec.
Status add_bind(BindMount b, const BindRefusalContext& ctx, const std::string& what, BoxSpec& spec) {
  if (!b.volume.empty()) {
    // A named volume: its directory in kern's store, made (or found) at the start
    // (cli/volume_use.h), so --plan and --show-config make nothing.
    b.source = VolumeStore(VolumeStore::default_root()).data_path(b.volume);
    spec.binds.push_back(std::move(b));
    return {};
  }
  char buf[PATH_MAX];
  if (::realpath(b.source.c_str(), buf) == nullptr)
    return fail(ErrorKind::usage, errno, what + " source \"" + log::sanitize(b.source) + "\"");
  b.source = buf;
  KERN_TRY(check_bind_source(b.source, ctx, what));
  spec.binds.push_back(std::move(b));
  return {};
}

Status build_mounts(const BoxOptions& o, BoxSpec& spec) {
  std::vector<MountFlag> mounts;
  for (const auto& m : o.mounts) {
    KERN_TRY_ASSIGN(MountFlag f, parse_mount_flag(m));
    mounts.push_back(std::move(f));
  }
  BindRefusalContext ctx;
  bool selinux = false;
  if (!o.volumes.empty() || !mounts.empty()) {
    ctx = host_refusal_context();
    selinux = selinux_enabled();
  }
  for (const auto& v : o.volumes) {
    KERN_TRY_ASSIGN(BindMount b, parse_volume(v, selinux));
    KERN_TRY(add_bind(std::move(b), ctx, "-v", spec));
  }
  for (const auto& t : o.tmpfs) {
    TmpfsMount m;
    m.origin = "--tmpfs";
    std::string path = t;
    if (size_t c = t.find(':'); c != std::string::npos) {
      path = t.substr(0, c);
      KERN_TRY_ASSIGN(m.size_bytes, profiles::parse_size(t.substr(c + 1)));
    }
    KERN_TRY_ASSIGN(m.dest, tmpfs_destination(path, "--tmpfs"));
    spec.tmpfs.push_back(std::move(m));
  }
  for (auto& f : mounts) {
    if (f.type == MountFlag::Type::bind) KERN_TRY(add_bind(std::move(f.bind), ctx, "--mount", spec));
    else spec.tmpfs.push_back(std::move(f.tmpfs));
  }
  return {};
}

// --hostname: the box's UTS name, also its HOSTNAME and /etc/hostname. Letters, digits, '-'
// and '.' only (RFC 1123, as podman checks it): a control byte there would reach every shell
// prompt and log line that prints the name, and a byte that is not UTF-8 every JSON record.
Status check_hostname(const std::string& h) {
  auto bad = [&](const std::string& why) {
    return fail(usage("--hostname " + log::quoted(h) + ": " + why)
                    .with_hint("a hostname is 1 to 64 of letters, digits, '-' and '.', as RFC 1123 allows"));
  };
  if (h.size() > 64) return bad("at most 64 characters");
  for (char c : h) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok) return bad("the character " + log::quoted(std::string(1, c)) + " is not allowed");
  }
  if (h.front() == '-' || h.front() == '.' || h.back() == '-' || h.back() == '.')
    return bad("it cannot start or end with '-' or '.'");
  if (h.find("..") != std::string::npos) return bad("it has an empty label (\"..\")");
  return {};
}

Status build_env(const BoxOptions& o, const oci::ImageConfig* image, const std::string& home, BoxSpec& spec) {
  std::vector<std::string> env = {std::string("PATH=") + kDefaultBoxPath, "HOSTNAME=" + spec.hostname,
                                  "HOME=" + home};
  if (spec.tty) env.push_back("TERM=xterm");
  if (image) {
    merge_env(env, image->env);
    KERN_TRY(check_env_bounds(env, "the image's Env"));
  }
  KERN_TRY(merge_env_flags(env, o.env_files, o.env, caller_environment()));
  spec.env = std::move(env);
  return {};
}

}  // namespace

namespace {

// Who answers for a bad user: a bad -u is the caller's to fix; a bad User is the image's, where
// --help cannot help.
Error user_error(const std::string& what, const std::string& message) {
  return what == "-u" ? usage(message) : Error(ErrorKind::image, 0, message);
}

// The fields of the first line of the /etc/passwd of the tree at `root` for which `match` holds,
// the file resolved inside the tree (a symlinked etc cannot make kern read the host's).
std::optional<std::vector<std::string>> passwd_fields(int root,
                                                      const std::function<bool(const std::vector<std::string>&)>& match) {
  auto file = sys::open_beneath(root, "etc/passwd", O_RDONLY, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
  if (!file) return std::nullopt;
  auto text = sys::read_all(file->get(), 1 << 20, "/etc/passwd");
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    std::string part;
    while (std::getline(ls, part, ':')) f.push_back(part);
    if (f.size() >= 4 && match(f)) return f;
  }
  return std::nullopt;
}

}  // namespace

Result<UserWords> parse_user_words(const std::string& text, const std::string& what) {
  UserWords w;
  size_t colon = text.find(':');
  w.user = text.substr(0, colon);
  if (w.user.empty()) {
    Error e = user_error(what, what + " " + log::quoted(text) + ": the user is empty");
    return fail(what == "-u" ? std::move(e).with_hint("give UID[:GID] or a user name") : std::move(e));
  }
  unsigned long id = 0;
  if (numeric_id(w.user, id)) w.uid = id;
  if (colon != std::string::npos) {
    std::string g = text.substr(colon + 1);
    if (!numeric_id(g, id)) return fail(user_error(what, what + ": group " + log::quoted(g) + " must be numeric"));
    w.gid = id;
  }
  return w;
}

std::optional<std::pair<unsigned long, unsigned long>> passwd_ids(int root, const std::string& name) {
  unsigned long uid = 0, gid = 0;
  auto f = passwd_fields(root, [&](const std::vector<std::string>& f) {
    return f[0] == name && numeric_id(f[2], uid) && numeric_id(f[3], gid);
  });
  if (!f) return std::nullopt;
  return std::make_pair(uid, gid);
}

std::optional<std::string> passwd_home(int root, unsigned long uid) {
  const std::string want = std::to_string(uid);
  auto f = passwd_fields(root, [&](const std::vector<std::string>& f) { return f[2] == want; });
  if (!f || f->size() < 6) return std::nullopt;
  return (*f)[5];
}

Result<std::pair<uid_t, gid_t>> resolve_user_ids(const std::string& text, const PasswdLookup& lookup, bool uid_range,
                                                 const std::string& what) {
  KERN_TRY_ASSIGN(UserWords w, parse_user_words(text, what));
  unsigned long uid = 0, gid = 0;
  if (w.uid) {
    uid = gid = *w.uid;
  } else {
    auto ids = lookup(w.user);
    if (!ids) return fail(user_error(what, what + ": no user \"" + log::sanitize(w.user) + "\" in the box's /etc/passwd"));
    std::tie(uid, gid) = *ids;
  }
  if (w.gid) gid = *w.gid;
  if (!uid_range && (uid != 0 || gid != 0))
    return fail(usage(what + " " + log::sanitize(text) + ": only id 0 is mapped in the box")
                    .with_hint("add --uid-range to map a subordinate id range (see /etc/subuid)"));
  return std::make_pair(static_cast<uid_t>(uid), static_cast<gid_t>(gid));
}

Status refuse_seccomp_audit(const BoxSpec& spec, const std::string& what) {
  if (spec.seccomp != SeccompMode::allowlist_audit) return {};
  return fail(usage("KERN_SECCOMP=allowlist-audit: not implemented yet for " + what)
                  .with_hint("audit the workload in a foreground kern box, then run it here under the allowlist"));
}

Result<BuiltBox> build_box_spec(const BoxOptions& o, const BoxClient& client) {
  const std::string& verb = client.name;
  // -q is KERN_QUIET for this run: no notes or warnings (kern box has no status line).
  if (o.quiet) log::set_quiet(true);
  // As docker run -it: kern would relay this input to the box's terminal and put it in raw
  // mode; a pipe or file has no terminal to give, and the workload would wait on the pty
  // forever. Refused before anything is resolved or created.
  if (o.tty && o.interactive && ::isatty(STDIN_FILENO) != 1)
    return fail(usage(verb + " -it: the input is not a terminal")
                    .with_hint("drop -t to pass a pipe or file to the box as its standard input"));
  BuiltBox out;
  BoxSpec& spec = out.spec;
  std::vector<std::string> tokens;
  KERN_TRY_ASSIGN(spec.apparmor_profile, check_docker_flags(o.docker));
  KERN_TRY(split_positionals(o, spec, tokens));
  for (const auto& t : tokens) KERN_TRY(profiles::parse_profile_token(t));

  if (o.image.empty() == o.rootfs.empty())
    return fail(usage(verb + ": give exactly one of --image REF or --rootfs DIR"));
  std::optional<std::string> workdir;
  if (o.workdir) {
    KERN_TRY_ASSIGN(workdir, workdir_flag(*o.workdir, "the image's WorkingDir (or /)"));
  }
  if (o.user && o.user->empty())
    return fail(empty_value("-u/--user", "UID[:GID] or a user name", "the image's User (or 0)"));
  KERN_TRY_ASSIGN(oci::PullPolicy pull, oci::parse_pull_policy(o.pull));

  spec.hostname = o.hostname.empty() ? spec.name : o.hostname;
  if (!o.hostname.empty()) KERN_TRY(check_hostname(o.hostname));
  std::string network;  // --network NAME
  if (o.net && names_network(*o.net)) {
    network = *o.net;
  } else if (o.net) {
    KERN_TRY_ASSIGN(spec.net, parse_net_mode(*o.net));
  }
  if (!o.pod.empty() && (o.net || !network.empty()))
    return fail(Error(ErrorKind::usage, 0, "--pod with --net: a pod's boxes use the pod's network")
                    .with_hint("drop --net; give the pod its network when it is made: kern pod create NAME --net private"));
  if (!o.pod.empty() || !network.empty()) {
    if (!client.own_network)
      return fail(usage(client.name + ": --pod and --network NAME are for kern box"));
    KERN_TRY(join_pod(o.pod.empty() ? pod::Kind::network : pod::Kind::pod, o.pod.empty() ? network : o.pod, o.netx,
                      !o.hostname.empty(), o.network_alias, spec));
  } else {
    if (!o.network_alias.empty())
      return fail(usage("--network-alias names a box in a pod or a named network: give --pod NAME or --network NAME"));
    KERN_TRY(build_net(o.netx, spec, client));
  }
  if (!o.timeout.empty()) {
    auto ms = profiles::parse_duration_ms(o.timeout);
    if (!ms) return fail(usage("--timeout: " + ms.error().message()));
    spec.timeout_ms = *ms;
  }
  spec.read_only = o.read_only;
  spec.uid_range = o.uid_range;
  spec.tty = o.tty;
  spec.interactive = o.interactive;
  spec.timing = sys::env_set("KERN_TIMING");

  KERN_TRY_ASSIGN(spec.seccomp, parse_seccomp_env(std::getenv("KERN_SECCOMP")));
  KERN_TRY_ASSIGN(spec.caps_keep, resolve_caps(o.cap_drop, o.cap_add));
  if (!o.security_profile.empty()) {
    if (o.security_profile != "untrusted")
      return fail(usage("--security-profile: \"" + log::sanitize(o.security_profile) + "\" is unknown (known: untrusted)"));
    spec.security_profile_untrusted = true;
    spec.seccomp = SeccompMode::allowlist;
    spec.caps_keep = 0;
    spec.read_only = true;
  }

  ExplicitFlags ex;
  KERN_TRY(build_limits(o.limits, spec, ex));
  KERN_TRY(build_mounts(o, spec));
  KERN_TRY(add_device_flags(o.docker.devices, spec));
  for (const auto& l : o.docker.labels) {
    size_t eq = l.find('=');
    std::string key = l.substr(0, eq), value = eq == std::string::npos ? "" : l.substr(eq + 1);
    if (key.empty()) return fail(usage("--label \"" + log::sanitize(l) + "\": the key is empty").with_hint("--label KEY=VALUE"));
    spec.labels.emplace_back(key, value);
  }
  if (!o.docker.stop_signal.empty()) {
    spec.stop_signal = parse_signal(o.docker.stop_signal);
    if (spec.stop_signal == 0)
      return fail(usage("--stop-signal \"" + log::sanitize(o.docker.stop_signal) + "\" is not a signal")
                      .with_hint("a name (TERM, SIGINT, QUIT) or a number"));
  }
  if (o.docker.stop_timeout) {
    if (*o.docker.stop_timeout > 3600)
      return fail(usage("--stop-timeout " + std::to_string(*o.docker.stop_timeout) + ": at most 3600 s"));
    spec.stop_timeout_s = *o.docker.stop_timeout;
  }
  for (const auto& u : o.docker.ulimits) {
    KERN_TRY_ASSIGN(RlimitSetting r, parse_ulimit(u));
    std::erase_if(spec.rlimits, [&](const RlimitSetting& x) { return x.resource == r.resource; });  // the last wins
    spec.rlimits.push_back(r);
  }
  KERN_TRY(check_ulimits(spec.rlimits));
  for (const auto& sec : o.docker.secrets) {
    KERN_TRY_ASSIGN(auto named, read_secret(sec));
    for (const auto& have : spec.secrets)
      if (have.first == named.first)
        return fail(usage("--secret " + log::sanitize(sec) + ": a secret named \"" + named.first + "\" is given twice")
                        .with_hint("name one of them: --secret FILE:OTHER_NAME"));
    spec.secrets.push_back(std::move(named));
  }
  for (const auto& kv : o.docker.sysctls) {
    KERN_TRY_ASSIGN(auto knob, parse_sysctl(kv, spec.net));
    spec.sysctls.push_back(std::move(knob));
  }

  if (const char* sfd = std::getenv("KERN_STARTED_FD"); sfd && *sfd) {
    char* end = nullptr;
    long n = std::strtol(sfd, &end, 10);
    if (end && *end == '\0' && n > 2 && n < INT_MAX && fd_open(static_cast<int>(n))) {
      spec.started_fd = static_cast<int>(n);
      ::fcntl(spec.started_fd, F_SETFD, FD_CLOEXEC);  // the workload never inherits it
    }
  }
  int report = o.report_fd.value_or(-1);
  if (!o.report_fd) {
    if (const char* r = std::getenv("KERN_REPORT_FD"); r && *r) report = std::atoi(r);
  }
  if (report >= 0 || o.report_fd) {
    if (!fd_open(report))
      return fail(usage("--report-fd " + std::to_string(report) + ": not an open descriptor above 2"));
    spec.report_fd = report;
    ::fcntl(report, F_SETFD, FD_CLOEXEC);
  }

  // Profiles after the flags (an explicit flag wins) and before the image (which sets no limits).
  KERN_TRY(apply_profiles(tokens, o.config, spec, ex, &out.profiles));

  const oci::ImageConfig* cfg = nullptr;
  if (!o.rootfs.empty()) {
    KERN_TRY_ASSIGN(std::string root, canonical_dir(o.rootfs, "--rootfs"));
    // The box would read (and with a bind, write) kern's store, state or credentials.
    KERN_TRY(check_not_kern_dir(root, kern_dirs(), "--rootfs", /*path_canonical=*/true));
    spec.lower_dirs = {root};
  } else {
    KERN_TRY_ASSIGN(oci::ResolvedImage img, oci::resolve_for_box(o.image, pull));
    KERN_TRY(oci::check_box_architecture(img.ref, img.architecture, oci::host_architecture()));
    out.image = std::move(img);
    spec.lower_dirs = out.image->lower_dirs;
    spec.image_ref = out.image->ref;
    spec.image_digest = out.image->digest;
    cfg = &out.image->config;
  }

  // The command: "--" CMD, else the image's Entrypoint + Cmd, else /bin/sh. As in docker run, a
  // given command replaces Cmd and keeps Entrypoint.
  std::vector<std::string> cmd = o.command;
  if (auto ep = entrypoint_command(o.docker, o.command)) cmd = *ep;
  else if (cfg) {
    std::vector<std::string> argv = cfg->entrypoint;
    // An Entrypoint of one empty string is how a build says "none" (`ENTRYPOINT [""]`, umoci
    // config --config.entrypoint ""): Docker and podman run Cmd alone, not execve("").
    if (argv.size() == 1 && argv[0].empty()) argv.clear();
    const auto& rest = cmd.empty() ? cfg->cmd : cmd;
    argv.insert(argv.end(), rest.begin(), rest.end());
    cmd = argv;
  }
  if (cmd.empty()) cmd = {"/bin/sh"};
  spec.argv = cmd;

  std::string home = "/root";
  KERN_TRY(resolve_user(o.user ? *o.user : cfg ? cfg->user : std::string(), o.user ? "-u" : "the image's User",
                        spec, home));
  KERN_TRY(build_env(o, cfg, home, spec));
  add_net_env(spec);
  if (workdir) {
    spec.cwd = *workdir;
  } else {
    std::string image_workdir = cfg && !cfg->working_dir.empty() ? cfg->working_dir : "/";
    KERN_TRY(check_box_cwd(image_workdir, "the image's WorkingDir"));
    KERN_TRY_ASSIGN(spec.cwd, normalize_box_path(image_workdir, "-w"));
  }

  // A box under the wider filter says so whatever -q asks (kern-box(1), SECCOMP); the audit
  // mode says it once its auditor runs (launcher.cc).
  if (spec.seccomp == SeccompMode::denylist)
    log::warning_unsilenced("KERN_SECCOMP=denylist: this box is not locked down by the allowlist: every system "
                            "call outside the denylist's rules is allowed");

  // kern-box(1) asks for this exact line. It says what the box runs under and is not a
  // note: neither -q nor KERN_QUIET (notes and warnings only) silences it.
  if (spec.security_profile_untrusted)
    (void)sys::write_all(STDERR_FILENO,
                         "kern: security-profile=untrusted: seccomp=allowlist cap-drop=ALL read-only\n",
                         "stderr");
  return out;
}

}  // namespace kern::cli
