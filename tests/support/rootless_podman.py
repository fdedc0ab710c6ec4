"""A rootless podman of its own for the test user, as the engine tests, the build peer test and the
build benchmark run it: HOME, XDG_RUNTIME_DIR, XDG_CONFIG_HOME and XDG_DATA_HOME in a private tree,
with a containers.conf and a storage.conf there.

What this host needs of it: cgroupfs and a file event log (no systemd user session is needed), and
runc as the default runtime when one is named, because Debian's crun refuses a host whose cgroups
are hybrid (v1 and v2). Started as root, podman runs as the user through runuser; started as the
user, as itself.

    home = PodmanHome(top, user, runtime="runc")     # top: a fresh directory path
    r = home.podman("load", "-i", archive)            # a proc_runs.Run
    home.cleanup()
"""

import os
import pwd
import shutil
import signal
import subprocess
import time

from proc_runs import Run

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
TOOLS = ("podman", "conmon", "newuidmap", "slirp4netns")


def missing_tools(runtime=None):
    """The tools rootless podman needs that are not installed (conmon may live in podman's libexec)."""
    need = TOOLS + ((runtime,) if runtime else ())
    return [t for t in need if not shutil.which(t) and not os.path.exists("/usr/libexec/podman/" + t)]


def test_user():
    """Who runs podman: the caller, or KERN_TEST_USER (default kerntest) when the caller is root."""
    if os.geteuid() == 0:
        return os.environ.get("KERN_TEST_USER") or "kerntest"
    return pwd.getpwuid(os.getuid()).pw_name


def run(argv, env=None, timeout=60, user=None, stdin=subprocess.DEVNULL, cwd="/"):
    """argv to the end with a clean environment; as user (through runuser) when we are root."""
    full = {"PATH": PATH, "LANG": "C.UTF-8"}
    full.update(env or {})
    if user is not None and os.geteuid() == 0:
        argv = ["runuser", "-u", user, "--", "env", "-i"] + ["%s=%s" % kv for kv in full.items()] + list(argv)
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, env=full, stdin=stdin, capture_output=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        return Run(argv, "timeout after %ss" % timeout, e.stdout or b"", e.stderr or b"", timeout)
    return Run(argv, p.returncode, p.stdout, p.stderr, time.monotonic() - t0)


class PodmanHome:
    """The private tree and configuration. runtime: the default OCI runtime by name ("runc"), or
    None for podman's own; runtimes: extra [engine.runtimes] entries, name -> path, also added to
    runtime_supports_json (conmon reads their errors as runc's JSON log); driver: the storage
    driver ("vfs" copies each layer; "overlay" is podman's own choice for rootless storage on a
    kernel that allows overlay in a user namespace)."""

    def __init__(self, top, user=None, runtime=None, runtimes=None, driver="vfs"):
        self.user = user or test_user()
        self.top = top
        self.home = os.path.join(top, "home")
        self.xdg_run = os.path.join(top, "run")
        self.conf = os.path.join(top, "config")
        self.data = os.path.join(top, "data")
        for d in (top, self.home, self.xdg_run, self.conf, os.path.join(self.conf, "containers"), self.data):
            os.mkdir(d, 0o700)
        engine = ['cgroup_manager = "cgroupfs"', 'events_logger = "file"']
        if runtime:
            engine.append('runtime = "%s"' % runtime)
        runtimes = runtimes or {}
        if runtimes:
            engine.append("runtime_supports_json = [%s]" % ", ".join(
                '"%s"' % n for n in ["crun", "runc", "kata", "runsc", "krun"] + sorted(runtimes)))
        text = "[engine]\n" + "".join(l + "\n" for l in engine)
        if runtimes:
            text += "[engine.runtimes]\n" + "".join('%s = ["%s"]\n' % kv for kv in sorted(runtimes.items()))
        with open(os.path.join(self.conf, "containers", "containers.conf"), "w") as f:
            f.write(text)
        with open(os.path.join(self.conf, "containers", "storage.conf"), "w") as f:
            f.write('[storage]\ndriver = "%s"\nrunroot = "%s/containers"\ngraphroot = "%s/containers/storage"\n'
                    % (driver, self.xdg_run, self.data))
        self.env = {"HOME": self.home, "XDG_RUNTIME_DIR": self.xdg_run, "XDG_CONFIG_HOME": self.conf,
                    "XDG_DATA_HOME": self.data}
        if os.geteuid() == 0:
            pw = pwd.getpwnam(self.user)
            for dirpath, dirs, files in os.walk(top):
                for n in [dirpath] + [os.path.join(dirpath, x) for x in files]:
                    os.chown(n, pw.pw_uid, pw.pw_gid)

    def podman(self, *args, timeout=60, cwd="/"):
        return run(["podman"] + list(args), env=self.env, timeout=timeout, user=self.user, cwd=cwd)

    def argv(self, *args):
        """The podman command line as the user (for a pty, or to time it)."""
        full = ["podman"] + list(args)
        if os.geteuid() != 0:
            return full
        return ["runuser", "-u", self.user, "--", "env", "-i", "PATH=" + PATH, "TERM=xterm"] + \
            ["%s=%s" % kv for kv in self.env.items()] + full

    def full_env(self):
        """The environment podman runs with (the user's own run: no runuser)."""
        env = {"PATH": PATH, "LANG": "C.UTF-8"}
        env.update(self.env)
        return env

    def stop_pause_process(self):
        """Kills the rootless pause process that holds podman's user namespace."""
        try:
            with open(os.path.join(self.xdg_run, "libpod", "tmp", "pause.pid")) as f:
                os.kill(int(f.read().strip()), signal.SIGKILL)
        except (OSError, ValueError):
            pass

    def cleanup(self):
        self.podman("rm", "-af", "-t", "0")
        if os.geteuid() != 0:  # files of the user's subordinate ids: removed in podman's namespace
            self.podman("unshare", "rm", "-rf", self.data)
        self.stop_pause_process()
        shutil.rmtree(self.top, ignore_errors=True)
