/* kern-probe reports: what the process sees (ids, capability sets, fds, mounts, devices,
 * interfaces, ...), one "key: value" line per fact, in a stable order. */
#include "probe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <unistd.h>

extern char **environ;

/* Prints the named fields of /proc/self/status as "Name: value". */
int report_status_fields(const char *const *fields) {
  FILE *f = fopen("/proc/self/status", "re");
  if (f == NULL) {
    say("status", "%s", err_name(errno));
    return 1;
  }
  char line[512];
  while (fgets(line, sizeof line, f) != NULL) {
    char *colon = strchr(line, ':');
    if (colon == NULL) continue;
    *colon = '\0';
    for (const char *const *want = fields; *want != NULL; ++want) {
      if (strcmp(line, *want) != 0) continue;
      char *value = colon + 1;
      value += strspn(value, " \t");
      value[strcspn(value, "\n")] = '\0';
      say(line, "%s", value);
    }
  }
  fclose(f);
  return 0;
}

int report_ids(void) {
  uid_t r, e, s;
  gid_t gr, ge, gs;
  getresuid(&r, &e, &s);
  getresgid(&gr, &ge, &gs);
  say("uid", "%u", (unsigned)r);
  say("euid", "%u", (unsigned)e);
  say("suid", "%u", (unsigned)s);
  say("gid", "%u", (unsigned)gr);
  say("egid", "%u", (unsigned)ge);
  say("sgid", "%u", (unsigned)gs);
  gid_t groups[256];
  int n = getgroups(256, groups);
  char buf[2048] = "";
  size_t used = 0;
  for (int i = 0; i < n && used < sizeof buf - 16; ++i)
    used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%u", i ? " " : "", (unsigned)groups[i]);
  say("groups", "%s", buf);
  return 0;
}

int report_env(void) {
  for (char **e = environ; *e != NULL; ++e) {
    size_t len = strlen(*e);
    char *line = malloc(len + 2);
    if (line == NULL) return 1;
    memcpy(line, *e, len);
    line[len] = '\n';
    if (write(1, line, len + 1) < 0) return 1;
    free(line);
  }
  return 0;
}

int report_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) {
    say("fds", "%s", err_name(errno));
    return 1;
  }
  int self = dirfd(d);
  int fds[1024];
  int count = 0;
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL && count < 1024) {
    if (ent->d_name[0] == '.') continue;
    int fd = atoi(ent->d_name);
    if (fd != self) fds[count++] = fd;
  }
  for (int i = 0; i < count; ++i) /* readdir order is already ascending; keep it stable anyway */
    for (int j = i + 1; j < count; ++j)
      if (fds[j] < fds[i]) {
        int t = fds[i];
        fds[i] = fds[j];
        fds[j] = t;
      }
  for (int i = 0; i < count; ++i) {
    char path[64], target[PATH_MAX];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fds[i]);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 0) n = 0;
    target[n] = '\0';
    say("fd", "%d -> %s", fds[i], target);
  }
  closedir(d);
  return 0;
}

int report_hostname(void) {
  struct utsname u;
  if (uname(&u) != 0) return 1;
  say("hostname", "%s", u.nodename);
  return 0;
}

/* Interface names from /proc/net/dev (the reader's network namespace), state from SIOCGIFFLAGS. */
int report_netifs(void) {
  FILE *f = fopen("/proc/net/dev", "re");
  int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (f == NULL) {
    struct if_nameindex *list = if_nameindex();
    if (list == NULL) {
      say("netifs", "%s", err_name(errno));
      return 1;
    }
    for (struct if_nameindex *i = list; i->if_index != 0; ++i) {
      struct ifreq req;
      memset(&req, 0, sizeof req);
      snprintf(req.ifr_name, sizeof req.ifr_name, "%s", i->if_name);
      int up = sock >= 0 && ioctl(sock, SIOCGIFFLAGS, &req) == 0 && (req.ifr_flags & IFF_UP);
      say("netif", "%s %s", i->if_name, up ? "up" : "down");
    }
    if_freenameindex(list);
    return 0;
  }
  char line[512];
  while (fgets(line, sizeof line, f) != NULL) {
    char *colon = strchr(line, ':');
    if (colon == NULL) continue;
    *colon = '\0';
    char *name = line + strspn(line, " ");
    struct ifreq req;
    memset(&req, 0, sizeof req);
    snprintf(req.ifr_name, sizeof req.ifr_name, "%s", name);
    int up = sock >= 0 && ioctl(sock, SIOCGIFFLAGS, &req) == 0 && (req.ifr_flags & IFF_UP);
    say("netif", "%s %s", name, up ? "up" : "down");
  }
  fclose(f);
  if (sock >= 0) close(sock);
  return 0;
}

int report_mounts(void) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (f == NULL) {
    say("mountinfo", "%s", err_name(errno));
    return 1;
  }
  char line[4096];
  while (fgets(line, sizeof line, f) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    say("mountinfo", "%s", line);
  }
  fclose(f);
  return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

