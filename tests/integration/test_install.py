"""`cmake --install` (what `./setup.sh install PREFIX` runs) into a temporary prefix: kern and
kern-oci, the man pages (which render without a warning), and the bash, zsh and fish completion
scripts, which load, name kern's function, and complete what `kern box --help` lists. Runs as
the user running the tests (it starts no box)."""

import os
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
KERN_BIN = os.environ.get("KERN_BIN", "")
BUILD = os.path.dirname(os.path.dirname(os.path.realpath(KERN_BIN))) if KERN_BIN else ""

# Drives the completion function as bash does on TAB: COMP_WORDS/COMP_CWORD in, COMPREPLY out.
BASH_DRIVER = r'''
source "$1"
shift
COMP_WORDS=("$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
_kern
printf '%s\n' "${COMPREPLY[@]}"
'''

# zsh's completion builtins replaced by stand-ins that print what they would offer matching the
# word under the cursor (PREFIX), then _kern called with words/CURRENT as zsh sets them on TAB.
ZSH_DRIVER = r'''
_kern_test_offer() { local w; for w in "$@"; do [[ $w == ${PREFIX}* ]] && print -r -- $w; done; return 0 }
compadd() { if [[ $1 == -a ]]; then _kern_test_offer ${(P)2}; else shift $(( ${@[(i)--]} )); _kern_test_offer "$@"; fi }
_describe() { _kern_test_offer ${${(P)4}%%:*} }
_files() { print -r -- "<files $*>" }
_command_names() { print -r -- "<commands>" }
_default() { print -r -- "<default>" }
compset() { [[ $1 == -P ]] && PREFIX=${PREFIX#*=}; return 0 }
compdef() { }
source $1
shift
words=("$@")
CURRENT=$#
PREFIX=$words[CURRENT]
_kern
'''


def help_flags(text):
    """Every flag name `--help` lists: the words starting with - in an option line's name column."""
    flags = set()
    for line in text.splitlines():
        m = re.match(r"\s+(-[^\s]+)", line)
        if m:
            for name in m.group(1).split(","):
                if re.fullmatch(r"--?[A-Za-z][A-Za-z0-9-]*", name):
                    flags.add(name)
    return flags


