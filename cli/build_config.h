// The Dockerfile instructions that change only an image's config (ENV, LABEL, WORKDIR, USER,
// CMD, ENTRYPOINT, EXPOSE, VOLUME, STOPSIGNAL, HEALTHCHECK, SHELL, ONBUILD, MAINTAINER), applied
// to the config document as Docker applies them. Shared by kern build and kern commit --change.
// Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oci/build/dockerfile.h"
#include "runtime/sys/error.h"

namespace kern::cli {

// The variables an instruction is expanded with: the config's Env, then the build's ARGs in
// scope (an ENV of the same name wins, as in Docker).
oci::build::Lookup build_lookup(const nlohmann::json& config, const std::map<std::string, std::string>& args);

// The config's Env as a map lookup.
std::optional<std::string> env_value(const nlohmann::json& config, std::string_view key);
// Sets KEY=VALUE in the config's Env, in place when it is there.
void set_env(nlohmann::json& config, const std::string& key, const std::string& value);

// The shell of shell-form RUN, CMD and ENTRYPOINT: the config's Shell, else /bin/sh -c.
std::vector<std::string> build_shell(const nlohmann::json& config);

// Whether `keyword` only changes the config.
bool config_instruction(const std::string& keyword);

// Applies one such instruction to `image` (the whole config document; its "config" object is
// changed). `args` are the ARGs in scope. Returns the text for the image's history
// ("ENV A=1"), after expansion.
Result<std::string> apply_config_instruction(nlohmann::json& image, const oci::build::Instruction& in,
                                             const std::map<std::string, std::string>& args, char escape);

// A relative WORKDIR against the current one; "/" when none.
std::string join_workdir(const std::string& current, const std::string& path);

}  // namespace kern::cli
