"""The integration-test harness: runs the real `kern` binary as an unprivileged user.

A test file is a plain unittest module that ends with

    if __name__ == "__main__":
        kerntest.main()

main() drops root first (re-executing the file as KERN_TEST_USER, default `kerntest`, through
runuser), prints what the host can do (host_probe), builds one busybox root file system for the
whole process, runs the tests and ends with one `KERNTEST ...` line for the CI log. Its exit code
is 0 when every test passed or was skipped, 77 when all were skipped (CTest's SKIP_RETURN_CODE),
1 otherwise.

Environment:
  KERN_BIN           the kern binary (required)
  KERN_PROBE         the static kern-probe binary (tests that need it are skipped without it)
  KERN_TEST_USER     the unprivileged user to run as when started as root (default kerntest)
  KERN_TEST_REQUIRE  comma-separated skip names that must not skip (they fail instead): names,
                     shell patterns, `all`, and `-NAME` to exclude (`all,-outside-bpf`).
                     Names: user, userns, overlay, probe, uid-range, unshare, setpriv, i386,
                     no-cgroup (tests of the uncapped path), cgroup (tests that
                     need a delegated cgroup v2), host-net, outside-setuid, and
                     outside-<try> (the host refuses the call outside a box too), discriminant-<try>
                     (the host answers it outside exactly as the box does); podman,
                     containerd and root (test_oci_engines: the engines installed, and root
                     for containerd; elsewhere: a file started as root, whose root part
                     makes what only root can, see run_root_part); tun (a /dev/net/tun the
                     test user can open, for --net private; setup.sh makes it so).

Parts: host_probe.py (what the host can do), busybox_rootfs.py (the root file system),
proc_runs.py (Run, Spawned, /proc scans); this module re-exports what tests use.

A skip is a result: `self.require(name, condition, reason)` skips with the reason unless the
name is required, in which case the test fails.
"""

import fnmatch
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import host_probe  # noqa: E402
import small_fs  # noqa: E402
from busybox_rootfs import build_rootfs, elf_is_static  # noqa: E402,F401
from proc_runs import Run, Spawned, is_zombie, parse_kv, parse_kv_pairs, pids_with_marker  # noqa: E402,F401

DEFAULT_TEST_USER = "kerntest"
REEXEC_MARK = "KERN_TEST_REEXECED"
# What the re-executed process keeps of the caller's environment.
KEPT_ENV = ("KERN_BIN", "KERN_PROBE", "KERN_TEST_REQUIRE", "KERN_TEST_USER", "KERN_TEST_VERBOSE",
            "KERN_SOURCE_DIR", "LANG", "TERM", "KERN_TEST_ROOT_PART",
            # A small file system root mounted for the test user (tests/support/small_fs.py).
            "KERN_TEST_SMALL_FS", "KERN_TEST_SMALL_FS_PROBLEM")

_skip_all_reason = None  # set when the whole run cannot happen (no test user)


# --------------------------------------------------------------------------------------------
# Dropping root


def drop_root():
    """When root, re-exec this very command line as the test user (never returns on success)."""
    global _skip_all_reason
    if os.geteuid() != 0:
        return
    if os.environ.get(REEXEC_MARK):
        raise SystemExit("kerntest: still root after re-executing as the test user")
    user = os.environ.get("KERN_TEST_USER") or DEFAULT_TEST_USER
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        _skip_all_reason = ("running as root and the unprivileged test user %r does not exist "
                            "(create it: useradd -m %s; set KERN_TEST_USER to use another)" % (user, user))
        return
    small = getattr(sys.modules.get("__main__"), "KERNTEST_SMALL_TMPFS", None)
    if small:
        problem = small_fs.mount_for_test_user(small, pw)
        if problem:
            print("kerntest: no small file system: " + problem, flush=True)
    runuser = shutil.which("runuser")
    if not runuser:
        _skip_all_reason = "running as root and runuser(1) is not installed to drop to %r" % user
        return
    env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + pw.pw_dir,
           "USER=" + user, "LOGNAME=" + user, REEXEC_MARK + "=1", "PYTHONDONTWRITEBYTECODE=1"]
    for key in KEPT_ENV:
        if key in os.environ:
            env.append("%s=%s" % (key, os.environ[key]))
    script = os.path.abspath(sys.argv[0])
    # The interpreter running now may live where the test user cannot read (a pyenv under /root).
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    argv = [runuser, "-u", user, "--", "/usr/bin/env", "-i"] + env + [python, "-u", script] + sys.argv[1:]
    sys.stdout.flush()
    sys.stderr.flush()
    # The test user may not be able to enter the caller's working directory.
    os.chdir("/")
    os.execv(runuser, argv)


