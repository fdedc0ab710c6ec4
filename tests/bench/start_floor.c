/* The in-process floor of a box start, for tests/bench/start_bench.py: the namespaces a kern box
 * makes, its root pivoted onto a tree, /proc mounted, then exec of the command, with none of
 * kern's code (no CLI, no plan, no overlay unless asked, no masks, no seccomp, no cgroup).
 * What kern costs beyond this is what kern's own work costs.
 *
 *   start_floor [-o] ROOT CMD [ARG ...]
 *
 * -o puts a tmpfs-backed overlay over ROOT instead of binding it (what kern's default root does),
 * to show what the overlay itself costs. The parent waits for the box's pid 1 (the command), and
 * exits with its status. Built by the benchmark with cc; run as an unprivileged user. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what, const char *path) {
  fprintf(stderr, "start_floor: %s %s: %s\n", what, path ? path : "", strerror(errno));
  _exit(125);
}

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) die("write", path);
  close(fd);
}

/* pid 1 of the box: its root, /proc, then the command. */
static void box_main(const char *root, int overlay, char **argv) {
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) die("mount --make-rprivate", "/");
  /* The tree itself becomes the new root: bound onto itself, or covered by an overlay whose
   * upper layer is a tmpfs mounted on ROOT/tmp first (the overlay's lower layer does not see it). */
  const char *top = root;
  if (overlay) {
    char scratch[4200], opts[13000];
    snprintf(scratch, sizeof scratch, "%s/tmp", root);
    if (mount("tmpfs", scratch, "tmpfs", 0, "size=1m") < 0) die("mount tmpfs", scratch);
    snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=%s/u,workdir=%s/w", root, scratch, scratch);
    char u[4300], w[4300];
    snprintf(u, sizeof u, "%s/u", scratch);
    snprintf(w, sizeof w, "%s/w", scratch);
    if (mkdir(u, 0755) < 0 || mkdir(w, 0755) < 0) die("mkdir", u);
    if (mount("overlay", top, "overlay", 0, opts) < 0) die("mount overlay", top);
  } else if (mount(root, top, NULL, MS_BIND | MS_REC, NULL) < 0) {
    die("bind", root);
  }
  char proc[4200];
  snprintf(proc, sizeof proc, "%s/proc", top);
  if (mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) die("mount proc", proc);
  if (chdir(top) < 0) die("chdir", top);
  if (syscall(SYS_pivot_root, ".", ".") < 0) die("pivot_root", top);
  if (umount2(".", MNT_DETACH) < 0) die("umount", "old root");
  if (chdir("/") < 0) die("chdir", "/");
  execvp(argv[0], argv);
  die("exec", argv[0]);
}

int main(int argc, char **argv) {
  int overlay = 0, i = 1;
  if (i < argc && strcmp(argv[i], "-o") == 0) overlay = 1, i++;
  if (argc - i < 2) {
    fprintf(stderr, "usage: start_floor [-o] ROOT CMD [ARG ...]\n");
    return 2;
  }
  const char *root = argv[i];
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC |
              CLONE_NEWCGROUP) < 0)
    die("unshare", NULL);
  char map[64];
  write_file("/proc/self/setgroups", "deny");
  snprintf(map, sizeof map, "0 %u 1\n", uid);
  write_file("/proc/self/uid_map", map);
  snprintf(map, sizeof map, "0 %u 1\n", gid);
  write_file("/proc/self/gid_map", map);
  pid_t pid = fork();
  if (pid < 0) die("fork", NULL);
  if (pid == 0) box_main(root, overlay, argv + i + 1);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) die("waitpid", NULL);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
