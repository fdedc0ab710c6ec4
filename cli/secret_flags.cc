// --secret; see secret_flags.h.
#include "cli/secret_flags.h"

#include <fcntl.h>

#include <cctype>

#include "runtime/sys/fdio.h"
#include "runtime/sys/log.h"

namespace kern::cli {
namespace {

constexpr size_t kMaxSecret = 512 << 10;

bool secret_name_ok(const std::string& n) {
  if (n.empty() || n.size() > 255 || n == "." || n == "..") return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  return true;
}

}  // namespace

Result<std::pair<std::string, std::string>> read_secret(const std::string& text) {
  const char* hint = "--secret FILE[:NAME], e.g. --secret ./db_password.txt:db_password (/run/secrets/db_password)";
  size_t colon = text.rfind(':');
  std::string src = colon == std::string::npos ? text : text.substr(0, colon);
  std::string name = colon == std::string::npos ? src.substr(src.find_last_of('/') + 1) : text.substr(colon + 1);
  if (src.empty()) return fail(Error(ErrorKind::usage, 0, "--secret \"" + log::sanitize(text) + "\": no file").with_hint(hint));
  if (!secret_name_ok(name))
    return fail(Error(ErrorKind::usage, 0, "--secret \"" + log::sanitize(text) + "\": \"" + log::sanitize(name) +
                                               "\" is not a secret's name (letters, digits, '.', '_', '-')")
                    .with_hint(hint));
  auto bytes = sys::read_regular_file(AT_FDCWD, src, kMaxSecret);
  if (!bytes) return fail(std::move(bytes).error().with_context("--secret " + log::sanitize(src)));
  return std::make_pair(name, std::move(*bytes));
}

}  // namespace kern::cli
