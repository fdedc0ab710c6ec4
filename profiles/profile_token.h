// Profile tokens on the command line (kern-box(1)): `vcpu:NAME`, `vdisk:NAME`,
// `vgpio:NAME` with NAME matching [A-Za-z0-9][A-Za-z0-9._-]*. Pure parsing; no file is read.
#pragma once

#include <string>
#include <string_view>

#include "runtime/sys/error.h"

namespace kern::profiles {

enum class ProfileKind { vcpu, vdisk, vgpio };
std::string_view profile_kind_name(ProfileKind k);  // "vcpu", "vdisk", "vgpio"

struct ProfileToken {
  ProfileKind kind;
  std::string name;
  std::string text;  // the token as given, for messages
};

// Whether a bare command-line word is meant as a profile token: a lowercase word, a colon, then
// anything ("vcpu:x", "vram:x", "vgpio:a;b"). Such a word goes to parse_profile_token(), which
// rejects an unknown kind or a malformed name; any other bare word is not a token.
bool looks_like_profile_token(std::string_view word);

// "vcpu:heavy" -> {vcpu, "heavy"}. A malformed token or an unknown kind is a config Error that
// names the token (sanitized).
Result<ProfileToken> parse_profile_token(std::string_view word);

// Whether `name` is a valid profile or backend name: [A-Za-z0-9][A-Za-z0-9._-]*, 1-64 chars.
bool valid_profile_name(std::string_view name);

}  // namespace kern::profiles
