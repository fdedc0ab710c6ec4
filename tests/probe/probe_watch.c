/* watch-procs: the attacker's side of the escape tests (tests/integration/test_escape_exec_join.py).
 * For SECONDS it scans /proc over and over and, for every other process it sees, tries what a box
 * process would use to get out through that process: open /proc/P/exe (O_PATH, kept), /proc/P/mem,
 * /proc/P/cwd, /proc/P/root and every /proc/P/fd/N. Each new answer for a pid is one line:
 *   watch: pid=P exe=TARGET|ERRNO mem=ok|ERRNO cwd=ok|ERRNO root=ok|ERRNO fd=N-opened|ERRNO|none
 * At the end, each exe it kept is reopened for writing through /proc/self/fd (the runc
 * CVE-2019-5736 step, once the process that ran it is gone; nothing is written):
 *   reopen: exe=TARGET write=ok|ERRNO */
#include "probe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SEEN 512
#define MAX_KEPT 64

static char seen[MAX_SEEN][640];
static int nseen;
static int kept_fd[MAX_KEPT];
static char kept_target[MAX_KEPT][300];
static int nkept;

static const char *open_answer(const char *path, int flags) {
  int fd = open(path, flags | O_CLOEXEC);
  if (fd < 0) return err_name(errno);
  close(fd);
  return "ok";
}

static void fd_answer(const char *pid, char *out, size_t len) {
  char dir[300];
  snprintf(dir, sizeof dir, "/proc/%s/fd", pid);
  DIR *d = opendir(dir);
  if (d == NULL) {
    snprintf(out, len, "%s", err_name(errno));
    return;
  }
  int opened = 0, first_err = 0, total = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    ++total;
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    int fd = open(p, O_PATH | O_CLOEXEC);
    if (fd >= 0) {
      ++opened;
      close(fd);
    } else if (first_err == 0) {
      first_err = errno;
    }
  }
  closedir(d);
  if (total == 0) snprintf(out, len, "none");
  else if (opened > 0) snprintf(out, len, "%d-opened", opened);
  else snprintf(out, len, "%s", err_name(first_err));
}

static void look_at(const char *pid) {
  char path[300], exe[300] = "", fds[32];
  snprintf(path, sizeof path, "/proc/%s/exe", pid);
  int xfd = open(path, O_PATH | O_CLOEXEC);
  if (xfd >= 0) {
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", xfd);
    ssize_t n = readlink(self, exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
  } else {
    snprintf(exe, sizeof exe, "%s", err_name(errno));
  }
  char mem[64], cwd[64], root[64];
  snprintf(path, sizeof path, "/proc/%s/mem", pid);
  snprintf(mem, sizeof mem, "%s", open_answer(path, O_RDONLY));
  snprintf(path, sizeof path, "/proc/%s/cwd", pid);
  snprintf(cwd, sizeof cwd, "%s", open_answer(path, O_PATH | O_DIRECTORY));
  snprintf(path, sizeof path, "/proc/%s/root", pid);
  snprintf(root, sizeof root, "%s", open_answer(path, O_PATH | O_DIRECTORY));
  fd_answer(pid, fds, sizeof fds);

  char line[640];
  snprintf(line, sizeof line, "pid=%s exe=%s mem=%s cwd=%s root=%s fd=%s", pid, exe, mem, cwd, root, fds);
  for (int i = 0; i < nseen; ++i)
    if (strcmp(seen[i], line) == 0) {
      if (xfd >= 0) close(xfd);
      return;
    }
  if (nseen < MAX_SEEN) snprintf(seen[nseen++], sizeof seen[0], "%s", line);
  say("watch", "%s", line);
  if (xfd < 0) return;
  for (int i = 0; i < nkept; ++i)
    if (strcmp(kept_target[i], exe) == 0) {
      close(xfd);
      return;
    }
  if (nkept < MAX_KEPT) {
    kept_fd[nkept] = xfd;
    snprintf(kept_target[nkept++], sizeof kept_target[0], "%s", exe);
  } else {
    close(xfd);
  }
}

int cmd_watch_procs(const char *seconds) {
  char me[16];
  snprintf(me, sizeof me, "%d", (int)getpid());
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  double limit = atof(seconds);
  say("watch-procs", "ready");
  for (;;) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 > limit) break;
    DIR *d = opendir("/proc");
    if (d == NULL) {
      note("opendir /proc: %s", err_name(errno));
      return 1;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9' || strcmp(e->d_name, me) == 0) continue;
      look_at(e->d_name);
    }
    closedir(d);
  }
  for (int i = 0; i < nkept; ++i) {
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", kept_fd[i]);
    say("reopen", "exe=%s write=%s", kept_target[i], open_answer(self, O_WRONLY));
  }
  return 0;
}
