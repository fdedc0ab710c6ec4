/* The three-process floor of a warm-kernel cell: `relay_floor PEER ARGS...` starts PEER on a pipe
 * pair and moves bytes between its own stdin/stdout and the peer's, doing nothing else. A served
 * cell crosses one more process than the two-process pipe floor (the supervisor between client
 * and driver, four context switches a round trip against two); this shows what that crossing
 * costs by itself on this host, with no parsing, no checks and no interpreter work. */
#include <poll.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int forward(int from, int to, char *buf, size_t cap) {
  ssize_t n = read(from, buf, cap);
  if (n <= 0) return -1;
  for (ssize_t off = 0; off < n;) {
    ssize_t w = write(to, buf + off, (size_t)(n - off));
    if (w < 0) return -1;
    off += w;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: relay_floor PEER [ARGS...]\n");
    return 2;
  }
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) {
    perror("relay_floor: pipe");
    return 1;
  }
  pid_t peer = fork();
  if (peer < 0) {
    perror("relay_floor: fork");
    return 1;
  }
  if (peer == 0) {
    if (dup2(down[0], 0) < 0 || dup2(up[1], 1) < 0) _exit(127);
    close(down[0]);
    close(down[1]);
    close(up[0]);
    close(up[1]);
    execvp(argv[1], argv + 1);
    perror("relay_floor: execvp");
    _exit(127);
  }
  close(down[0]);
  close(up[1]);
  struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = up[0], .events = POLLIN}};
  static char buf[1 << 16];
  for (;;) {
    if (poll(fds, 2, -1) < 0) break;
    if (fds[0].revents && forward(0, down[1], buf, sizeof buf) != 0) break;
    if (fds[1].revents && forward(up[0], 1, buf, sizeof buf) != 0) break;
  }
  close(down[1]);
  waitpid(peer, NULL, 0);
  return 0;
}