# --------------------------------------------------------------------------------------------
# What a test file makes as root before dropping it


def run_root_part(make):
    """When started as root: `make(user)` builds what only root can (a tree owned by root, a
    directory under /run/user) and returns (info, undo); info (a JSON-able dict) reaches the
    tests through root_part(), and undo() runs as root once the tests have ended (a root child
    that waits for the end of a pipe the test process holds)."""
    if os.geteuid() != 0 or os.environ.get(REEXEC_MARK):
        return
    user = os.environ.get("KERN_TEST_USER") or DEFAULT_TEST_USER
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        return  # drop_root says why nothing runs
    info, undo = make(pw)
    os.environ["KERN_TEST_ROOT_PART"] = json.dumps(info)
    r, w = os.pipe()
    if os.fork() == 0:
        os.close(w)
        while os.read(r, 1):
            pass
        try:
            undo()
        finally:
            os._exit(0)
    os.close(r)
    os.set_inheritable(w, True)  # held through runuser's exec until the tests end


def root_part():
    """The info of the file's root part (run_root_part), or None when the tests did not start
    as root."""
    text = os.environ.get("KERN_TEST_ROOT_PART")
    return json.loads(text) if text else None


# --------------------------------------------------------------------------------------------
# Requirements and the shared state of one test process


def required_names():
    text = os.environ.get("KERN_TEST_REQUIRE", "")
    return {n.strip() for n in text.split(",") if n.strip()}


def is_required(name):
    """`all` or `*` requires everything; shell patterns work (`outside-*`); a leading `-`
    excludes (`all,-outside-bpf` on a host whose policy refuses bpf to users)."""
    required = excluded = False
    for pattern in required_names():
        negate = pattern.startswith("-")
        pattern = pattern[1:] if negate else pattern
        if pattern == "all":
            pattern = "*"
        if fnmatch.fnmatchcase(name, pattern):
            if negate:
                excluded = True
            else:
                required = True
    return required and not excluded


class Session:
    """Created once per process: the binaries, a private temp dir, the busybox root file system."""

    def __init__(self):
        self.kern = os.environ.get("KERN_BIN", "")
        self.probe = os.environ.get("KERN_PROBE", "")
        self.host = host_probe.host()
        self.tmp = tempfile.mkdtemp(prefix="kern-itest-")
        self.runtime_base = os.path.join(self.tmp, "run")   # XDG_RUNTIME_DIR of every kern run
        self.cache = os.path.join(self.tmp, "cache")
        self.config = os.path.join(self.tmp, "config")
        self.work = os.path.join(self.tmp, "work")          # scratch for tests (bind sources, ...)
        for d in (self.runtime_base, self.cache, self.config, self.work):
            os.mkdir(d, 0o700)
        self.home = pwd.getpwuid(os.getuid()).pw_dir
        self.probe_problem = self._check_probe()
        self.rootfs = os.path.join(self.tmp, "rootfs")
        self.rootfs_problem = None
        try:
            self.outside_dir = tempfile.mkdtemp(prefix="kern-itest-outside-", dir="/var/tmp")
        except OSError:
            self.outside_dir = tempfile.mkdtemp(prefix="kern-itest-outside-", dir=self.tmp)
        try:
            build_rootfs(self.rootfs, None if self.probe_problem else self.probe, self.outside_dir)
        except (OSError, subprocess.SubprocessError) as e:
            self.rootfs_problem = "building the busybox root file system failed: %s" % e
        self._names = 0

    def _check_probe(self):
        if not self.probe:
            return "KERN_PROBE is not set (build the kern-probe target)"
        if not os.access(self.probe, os.X_OK):
            return "KERN_PROBE %s is not executable by %s" % (self.probe, self.host.user)
        if not elf_is_static(self.probe):
            return "KERN_PROBE %s is not a static binary (a box's busybox root has no libc)" % self.probe
        return None

    def new_name(self, tag="box"):
        self._names += 1
        return "it-%s-%d-%d" % (tag, os.getpid(), self._names)

    def cleanup(self):
        for d in (self.tmp, self.outside_dir):
            shutil.rmtree(d, ignore_errors=True)