class InstallTest(unittest.TestCase):
    prefix = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="kern-install-test-")
        os.chmod(cls.tmp, 0o755)
        cls.prefix = os.path.join(cls.tmp, "prefix")
        cls.install = None
        if BUILD and os.path.exists(os.path.join(BUILD, "CMakeCache.txt")):
            cls.install = subprocess.run(["cmake", "--install", BUILD, "--prefix", cls.prefix, "--strip"],
                                         capture_output=True, text=True, timeout=300)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def setUp(self):
        if not KERN_BIN:
            self.fail("KERN_BIN is not set")
        self.assertIsNotNone(self.install, "no CMakeCache.txt in %r (KERN_BIN's build tree)" % BUILD)
        self.assertEqual(self.install.returncode, 0, self.install.stdout + self.install.stderr)
        self.env = {"PATH": os.path.join(self.prefix, "bin") + ":/usr/local/bin:/usr/bin:/bin",
                    "HOME": self.tmp, "LANG": "C.UTF-8"}

    def require(self, name, condition, reason):
        kerntest.require(self, name, condition, reason)

    def path(self, *parts):
        return os.path.join(self.prefix, *parts)

    def run_in(self, argv, **kw):
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=60, cwd=self.tmp, **kw)

    def bash_complete(self, *words):
        script = self.path("share", "bash-completion", "completions", "kern")
        run = self.run_in(["bash", "-c", BASH_DRIVER, "drive", script] + list(words))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stderr, "", "the completion function wrote to stderr")
        return [w for w in run.stdout.splitlines() if w]

    def test_binaries_man_pages_and_completions_are_installed(self):
        kern = self.path("bin", "kern")
        self.assertTrue(os.access(kern, os.X_OK), kern)
        self.assertEqual(os.readlink(self.path("bin", "kern-oci")), "kern")
        sections = subprocess.run(["readelf", "-S", "-W", kern], capture_output=True, text=True).stdout
        self.assertNotIn(".symtab", sections, "kern is installed stripped")
        for page in ("man1/kern.1", "man1/kern-box.1", "man1/kern-compose.1", "man1/kern-kernel.1", "man1/kern-oci.1",
                     "man1/kern-volume.1", "man5/kern.toml.5"):
            self.assertTrue(os.path.isfile(self.path("share", "man", page)), page)
        for script in ("bash-completion/completions/kern", "zsh/site-functions/_kern",
                       "fish/vendor_completions.d/kern.fish"):
            self.assertTrue(os.path.isfile(self.path("share", script)), script)
        self.assertEqual(os.readlink(self.path("share", "bash-completion", "completions", "kern-oci")), "kern")
        # The installed scripts are the installed binary's own.
        for shell, script in (("bash", "bash-completion/completions/kern"), ("zsh", "zsh/site-functions/_kern"),
                              ("fish", "fish/vendor_completions.d/kern.fish")):
            run = self.run_in([kern, "completion", shell])
            self.assertEqual(run.returncode, 0, run.stderr)
            with open(self.path("share", script)) as f:
                self.assertEqual(f.read(), run.stdout, script)

    def test_man_pages_render_without_warnings(self):
        self.require("man", shutil.which("man"), "man(1) is not installed (apt-get install man-db)")
        mandir = self.path("share", "man")
        pages = [os.path.join(d, n) for d, _, names in os.walk(mandir) for n in names]
        self.assertEqual(len(pages), 8, pages)
        for page in sorted(pages):
            env = dict(self.env, MANWIDTH="80", MANPAGER="cat", PAGER="cat")
            run = subprocess.run(["man", "-l", page], env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 0, "%s: %s" % (page, run.stderr))
            self.assertEqual(run.stderr, "", "man -l %s warned" % page)
            self.assertIn("NAME", run.stdout, page)

    def test_bash_script_registers_kern_function(self):
        script = self.path("share", "bash-completion", "completions", "kern")
        run = self.run_in(["bash", "-c", 'source "$1"; complete -p kern; complete -p kern-oci', "x", script])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.splitlines(), ["complete -F _kern kern", "complete -F _kern kern-oci"])

    def test_bash_completes_every_box_flag_of_help(self):
        helped = self.run_in([self.path("bin", "kern"), "box", "--help"])
        self.assertEqual(helped.returncode, 0, helped.stderr)
        flags = help_flags(helped.stdout)
        self.assertIn("--image", flags)
        self.assertIn("--memory", flags)
        self.assertIn("--json", flags)
        longs = set(self.bash_complete("kern", "box", "--"))
        self.assertEqual({f for f in flags if f.startswith("--")}, longs,
                         "kern box --<TAB> offers exactly the long flags kern box --help lists")
        shorts = set(self.bash_complete("kern", "box", "-"))
        self.assertTrue({f for f in flags} <= shorts, sorted(flags - shorts))
        self.assertEqual(self.bash_complete("kern", "box", "--ima"), ["--image"])

    def test_bash_completes_verbs_values_and_commands(self):
        self.assertEqual(sorted(self.bash_complete("kern", "ima")), ["image", "images"])
        self.assertEqual(sorted(self.bash_complete("kern", "kernel", "st")), ["start", "status", "stop"])
        self.assertEqual(self.bash_complete("kern", "box", "--pull", ""), ["missing", "never", "always"])
        self.assertEqual(self.bash_complete("kern", "box", "--pull", "=", "ne"), ["never"])
        self.assertEqual(self.bash_complete("kern", "box", "--net", ""), ["none", "host", "private"])
        self.assertEqual(self.bash_complete("kern", "kernel", "start", "k", "--lang", "n"), ["node"])
        self.assertEqual(self.bash_complete("kern", "completion", "z"), ["zsh"])
        self.assertEqual(self.bash_complete("kern", "help", "doc"), ["doctor"])
        # After a flag a bare word starts the box's command: command names, not kern's flags.
        self.assertIn("bash", self.bash_complete("kern", "box", "--rootfs", "/", "bas"))
        self.assertIn("bash", self.bash_complete("kern", "box", "--rootfs", "/", "--", "bas"))
        self.assertEqual(self.bash_complete("kern", "box", "--rootfs", "/", "--", "ls", "--ima"), [],
                         "the command's own words are not kern's flags")
        self.assertEqual(sorted(self.bash_complete("kern-oci", "sta")), ["start", "state"])

    def test_image_names_come_from_the_store(self):
        self.require("busybox", os.access("/bin/busybox", os.X_OK), "/bin/busybox is missing (busybox-static)")
        cache = os.path.join(self.tmp, "cache")
        run_dir = os.path.join(self.tmp, "run")
        os.makedirs(cache, exist_ok=True)
        os.makedirs(run_dir, mode=0o700, exist_ok=True)
        self.env.update(XDG_CACHE_HOME=cache, XDG_RUNTIME_DIR=run_dir)
        self.assertEqual(self.bash_complete("kern", "box", "--image", ""), [], "an empty store offers nothing")
        made = self.run_in(["sh", os.path.join(SOURCE, "tests", "support", "make_busybox_image.sh"),
                            self.path("bin", "kern"), os.path.join(self.tmp, "busybox.tar")])
        self.assertEqual(made.returncode, 0, made.stdout + made.stderr)
        self.assertEqual(self.bash_complete("kern", "box", "--image", "bu"), ["busybox:latest"])
        self.assertEqual(self.bash_complete("kern", "rmi", ""), ["busybox:latest"])
        listed = self.run_in([self.path("bin", "kern"), "completion", "--list", "images"])
        self.assertEqual(listed.stdout, "busybox:latest\n", listed.stderr)

    def test_zsh_script_parses_and_completes(self):
        self.require("zsh", shutil.which("zsh"), "zsh is not installed (apt-get install zsh)")
        script = self.path("share", "zsh", "site-functions", "_kern")
        run = self.run_in(["zsh", "-n", script])
        self.assertEqual((run.returncode, run.stderr), (0, ""))

        def complete(*words):
            run = self.run_in(["zsh", "-f", "-c", ZSH_DRIVER, "drive", script] + list(words))
            self.assertEqual((run.returncode, run.stderr), (0, ""), words)
            return run.stdout.splitlines()
        helped = self.run_in([self.path("bin", "kern"), "box", "--help"])
        longs = {f for f in help_flags(helped.stdout) if f.startswith("--")}
        self.assertEqual(set(complete("kern", "box", "--")), longs)
        self.assertEqual(complete("kern", "box", "--ima"), ["--image"])
        self.assertEqual(complete("kern", "box", "--pull", ""), ["missing", "never", "always"])
        self.assertEqual(complete("kern", "box", "--pull=n"), ["never"])
        self.assertEqual(sorted(complete("kern", "kernel", "st")), ["start", "status", "stop"])
        self.assertEqual(complete("kern", "box", "--rootfs", ""), ["<files -/>"])
        self.assertEqual(complete("kern", "box", "--rootfs", "/", "ech"), ["<commands>"])
        self.assertEqual(complete("kern", "box", "--rootfs", "/", "--", "ls", "-"), ["<default>"])
        self.assertEqual(sorted(complete("kern-oci", "sta")), ["start", "state"])

    def test_fish_script_parses_and_completes(self):
        self.require("fish", shutil.which("fish"), "fish is not installed (apt-get install fish)")
        script = self.path("share", "fish", "vendor_completions.d", "kern.fish")
        run = self.run_in(["fish", "-n", script])
        self.assertEqual((run.returncode, run.stderr), (0, ""))
        run = self.run_in(["fish", "--no-config", "-c", "source $argv[1]; complete -C 'kern box --ima'", script])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual([l.split("\t")[0] for l in run.stdout.splitlines()], ["--image"])
        run = self.run_in(["fish", "--no-config", "-c", "source $argv[1]; complete -C 'kern box --pull '", script])
        self.assertEqual(sorted(l.split("\t")[0] for l in run.stdout.splitlines()), ["always", "missing", "never"])


