// Docker's --mount type=bind|tmpfs,KEY=VALUE,... for kern box (kern-box(1)). Pure: the value is
// split and checked here; the bind's source is canonicalised and checked against the bind
// refusals by cli/spec_builder.cc, the same way as a -v source, and both end up in the spec's
// binds and tmpfs mounts.
#pragma once

#include <string>
#include <vector>

#include "runtime/box_spec.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct MountFlag {
  enum class Type { bind, tmpfs } type = Type::bind;
  BindMount bind;    // type bind: source as written (absolute, not yet canonical), dest normalised
  TmpfsMount tmpfs;  // type tmpfs
};

// Splits one --mount value as Docker does (comma-separated fields, a field may be double-quoted
// with "" for a quote, so a path may hold ',' or ':'), then checks it:
//   type        bind | volume | tmpfs (volume: a named volume, its bind's `volume` set)
//   source,src  bind: an absolute host path; volume: the volume's name
//   destination,dst,target  required; the rules of a -v destination (tmpfs: also not /dev)
//   readonly,ro [=true|false|1|0]  bind and volume
//   bind-propagation  rprivate only (kern's binds never propagate)
//   bind-recursive    enabled | readonly (kern's binds are recursive, :ro reaches every submount)
//   consistency       accepted and ignored (as on Linux Docker)
//   tmpfs-size        a size as --tmpfs takes it
//   tmpfs-mode        1777 only (the mode kern gives every tmpfs)
// A key given twice, an unknown key or value is an error naming it.
Result<MountFlag> parse_mount_flag(const std::string& value);

// Docker's CSV split of a --mount value; exposed for tests. An unterminated quote is an error.
Result<std::vector<std::string>> split_mount_fields(const std::string& value);

}  // namespace kern::cli
