// How a verb plugs into kern's command line. Each verb file (box_command.cc, ps_command.cc, ...)
// defines one registration function and a file-scope `const VerbRegistration` naming it, so
// adding a verb never touches another verb's file. kern_cli is an OBJECT library: every
// registration is linked.
//
// A verb's parse callback stores what it needs and sets `ctx.action`; app.cc runs the action
// after CLI11 is done, and maps an Error through exit_codes.h. Nothing else calls exit().
#pragma once

#include "cli/cli11.h"

#include <functional>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct VerbContext {
  // Runs the verb; returns its exit code, or an Error for exit_codes.h to map.
  std::function<Result<int>()> action;
  // Which exit-code table applies to an Error from this verb.
  ExitTable table = ExitTable::verb;
  // In: build every flag (a command line that failed to parse is parsed again so, for the full
  // app's error). Out: the verb built only the flags the command line names (flag_filter.h).
  bool all_flags = false;
  bool flags_filtered = false;
};

using RegisterFn = void (*)(CLI::App& app, VerbContext& ctx);

// A verb: `order` sorts the help listing, `name` is the subcommand `fn` adds. CLI11 spends
// most of kern's start-up building options, so app.cc builds only the verb that argv names
// (all of them when it names none, for help and for the error about an unknown verb).
struct RegisteredVerb {
  int order;
  const char* name;
  RegisterFn fn;
};
struct VerbRegistration {
  VerbRegistration(int order, const char* name, RegisterFn fn);
};
std::vector<RegisteredVerb>& registered_verbs();
// The verbs to build for this command line: the one its first word names, else all, in order.
std::vector<RegisteredVerb> verbs_for(const std::vector<std::string>& head);

// argv as given, for verbs that parse part of it themselves (kern box splits at "--").
struct RawArgs {
  int argc = 0;
  char** argv = nullptr;
};
const RawArgs& raw_args();

// The words after the first "--" (the command of kern box, kern run, kern kernel start).
// app.cc hands CLI11 only what comes before it, so nothing of the command is read as a flag.
const std::vector<std::string>& trailing_command();
// Whether a "--" was given at all (an empty command after it is still "given").
bool has_trailing_separator();

}  // namespace kern::cli
