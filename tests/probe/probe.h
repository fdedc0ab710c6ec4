/* kern-probe: a small static program the integration tests run inside boxes (and outside, for
 * the discriminant). Every answer is one "key: value" line on stdout, written with a single
 * write(2) so that nothing is lost if the process is killed right after. Diagnostics go to
 * stderr. See probe.c for the subcommands. */
#ifndef KERN_PROBE_H
#define KERN_PROBE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

/* One "key: value\n" line on stdout. */
void say(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A diagnostic line on stderr, prefixed "kern-probe: ". */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "EPERM", or "E<number>" for a value libc has no name for. */
const char *err_name(int err);
/* "SIGSYS", or "SIG<number>". */
const char *sig_name(int sig);
/* A signal from "TERM", "SIGTERM" or "15"; -1 if unknown. */
int parse_signal(const char *text);

/* The outcome of one try: 0 = the call succeeded, > 0 = the errno it failed with, < 0 = minus
 * the signal that killed the helper child the call ran in. */
typedef int (*try_fn)(const char *arg);

struct try_entry {
  const char *name;
  try_fn fn;
  int needs_arg; /* 1: takes a path */
  const char *what;
};

/* The table of tries, ending with a zeroed entry. */
extern const struct try_entry probe_tries[];
const struct try_entry *find_try(const char *name);
/* Prints "NAME: ok", "NAME: EPERM" or "NAME: killed SIGSYS". */
void print_try(const char *name, int outcome);

/* Report subcommands (probe_report.c). Each returns the exit code. */
int report_status_fields(const char *const *fields);
int report_ids(void);
int report_env(void);
int report_fds(void);
int report_hostname(void);
int report_netifs(void);
int report_mounts(void);
int report_devices(void);
int report_pid(void);
int report_stat(const char *path);
int report_oldroot(int nmarkers, char **markers);
int report_setuid_check(void);

/* watch-procs SECONDS (probe_watch.c). */
int cmd_watch_procs(const char *seconds);

#endif
