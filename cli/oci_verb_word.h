// Which verb a `kern-oci ...` or `kern oci ...` command line names, so that the oci verb can
// build only that verb's flags (oci_command.cc; CLI11's options are most of a short verb's
// start-up). The answer is "none" whenever building one verb could parse the words differently
// from building all of them: help anywhere before a "--", a flag before the verb that is not one
// of the runtime's global flags, or a first word that is no verb.
#pragma once

#include <string_view>

namespace kern::cli {

// argv as main got it; `verbs`: the verb names, `count` of them. The verb's index, or -1.
int oci_verb_named(int argc, const char* const* argv, const char* const* verbs, int count);

}  // namespace kern::cli
