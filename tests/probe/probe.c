/* kern-probe: a small static program the integration tests run inside boxes, and outside them
 * for the discriminant (the same call, same user, answered differently). Every answer is one
 * "key: value" line on stdout; diagnostics go to stderr.
 *
 *   try NAME [PATH]     make one call in this process; prints "NAME: ok" or "NAME: EPERM".
 *                       A seccomp kill is this process's death (exit 159 as a shell sees it).
 *   try-each NAME...    each call in a child of its own; a kill prints "NAME: killed SIGSYS".
 *                       "all" means every try that needs no path.
 *   tries               lists the tries with what each does.
 *   caps                CapInh/CapPrm/CapEff/CapBnd/CapAmb: <hex>, from /proc/self/status
 *   seccomp             Seccomp: <0|1|2>, Seccomp_filters: <n>
 *   nnp                 NoNewPrivs: <0|1>
 *   ids                 uid/euid/suid/gid/egid/sgid: <n>, groups: <n n ...>
 *   env                 the environment, one K=V per line (not key: value)
 *   fds                 fd: N -> TARGET, for every open fd but the one used to list them
 *   hostname            hostname: NAME
 *   netifs              netif: NAME up|down, per interface of the network namespace
 *   mounts              mountinfo: LINE, per line of /proc/self/mountinfo
 *   devices             dev: NAME c|b MAJ:MIN / d / l TARGET / f / p / s, per entry of /dev
 *   pid                 pid/ppid/sid/pgid: <n>
 *   stat PATH           stat: type=T mode=0NNN uid=U gid=G size=S rdev=M:m, or stat: ENOENT
 *   oldroot [MARKER...] oldroot-*: same|different|ERRNO per route out, oldroot-marker: PATH
 *                       present|absent, then oldroot: reachable|unreachable
 *   setuid-check        uid, euid, CapEff, CapPrm, NoNewPrivs, setuid0: ok|ERRNO, euid-after
 *   watch-procs SECONDS scans /proc for SECONDS and tries every other process's exe, mem, cwd,
 *                       root and fds, then reopens each exe it kept for writing (probe_watch.c)
 *   sleep SECONDS       sleeps, exits 0
 *   trap-term           ignores SIGTERM, prints "trap-term: ready", waits forever
 *   flood BYTES         writes BYTES (k/m/g suffixes) to stdout; on a closed pipe reports
 *                       "flood: EPIPE after N" on stderr and exits 1
 *   exit N              exits with N
 *   kill-self SIG       dies by SIG (TERM, SIGTERM or 15) with its default action
 *
 * Exit codes: 0 after a report or a try (whatever it answered), 2 for a usage error. */
#include "probe.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void say(const char *key, const char *fmt, ...) {
  char line[8192];
  int n = snprintf(line, sizeof line, "%s: ", key);
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
  va_end(ap);
  if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  if (write(1, line, (size_t)n) < 0) _exit(3);
}

void note(const char *fmt, ...) {
  char line[1024];
  int n = snprintf(line, sizeof line, "kern-probe: ");
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
  va_end(ap);
  if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  if (write(2, line, (size_t)n) < 0) return;
}

const char *err_name(int err) {
  static char buf[16];
  const char *name = strerrorname_np(err);
  if (name != NULL) return name;
  snprintf(buf, sizeof buf, "E%d", err);
  return buf;
}

const char *sig_name(int sig) {
  static char buf[16];
  const char *abbrev = sigabbrev_np(sig);
  if (abbrev != NULL)
    snprintf(buf, sizeof buf, "SIG%s", abbrev);
  else
    snprintf(buf, sizeof buf, "SIG%d", sig);
  return buf;
}

int parse_signal(const char *text) {
  char *end;
  long n = strtol(text, &end, 10);
  if (*text != '\0' && *end == '\0') return n > 0 && n < NSIG ? (int)n : -1;
  if (strncasecmp(text, "SIG", 3) == 0) text += 3;
  for (int s = 1; s < NSIG; ++s) {
    const char *abbrev = sigabbrev_np(s);
    if (abbrev != NULL && strcasecmp(abbrev, text) == 0) return s;
  }
  return -1;
}

static int usage(const char *why) {
  note("%s (see the comment at the top of tests/probe/probe.c)", why);
  return 2;
}

static int cmd_try(int argc, char **argv) {
  if (argc < 1) return usage("try: which call?");
  const struct try_entry *t = find_try(argv[0]);
  if (t == NULL) return usage("try: unknown call (kern-probe tries lists them)");
  if (t->needs_arg && argc < 2) return usage("try: this call needs a path");
  print_try(t->name, t->fn(t->needs_arg ? argv[1] : NULL));
  return 0;
}

static void try_in_child(const struct try_entry *t, const char *arg) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    say(t->name, "fork-failed %s", err_name(errno));
    return;
  }
  if (pid == 0) {
    print_try(t->name, t->fn(arg));
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) say(t->name, "killed %s", sig_name(WTERMSIG(status)));
}

