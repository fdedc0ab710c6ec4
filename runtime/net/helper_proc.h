// What every helper process of a box's network (the egress relay and proxy, pasta) does first,
// in the fresh child of the launcher that will run it: stdio on /dev/null, no descriptor of the
// launcher's but the ones it is given, the launcher's signal mask undone, and death with the
// launcher (PR_SET_PDEATHSIG), so that a SIGKILLed launcher leaves no helper behind.
// Helper child only (between fork and its main or execve).
#pragma once

#include <sys/types.h>

#include <initializer_list>

namespace kern::net {

// `keep`: descriptors the helper holds on to (-1 entries ignored). Exits at once when the
// launcher is gone already.
void become_helper(pid_t launcher, std::initializer_list<int> keep);

// pidfd_open(2); -1 and errno set on failure. Launcher side.
int pidfd_of(pid_t pid);

}  // namespace kern::net
