// kern.toml from disk to a checked ProfileSet; see profile_loader.h.
#include "profiles/profile_loader.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include "profiles/key_notes.h"
#include "profiles/toml_profiles.h"
#include "profiles/vcpu_extends.h"
#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"
#include "runtime/sys/syscall.h"

namespace kern::profiles {

size_t LoadOutcome::error_count() const {
  size_t n = 0;
  for (const Diagnostic& d : problems) n += d.is_error() ? 1 : 0;
  return n;
}

Result<LoadOutcome> check_profiles_file(const std::string& path, const DeviceInspector& inspect) {
  LoadOutcome out;
  out.set.file = path;
  std::string shown = log::quoted(path);
  auto fd = sys::open_at(AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (!fd) {
    if (fd.error().sys_errno() == ENOENT) return out;
    return fail(Error(ErrorKind::config, fd.error().sys_errno(), "reading configuration " + shown));
  }
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return fail_errno("fstat " + shown, ErrorKind::config);
  if (!S_ISREG(st.st_mode)) return fail(ErrorKind::config, 0, "configuration " + shown + " is not a regular file");
  auto text = sys::read_all(fd->get(), kMaxConfigBytes, "configuration " + shown);
  if (!text) return fail(Error(ErrorKind::config, text.error().sys_errno(), text.error().message()));
  out.found = true;
  ParseOutcome parsed = parse_profiles(*text, path);
  out.set = std::move(parsed.set);
  out.problems = std::move(parsed.problems);
  // Cross checks run on what could be read, so one pass shows every problem; a table whose
  // key failed to parse holds no value for it, which validation skips.
  bool syntax_error = !out.problems.empty() && !out.set.kern.present && out.set.cpu.empty() && out.set.vcpu.empty() &&
                      out.set.disk.empty() && out.set.vdisk.empty() && out.set.gpio.empty() &&
                      out.set.vgpio.empty();
  if (!syntax_error) {
    for (auto& d : resolve_extends(out.set)) out.problems.push_back(std::move(d));
    for (auto& d : validate_profiles(out.set, inspect)) out.problems.push_back(std::move(d));
    for (auto& d : no_effect_notes(out.set)) out.problems.push_back(std::move(d));
    std::stable_sort(out.problems.begin(), out.problems.end(), [](const Diagnostic& a, const Diagnostic& b) {
      return a.at.line != b.at.line ? a.at.line < b.at.line : a.at.column < b.at.column;
    });
  }
  return out;
}

Result<ProfileSet> load_profiles(const std::string& path, bool missing_ok) {
  KERN_TRY_ASSIGN(LoadOutcome o, check_profiles_file(path, inspect_device));
  if (!o.found) {
    if (!missing_ok)
      return fail(ErrorKind::config, ENOENT, "configuration \"" + log::sanitize(path) + "\"");
    ProfileSet empty;
    empty.file = path;
    return empty;
  }
  size_t errors = o.error_count();
  if (errors == 0) {
    for (const Diagnostic& d : o.problems)
      if (d.loud) log::note(o.set.where(d.at) + ": " + d.message);
    return std::move(o.set);
  }
  const Diagnostic* first = nullptr;
  for (const Diagnostic& d : o.problems)
    if (d.is_error()) { first = &d; break; }
  std::string msg = o.set.where(first->at) + ": " + first->message;
  if (errors > 1)
    msg += " (and " + std::to_string(errors - 1) + " more; run: kern validate " + log::sanitize(path) + ")";
  return fail(ErrorKind::config, 0, msg);
}

}  // namespace kern::profiles
