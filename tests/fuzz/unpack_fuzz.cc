// libFuzzer target for the layer unpacker: any byte string as a layer (tar, gzip, zstd, xz),
// unpacked twice on top of itself (so whiteouts and replacements meet a lower layer). The oracle
// beyond the sanitizers: nothing outside the tree's root may change. A directory next to the
// root holds a sentinel file and a symlink target; after every input the fuzzer checks that the
// neighbour holds exactly what it held, and aborts otherwise.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "oci/layer_unpack.h"
#include "oci/tree_writer.h"
#include "runtime/sys/syscall.h"

namespace {

std::string g_base;

std::string listing(const std::string& dir) {
  std::string out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return "<missing>";
  while (struct dirent* e = ::readdir(d)) {
    // ".." of the base is /tmp, whose link count moves whenever anyone makes a directory there.
    if (std::strcmp(e->d_name, "..") == 0) continue;
    struct stat st;
    std::string p = dir + "/" + e->d_name;
    if (::lstat(p.c_str(), &st) == 0) out += std::string(e->d_name) + ":" + std::to_string(st.st_mode) + ":" +
                                             std::to_string(st.st_size) + ":" + std::to_string(st.st_nlink) + ";";
  }
  ::closedir(d);
  return out;
}

std::string g_expected;

void setup() {
  char tmpl[] = "/tmp/kern-fuzz-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) std::abort();
  g_base = tmpl;
  std::string outside = g_base + "/outside";
  ::mkdir(outside.c_str(), 0755);
  FILE* f = std::fopen((outside + "/victim").c_str(), "w");
  std::fputs("host data\n", f);
  std::fclose(f);
  g_expected = listing(outside) + "|" + listing(g_base);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (g_base.empty()) setup();
  std::string root = g_base + "/root";
  ::mkdir(root.c_str(), 0755);
  {
    kern::UniqueFd fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    kern::oci::UnpackLimits limits;
    limits.max_total_bytes = 64 << 20;
    limits.max_entries = 20000;
    auto w = kern::oci::TreeWriter::open(fd.get(), limits);
    if (!w) std::abort();
    for (int layer = 0; layer < 2; ++layer)
      if (!kern::oci::unpack_layer_memory(*w, data, size)) break;
    kern::UniqueFd base(::open(g_base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    (void)w->finish(base.get(), "owners.jsonl");
  }
  (void)kern::sys::remove_tree(AT_FDCWD, root);
  ::unlink((g_base + "/owners.jsonl").c_str());
  std::string now = listing(g_base + "/outside") + "|" + listing(g_base);
  if (now != g_expected) {
    std::fprintf(stderr, "unpack changed something outside the root:\n  before %s\n  after  %s\n", g_expected.c_str(),
                 now.c_str());
    std::abort();
  }
  return 0;
}
