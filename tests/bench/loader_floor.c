/* What a dynamically linked program pays before main for identifying the CPU, for
 * tests/bench/start_bench.py: glibc's loader (or a static binary's start files) runs the cpuid
 * instruction some dozens of times per exec, and in a virtual machine each one leaves the guest.
 * Common to kern, bwrap, crun and the workload alike; a box start has two execs (the runtime's
 * and the workload's), crun's run three (it executes itself again).
 *
 *   loader_floor CMD [ARG ...]
 *
 * Prints one JSON line: the ns one cpuid takes here (the median of 25 rounds of 200), and how
 * many cpuid instructions CMD's first process executes from its exec to its exit, counted by
 * single-stepping it (ptrace; its children are not followed), with its instruction count. x86
 * only: elsewhere it prints {"arch": "not x86"}. Built by the benchmark with cc. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* The leaves the loader asks for most (its cache information): 4 with sub-leaves, and 2. */
static int64_t cpuid_ns(void) {
  int64_t rounds[25];
  unsigned a, b, c, d;
  for (int r = 0; r < 25; ++r) {
    int64_t t = now_ns();
    for (int i = 0; i < 200; ++i) {
      if (i & 1)
        __cpuid(2, a, b, c, d);
      else
        __cpuid_count(4, (i >> 1) & 3, a, b, c, d);
    }
    rounds[r] = (now_ns() - t) / 200;
  }
  qsort(rounds, 25, sizeof rounds[0], cmp);
  return rounds[12];
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: loader_floor CMD [ARG ...]\n");
    return 2;
  }
  int64_t ns = cpuid_ns();
  pid_t pid = fork();
  if (pid < 0) {
    perror("loader_floor: fork");
    return 1;
  }
  if (pid == 0) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(126);
    execvp(argv[1], argv + 1);
    _exit(127);
  }
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
    fprintf(stderr, "loader_floor: %s did not stop at its exec\n", argv[1]);
    return 1;
  }
  long long steps = 0, cpuids = 0;
  for (;;) {
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, pid, 0, &regs) != 0) break;
    errno = 0;
    long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)regs.rip, 0);
    if (errno == 0 && (word & 0xffff) == 0xa20f) ++cpuids; /* 0f a2: cpuid */
    if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0) != 0) break;
    if (waitpid(pid, &status, 0) != pid || WIFEXITED(status) || WIFSIGNALED(status)) break;
    ++steps;
  }
  printf("{\"arch\": \"x86_64\", \"cpuid_ns\": %lld, \"cpuid_per_exec\": %lld, \"instructions\": %lld}\n",
         (long long)ns, cpuids, steps);
  return 0;
}
#else
int main(void) {
  printf("{\"arch\": \"not x86\"}\n");
  return 0;
}
#endif
