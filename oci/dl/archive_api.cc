// The libarchive loader; see archive_api.h.
#include "oci/dl/archive_api.h"

#include "oci/dl/dl_library.h"

namespace kern::oci::dl {
namespace {

constexpr const char* kSoname = "libarchive.so.13";

Result<ArchiveApi> resolve() {
  KERN_TRY_ASSIGN(void* h, open_library(kSoname, "libarchive13"));
  ArchiveApi api;
#define KERN_ARCHIVE_RESOLVE(field, sym) KERN_DL_SYM(h, kSoname, api, field, #sym);
  KERN_ARCHIVE_FUNCTIONS(KERN_ARCHIVE_RESOLVE)
#undef KERN_ARCHIVE_RESOLVE
  return api;
}

}  // namespace

Result<const ArchiveApi*> archive_api() {
  static const Result<ArchiveApi> loaded = resolve();
  if (!loaded) return fail(Error(loaded.error()));
  return &*loaded;
}

Error archive_error(const ArchiveApi& api, struct archive* a, const std::string& what) {
  const char* s = a ? api.error_string(a) : nullptr;
  int err = a ? api.errno_of(a) : 0;
  // libarchive uses its own codes (ARCHIVE_ERRNO_MISC = -1, FILE_FORMAT = EFTYPE/EILSEQ);
  // keep only what is a real errno.
  if (err < 0 || err > 4095) err = 0;
  return Error(ErrorKind::image, err, what + ": " + (s ? s : "libarchive error"));
}

}  // namespace kern::oci::dl
