// Profile token parsing; see profile_token.h.
#include "profiles/profile_token.h"

#include "runtime/sys/log.h"

namespace kern::profiles {

std::string_view profile_kind_name(ProfileKind k) {
  switch (k) {
    case ProfileKind::vcpu: return "vcpu";
    case ProfileKind::vdisk: return "vdisk";
    case ProfileKind::vgpio: return "vgpio";
  }
  return "vcpu";
}

bool valid_profile_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(name[0])) return false;
  for (char c : name)
    if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

bool looks_like_profile_token(std::string_view word) {
  size_t colon = word.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  for (size_t i = 0; i < colon; ++i)
    if (word[i] < 'a' || word[i] > 'z') return false;
  return true;
}

Result<ProfileToken> parse_profile_token(std::string_view word) {
  std::string shown = log::quoted(word);
  size_t colon = word.find(':');
  if (colon == std::string_view::npos)
    return fail(ErrorKind::config, 0,
                "profile token " + shown + " has no kind: expected vcpu:NAME, vdisk:NAME or vgpio:NAME");
  std::string_view kind = word.substr(0, colon);
  std::string_view name = word.substr(colon + 1);
  ProfileToken t{ProfileKind::vcpu, std::string(name), std::string(word)};
  if (kind == "vcpu") t.kind = ProfileKind::vcpu;
  else if (kind == "vdisk") t.kind = ProfileKind::vdisk;
  else if (kind == "vgpio") t.kind = ProfileKind::vgpio;
  else
    return fail(ErrorKind::config, 0,
                "profile token " + shown + ": unknown kind \"" + log::sanitize(kind) +
                    "\" (expected vcpu, vdisk or vgpio)");
  if (!valid_profile_name(name))
    return fail(ErrorKind::config, 0,
                "profile token " + shown +
                    ": malformed name (expected 1-64 of [A-Za-z0-9._-], starting with a letter or digit)");
  return t;
}

}  // namespace kern::profiles