# Whether a new interactive bash (bash-completion's loader, as ~/.bashrc sources it on Debian)
# finds kern's completion: prints "found" or "not found".
BASH_LOADER = r'''
source /usr/share/bash-completion/bash_completion
__load_completion kern && complete -p kern >/dev/null 2>&1 && echo found || echo not found
'''


class SetupInstallTest(unittest.TestCase):
    """`./setup.sh install [PREFIX]` for real (apt-get and apt-cache stood in for, the build
    tree KERN_BIN's): what it says of where each shell looks for the completions is what the
    shell does, for a prefix no shell searches and for /usr/local (a tmpfs over it in a mount
    namespace of the test's own)."""

    def setUp(self):
        if not KERN_BIN:
            self.fail("KERN_BIN is not set")
        kerntest.require(self, "root", os.geteuid() == 0, "setup.sh install runs as root")
        kerntest.require(self, "bash-completion", os.path.exists("/usr/share/bash-completion/bash_completion"),
                         "bash-completion is not installed (setup.sh installs it)")
        kerntest.require(self, "unshare", shutil.which("unshare") is not None, "unshare(1) is not installed")
        self.tmp = tempfile.mkdtemp(prefix="kern-setup-install-")
        os.chmod(self.tmp, 0o755)
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.bin = os.path.join(self.tmp, "bin")
        os.mkdir(self.bin)
        for name in ("apt-get", "apt-cache"):
            with open(os.path.join(self.bin, name), "w") as f:
                f.write("#!/bin/sh\nexit 0\n")
            os.chmod(os.path.join(self.bin, name), 0o755)
        self.env = {"PATH": self.bin + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "HOME": self.tmp, "LANG": "C.UTF-8", "KERN_BUILD_DIR": BUILD}

    def install(self, prefix_args, then=""):
        """setup.sh install in a mount namespace with a tmpfs over /usr/local, then `then`."""
        script = 'mount -t tmpfs tmpfs /usr/local && "$0/setup.sh" install "$@" && ' + (then or "true")
        return subprocess.run(["unshare", "-m", "bash", "-c", script, SOURCE] + prefix_args, env=self.env,
                              capture_output=True, text=True, timeout=600)

    def test_the_installer_says_where_each_shell_finds_the_completions(self):
        prefix = os.path.join(self.tmp, "prefix")
        check = "env -i HOME=%s PATH=%s/bin:/usr/bin:/bin bash -c '%s'" % (self.tmp, prefix, BASH_LOADER)
        run = self.install([prefix], check)
        self.assertEqual(run.returncode, 0, run.stderr)
        share = prefix + "/share"
        self.assertIn("setup: bash: %s is not searched" % share, run.stderr)
        self.assertIn("source %s/bash-completion/completions/kern" % share, run.stderr)
        self.assertNotIn("a new shell picks them up", run.stderr)
        self.assertEqual(run.stdout.strip().splitlines()[-1], "not found")  # what bash does
        # The line it gives works.
        fixed = BASH_LOADER.replace("__load_completion kern", "source %s/bash-completion/completions/kern" % share)
        ok = subprocess.run(["bash", "-c", fixed], env={"HOME": self.tmp, "PATH": "/usr/bin:/bin"},
                            capture_output=True, text=True, timeout=60)
        self.assertEqual(ok.stdout.strip(), "found", ok.stderr)
        # /usr/local: searched by bash-completion, and said so.
        check = "env -i HOME=%s PATH=/usr/local/bin:/usr/bin:/bin bash -c '%s'" % (self.tmp, BASH_LOADER)
        run = self.install([], check)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("setup: bash: found in /usr/local/share/bash-completion/completions by a new shell", run.stderr)
        self.assertEqual(run.stdout.strip().splitlines()[-1], "found")
        if shutil.which("zsh"):
            self.assertIn("setup: zsh: %s/zsh/site-functions is not searched" % share, self.install([prefix]).stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
