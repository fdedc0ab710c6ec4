// The argument and environment areas; see proc_title.h.
#include "runtime/sys/proc_title.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kern::sys {
namespace {

char* g_args = nullptr;
size_t g_args_len = 0;
char* g_env = nullptr;
size_t g_env_len = 0;

// The strings of a NULL-terminated vector lie back to back (as execve lays them out): the area
// runs from the first to the end of the last one's NUL.
void span_of(char** v, char** start, size_t* len) {
  if (v == nullptr || v[0] == nullptr) return;
  char* end = v[0];
  for (size_t i = 0; v[i] != nullptr; ++i) {
    if (v[i] != end) break;  // not contiguous (rewritten by someone): stop at what is
    end = v[i] + std::strlen(v[i]) + 1;
  }
  *start = v[0];
  *len = static_cast<size_t>(end - v[0]);
}

}  // namespace

void remember_process_args(int argc, char** argv) noexcept {
  if (argc <= 0 || argv == nullptr) return;
  span_of(argv, &g_args, &g_args_len);
  span_of(environ, &g_env, &g_env_len);
}

int scrub_process_title(const char* title) noexcept {
  if (g_args == nullptr || g_args_len == 0) return EINVAL;
  std::memset(g_args, 0, g_args_len);
  size_t t = std::strlen(title);
  if (t >= g_args_len) t = g_args_len - 1;
  std::memcpy(g_args, title, t);
  if (g_env != nullptr) std::memset(g_env, 0, g_env_len);
  return 0;
}

}  // namespace kern::sys
