// Builds tar archives in memory with libarchive's writer (through kern's loader), for the
// unpacker's tests. Test-only.
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "oci/dl/archive_api.h"

namespace kern::oci::testing {

class TarBuilder {
 public:
  TarBuilder& dir(const std::string& name, mode_t mode = 0755) { return add(name, S_IFDIR, mode, ""); }
  TarBuilder& file(const std::string& name, const std::string& data, mode_t mode = 0644,
                   int uid = 0, int gid = 0) {
    return add(name, S_IFREG, mode, data, "", "", uid, gid);
  }
  TarBuilder& symlink(const std::string& name, const std::string& target) {
    return add(name, S_IFLNK, 0777, "", target);
  }
  TarBuilder& hardlink(const std::string& name, const std::string& target) {
    return add(name, S_IFREG, 0644, "", "", target);
  }
  TarBuilder& node(const std::string& name, mode_t type) { return add(name, type, 0644, ""); }

  // "none", "gzip" or "zstd".
  std::string build(const std::string& filter = "none") const;

 private:
  struct Item {
    std::string name;
    mode_t type, mode;
    std::string data, symlink, hardlink;
    int uid, gid;
  };
  TarBuilder& add(const std::string& name, mode_t type, mode_t mode, const std::string& data,
                  const std::string& symlink = "", const std::string& hardlink = "", int uid = 0,
                  int gid = 0) {
    items_.push_back(Item{name, type, mode, data, symlink, hardlink, uid, gid});
    return *this;
  }
  std::vector<Item> items_;
};

// Rewrites the size field of the first ustar header whose name starts with `name` and fixes
// its checksum: a header that promises more data than the stream holds.
std::string patch_declared_size(std::string tar, const std::string& name, unsigned long long size);

}  // namespace kern::oci::testing
