// -v parsing and refusals; see bind_policy.h.
#include "cli/bind_policy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "runtime/sys/log.h"
#include "runtime/sys/paths.h"

namespace kern::cli {
namespace {

bool is_within(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

std::string canonical_or_same(const std::string& p) {
  char buf[PATH_MAX];
  if (::realpath(p.c_str(), buf) != nullptr) return buf;
  return p;
}

Error refused(const std::string& src, const std::string& why) {
  return Error(ErrorKind::usage, 0, "-v: refusing to bind \"" + log::sanitize(src) + "\": " + why);
}

}  // namespace

BindRefusalContext host_refusal_context() {
  BindRefusalContext ctx;
  ctx.home = canonical_or_same(paths::home_dir());
  ctx.kern_dirs.push_back(canonical_or_same(paths::cache_dir()));
  const char* xrd = std::getenv("XDG_RUNTIME_DIR");
  if (xrd && *xrd) ctx.kern_dirs.push_back(canonical_or_same(std::string(xrd) + "/kern"));
  ctx.kern_dirs.push_back("/tmp/kern-" + std::to_string(::getuid()));
  std::string cfg = paths::config_file();
  ctx.kern_dirs.push_back(canonical_or_same(cfg.substr(0, cfg.find_last_of('/'))));
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

Result<BindMount> parse_volume(const std::string& spec) {
  BindMount b;
  b.origin = "-v";
  std::string rest = spec;
  size_t last = rest.rfind(':');
  if (last != std::string::npos && (rest.substr(last + 1) == "ro" || rest.substr(last + 1) == "rw")) {
    b.read_only = rest.substr(last + 1) == "ro";
    rest = rest.substr(0, last);
  }
  size_t colon = rest.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size())
    return fail(ErrorKind::usage, 0, "-v \"" + log::sanitize(spec) + "\": expected SRC:DST[:ro|:rw]");
  b.source = rest.substr(0, colon);
  KERN_TRY_ASSIGN(b.dest, normalize_box_path(rest.substr(colon + 1), "-v destination"));
  if (b.dest == "/") return fail(ErrorKind::usage, 0, "-v: cannot bind over the box's root");
  if (is_within(b.dest, "/proc"))
    return fail(ErrorKind::usage, 0, "-v: cannot bind under /proc (\"" + b.dest + "\")");
  return b;
}

Status check_bind_source(const std::string& src, const BindRefusalContext& ctx) {
  if (src == "/") return fail(refused(src, "it is the host's root"));
  for (const char* sys_dir : {"/etc", "/proc", "/sys", "/dev"}) {
    if (is_within(sys_dir, src) && src != sys_dir)
      return fail(refused(src, std::string("it contains ") + sys_dir));
    if (src == sys_dir) return fail(refused(src, "it is the host's " + std::string(sys_dir)));
    if (std::string(sys_dir) != "/etc" && is_within(src, sys_dir))
      return fail(refused(src, std::string("it is inside the host's ") + sys_dir +
                                   " (devices are granted with vgpio: profiles)"));
  }
  if (!ctx.home.empty() && ctx.home != "/" && is_within(ctx.home, src))
    return fail(refused(src, src == ctx.home ? "it is $HOME itself" : "it contains $HOME"));
  for (const auto& s : ctx.sockets)
    if (is_within(s, src)) return fail(refused(src, "it is or contains the container runtime socket " + s));
  for (const auto& d : ctx.kern_dirs)
    if (is_within(src, d) || is_within(d, src))
      return fail(refused(src, "it is or contains kern's own state (" + d + ")"));
  return {};
}

}  // namespace kern::cli
