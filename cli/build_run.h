// One RUN of kern build: a box (the same plan and session as `kern box`) over the stage's image,
// with the build's network mode, the config's Env, WorkingDir and User and the build's ARGs, no
// host environment, /tmp the image's own; its upper directory, kept on the host, becomes the
// step's layer. Launcher side (the kern process), before any clone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "oci/layer_tar.h"
#include "oci/store.h"
#include "runtime/sys/error.h"

namespace kern::cli {

struct RunStep {
  std::string image;                  // "sha256:<manifest digest hex>" of the stage so far
  int lower_fd = -1;                  // that image's tree
  std::string owners_path;            // its owners file ("" when it has none)
  std::vector<std::string> argv;
  std::vector<std::string> env;       // KEY=VALUE
  std::string workdir = "/", user = "0";
  std::string network = "none";       // none | host | private
  std::vector<std::string> volumes;   // -v words: RUN --mount=type=cache and type=bind
  std::vector<std::string> secrets;   // --secret FILE:NAME: RUN --mount=type=secret
  std::optional<std::string> stdin_data;  // RUN CMD <<EOF: the heredoc on the command's stdin
  bool quiet = false;                 // -q: the step's output only when it fails
};

struct RunResult {
  int exit_code = 0;
  bool layer_written = false;  // false: the step changed nothing
  oci::LayerDigest layer;
};

// Runs the step; on exit code 0 writes its layer to `layer_dirfd`/`layer_name` (created).
Result<RunResult> run_step(const oci::Store& store, const RunStep& step, int layer_dirfd, const std::string& layer_name,
                           std::optional<int64_t> clamp_mtime);

}  // namespace kern::cli
