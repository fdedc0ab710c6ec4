// The one reader of /proc/PID/stat: the fields kern needs to tell a live process from a dead one
// whose pid was reused (start time) and to check who a process's parent is.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>

namespace kern::sys {

struct ProcStat {
  char state = '?';        // field 3
  pid_t ppid = 0;          // field 4
  uint64_t start_time = 0; // field 22, clock ticks since boot
};

// Parses the text of a /proc/PID/stat file; nullopt when it is not one. comm (field 2) may hold
// spaces and parentheses, so fields are counted from the last ')'.
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// /proc/PID/stat of a process, nullopt when it does not exist or cannot be read.
std::optional<ProcStat> read_proc_stat(pid_t pid);

// Start time of a running process; 0 when it does not exist or is a zombie (a zombie is dead for
// every purpose of kern: its pid is only waiting to be reaped).
uint64_t process_start_time(pid_t pid);

// This process's own start time, read once per process (a forked child reads its own again).
uint64_t own_start_time();

// Parent pid of a process, 0 when it does not exist.
pid_t parent_pid(pid_t pid);

}  // namespace kern::sys
