// The build cache's files; see build_cache.h.
#include "cli/build_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/digest.h"
#include "oci/reference.h"
#include "runtime/sys/fdio.h"

namespace kern::cli {

Result<std::string> step_key(const std::string& parent, const std::string& text) {
  return oci::sha256_of(parent + "\n" + std::to_string(text.size()) + ":" + text);
}

std::string BuildCache::dir() const { return store_.root() + "/build-cache"; }

std::optional<std::string> BuildCache::find(const std::string& key) const {
  if (!oci::valid_digest(key)) return std::nullopt;
  auto text = sys::read_file(AT_FDCWD, dir() + "/" + std::string(oci::digest_hex(key)), 256);
  if (!text) return std::nullopt;
  std::string digest = *text;
  while (!digest.empty() && digest.back() == '\n') digest.pop_back();
  if (!oci::valid_digest(digest)) return std::nullopt;
  auto rec = store_.find_image(digest);
  if (!rec || !*rec || !store_.has_tree((*rec)->tree)) return std::nullopt;
  return digest;
}

void BuildCache::put(const std::string& key, const std::string& image_digest) const {
  if (!oci::valid_digest(key)) return;
  ::mkdir(dir().c_str(), 0700);
  std::string name = dir() + "/" + std::string(oci::digest_hex(key));
  std::string tmp = name + ".tmp" + std::to_string(::getpid());
  if (sys::write_file(AT_FDCWD, tmp, image_digest + "\n", 0600)) {
    if (::rename(tmp.c_str(), name.c_str()) != 0) ::unlink(tmp.c_str());
  }
}

std::vector<std::pair<std::string, std::string>> BuildCache::entries() const {
  std::vector<std::pair<std::string, std::string>> out;
  DIR* d = ::opendir(dir().c_str());
  if (!d) return out;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() != 64) continue;
    auto text = sys::read_file(AT_FDCWD, dir() + "/" + n, 256);
    if (!text) continue;
    std::string digest = *text;
    while (!digest.empty() && digest.back() == '\n') digest.pop_back();
    out.emplace_back("sha256:" + n, digest);
  }
  ::closedir(d);
  return out;
}

size_t BuildCache::clear() const {
  size_t n = 0;
  DIR* d = ::opendir(dir().c_str());
  if (!d) return 0;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (::unlinkat(::dirfd(d), name.c_str(), 0) == 0) ++n;
  }
  ::closedir(d);
  return n;
}

}  // namespace kern::cli
