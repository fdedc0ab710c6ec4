// Image references (kern(1)): parsing and normalisation. Pure; any process.
//
//   [registry/]repo[:tag][@sha256:HEX]   the first component is a registry when it contains '.'
//                                        or ':' or is "localhost"; otherwise Docker Hub, where a
//                                        one-part name gets "library/". Default tag "latest".
//   oci:DIR[:TAG]                        an OCI image layout directory
//   docker-archive:FILE                  a `docker save` tar
#pragma once

#include <string>
#include <string_view>

#include "runtime/sys/error.h"
#include "runtime/sys/paths.h"

namespace kern::oci {

inline constexpr std::string_view kDockerHub = "docker.io";

struct Reference {
  enum class Kind { registry, oci_layout, docker_archive };
  Kind kind = Kind::registry;
  std::string registry;    // "docker.io", "localhost:5000", "[::1]:5000"
  std::string repository;  // "library/busybox"
  std::string tag;         // "latest"; empty only when pinned by digest without a tag
  std::string digest;      // "sha256:<64 hex>" or empty
  std::string path;        // oci_layout / docker_archive: absolute, lexically clean

  // The normalised text: "docker.io/library/busybox:latest", "r:5000/a/b@sha256:..",
  // "oci:/abs/dir:tag", "docker-archive:/abs/file.tar".
  std::string str() const;
  // "registry/repository" (registry kind only).
  std::string name() const;
  // The registry is on this machine (localhost, 127.0.0.0/8, ::1): plain HTTP is allowed.
  bool loopback_registry() const;
};

// Parses `text`. Relative paths of oci:/docker-archive: are made absolute against `cwd` (the
// process's working directory when empty). A bad reference is ErrorKind::usage.
Result<Reference> parse_reference(std::string_view text, std::string_view cwd = {});

// Whether `text` is "sha256:" followed by 64 lowercase hex digits.
bool valid_digest(std::string_view text);
// Whether `text` is a valid tag: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}.
bool valid_tag(std::string_view text);

// For oci:/docker-archive: paths (runtime/sys/paths.h).
using paths::clean_absolute_path;

}  // namespace kern::oci
