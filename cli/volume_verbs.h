// `kern volume create|ls|inspect|rm|prune`: named volumes (runtime/volume_store.h), as docker
// volume's verbs. volume_command.cc adds the `volume` verb; each subcommand lives in its own
// file (volume_create.cc, volume_ls.cc, ...) and is added to it by the function named here.
#pragma once

#include <nlohmann/json.hpp>

#include "cli/verb.h"
#include "runtime/volume_store.h"

namespace kern::cli::volume_verbs {

void add_create(CLI::App* volume, VerbContext& ctx);
void add_ls(CLI::App* volume, VerbContext& ctx);
void add_inspect(CLI::App* volume, VerbContext& ctx);
void add_rm(CLI::App* volume, VerbContext& ctx);
void add_prune(CLI::App* volume, VerbContext& ctx);

// Docker's object of a volume: CreatedAt (RFC 3339, UTC), Driver "local", Labels (an object,
// null without any), Mountpoint, Name, Options (null), Scope "local".
nlohmann::ordered_json volume_object(const VolumeInfo& v);
// The store of the caller's volumes.
VolumeStore volume_store();
// A refusal of removing `name` while `boxes` mount it (kind config, naming them).
Error volume_in_use(const std::string& name, const std::vector<std::string>& boxes);

}  // namespace kern::cli::volume_verbs