static int cmd_try_each(int argc, char **argv) {
  if (argc < 1) return usage("try-each: which calls?");
  for (int i = 0; i < argc; ++i) {
    if (strcmp(argv[i], "all") == 0) {
      for (const struct try_entry *t = probe_tries; t->name != NULL; ++t)
        if (!t->needs_arg) try_in_child(t, NULL);
      continue;
    }
    const struct try_entry *t = find_try(argv[i]);
    if (t == NULL) return usage("try-each: unknown call (kern-probe tries lists them)");
    if (t->needs_arg) {
      if (i + 1 >= argc) return usage("try-each: this call needs a path");
      try_in_child(t, argv[++i]);
    } else {
      try_in_child(t, NULL);
    }
  }
  return 0;
}

static unsigned long long parse_size(const char *text) {
  char *end;
  unsigned long long n = strtoull(text, &end, 10);
  switch (*end) {
    case 'k': case 'K': return n << 10;
    case 'm': case 'M': return n << 20;
    case 'g': case 'G': return n << 30;
    default: return n;
  }
}

static int cmd_flood(const char *bytes) {
  signal(SIGPIPE, SIG_IGN);
  unsigned long long want = parse_size(bytes), done = 0;
  static char chunk[65536];
  memset(chunk, 'x', sizeof chunk);
  while (done < want) {
    size_t n = want - done < sizeof chunk ? (size_t)(want - done) : sizeof chunk;
    ssize_t w = write(1, chunk, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      note("flood: %s after %llu", err_name(errno), done);
      return 1;
    }
    done += (unsigned long long)w;
  }
  note("flood: ok %llu", done);
  return 0;
}

static int cmd_sleep(const char *seconds) {
  double s = strtod(seconds, NULL);
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
  return 0;
}

static int cmd_trap_term(const char *unused) {
  (void)unused;
  signal(SIGTERM, SIG_IGN);
  say("trap-term", "ready");
  for (;;) pause();
  return 0;
}

static int cmd_kill_self(const char *text) {
  int sig = parse_signal(text);
  if (sig < 0) return usage("kill-self: unknown signal");
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  kill(getpid(), sig);
  note("kill-self: still alive after %s", sig_name(sig));
  return 1;
}

static const char *const kCapFields[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", NULL};
static const char *const kSeccompFields[] = {"Seccomp", "Seccomp_filters", NULL};
static const char *const kNnpFields[] = {"NoNewPrivs", NULL};

static int cmd_caps(const char *unused) { (void)unused; return report_status_fields(kCapFields); }
static int cmd_seccomp(const char *unused) { (void)unused; return report_status_fields(kSeccompFields); }
static int cmd_nnp(const char *unused) { (void)unused; return report_status_fields(kNnpFields); }
static int cmd_ids(const char *unused) { (void)unused; return report_ids(); }
static int cmd_env(const char *unused) { (void)unused; return report_env(); }
static int cmd_fds(const char *unused) { (void)unused; return report_fds(); }
static int cmd_hostname(const char *unused) { (void)unused; return report_hostname(); }
static int cmd_netifs(const char *unused) { (void)unused; return report_netifs(); }
static int cmd_mounts(const char *unused) { (void)unused; return report_mounts(); }
static int cmd_devices(const char *unused) { (void)unused; return report_devices(); }
static int cmd_pid(const char *unused) { (void)unused; return report_pid(); }
static int cmd_setuid_check(const char *unused) { (void)unused; return report_setuid_check(); }
static int cmd_exit(const char *code) { return atoi(code) & 0xff; }
static int cmd_tries(const char *unused) {
  (void)unused;
  for (const struct try_entry *t = probe_tries; t->name != NULL; ++t) say(t->name, "%s", t->what);
  return 0;
}

/* Subcommands with at most one argument; try, try-each and oldroot take several. */
static const struct {
  const char *name;
  int (*fn)(const char *arg);
  int needs_arg;
} kCommands[] = {
    {"tries", cmd_tries, 0},       {"caps", cmd_caps, 0},
    {"seccomp", cmd_seccomp, 0},   {"nnp", cmd_nnp, 0},
    {"ids", cmd_ids, 0},           {"env", cmd_env, 0},
    {"fds", cmd_fds, 0},           {"hostname", cmd_hostname, 0},
    {"netifs", cmd_netifs, 0},     {"mounts", cmd_mounts, 0},
    {"devices", cmd_devices, 0},   {"pid", cmd_pid, 0},
    {"setuid-check", cmd_setuid_check, 0}, {"trap-term", cmd_trap_term, 0},
    {"stat", report_stat, 1},      {"sleep", cmd_sleep, 1},
    {"flood", cmd_flood, 1},       {"exit", cmd_exit, 1},
    {"kill-self", cmd_kill_self, 1}, {"watch-procs", cmd_watch_procs, 1},
};

int main(int argc, char **argv) {
  if (argc < 2) return usage("which subcommand?");
  const char *cmd = argv[1];
  if (strcmp(cmd, "try") == 0) return cmd_try(argc - 2, argv + 2);
  if (strcmp(cmd, "try-each") == 0) return cmd_try_each(argc - 2, argv + 2);
  if (strcmp(cmd, "oldroot") == 0) return report_oldroot(argc - 2, argv + 2);
  for (size_t i = 0; i < sizeof kCommands / sizeof kCommands[0]; ++i) {
    if (strcmp(cmd, kCommands[i].name) != 0) continue;
    if (kCommands[i].needs_arg && argc < 3) return usage("this subcommand needs an argument");
    return kCommands[i].fn(argc >= 3 ? argv[2] : NULL);
  }
  return usage("unknown subcommand");
}
