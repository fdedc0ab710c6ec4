// BoxOptions + environment + image config + profiles -> BoxSpec. The only place that knows
// precedence: an explicit flag beats a profile, a profile beats the image config, the image
// config beats the built-in default (kern-box(1), kern(1), kern.toml(5)).
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/box_client.h"
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

// `client` names the command in messages ("kern box", "kern kernel start") and says what its
// launch can do beyond the common flags.
Result<BuiltBox> build_box_spec(const BoxOptions& o, const BoxClient& client);

// -u of kern box and kern exec, before any lookup: "UID[:GID]" or "NAME[:GID]" (ids of at most
// 9 digits). An empty user, or a group that is empty or not a number, is refused with the same
// line by both verbs. `uid` is set when the user is numeric; `gid` when a group was given.
struct UserWords {
  std::string user;
  std::optional<unsigned long> uid, gid;
};
// `what` names the source in messages ("-u", "the image's User"); a bad -u is a usage error, a
// bad User the image's.
Result<UserWords> parse_user_words(const std::string& text, const std::string& what = "-u");
// The uid and gid of user `name` in the /etc/passwd of the tree at `root`, resolved inside it (a
// symlinked etc cannot make kern read the host's); nullopt when it has none or cannot be read.
std::optional<std::pair<unsigned long, unsigned long>> passwd_ids(int root, const std::string& name);
// The home directory of uid `uid` in the same file; nullopt when it has no such line.
std::optional<std::string> passwd_home(int root, unsigned long uid);
// A user name's uid and gid in the box's /etc/passwd; nullopt when it has none.
using PasswdLookup = std::function<std::optional<std::pair<unsigned long, unsigned long>>(const std::string&)>;
// -u of kern box and kern exec to ids: parse_user_words, a NAME through `lookup` (its gid then the
// name's own group), an explicit GID last. Without `uid_range` (a box that maps only its id 0)
// any other id is refused. One function, so both verbs give the same ids or the same line.
Result<std::pair<uid_t, gid_t>> resolve_user_ids(const std::string& text, const PasswdLookup& lookup, bool uid_range,
                                                 const std::string& what = "-u");

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