/* "dev: NAME TYPE [DETAIL]": c/b with major:minor, d, l with its target, f, p, s. */
int report_devices(void) {
  struct dirent **list;
  int n = scandir("/dev", &list, NULL, by_name);
  if (n < 0) {
    say("dev", "%s", err_name(errno));
    return 1;
  }
  for (int i = 0; i < n; ++i) {
    const char *name = list[i]->d_name;
    if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
      char path[PATH_MAX];
      snprintf(path, sizeof path, "/dev/%s", name);
      struct stat st;
      if (lstat(path, &st) != 0) {
        say("dev", "%s ? %s", name, err_name(errno));
      } else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
        say("dev", "%s %c %u:%u", name, S_ISCHR(st.st_mode) ? 'c' : 'b', major(st.st_rdev), minor(st.st_rdev));
      } else if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t len = readlink(path, target, sizeof target - 1);
        target[len < 0 ? 0 : len] = '\0';
        say("dev", "%s l %s", name, target);
      } else {
        say("dev", "%s %c", name, S_ISDIR(st.st_mode) ? 'd' : S_ISFIFO(st.st_mode) ? 'p' : S_ISSOCK(st.st_mode) ? 's' : 'f');
      }
    }
    free(list[i]);
  }
  free(list);
  return 0;
}

int report_pid(void) {
  say("pid", "%d", (int)getpid());
  say("ppid", "%d", (int)getppid());
  say("sid", "%d", (int)getsid(0));
  say("pgid", "%d", (int)getpgrp());
  return 0;
}

static const char *type_name(mode_t m) {
  if (S_ISREG(m)) return "file";
  if (S_ISDIR(m)) return "dir";
  if (S_ISLNK(m)) return "link";
  if (S_ISCHR(m)) return "char";
  if (S_ISBLK(m)) return "block";
  if (S_ISFIFO(m)) return "fifo";
  return "socket";
}

int report_stat(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) {
    say("stat", "%s", err_name(errno));
    return 0;
  }
  say("stat", "type=%s mode=%04o uid=%u gid=%u size=%lld rdev=%u:%u", type_name(st.st_mode),
      (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, (unsigned)st.st_gid, (long long)st.st_size,
      major(st.st_rdev), minor(st.st_rdev));
  return 0;
}

/* "same" when both name the same inode, else "different", or the errno of the failing stat. */
static const char *same_inode(const char *a, const char *b, int *reachable) {
  struct stat sa, sb;
  if (stat(a, &sa) != 0) return err_name(errno);
  if (stat(b, &sb) != 0) return err_name(errno);
  if (sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino) return "same";
  *reachable = 1;
  return "different";
}

/* Ways out of the root the process was given. Each line says what one route leads to; the
 * summary is "unreachable" only when every route leads back to "/" and no marker is visible. */
int report_oldroot(int nmarkers, char **markers) {
  int reachable = 0;
  say("oldroot-dotdot", "%s", same_inode("/..", "/", &reachable));
  say("oldroot-proc1-root", "%s", same_inode("/proc/1/root/", "/", &reachable));

  int fd = open("/..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    say("oldroot-open-dotdot", "%s", err_name(errno));
  } else {
    struct stat up, root;
    fstat(fd, &up);
    stat("/", &root);
    int same = up.st_dev == root.st_dev && up.st_ino == root.st_ino;
    if (!same) reachable = 1;
    say("oldroot-open-dotdot", "%s", same ? "same" : "different");
    close(fd);
  }

  /* Walk up with chdir("..") far more times than any real tree is deep. */
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == NULL) cwd[0] = '\0';
  if (chdir("/") == 0) {
    for (int i = 0; i < 256; ++i)
      if (chdir("..") != 0) break;
    say("oldroot-chdir-up", "%s", same_inode(".", "/", &reachable));
    if (cwd[0] != '\0' && chdir(cwd) != 0) note("oldroot: cannot return to %s", cwd);
  }

  /* Host paths the caller knows exist outside the box. */
  for (int i = 0; i < nmarkers; ++i) {
    struct stat st;
    int present = lstat(markers[i], &st) == 0;
    if (present) reachable = 1;
    say("oldroot-marker", "%s %s", markers[i], present ? "present" : "absent");
  }
  say("oldroot", "%s", reachable ? "reachable" : "unreachable");
  return 0;
}

/* For a setuid-root copy of the probe: does exec grant anything, and can the process become 0? */
int report_setuid_check(void) {
  say("uid", "%u", (unsigned)getuid());
  say("euid", "%u", (unsigned)geteuid());
  static const char *const fields[] = {"CapEff", "CapPrm", "NoNewPrivs", NULL};
  report_status_fields(fields);
  int r = setuid(0) == 0 ? 0 : errno;
  say("setuid0", "%s", r == 0 ? "ok" : err_name(r));
  say("euid-after", "%u", (unsigned)geteuid());
  return 0;
}
