// kern build's per-instruction cache: a step's key (the key of the step before it, the
// instruction after expansion and, for COPY and ADD, the content of what is copied; for RUN, the
// ARGs and the network mode it runs with) names the image the step made, in the store's
// build-cache/ directory. A hit whose image is gone (kern image prune, kern gc) is a miss. Any
// process.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "oci/store.h"
#include "runtime/sys/error.h"

namespace kern::cli {

// sha256 of the parent key and the step's text.
Result<std::string> step_key(const std::string& parent, const std::string& text);

class BuildCache {
 public:
  explicit BuildCache(const oci::Store& store) : store_(store) {}
  // The image a step with this key made, when it is still in the store whole.
  std::optional<std::string> find(const std::string& key) const;
  // Best effort: a cache that cannot be written only costs the next build time.
  void put(const std::string& key, const std::string& image_digest) const;
  // Every entry: key and image digest.
  std::vector<std::pair<std::string, std::string>> entries() const;
  // Removes the entry files; returns how many.
  size_t clear() const;
  std::string dir() const;

 private:
  const oci::Store& store_;
};

}  // namespace kern::cli
