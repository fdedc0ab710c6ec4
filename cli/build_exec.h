// kern build's executor: a Dockerfile, its context and the build's options in, an image in the
// store out. Stages are built in order, only those the target needs; each step that adds a layer
// (RUN, COPY, ADD, a WORKDIR that makes its directory) ends as an image of the store, named by
// the cache key of the step (build_cache.h), so that the next build takes it when nothing it
// depends on changed. Launcher side (RUN starts boxes), before any clone.
#pragma once

#include <string>
#include <vector>

#include "runtime/sys/error.h"

namespace kern::cli {

struct BuildOptions {
  std::vector<std::string> tags;          // -t, normalised by kern tag's rules
  std::string file;                       // -f; default CONTEXT/Dockerfile, else Containerfile
  std::vector<std::string> build_args;    // --build-arg K=V, or K (from the environment)
  std::string target;                     // --target STAGE
  bool no_cache = false;
  std::string network = "none";           // --network none|host|private
  std::vector<std::string> secrets;       // --secret id=X,src=FILE
  std::vector<std::string> labels;        // --label K=V
  bool quiet = false;                     // -q: the image id only
  std::string context = ".";
  std::string iidfile;                    // --iidfile: the image id written there
  bool pull = false;                      // --pull: pull every FROM image again
};

struct BuildResult {
  std::string image_id;  // the config digest, as kern images shows it
  std::string digest;    // the manifest digest
  size_t steps = 0, cached = 0, ran = 0;
};

Result<BuildResult> run_build(const BuildOptions& o);

}  // namespace kern::cli
