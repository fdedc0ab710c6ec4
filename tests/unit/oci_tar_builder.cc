// In-memory tar building for tests; see oci_tar_builder.h.
#include "oci_tar_builder.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

namespace kern::oci::testing {
namespace {

la_ssize_t append(struct archive*, void* out, const void* buf, size_t n) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

}  // namespace

std::string TarBuilder::build(const std::string& filter) const {
  auto api_r = dl::archive_api();
  if (!api_r) {
    ADD_FAILURE() << api_r.error().what();
    return {};
  }
  const dl::ArchiveApi& api = **api_r;
  std::string out;
  struct archive* a = api.write_new();
  api.write_set_format_pax_restricted(a);
  if (filter == "gzip") api.write_add_filter_gzip(a);
  else if (filter == "zstd") api.write_add_filter_zstd(a);
  else api.write_add_filter_none(a);
  api.write_set_bytes_in_last_block(a, 1);
  api.write_open(a, &out, nullptr, append, nullptr);
  struct archive_entry* e = api.entry_new();
  for (const Item& it : items_) {
    api.entry_clear(e);
    api.entry_set_pathname(e, it.name.c_str());
    api.entry_set_filetype(e, it.type);
    api.entry_set_perm(e, it.mode);
    api.entry_set_uid(e, it.uid);
    api.entry_set_gid(e, it.gid);
    api.entry_set_mtime(e, 1700000000, 0);
    if (!it.symlink.empty()) api.entry_set_symlink(e, it.symlink.c_str());
    if (!it.hardlink.empty()) api.entry_set_hardlink(e, it.hardlink.c_str());
    if (it.type == S_IFCHR || it.type == S_IFBLK) {
      api.entry_set_rdevmajor(e, 1);
      api.entry_set_rdevminor(e, 3);
    }
    api.entry_set_size(e, static_cast<la_int64_t>(it.data.size()));
    if (api.write_header(a, e) != ARCHIVE_OK) ADD_FAILURE() << "write_header " << it.name << ": " << api.error_string(a);
    if (!it.data.empty()) api.write_data(a, it.data.data(), it.data.size());
  }
  api.entry_free(e);
  api.write_close(a);
  api.write_free(a);
  return out;
}

std::string patch_declared_size(std::string tar, const std::string& name, unsigned long long size) {
  for (size_t off = 0; off + 512 <= tar.size(); off += 512) {
    if (tar.compare(off, name.size(), name) != 0) continue;
    char field[13];
    std::snprintf(field, sizeof field, "%011llo", size);
    std::memcpy(&tar[off + 124], field, 12);
    std::memset(&tar[off + 148], ' ', 8);
    unsigned sum = 0;
    for (size_t i = 0; i < 512; ++i) sum += static_cast<unsigned char>(tar[off + i]);
    char chk[8];
    std::snprintf(chk, sizeof chk, "%06o", sum);
    std::memcpy(&tar[off + 148], chk, 7);
    tar[off + 155] = ' ';
    return tar;
  }
  ADD_FAILURE() << "no header named " << name;
  return tar;
}

}  // namespace kern::oci::testing
