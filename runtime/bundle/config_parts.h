// Internal to the config parser: the pieces config_parse.cc and config_linux.cc share.
#pragma once

#include "runtime/bundle/config.h"
#include "runtime/bundle/json_node.h"

namespace kern::bundle {

Status parse_id_mappings(const JsonNode& obj, const char* key, std::vector<IdMapping>& out);
Status parse_linux(const JsonNode& l, Linux& out);
Status parse_seccomp(const JsonNode& s, Seccomp& out);
Status parse_resources(const JsonNode& r, Resources& out);

}  // namespace kern::bundle
