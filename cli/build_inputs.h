// What kern build reads before it builds anything: the context directory and its .dockerignore,
// the Dockerfile, the --build-arg and --secret values and SOURCE_DATE_EPOCH; and the stages of
// the Dockerfile (its global ARGs, each FROM and its instructions), which of them a target needs.
// Any process.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli/build_exec.h"
#include "oci/build/dockerfile.h"
#include "oci/build/dockerignore.h"
#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::cli {

struct BuildInputs {
  std::string context_dir;  // absolute
  UniqueFd context_fd;
  oci::build::Dockerfile dockerfile;
  std::optional<oci::build::IgnoreRules> ignore;
  std::map<std::string, std::string> build_args;  // --build-arg
  std::map<std::string, std::string> secrets;     // --secret id -> file
  std::optional<int64_t> clamp;                   // SOURCE_DATE_EPOCH
  int64_t now = 0;                                // the build's time (SOURCE_DATE_EPOCH when set)
};

Result<BuildInputs> read_build_inputs(const BuildOptions& o);

// "a=1,b,c=3" as its fields in order; a field without "=" has the value `bare`. Pure.
std::vector<std::pair<std::string, std::string>> comma_fields(const std::string& text, const std::string& bare);

struct StageDef {
  std::string name;  // AS name, lower-cased; "" when none
  oci::build::Instruction from;
  std::vector<oci::build::Instruction> body;
};

struct StagePlan {
  std::map<std::string, std::string> global_args;  // ARGs before the first FROM, with their values
  std::set<std::string> declared;                  // every ARG name the Dockerfile declares
  std::vector<StageDef> stages;
};

// The stages of `df`; the global ARGs take `build_args` first. Pure.
Result<StagePlan> plan_stages(const oci::build::Dockerfile& df, const std::map<std::string, std::string>& build_args);
// FROM's words after the global ARGs: {IMAGE} or {IMAGE, "AS", NAME}.
Result<std::vector<std::string>> from_words(const StagePlan& plan, const oci::build::Instruction& from, char escape);
// An earlier stage (than `before`) by name (any case) or number.
std::optional<size_t> stage_named(const StagePlan& plan, const std::string& text, size_t before);
// --target's stage, the last one without it.
Result<size_t> target_stage(const StagePlan& plan, const std::string& target);
// The target and the stages it needs (FROM, COPY --from, RUN --mount from=), in order.
Result<std::set<size_t>> needed_stages(const StagePlan& plan, size_t target, char escape);

}  // namespace kern::cli
