// load_bundle and probe_host (see bundle_load.h).
#include "runtime/bundle/bundle_load.h"
#include "runtime/bundle/seccomp_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "runtime/apparmor.h"
#include "runtime/sys/fdio.h"

namespace kern::bundle {

HostFacts probe_host() {
  HostFacts h;
  h.selinux = ::access("/sys/fs/selinux/enforce", F_OK) == 0;
  h.apparmor = ::access("/sys/kernel/security/apparmor", F_OK) == 0;
  return h;
}

Result<LoadedBundle> load_bundle(const std::string& bundle_dir, const std::string& seccomp_cache) {
  char real[PATH_MAX];
  if (!::realpath(bundle_dir.c_str(), real)) return fail_errno("bundle \"" + bundle_dir + "\"", ErrorKind::config);
  LoadedBundle b;
  b.dir = real;
  const std::string cfg_path = b.dir + "/config.json";
  auto text = sys::read_file(AT_FDCWD, cfg_path, 16 << 20);
  if (!text) return fail(std::move(text).error().with_context("reading the bundle's config.json"));
  auto cfg = parse_config(*text);
  if (!cfg) return fail(std::move(cfg).error().with_context(cfg_path));
  b.config = std::move(cfg).value();
  b.text = std::move(text).value();
  if (auto s = check_supported(b.config, probe_host()); !s) return fail(std::move(s).error().with_context(cfg_path));
  if (const std::string& aa = b.config.process->apparmor_profile; !aa.empty() && aa != "unconfined")
    KERN_TRY(check_apparmor_profile("/", aa, "process.apparmorProfile \"" + aa + "\""));
  b.root_path = b.config.root_path[0] == '/' ? b.config.root_path : b.dir + "/" + b.config.root_path;
  struct stat st;
  if (::stat(b.root_path.c_str(), &st) != 0)
    return fail(Error(ErrorKind::config, errno, "root.path \"" + b.root_path + "\"").with_context(cfg_path));
  if (!S_ISDIR(st.st_mode))
    return fail(Error(ErrorKind::config, ENOTDIR, "root.path \"" + b.root_path + "\"").with_context(cfg_path));
  if (b.config.linux_config && b.config.linux_config->seccomp) {
    auto prog = compile_seccomp_cached(*b.config.linux_config->seccomp, seccomp_cache);
    if (!prog) return fail(std::move(prog).error().with_context(cfg_path));
    b.seccomp = std::move(prog).value();
  }
  return b;
}

}  // namespace kern::bundle
