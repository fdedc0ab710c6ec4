#include "runtime/sys/proc_stat.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "runtime/sys/fdio.h"

namespace kern::sys {

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  size_t close = text.rfind(')');
  if (close == std::string_view::npos || close + 2 >= text.size()) return std::nullopt;
  // After ") " come the fields from 3 on, separated by single spaces.
  std::string_view rest = text.substr(close + 2);
  ProcStat st;
  int field = 3;
  bool have_start = false;
  while (!rest.empty() && field <= 22) {
    size_t sp = rest.find(' ');
    std::string_view value = rest.substr(0, sp);
    std::string v(value);
    if (field == 3) {
      if (value.size() != 1) return std::nullopt;
      st.state = value[0];
    } else if (field == 4) {
      st.ppid = static_cast<pid_t>(std::strtol(v.c_str(), nullptr, 10));
    } else if (field == 22) {
      if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
      st.start_time = std::strtoull(v.c_str(), nullptr, 10);
      have_start = true;
    }
    if (sp == std::string_view::npos) break;
    rest.remove_prefix(sp + 1);
    ++field;
  }
  if (!have_start) return std::nullopt;
  return st;
}

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  auto text = read_file(AT_FDCWD, "/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!text) return std::nullopt;
  return parse_proc_stat(*text);
}

uint64_t process_start_time(pid_t pid) {
  auto st = read_proc_stat(pid);
  // Z: a zombie; X: being reaped.
  if (!st || st->state == 'Z' || st->state == 'X') return 0;
  return st->start_time;
}

uint64_t own_start_time() {
  static pid_t cached_pid = 0;
  static uint64_t cached = 0;
  pid_t self = ::getpid();
  if (cached_pid != self) {
    cached = process_start_time(self);
    cached_pid = self;
  }
  return cached;
}

pid_t parent_pid(pid_t pid) {
  auto st = read_proc_stat(pid);
  return st ? st->ppid : 0;
}

}  // namespace kern::sys
