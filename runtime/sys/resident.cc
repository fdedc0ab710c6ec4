// See resident.h.
#include "runtime/sys/resident.h"

#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace kern::sys {
namespace {

// Hot (the linker puts it with the other hot code at the start of .text, beside the PLT): it
// runs again right after kern's own code pages are dropped, and the kernel maps a whole page-cache
// folio of a file on a fault (up to 512 kB here), so code that runs after the drop is kept
// together where the waiting process touches pages anyway.
[[gnu::hot]] int drop_read_only(struct dl_phdr_info* info, size_t, void*) {
  // Every object loaded: the program, and the system's libc and dynamic loader it is linked
  // with (the vDSO is the kernel's, not a file's, and is left alone).
  if (info->dlpi_name && std::strstr(info->dlpi_name, "linux-vdso")) return 0;
  uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    // Code and read-only data: never written, so the page cache holds exactly what was mapped.
    // A writable segment (data, and the relocated RELRO part) holds this process's own copies.
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W)) continue;
    uintptr_t seg = info->dlpi_addr + ph.p_vaddr;
    // Whole pages inside the segment only: a page it shares with a writable neighbour stays.
    uintptr_t start = (seg + page - 1) & ~(page - 1);
    uintptr_t end = (seg + ph.p_memsz) & ~(page - 1);
    if (end > start) ::madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTNEED);
  }
  return 0;
}

}  // namespace

[[gnu::hot]] void drop_code_pages() { ::dl_iterate_phdr(drop_read_only, nullptr); }

}  // namespace kern::sys
