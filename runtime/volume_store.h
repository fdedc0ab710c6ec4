// Named volumes (kern volume, kern box -v NAME:DST): directories kern keeps for boxes under its
// data dir, <cache dir>/volumes/NAME, each holding the data a box sees (_data, owned by the
// caller, whatever a copy-up from an image gave it) and a small JSON record (volume.json: the
// creation time and labels). A volume outlives every box that mounted it; which boxes use one is
// read from their records (BoxRecord::volumes), not kept here.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/sys/error.h"
#include "runtime/sys/unique_fd.h"

namespace kern {

struct VolumeInfo {
  std::string name;
  std::string mountpoint;  // the _data directory
  int64_t created_unix = 0;
  std::vector<std::pair<std::string, std::string>> labels;
};

// Docker's rule for a volume name: [a-zA-Z0-9][a-zA-Z0-9_.-]*, here at most 128 characters.
bool valid_volume_name(const std::string& name);
// The same as a usage error naming `what` ("kern volume create", "-v"), with the rule as its hint.
Status check_volume_name(const std::string& name, const std::string& what);
// A fresh name as Docker gives an anonymous volume: 64 hex digits from getrandom.
std::string random_volume_name();
// The bytes of the regular files and symlinks below `dir` (no symlink followed), as du -sb
// counts them without the directories; 0 for a directory that cannot be read.
uint64_t tree_bytes(const std::string& dir);

class VolumeStore {
 public:
  // The store at `root` (made 0700 at the first create); default_root() is the caller's.
  explicit VolumeStore(std::string root) : root_(std::move(root)) {}
  static std::string default_root();

  const std::string& root() const { return root_; }
  std::string data_path(const std::string& name) const { return root_ + "/" + name + "/_data"; }

  // Makes volume NAME (an invalid name refused). An existing one is answered as it is, with
  // `*created` false; labels are kept only by the call that made it.
  Result<VolumeInfo> create(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels,
                            bool* created = nullptr) const;
  // Volume NAME, or an error of kind config naming it ("no volume named ...").
  Result<VolumeInfo> get(const std::string& name) const;
  // Every volume, sorted by name; an entry without its record or _data is left out.
  std::vector<VolumeInfo> list() const;
  // Whether the volume's _data holds nothing.
  bool is_empty(const std::string& name) const;
  // Removes volume NAME and everything in it (missing: an error of kind config). A volume held
  // (hold()) is refused, kind config.
  Status remove(const std::string& name) const;
  // Keeps volume NAME from remove() while the returned descriptor is open: a shared flock of its
  // record, which a box's start takes before its record names the volume. Missing: kind config.
  Result<UniqueFd> hold(const std::string& name) const;

 private:
  std::string root_;
};

}  // namespace kern
