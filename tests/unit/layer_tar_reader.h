// Reads a layer tar back (through kern's libarchive loader) into a list of entries, for the
// tests of the code that writes layers (oci/layer_tar.h and its callers). Test-only.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "oci/dl/archive_api.h"
#include "runtime/sys/error.h"

namespace kern::oci::testing {

struct ReadEntry {
  std::string path;  // as stored, less the "/" a tar writer may end a directory's name with
  char type = '?';  // 'd' dir, 'f' regular, 'l' symlink, 'h' hard link, '?' other
  unsigned perm = 0;
  int64_t uid = -1, gid = -1;
  int64_t mtime = 0;
  int64_t size = 0;
  std::string link;  // symlink or hard link target
  std::string data;
};

// Every entry of the tar in `bytes`, in order; an error for a damaged stream.
inline Result<std::vector<ReadEntry>> read_layer_tar(const std::string& bytes) {
  KERN_TRY_ASSIGN(const dl::ArchiveApi* api, dl::archive_api());
  struct archive* a = api->read_new();
  if (!a) return fail(ErrorKind::internal, ENOMEM, "archive_read_new");
  struct Guard {
    const dl::ArchiveApi* api;
    struct archive* a;
    ~Guard() { api->read_free(a); }
  } guard{api, a};
  api->read_support_format_tar(a);
  api->read_support_filter_none(a);
  if (api->read_open_memory(a, bytes.data(), bytes.size()) != ARCHIVE_OK)
    return fail(dl::archive_error(*api, a, "opening the tar"));
  std::vector<ReadEntry> out;
  for (;;) {
    struct archive_entry* e = nullptr;
    int rc = api->read_next_header(a, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK) return fail(dl::archive_error(*api, a, "reading a header"));
    ReadEntry r;
    r.path = api->entry_pathname(e) ? api->entry_pathname(e) : "";
    r.perm = static_cast<unsigned>(api->entry_mode(e) & 07777);
    r.uid = api->entry_uid(e);
    r.gid = api->entry_gid(e);
    r.mtime = api->entry_mtime(e);
    r.size = api->entry_size(e);
    if (const char* h = api->entry_hardlink(e)) {
      r.type = 'h';
      r.link = h;
    } else {
      switch (api->entry_filetype(e)) {
        case AE_IFDIR:
          r.type = 'd';
          if (r.path.size() > 1 && r.path.back() == '/') r.path.pop_back();
          break;
        case AE_IFREG: r.type = 'f'; break;
        case AE_IFLNK:
          r.type = 'l';
          r.link = api->entry_symlink(e) ? api->entry_symlink(e) : "";
          break;
        default: r.type = '?';
      }
    }
    char buf[4096];
    for (;;) {
      la_ssize_t n = api->read_data(a, buf, sizeof buf);
      if (n < 0) return fail(dl::archive_error(*api, a, "reading data of " + r.path));
      if (n == 0) break;
      r.data.append(buf, static_cast<size_t>(n));
    }
    out.push_back(std::move(r));
  }
  return out;
}

// "d etc", "f etc/passwd", "l bin -> usr/bin", "h b => a": one line per entry, for comparing
// whole lists at once.
inline std::vector<std::string> layer_tar_outline(const std::vector<ReadEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    std::string s(1, e.type);
    s += " " + e.path;
    if (e.type == 'l') s += " -> " + e.link;
    if (e.type == 'h') s += " => " + e.link;
    out.push_back(s);
  }
  return out;
}

// The whole content of the file at `path`.
inline std::string slurp_file(const std::string& path) {
  std::string s;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return s;
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return s;
}

}  // namespace kern::oci::testing
