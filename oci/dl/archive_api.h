// libarchive, opened with dlopen on first use ("libarchive.so.13", Debian package libarchive13).
// The pointers are typed from <archive.h>, so a call through them is checked as a direct call.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include "runtime/sys/error.h"

namespace kern::oci::dl {

#define KERN_ARCHIVE_FUNCTIONS(X)                                   \
  X(read_new, archive_read_new)                                     \
  X(read_support_filter_gzip, archive_read_support_filter_gzip)     \
  X(read_support_filter_zstd, archive_read_support_filter_zstd)     \
  X(read_support_filter_xz, archive_read_support_filter_xz)         \
  X(read_support_filter_none, archive_read_support_filter_none)     \
  X(read_support_format_tar, archive_read_support_format_tar)       \
  X(read_support_format_raw, archive_read_support_format_raw)       \
  X(read_open, archive_read_open)                                   \
  X(read_open_fd, archive_read_open_fd)                             \
  X(read_open_memory, archive_read_open_memory)                     \
  X(read_next_header, archive_read_next_header)                     \
  X(read_data_block, archive_read_data_block)                       \
  X(read_data, archive_read_data)                                   \
  X(read_data_skip, archive_read_data_skip)                         \
  X(read_free, archive_read_free)                                   \
  X(read_header_position, archive_read_header_position)             \
  X(filter_code, archive_filter_code)                               \
  X(error_string, archive_error_string)                             \
  X(errno_of, archive_errno)                                        \
  X(write_new, archive_write_new)                                   \
  X(write_set_format_pax_restricted, archive_write_set_format_pax_restricted) \
  X(write_set_format_gnutar, archive_write_set_format_gnutar)       \
  X(write_add_filter_gzip, archive_write_add_filter_gzip)           \
  X(write_add_filter_zstd, archive_write_add_filter_zstd)           \
  X(write_add_filter_none, archive_write_add_filter_none)           \
  X(write_set_bytes_in_last_block, archive_write_set_bytes_in_last_block) \
  X(write_open_fd, archive_write_open_fd)                           \
  X(write_open, archive_write_open)                                 \
  X(write_header, archive_write_header)                             \
  X(write_data, archive_write_data)                                 \
  X(write_close, archive_write_close)                               \
  X(write_free, archive_write_free)                                 \
  X(entry_new, archive_entry_new)                                   \
  X(entry_free, archive_entry_free)                                 \
  X(entry_clear, archive_entry_clear)                               \
  X(entry_pathname, archive_entry_pathname)                         \
  X(entry_filetype, archive_entry_filetype)                         \
  X(entry_mode, archive_entry_mode)                                 \
  X(entry_size, archive_entry_size)                                 \
  X(entry_size_is_set, archive_entry_size_is_set)                   \
  X(entry_uid, archive_entry_uid)                                   \
  X(entry_gid, archive_entry_gid)                                   \
  X(entry_mtime, archive_entry_mtime)                               \
  X(entry_mtime_nsec, archive_entry_mtime_nsec)                     \
  X(entry_mtime_is_set, archive_entry_mtime_is_set)                 \
  X(entry_symlink, archive_entry_symlink)                           \
  X(entry_hardlink, archive_entry_hardlink)                         \
  X(entry_rdevmajor, archive_entry_rdevmajor)                       \
  X(entry_rdevminor, archive_entry_rdevminor)                       \
  X(entry_xattr_count, archive_entry_xattr_count)                   \
  X(entry_xattr_reset, archive_entry_xattr_reset)                   \
  X(entry_xattr_next, archive_entry_xattr_next)                     \
  X(entry_set_pathname, archive_entry_set_pathname)                 \
  X(entry_set_filetype, archive_entry_set_filetype)                 \
  X(entry_set_perm, archive_entry_set_perm)                         \
  X(entry_set_size, archive_entry_set_size)                         \
  X(entry_set_symlink, archive_entry_set_symlink)                   \
  X(entry_set_hardlink, archive_entry_set_hardlink)                 \
  X(entry_set_uid, archive_entry_set_uid)                           \
  X(entry_set_gid, archive_entry_set_gid)                           \
  X(entry_set_mtime, archive_entry_set_mtime)                       \
  X(entry_set_rdevmajor, archive_entry_set_rdevmajor)               \
  X(entry_set_rdevminor, archive_entry_set_rdevminor)                 \
  X(read_disk_new, archive_read_disk_new)                             \
  X(read_disk_set_symlink_physical, archive_read_disk_set_symlink_physical) \
  X(read_disk_set_symlink_hybrid, archive_read_disk_set_symlink_hybrid) \
  X(read_disk_set_behavior, archive_read_disk_set_behavior)           \
  X(read_disk_open, archive_read_disk_open)                           \
  X(read_disk_descend, archive_read_disk_descend)                     \
  X(read_disk_can_descend, archive_read_disk_can_descend)             \
  X(read_next_header2, archive_read_next_header2)                     \
  X(read_close, archive_read_close)                                   \
  X(write_disk_new, archive_write_disk_new)                           \
  X(write_disk_set_options, archive_write_disk_set_options)           \
  X(write_finish_entry, archive_write_finish_entry)

struct ArchiveApi {
#define KERN_ARCHIVE_FIELD(field, sym) decltype(&::sym) field = nullptr;
  KERN_ARCHIVE_FUNCTIONS(KERN_ARCHIVE_FIELD)
#undef KERN_ARCHIVE_FIELD
};

// The resolved API, loaded once (thread-safe). Fails with the package to install.
Result<const ArchiveApi*> archive_api();

// "what: <archive_error_string>" as an ErrorKind::image error.
Error archive_error(const ArchiveApi& api, struct archive* a, const std::string& what);

}  // namespace kern::oci::dl
