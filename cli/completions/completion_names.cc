// The names `kern completion --list` prints (completion_names.h).
#include "cli/completions/completion_names.h"

#include <set>
#include <string_view>

#include "oci/store.h"
#include "runtime/registry.h"
#include "runtime/sys/paths.h"
#include "runtime/volume_store.h"

namespace kern::cli {
namespace {

// The names a user types for the images in the store: Docker Hub's official images without
// "docker.io/library/", other Docker Hub images without "docker.io/", the rest as stored.
std::string typed_name(const std::string& ref) {
  for (std::string_view prefix : {"docker.io/library/", "docker.io/"})
    if (ref.rfind(prefix, 0) == 0 && ref.find('/', prefix.size()) == std::string::npos) return ref.substr(prefix.size());
  return ref.rfind("docker.io/", 0) == 0 ? ref.substr(10) : ref;
}

// A name a shell would split or misread is left out rather than offered broken.
bool plain_word(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (c <= ' ' || c == 0x7f || c == '\'' || c == '"' || c == '\\' || c == '$' || c == '`') return false;
  return true;
}

}  // namespace

Result<std::string> completion_names(const std::string& what) {
  std::set<std::string> names;
  if (what == "images") {
    auto store = oci::Store::open(false);
    if (!store) return std::string();  // no store yet: no names
    KERN_TRY_ASSIGN(oci::Store::Listing refs, store->list_refs());
    for (const auto& r : refs.records) names.insert(typed_name(r.ref));
  } else if (what == "boxes" || what == "kernels") {
    auto rt = paths::runtime_dir();
    if (!rt) return std::string();
    for (const auto& b : list_boxes_all(*rt, false))
      if ((b.kind == "kernel") == (what == "kernels")) names.insert(b.name);
  } else if (what == "volumes") {
    for (const auto& v : VolumeStore(VolumeStore::default_root()).list()) names.insert(v.name);
  } else {
    return fail(ErrorKind::usage, 0,
                "kern completion --list: \"" + what + "\" is not images, boxes, kernels or volumes");
  }
  std::string out;
  for (const auto& n : names)
    if (plain_word(n)) out += n + "\n";
  return out;
}

}  // namespace kern::cli
