// -v parsing and refusals; see bind_policy.h.
#include "cli/bind_policy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "cli/kern_dirs.h"
#include "cli/usage_errors.h"
#include "runtime/box_cwd.h"
#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"
#include "runtime/volume_store.h"

namespace kern::cli {
namespace {

Error refused(const std::string& what, const std::string& src, const std::string& why) {
  return Error(ErrorKind::usage, 0, what + ": refusing to bind \"" + log::sanitize(src) + "\": " + why);
}

}  // namespace

BindRefusalContext host_refusal_context() {
  BindRefusalContext ctx;
  ctx.home = canonical_or_same(paths::home_dir());
  ctx.kern_dirs = kern_dirs();
  const char* xrd = std::getenv("XDG_RUNTIME_DIR");
  std::vector<std::string> sockets = {"/run/docker.sock", "/var/run/docker.sock",
                                      "/run/containerd/containerd.sock", "/run/podman/podman.sock",
                                      "/run/crio/crio.sock", "/run/buildkit/buildkitd.sock"};
  if (xrd && *xrd) {
    sockets.push_back(std::string(xrd) + "/docker.sock");
    sockets.push_back(std::string(xrd) + "/podman/podman.sock");
  }
  for (const auto& s : sockets) {
    struct stat st;
    if (::stat(s.c_str(), &st) == 0) ctx.sockets.push_back(canonical_or_same(s));
  }
  return ctx;
}

Result<std::string> normalize_box_path(const std::string& path, const std::string& what) {
  if (path.empty() || path[0] != '/')
    return fail(ErrorKind::usage, 0, what + ": \"" + log::sanitize(path) + "\" is not an absolute path");
  std::string out;
  size_t pos = 1;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    std::string comp = path.substr(pos, next - pos);
    pos = next + 1;
    if (comp.empty()) continue;
    if (comp == "." || comp == "..")
      return fail(ErrorKind::usage, 0, what + ": \"" + log::sanitize(path) + "\" has a \"" + comp + "\" component");
    out += "/" + comp;
  }
  return out.empty() ? std::string("/") : out;
}

Result<std::string> workdir_flag(const std::string& value, const std::string& otherwise) {
  if (value.empty()) return fail(empty_value("-w/--workdir", "an absolute path in the box", otherwise));
  KERN_TRY(check_box_cwd(value, "-w"));
  return normalize_box_path(value, "-w");
}

bool selinux_enabled() {
  // selinuxfs is mounted (and has "enforce") exactly where SELinux is enabled, enforcing or not.
  return ::access("/sys/fs/selinux/enforce", F_OK) == 0;
}

std::vector<std::string> split_colons(const std::string& s) {
  std::vector<std::string> fields;
  for (size_t pos = 0;;) {
    size_t c = s.find(':', pos);
    fields.push_back(s.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return fields;
}

bool is_volume_source(const std::string& source) {
  return !source.empty() && source.find('/') == std::string::npos && source != "." && source != "..";
}

Result<BindMount> parse_volume(const std::string& spec, bool selinux) {
  BindMount b;
  b.origin = "-v";
  auto bad = [&](const std::string& why) {
    return fail(ErrorKind::usage, 0, "-v \"" + log::sanitize(spec) + "\": " + why);
  };
  // SRC:DST or SRC:DST:OPTIONS, as Docker splits it. A path with ':' in it cannot be told apart
  // from the option field, so it is refused instead of guessed at.
  std::vector<std::string> fields = split_colons(spec);
  if (fields.size() < 2 || fields[0].empty() || fields[1].empty())
    return bad("expected SRC:DST[:OPTIONS]");
  if (fields.size() > 3 || (fields.size() == 3 && fields[2].find('/') != std::string::npos))
    return fail(Error(ErrorKind::usage, 0, "-v \"" + log::sanitize(spec) + "\": too many ':'; a source or "
                      "destination containing ':' cannot be given with -v")
                    .with_hint("bind a directory whose path has no ':' (a symlink to it will do as the source)"));
  if (fields.size() == 3) {
    bool mode_seen = false;
    size_t pos = 0;
    const std::string& opts = fields[2];
    while (true) {
      size_t c = opts.find(',', pos);
      std::string opt = opts.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
      if (opt == "ro" || opt == "rw") {
        if (mode_seen) return bad("\"ro\" and \"rw\" may be given once, not both or twice");
        mode_seen = true;
        b.read_only = opt == "ro";
      } else if (opt == "z" || opt == "Z") {
        // Relabelling is for SELinux; kern never relabels, so where SELinux is on the box could
        // not read the bind as the user expects.
        if (selinux)
          return bad("option \"" + opt + "\" asks for an SELinux relabel, which kern does not do, "
                     "and SELinux is enabled on this host");
      } else {
        return fail(Error(ErrorKind::usage, 0, "-v \"" + log::sanitize(spec) + "\": unknown option \"" +
                          log::sanitize(opt) + "\"")
                        .with_hint("the options are a comma list of ro, rw, z and Z"));
      }
      if (c == std::string::npos) break;
      pos = c + 1;
    }
  }
  b.source = fields[0];
  // Docker's rule: a source without a '/' (and not "." or "..") names a volume, made at the
  // box's start when it does not exist yet (cli/volume_use.h).
  if (is_volume_source(b.source)) {
    KERN_TRY(check_volume_name(b.source, "-v " + log::quoted(spec)));
    b.volume = b.source;
    b.source.clear();
    b.origin = "-v " + b.volume;
  }
  KERN_TRY_ASSIGN(b.dest, bind_destination(fields[1], "-v"));
  return b;
}

Result<std::string> bind_destination(const std::string& path, const std::string& what) {
  KERN_TRY_ASSIGN(std::string dest, normalize_box_path(path, what + " destination"));
  if (dest == "/") return fail(ErrorKind::usage, 0, what + ": cannot bind over the box's root");
  if (is_within(dest, "/proc"))
    return fail(ErrorKind::usage, 0, what + ": cannot bind under /proc (\"" + dest + "\")");
  return dest;
}

Result<std::string> tmpfs_destination(const std::string& path, const std::string& what) {
  KERN_TRY_ASSIGN(std::string dest, normalize_box_path(path, what));
  if (dest == "/" || dest == "/dev" || is_within(dest, "/proc"))
    return fail(ErrorKind::usage, 0, what + ": cannot mount over \"" + dest + "\"");
  return dest;
}

Status check_bind_source(const std::string& src, const BindRefusalContext& ctx, const std::string& what) {
  if (src == "/") return fail(refused(what, src, "it is the host's root"));
  for (const char* sys_dir : {"/etc", "/proc", "/sys", "/dev"}) {
    if (is_within(sys_dir, src) && src != sys_dir)
      return fail(refused(what, src, std::string("it contains ") + sys_dir));
    if (src == sys_dir) return fail(refused(what, src, "it is the host's " + std::string(sys_dir)));
    if (std::string(sys_dir) != "/etc" && is_within(src, sys_dir))
      return fail(refused(what, src, std::string("it is inside the host's ") + sys_dir +
                                   " (devices are granted with vgpio: profiles)"));
  }
  if (!ctx.home.empty() && ctx.home != "/" && is_within(ctx.home, src))
    return fail(refused(what, src, src == ctx.home ? "it is $HOME itself" : "it contains $HOME"));
  for (const auto& s : ctx.sockets)
    if (is_within(s, src)) return fail(refused(what, src, "it is or contains the container runtime socket " + s));
  return check_not_kern_dir(src, ctx.kern_dirs, what + ": refusing to bind");
}

}  // namespace kern::cli
