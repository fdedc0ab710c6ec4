// BoxOptions + environment + image config + profiles -> BoxSpec. The only place that knows
// precedence: an explicit flag beats a profile, a profile beats the image config, the image
// config beats the built-in default (kern-box(1), kern(1), kern.toml(5)).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/box_options.h"
#include "cli/profile_apply.h"
#include "oci/image_resolver.h"
#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct BuiltBox {
  BoxSpec spec;
  std::optional<oci::ResolvedImage> image;  // keeps the image's shared lock while the box lives
  ProfileReport profiles;
  std::vector<std::string> config_path_used;
};

// `verb` names the command in messages ("kern box", "kern kernel start").
Result<BuiltBox> build_box_spec(const BoxOptions& o, const std::string& verb);

// KERN_SECCOMP=allowlist-audit is carried out by the foreground kern box only (its launcher holds
// the filter's listener): a usage error for `what` ("kern box -d", "kern kernel start").
Status refuse_seccomp_audit(const BoxSpec& spec, const std::string& what);

// For --show-config: the resolved configuration as "key: value" lines.
std::string show_config(const BuiltBox& b);
// For --plan: the isolation sequence and device grants.
std::string show_plan(const BuiltBox& b);
// The same, with --json: one JSON object each (kern-box(1) names the keys).
std::string show_config_json(const BuiltBox& b);
std::string show_plan_json(const BuiltBox& b);

}  // namespace kern::cli
