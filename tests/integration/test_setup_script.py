"""setup.sh and the README's first commands, on the machines the README names: as root on a
fresh Debian (no sudo there), as a user who may sudo, and as a user with neither (a clear
refusal). The script runs in its dry mode (KERN_SETUP_DRY_RUN=1), which makes every decision of
who does what and stops before changing anything. Also: the test run stops only what it
started, never processes by name across the host."""

import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402  (require: a skip that CI requires fails)

SOURCE = os.path.realpath(os.environ.get("KERN_SOURCE_DIR") or
                          os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def readme_commands():
    """The commands of the README's first sh block (comments and blank lines left out)."""
    with open(os.path.join(SOURCE, "README.md")) as f:
        text = f.read()
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block, "README.md has no ```sh block"
    cmds = []
    for line in block.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            cmds.append(line)
    return cmds


def path_without(tool, where):
    """A directory of links to every program on the usual PATH except `tool`."""
    os.makedirs(where, exist_ok=True)
    for d in BIN_DIRS:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            src = os.path.join(d, n)
            dst = os.path.join(where, n)
            if n != tool and not os.path.lexists(dst) and os.access(src, os.X_OK) and not os.path.isdir(src):
                os.symlink(src, dst)
    return where


class SetupTestCase(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="kern-setup-test-")
        os.chmod(self.tmp, 0o755)
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def require(self, name, condition, reason):
        kerntest.require(self, name, condition, reason)

    def run_cmd(self, cmd, path, user=None):
        env = {"PATH": path, "HOME": self.tmp, "KERN_SETUP_DRY_RUN": "1", "LANG": "C.UTF-8"}
        argv = ["/bin/bash", "-c", cmd]
        if user:
            argv = ["runuser", "-u", user, "--", "/usr/bin/env", "-i"] + ["%s=%s" % kv for kv in env.items()] + argv
        return subprocess.run(argv, cwd=SOURCE, env=env, capture_output=True, text=True, timeout=60)


class ReadmeCommandsTest(SetupTestCase):

    def test_readme_names_demo_and_test(self):
        cmds = readme_commands()
        self.assertEqual(len(cmds), 2, cmds)
        self.assertTrue(cmds[0].endswith("setup.sh demo"), cmds)
        self.assertTrue(cmds[1].endswith("setup.sh test"), cmds)

    def test_as_root_without_sudo(self):
        self.require("root", os.geteuid() == 0, "the root case needs this test to run as root")
        path = path_without("sudo", os.path.join(self.tmp, "bin"))
        for cmd in readme_commands():
            run = self.run_cmd(cmd, path)
            self.assertEqual(run.returncode, 0, "%r as root without sudo:\n%s" % (cmd, run.stderr))
            self.assertRegex(run.stderr, r"setup: dry run: (demo|test) as root", cmd)

    def test_as_a_user_who_may_sudo(self):
        user = os.environ.get("KERN_TEST_USER", "kerntest")
        self.require("user", os.geteuid() == 0 and shutil.which("runuser"),
                     "needs root and runuser to act as the unprivileged user %s" % user)
        path = path_without("sudo", os.path.join(self.tmp, "bin"))
        # A sudo that records how it was called (it cannot be the real one: no password here).
        log = os.path.join(self.tmp, "sudo.log")
        with open(os.path.join(path, "sudo"), "w") as f:
            f.write("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> %s\n" % log)
        os.chmod(os.path.join(path, "sudo"), 0o755)
        open(log, "w").close()
        os.chmod(log, 0o666)
        for cmd in readme_commands():
            verb = cmd.split()[-1]
            open(log, "w").close()
            run = self.run_cmd(cmd, path, user=user)
            self.assertEqual(run.returncode, 0, "%r as %s:\n%s" % (cmd, user, run.stderr))
            with open(log) as f:
                calls = f.read().splitlines()
            if calls:
                self.assertEqual(len(calls), 1, calls)
                self.assertTrue(calls[0].startswith("-- env "), calls)
                self.assertTrue(calls[0].endswith("%s/setup.sh %s" % (SOURCE, verb)), calls)
                self.assertIn("KERN_SETUP_DRY_RUN=1", calls[0])
            else:
                # demo needs no root where the packages are installed already.
                self.assertEqual(verb, "demo", "%r as %s did not ask sudo for root:\n%s" % (cmd, user, run.stderr))
                self.assertIn("setup: dry run: demo as %s" % user, run.stderr)

    def test_a_user_without_sudo_is_told_to_run_it_as_root(self):
        user = os.environ.get("KERN_TEST_USER", "kerntest")
        self.require("user", os.geteuid() == 0 and shutil.which("runuser"),
                     "needs root and runuser to act as the unprivileged user %s" % user)
        path = path_without("sudo", os.path.join(self.tmp, "bin"))
        run = self.run_cmd("./setup.sh test", path, user=user)
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertIn("run it as root", run.stderr)
        self.assertNotIn("dry run", run.stderr)


FAKE_CMAKE = r"""#!/bin/sh
# Stands for cmake: says who ran it with what, makes what a build leaves (a cache, cli/kern).
printf '%%s %%s\n' "$(id -un)" "$*" >> %(log)s
case "$1" in
  -S) mkdir -p "$4" && echo fake > "$4/CMakeCache.txt" ;;
  --build) mkdir -p "$2/cli" && printf '#!/bin/sh\necho "fake kern $*"\n' > "$2/cli/kern" && chmod 755 "$2/cli/kern" ;;
esac
"""


class RealRunsTest(SetupTestCase):
    """setup.sh run for real as root, with apt-get, apt-cache and cmake stood in for (they say
    what they were asked and by whom): who builds, which targets, who owns build/ afterwards."""

    def fake_path(self):
        path = path_without("sudo", os.path.join(self.tmp, "bin"))
        self.log = os.path.join(self.tmp, "cmake.log")
        open(self.log, "w").close()
        os.chmod(self.log, 0o666)
        for name, text in (("apt-get", "#!/bin/sh\nexit 0\n"), ("apt-cache", "#!/bin/sh\nexit 0\n"),
                           ("cmake", FAKE_CMAKE % {"log": self.log})):
            os.unlink(os.path.join(path, name)) if os.path.lexists(os.path.join(path, name)) else None
            with open(os.path.join(path, name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(path, name), 0o755)
        return path

    def test_demo_through_sudo_builds_kern_alone_as_the_user_and_gives_build_back(self):
        user = os.environ.get("KERN_TEST_USER", "kerntest")
        self.require("user", os.geteuid() == 0 and shutil.which("runuser"),
                     "needs root and runuser to act as the unprivileged user %s" % user)
        path = self.fake_path()
        build = os.path.join(self.tmp, "build")
        # What an earlier run through sudo left: a build/ of root's in the user's clone.
        os.mkdir(build)
        with open(os.path.join(build, "CMakeCache.txt"), "w") as f:
            f.write("root's\n")
        env = {"PATH": path, "HOME": self.tmp, "LANG": "C.UTF-8", "SUDO_USER": user, "KERN_BUILD_DIR": build}
        run = subprocess.run(["./setup.sh", "demo"], cwd=SOURCE, env=env, capture_output=True, text=True,
                             timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("fake kern box hello --image busybox", run.stdout + run.stderr)
        with open(self.log) as f:
            calls = f.read().splitlines()
        self.assertEqual(len(calls), 2, calls)
        self.assertTrue(calls[0].startswith(user + " -S "), calls)
        self.assertEqual(calls[1].split()[0], user, calls)
        self.assertEqual(calls[1].split()[1:3], ["--build", build], calls)
        self.assertEqual(calls[1].split()[-2:], ["--target", "kern"], calls)  # not the unit tests
        uid = pwd.getpwnam(user).pw_uid
        for top, dirs, names in os.walk(build):
            for n in [top] + [os.path.join(top, x) for x in names]:
                self.assertEqual(os.lstat(n).st_uid, uid, "%s is not %s's" % (n, user))
        # The user's own `./setup.sh build` works in it now.
        open(self.log, "w").close()
        again = subprocess.run(["runuser", "-u", user, "--", "/usr/bin/env", "-i", "PATH=" + path, "HOME=" + self.tmp,
                                "KERN_BUILD_DIR=" + build, "./setup.sh", "build"],
                               cwd=SOURCE, capture_output=True, text=True, timeout=120)
        self.assertEqual(again.returncode, 0, again.stderr)

    def test_tun_is_made_usable_as_debians_udev_rule_does(self):
        # A machine without udev, in a mount namespace of the test's own: /dev/net a fresh
        # tmpfs, with the device 0600 root, then without it.
        user = os.environ.get("KERN_TEST_USER", "kerntest")
        self.require("root", os.geteuid() == 0, "mknod and chmod of /dev/net/tun need root")
        self.require("unshare", shutil.which("unshare") is not None, "unshare(1) is not installed")
        script = r"""
set -e
mount -t tmpfs -o mode=0755 tmpfs /dev/net
try() { runuser -u "$1" -- python3 -c 'import os; os.close(os.open("/dev/net/tun", os.O_RDWR))' 2>/dev/null && echo opened || echo refused; }
mknod -m 0600 /dev/net/tun c 10 200
echo "before: $(try "$1")"
"$2/setup.sh" tun
echo "after: $(stat -c '%a %t,%T %F' /dev/net/tun) $(try "$1")"
rm /dev/net/tun
"$2/setup.sh" tun
echo "made: $(stat -c '%a %t,%T %F' /dev/net/tun) $(try "$1")"
"""
        run = subprocess.run(["unshare", "-m", "bash", "-c", script, "x", user, SOURCE],
                             env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"},
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        lines = run.stdout.splitlines()
        self.assertEqual(lines, ["before: refused", "after: 666 a,c8 character special file opened",
                                 "made: 666 a,c8 character special file opened"], run.stderr)
        self.assertIn("/dev/net/tun was mode 600: made 0666", run.stderr)


class Arm64LaneTest(SetupTestCase):
    """What `setup.sh test` runs for arm64 follows the host's Debian architecture: on amd64 the
    cross build, its unit tests under qemu-user and its VM lane after the x86_64 tests; on an
    arm64 board no cross build (the native build is the arm64 lane). A dpkg that answers
    --print-architecture as the other host would stands in for the real one."""

    def dry_test(self, arch):
        self.require("root", os.geteuid() == 0, "the dry run of setup.sh test runs as root")
        path = path_without("dpkg", os.path.join(self.tmp, "bin"))
        with open(os.path.join(path, "dpkg"), "w") as f:
            f.write("#!/bin/sh\n[ \"$1\" = --print-architecture ] && echo %s\n" % arch)
        os.chmod(os.path.join(path, "dpkg"), 0o755)
        run = self.run_cmd("./setup.sh test", path)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stderr

    def test_amd64_runs_the_cross_lane(self):
        out = self.dry_test("amd64")
        self.assertIn("then the arm64 lane: the cross build of every target in", out)
        self.assertIn("its unit tests under qemu-aarch64-static, its VM lane", out)

    def test_arm64_builds_natively_and_cross_builds_nothing(self):
        out = self.dry_test("arm64")
        self.assertIn("no cross build on this arm64 host: the native build and its tests are the arm64 lane", out)
        self.assertNotIn("qemu-aarch64-static", out)


class BuildJobsTest(SetupTestCase):
    """The build's parallelism is capped by memory: one unit of cli/ peaks at ~1.2 GiB, and a
    4 GB board compiling with one job per core swaps to death. The dry run of `setup.sh build`
    names the job count; the cores come from nproc (OMP_NUM_THREADS sets its answer) and the
    memory from a MemAvailable bound over /proc/meminfo in a mount namespace of the test's own."""

    def jobs(self, avail_kb, cores):
        meminfo = os.path.join(self.tmp, "meminfo")
        with open(meminfo, "w") as f:
            f.write("MemTotal: %d kB\nMemFree: 1024 kB\nMemAvailable: %d kB\n" % (2 * avail_kb, avail_kb))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.tmp, "KERN_SETUP_DRY_RUN": "1",
               "LANG": "C.UTF-8", "OMP_NUM_THREADS": str(cores)}
        script = 'mount --bind "$1" /proc/meminfo && exec ./setup.sh build'
        run = subprocess.run(["unshare", "--mount", "--propagation", "private", "/bin/bash", "-c", script, "sh",
                              meminfo], cwd=SOURCE, env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        m = re.search(r"with (\d+) parallel jobs", run.stderr)
        self.assertIsNotNone(m, "the dry run names no job count:\n" + run.stderr)
        return int(m.group(1))

    def test_jobs_are_capped_by_available_memory(self):
        self.require("root", os.geteuid() == 0 and shutil.which("unshare"),
                     "binding a MemAvailable over /proc/meminfo needs root and unshare")
        gib = 1024 * 1024
        # A 4 GB board with 4 cores (~3.4 GiB available): 2 jobs, not 4.
        self.assertEqual(self.jobs(int(3.4 * gib), 4), 2)
        # Less than one unit's worth: still one job.
        self.assertEqual(self.jobs(gib, 4), 1)
        # Memory to spare: one job per core.
        self.assertEqual(self.jobs(64 * gib, 4), 4)
        self.assertEqual(self.jobs(64 * gib, 1), 1)


class DocsCiteOnlyTheRepoTest(unittest.TestCase):
    """What users need is in the repo's man pages: no file of the repo points at a document
    outside it (the SDK contract kern's interface follows lives in man/, in kern's words), and
    every repo path the README names exists."""

    # The names are assembled from pieces so that this guard does not itself name them.
    OUTSIDE = re.compile("|".join([r"CONT" + r"RACT\.md", r"DES" + r"IGN\.md", r"\.\./sha" + r"red\b",
                                   r"/work/sha" + r"red"]))

    def source_files(self):
        for top, dirs, names in os.walk(SOURCE):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
            for n in names:
                if n.endswith((".cc", ".h", ".py", ".sh", ".md", ".1", ".5", ".txt", ".cmake", ".toml", ".js")):
                    yield os.path.join(top, n)

    def test_nothing_cites_a_document_outside_the_repo(self):
        found = []
        for path in self.source_files():
            with open(path, errors="replace") as f:
                for no, line in enumerate(f, 1):
                    if self.OUTSIDE.search(line):
                        found.append("%s:%d: %s" % (os.path.relpath(path, SOURCE), no, line.strip()))
        self.assertEqual(found, [])

    def test_readme_names_only_paths_that_exist(self):
        with open(os.path.join(SOURCE, "README.md")) as f:
            text = f.read()
        named = set(re.findall(r"(?<![\w./-])((?:man|tests|cli|runtime|oci|profiles)/[\w./-]*[\w])", text))
        named |= set(re.findall(r"(?<![\w./-])([A-Z]+\.md)\b", text))
        self.assertIn("man/kern.1", named)
        missing = sorted(n for n in named if not os.path.exists(os.path.join(SOURCE, n)))
        self.assertEqual(missing, [])


class NoHostWideKillsTest(unittest.TestCase):
    """The test run stops only what it started, by pid: nothing in setup.sh or CI stops
    processes or services by name (Debian's docker-registry package runs a system registry; the
    tests' registries are their own, on their own ports, and die with the test process)."""

    def test_setup_and_ci_kill_nothing_by_name(self):
        bad = re.compile(r"\b(pkill|killall|skill)\b|systemctl\s+(stop|kill)|\bkill\s+(-\S+\s+)*-1\b")
        found = []
        files = [os.path.join(SOURCE, "setup.sh")]
        ci = os.path.join(SOURCE, ".ci")
        if os.path.isdir(ci):
            files += [os.path.join(ci, n) for n in sorted(os.listdir(ci))]
        for path in files:
            with open(path, errors="replace") as f:
                for no, line in enumerate(f, 1):
                    if bad.search(line.split("#", 1)[0]):
                        found.append("%s:%d: %s" % (os.path.relpath(path, SOURCE), no, line.strip()))
        self.assertEqual(found, [], "host-wide kills by name")


if __name__ == "__main__":
    unittest.main(verbosity=2)
