// --ulimit; see ulimit_flags.h.
#include "cli/ulimit_flags.h"

#include <sys/resource.h>

#include <cctype>
#include <cstdlib>

#include "runtime/bundle/oci_plan.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {

Error ulimit_error(const std::string& text, const std::string& why) {
  return Error(ErrorKind::usage, 0, "--ulimit \"" + log::sanitize(text) + "\": " + why)
      .with_hint("--ulimit nofile=1024:2048, --ulimit nproc=256, --ulimit core=0 (-1 or unlimited for none)");
}

bool parse_value(const std::string& v, uint64_t* out) {
  if (v == "-1" || v == "unlimited") {
    *out = RLIM_INFINITY;
    return true;
  }
  if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0]))) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = n;
  return true;
}

std::string value_text(uint64_t v) { return v == RLIM_INFINITY ? "unlimited" : std::to_string(v); }

}  // namespace

Result<RlimitSetting> parse_ulimit(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return fail(ulimit_error(text, "not NAME=SOFT[:HARD]"));
  std::string name = "RLIMIT_";
  for (char c : text.substr(0, eq)) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  RlimitSetting r;
  r.resource = bundle::rlimit_resource(name);
  r.name = name;
  if (r.resource < 0) return fail(ulimit_error(text, "\"" + text.substr(0, eq) + "\" is not a resource limit"));
  std::string values = text.substr(eq + 1);
  size_t colon = values.find(':');
  if (!parse_value(values.substr(0, colon), &r.soft) ||
      (colon != std::string::npos && !parse_value(values.substr(colon + 1), &r.hard)))
    return fail(ulimit_error(text, "a value is not a number, -1 or unlimited"));
  if (colon == std::string::npos) r.hard = r.soft;
  if (r.soft > r.hard) return fail(ulimit_error(text, "the soft limit is above the hard one"));
  return r;
}

Status check_ulimits(const std::vector<RlimitSetting>& limits) {
  for (const auto& l : limits) {
    struct rlimit cur;
    if (::getrlimit(static_cast<__rlimit_resource>(l.resource), &cur) != 0) return fail_errno("getrlimit " + l.name);
    if (cur.rlim_max != RLIM_INFINITY && l.hard > cur.rlim_max)
      return fail(Error(ErrorKind::usage, 0,
                        "--ulimit: the hard " + l.name + " here is " + value_text(cur.rlim_max) + ", and " +
                            value_text(l.hard) + " is above it")
                      .with_hint("a box can lower a limit, never raise one: ask for at most " +
                                 value_text(cur.rlim_max) + " (raise the host's first: ulimit -H, limits.conf)"));
  }
  return {};
}

}  // namespace kern::cli