_session = None


def session():
    global _session
    if _session is None:
        _session = Session()
    return _session


# --------------------------------------------------------------------------------------------
# The test case base class


class KernTestCase(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.s = None if _skip_all_reason else session()

    def setUp(self):
        self.runtime_dir = None if self.s is None else self.s.runtime_base
        if _skip_all_reason:
            self.require("user", False, _skip_all_reason)
        s = self.s
        if not s.kern or not os.access(s.kern, os.X_OK):
            self.fail("KERN_BIN is not set or not executable by %s: %r" % (s.host.user, s.kern))
        self.require("userns", s.host.userns, "no unprivileged user namespaces: " + s.host.userns.detail)
        self.require("overlay", s.host.overlay_userns, "no overlay mount in a user namespace: "
                     + s.host.overlay_userns.detail)
        if s.rootfs_problem:
            self.fail(s.rootfs_problem)

    # ---- skips

    def require(self, name, condition, reason):
        """Skip with reason unless condition holds; fail instead when name is required."""
        require(self, name, condition, reason)

    def need_probe(self):
        self.require("probe", self.s.probe_problem is None, self.s.probe_problem or "")

    # ---- environment

    def base_env(self):
        """A clean environment for kern: nothing of the test process's own environment."""
        return {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": self.s.home,
            "LANG": "C.UTF-8",
            "XDG_RUNTIME_DIR": self.runtime_dir,
            "XDG_CACHE_HOME": self.s.cache,
            "XDG_CONFIG_HOME": self.s.config,
        }

    def use_private_runtime_dir(self):
        """This test's kern runs get an XDG_RUNTIME_DIR of their own (a registry nobody else
        touches, for tests that leave stale entries on purpose)."""
        self.runtime_dir = tempfile.mkdtemp(prefix="run-", dir=self.s.tmp)
        os.chmod(self.runtime_dir, 0o700)
        return self.runtime_dir

    def runtime_kern_dir(self):
        return os.path.join(self.runtime_dir, "kern")

    def registered_boxes(self):
        """Names under the runtime dir's boxes/ (the live-box registry)."""
        d = os.path.join(self.runtime_kern_dir(), "boxes")
        try:
            return sorted(n for n in os.listdir(d) if not n.startswith("."))
        except FileNotFoundError:
            return []

    # ---- running kern

    def _argv_box(self, cmd, flags, name, rootfs):
        argv = [self.s.kern, "box"]
        if name is not None:
            argv.append(name)
        if rootfs is not False:
            argv += ["--rootfs", rootfs or self.s.rootfs]
        argv += list(flags)
        if cmd is not None:
            argv += ["--"] + list(cmd)
        return argv

    def _popen(self, argv, env, stdin, pass_fds, started, report, stdout=subprocess.PIPE):
        full_env = self.base_env()
        for key, value in (env or {}).items():  # None: the variable unset
            if value is None:
                full_env.pop(key, None)
            else:
                full_env[key] = value
        fds = list(pass_fds)
        started_r = report_r = None
        to_close = []
        if started:
            started_r, w = os.pipe()
            full_env["KERN_STARTED_FD"] = str(w)
            fds.append(w)
            to_close.append(w)
        if report:
            report_r, w = os.pipe()
            if report == "flag":
                at = argv.index("--") if "--" in argv else len(argv)
                argv = argv[:at] + ["--report-fd", str(w)] + argv[at:]
            else:
                full_env["KERN_REPORT_FD"] = str(w)
            fds.append(w)
            to_close.append(w)
        t0 = time.monotonic()
        try:
            p = subprocess.Popen(argv, env=full_env, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                                 pass_fds=fds, cwd="/", start_new_session=True)
        finally:
            for w in to_close:
                os.close(w)
        return Spawned(argv, p, started_r, report_r, t0)

    def kern(self, *args, env=None, timeout=60, stdin=subprocess.DEVNULL, pass_fds=(), started=False,
             report=None):
        """Runs `kern ARGS...` to the end. started=True passes KERN_STARTED_FD; report="flag"
        passes --report-fd (right after the verb), report="env" KERN_REPORT_FD."""
        sp = self._popen([self.s.kern] + list(args), env, stdin, pass_fds, started, report)
        run = sp.finish(timeout)
        if getattr(run, "timed_out", False):
            self.fail("kern did not finish within %ss (killed)\n%s" % (timeout, run.describe()))
        return run

    def box(self, cmd, flags=(), name=None, rootfs=None, env=None, timeout=60, stdin=subprocess.DEVNULL,
            pass_fds=(), started=False, report=None):
        """Runs `kern box NAME --rootfs ROOT FLAGS -- CMD` to the end (a fresh NAME by default;
        name=False leaves it out, rootfs=False leaves --rootfs out)."""
        if name is None:
            name = self.s.new_name()
        argv = self._argv_box(cmd, flags, name or None, rootfs)
        sp = self._popen(argv, env, stdin, pass_fds, started, report)
        run = sp.finish(timeout)
        if getattr(run, "timed_out", False):
            self.fail("kern box did not finish within %ss (killed)\n%s" % (timeout, run.describe()))
        run.name = name
        return run

    def spawn_box(self, cmd, flags=(), name=None, env=None, started=True, report=None,
                  stdout=subprocess.PIPE):
        """Starts `kern box` and returns at once (a Spawned); the caller must finish() it."""
        if name is None:
            name = self.s.new_name()
        sp = self._popen(self._argv_box(cmd, flags, name, None), env, subprocess.DEVNULL, (), started,
                         report, stdout=stdout)
        sp.name = name
        self.addCleanup(self._reap_spawned, sp)
        return sp

    @staticmethod
    def _reap_spawned(sp):
        if sp.popen.poll() is None:
            sp.popen.kill()
            sp.popen.communicate()
        for fd in (sp.started_r, sp.report_r):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def probe_box(self, *probe_args, flags=(), probe="/bin/kern-probe", **kw):
        """Runs the probe in a box; needs KERN_PROBE (skips otherwise)."""
        self.need_probe()
        return self.box([probe] + list(probe_args), flags=flags, **kw)

    def probe_outside(self, *probe_args, wrap=(), timeout=30, env=None):
        """Runs the same probe on the host, as the same user, optionally under a wrapper such as
        ("unshare", "-Ur"): the discriminant of a box test."""
        self.need_probe()
        if wrap and wrap[0] == "unshare":
            self.require("unshare", self.s.host.unshare, self.s.host.unshare.detail)
        argv = list(wrap) + [self.s.probe] + list(probe_args)
        return self.host_run(argv, timeout=timeout, env=env)

    def host_run(self, argv, timeout=30, env=None, pass_fds=(), stdin=subprocess.DEVNULL):
        full_env = self.base_env()
        full_env.update(env or {})
        t0 = time.monotonic()
        try:
            p = subprocess.run(argv, env=full_env, stdin=stdin, capture_output=True, timeout=timeout,
                               pass_fds=pass_fds, cwd="/")
        except subprocess.TimeoutExpired as e:
            self.fail("%s did not finish within %ss" % (argv, e.timeout))
        return Run(argv, p.returncode, p.stdout, p.stderr, time.monotonic() - t0)

    # ---- assertions

    def assertExit(self, run, code, msg=""):
        if run.rc != code:
            self.fail("expected exit code %s, got %s%s\n%s" % (code, run.rc, (": " + msg) if msg else "",
                                                              run.describe()))

    def assertKernError(self, run, *needles):
        """Exit 125, a `kern: error: ` line on stderr (naming each needle), nothing on stdout."""
        self.assertExit(run, 125)
        errors = [l for l in run.err.splitlines() if l.startswith("kern: error: ")]
        self.assertTrue(errors, "no `kern: error: ` line on stderr\n" + run.describe())
        for n in needles:
            self.assertIn(n, run.err, "stderr does not name %r\n%s" % (n, run.describe()))
        bare = [l for l in run.err.splitlines() if l.startswith("kern:") and not l.startswith(
            ("kern: error: ", "kern: hint: ", "kern: warning: ", "kern: note: "))]
        self.assertFalse(bare, "a bare `kern:` line (kern-box(1))\n" + run.describe())
        self.assertEqual(run.out, "", "kern wrote to stdout on a failed start\n" + run.describe())

    def assertNothingLeft(self, marker, msg=""):
        """No process with marker in its argv and no box directory in the registry."""
        self.assertEqual(pids_left(marker, 1.0), [], "processes left behind %s" % msg)
        self.assertEqual(self.registered_boxes(), [], "box dirs left in the registry %s" % msg)

    def assertTry(self, run, name, expected, msg=""):
        got = run.kv().get(name)
        if got != expected:
            self.fail("%s: expected %r, got %r%s\n%s" % (name, expected, got, (" (" + msg + ")") if msg else "",
                                                         run.describe()))


def require(case, name, condition, reason):
    """For any unittest.TestCase: skip with reason unless condition holds; fail instead when
    name is required (KERN_TEST_REQUIRE)."""
    if condition:
        return
    if is_required(name):
        case.fail("required (KERN_TEST_REQUIRE has %r) but cannot run: %s" % (name, reason))
    raise unittest.SkipTest("[%s] %s" % (name, reason))


def pids_left(marker, seconds):
    """The live pids with marker in their argv once they have had `seconds` to go away."""
    deadline = time.monotonic() + seconds
    pids = pids_with_marker(marker)
    while pids and time.monotonic() < deadline:
        time.sleep(0.02)
        pids = pids_with_marker(marker)
    return pids


def unique_marker(tag="m"):
    return "kern-itest-%s-%s" % (tag, uuid.uuid4().hex[:12])


# --------------------------------------------------------------------------------------------
# The runner


class _Result(unittest.TextTestResult):
    pass


def main(root_make=None, keep_root=False):
    """Entry point of every integration test file. keep_root: for the few that test kern run as
    root (they skip by name when not root); root_make: see run_root_part."""
    if root_make is not None:
        run_root_part(root_make)
    if not keep_root:
        drop_root()
    script = os.path.basename(sys.argv[0])
    print("=== kerntest %s: pid %d, uid %d" % (script, os.getpid(), os.getuid()), flush=True)
    if _skip_all_reason:
        print("kerntest: " + _skip_all_reason, flush=True)
        s = None
    else:
        s = session()
        for line in s.host.summary_lines():
            print(line)
        print("kerntest: kern=%s" % (s.kern or "(KERN_BIN unset)"))
        print("kerntest: probe=%s%s" % (s.probe or "(unset)",
                                       (" [unusable: %s]" % s.probe_problem) if s.probe_problem else ""))
        print("kerntest: rootfs=%s%s" % (s.rootfs, (" [%s]" % s.rootfs_problem) if s.rootfs_problem else ""))
        print("kerntest: required=%s" % (",".join(sorted(required_names())) or "(none)"), flush=True)
    main_mod = sys.modules["__main__"]
    loader = unittest.TestLoader()
    names = [a for a in sys.argv[1:] if not a.startswith("-")]
    suite = loader.loadTestsFromNames(names, main_mod) if names else loader.loadTestsFromModule(main_mod)
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2, resultclass=_Result)
    result = runner.run(suite)
    if s is not None:
        s.cleanup()
    ran = result.testsRun
    skipped = len(result.skipped)
    failed = len(result.failures) + len(result.unexpectedSuccesses)
    errors = len(result.errors)
    passed = ran - skipped - failed - errors - len(result.expectedFailures)
    for test, reason in result.skipped:
        print("SKIPPED %s: %s" % (test.id(), reason))
    ok = result.wasSuccessful()
    print("KERNTEST %s: %s ran=%d passed=%d failed=%d errors=%d skipped=%d"
          % (script, "OK" if ok else "FAILED", ran, passed, failed, errors, skipped), flush=True)
    if not ok:
        sys.exit(1)
    if ran > 0 and skipped == ran:
        sys.exit(77)
    sys.exit(0)
