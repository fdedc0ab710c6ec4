// What `kern box --image REF` calls: turn a reference into unpacked, read-only root file system
// layers and the image config. Runs in the launcher process, before clone.
//
// For an image already in the store this is the fast path of every box start: it reads one small
// JSON record (written last, at the end of an import), takes a shared flock on the image's tree so
// that `kern rmi`/`kern gc` leave it alone while the box lives, and loads none of libarchive,
// libcurl or libcrypto. Only a miss (or `--pull always`) imports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern::oci {

enum class PullPolicy { missing, never, always };

// The parts of the OCI image config a box applies (kern(1)).
// The image config's Healthcheck (Docker's; OCI images built by docker or podman --format
// docker carry it): Test is ["CMD", argv...], ["CMD-SHELL", "command"] or ["NONE"]; durations
// in nanoseconds, 0 for the default.
struct ImageHealthcheck {
  std::vector<std::string> test;
  uint64_t interval_ns = 0, timeout_ns = 0, start_period_ns = 0;
  unsigned retries = 0;
};

struct ImageConfig {
  std::vector<std::string> entrypoint, cmd, env;
  std::string working_dir, user;
  std::optional<ImageHealthcheck> healthcheck;
};

struct ResolvedImage {
  std::string ref;     // normalised: "docker.io/library/busybox:latest", "oci:/abs/dir:tag", ...
  std::string digest;  // the manifest digest, "sha256:<64 hex>"
  // Absolute paths of the unpacked layer dirs, topmost first, ready to be overlay lowerdirs.
  // kern flattens the layers of an image into one tree at import time (whiteouts applied then),
  // so today this holds exactly one directory; callers must not rely on that.
  std::vector<std::string> lower_dirs;
  ImageConfig config;
  std::string architecture;  // the image config's ("amd64", "arm64", ...), "" when it names none
  // File ownership and mode bits the unpacker could not reproduce as an unprivileged user
  // (uid/gid other than 0, setuid/setgid), as JSON lines {"path","uid","gid","mode"}; empty when
  // the image has none. A box with --uid-range can apply it.
  std::string ownership_file;
  // A shared flock on the tree: keep this object alive while a box uses lower_dirs.
  UniqueFd lock;
};

// "missing" | "never" | "always"; anything else is a usage error.
Result<PullPolicy> parse_pull_policy(std::string_view text);

// Finds REF in the local store, pulling or loading it as the policy says. `never` on an image
// that is not in the store fails (ErrorKind::image) before anything is created.
Result<ResolvedImage> resolve_for_box(const std::string& ref, PullPolicy policy);

}  // namespace kern::oci
