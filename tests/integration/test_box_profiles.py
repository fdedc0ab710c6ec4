"""Resource profiles on the real binary (kern.toml(5), issue 4): bad tokens and bad files refused
with 125 before anything starts, the text of the file never echoed with its terminal escapes,
precedence as --show-config shows it, a vdisk:ram that refuses writes past its size, device
refusal by identity, `kern validate`, `kern config list` and `kern run`."""

import json
import os
import stat
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402

GOOD = """\
[[cpu]]
id = "cpu:0"
cores = 2.0

[[vcpu]]
name = "small"
backend = "cpu:0"
cpus = 0.5
memory = "64m"

[[vcpu]]
name = "big"
backend = "host"
memory = "1g"
nice = 3

[[vdisk]]
name = "scratch"
backend = "ram"
size = "1m"
"""


class ProfileTest(kerntest.KernTestCase):

    def config(self, text, name="kern.toml"):
        d = tempfile.mkdtemp(prefix="cfg-", dir=self.s.tmp)
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def show(self, tokens, flags=(), cfg=None):
        cfg = cfg or self.config(GOOD)
        run = self.box(["/bin/true"], flags=list(tokens) + ["--config", cfg, "--show-config"] + list(flags))
        self.assertExit(run, 0)
        return dict(l.split(": ", 1) for l in run.out.splitlines() if ": " in l)

    # ---- refused before anything starts

    def test_malformed_tokens_and_unknown_kinds_are_125_naming_the_token(self):
        cfg = self.config(GOOD)
        for token in ("vcpu:../x", "vgpio:a;b", "vram:x", "vcpu:", "vdisk:-x"):
            marker = kerntest.unique_marker("tok")
            run = self.box(["/bin/sh", "-c", "sleep 30", marker], flags=[token, "--config", cfg], started=True)
            self.assertKernError(run, token)
            self.assertEqual(run.started, b"", token)
            self.assertNothingLeft(marker, token)

    def test_unknown_profile_name(self):
        run = self.box(["/bin/true"], flags=["vcpu:nope", "--config", self.config(GOOD)], started=True)
        self.assertKernError(run, "vcpu:nope", 'no [[vcpu]] named "nope"', "defined: small, big")
        self.assertEqual(run.started, b"")

    def test_bad_files_are_125_with_file_line_column(self):
        cases = [
            ("[[vcpu]\nname = \"a\"\n", ":1:8:"),                                    # does not parse
            ("[[vcpu]]\nname = \"a\"\nbackend = \"host\"\nmemroy = \"1g\"\n", ":4:1:"),  # typo'd key
            ("[[vcpu]]\nname = \"a\"\nbackend = \"host\"\nmemory = \"0\"\n", ":4:10:"),  # out of range
            ("[[vcpu]]\nname = \"a\"\nbackend = \"host\"\ncpus = 100000\n", ":4:8:"),
            ("[[vcpu]]\nname = \"a\"\nbackend = \"cpu:9\"\n", ":3:1:"),              # no such backend
        ]
        for text, where in cases:
            cfg = self.config(text)
            run = self.box(["/bin/true"], flags=["vcpu:a", "--config", cfg], started=True)
            self.assertKernError(run, cfg + where)
            self.assertEqual(run.started, b"")

    def test_terminal_escapes_in_the_file_are_not_echoed(self):
        cfg = self.config('[[vcpu]]\nname = "a"\nbackend = "host"\n"\\u001b]0;pwned\\u0007\\u001b[2J" = 1\n')
        run = self.box(["/bin/true"], flags=["vcpu:a", "--config", cfg])
        self.assertKernError(run, "\\x1b")
        self.assertNotIn("\x1b", run.err)
        self.assertNotIn("\x07", run.err)
        v = self.kern("validate", cfg)
        self.assertEqual(v.rc, 1, v.describe())
        self.assertNotIn("\x1b", v.err)

    def test_devices_are_refused_by_identity(self):
        nodes = []
        for path in ("/dev/loop0", "/dev/kvm", "/dev/fuse", "/dev/mem", "/dev/tty0", "/dev/console"):
            try:
                st = os.stat(path)
            except OSError:
                continue
            if stat.S_ISBLK(st.st_mode) or stat.S_ISCHR(st.st_mode):
                nodes.append(path)
        self.require("devices", nodes, "none of the refused nodes exists here")
        for path in nodes:
            cfg = self.config('[[vgpio]]\nname = "d"\nbackend = "host"\nextra = ["%s"]\n' % path)
            run = self.box(["/bin/true"], flags=["vgpio:d", "--config", cfg], started=True)
            self.assertKernError(run, cfg + ":4:10:", "is refused")
            self.assertEqual(run.started, b"")
            v = self.kern("validate", cfg)
            self.assertEqual(v.rc, 1, v.describe())
            self.assertIn(cfg + ":4:10:", v.err)

    def test_a_missing_node_is_skipped_with_a_warning(self):
        cfg = self.config('[[vgpio]]\nname = "d"\nbackend = "host"\nchips = ["/dev/gpiochip-kern-none"]\n')
        run = self.box(["/bin/sh", "-c", "ls /dev"], flags=["vgpio:d", "--config", cfg, "--allow-uncapped"])
        self.assertExit(run, 0)
        self.assertIn("kern: warning: vgpio:d: /dev/gpiochip-kern-none", run.err)
        self.assertNotIn("gpiochip", run.out)

    # ---- precedence

    def test_profile_beats_default_and_flag_beats_profile(self):
        c = self.show(["vcpu:small"])
        self.assertEqual(c.get("memory_max"), str(64 << 20), c)
        c = self.show(["vcpu:small"], flags=["-m", "32m"])
        self.assertEqual(c.get("memory_max"), str(32 << 20), c)
        c = self.show([])
        self.assertEqual(c.get("memory_max"), "default", c)

    def test_first_vcpu_wins_with_a_warning(self):
        cfg = self.config(GOOD)
        run = self.box(["/bin/true"], flags=["vcpu:small", "vcpu:big", "--config", cfg, "--show-config"])
        self.assertExit(run, 0)
        self.assertIn("memory_max: %d" % (64 << 20), run.out)
        self.assertIn("kern: warning: vcpu:big: memory 1 GiB is ignored: vcpu:small set it first", run.err)

    def test_plan_shows_what_the_profiles_give(self):
        run = self.box(["/bin/true"], flags=["vcpu:small", "vdisk:scratch", "--config", self.config(GOOD), "--plan"])
        self.assertExit(run, 0)
        self.assertIn("vcpu:small: memory 64 MiB", run.out)
        self.assertIn("vdisk:scratch: tmpfs /vdisk/scratch size=1 MiB", run.out)

    # ---- vdisk

    def test_vdisk_ram_refuses_writes_past_its_size(self):
        run = self.box(["/bin/sh", "-c",
                        "dd if=/dev/zero of=/vdisk/scratch/f bs=64k count=17 2>/dev/null; echo rc=$?; "
                        "stat -c size=%s /vdisk/scratch/f"],
                       flags=["vdisk:scratch", "--config", self.config(GOOD), "--allow-uncapped"])
        self.assertExit(run, 0)
        self.assertIn("rc=1", run.out)
        self.assertIn("size=%d" % (1 << 20), run.out)
        self.assertIn("kern: note: vdisk:scratch: the 1 MiB tmpfs at /vdisk/scratch counts against the box's memory",
                      run.err)

    # ---- verbs

    def test_validate_and_config_list(self):
        cfg = self.config(GOOD)
        v = self.kern("validate", cfg)
        self.assertEqual(v.rc, 0, v.describe())
        self.assertIn("ok", v.out)
        missing = self.kern("validate", cfg + ".none")
        self.assertEqual(missing.rc, 1, missing.describe())
        lst = self.kern("config", "list", "--json", "--config", cfg)
        self.assertEqual(lst.rc, 0, lst.describe())
        doc = json.loads(lst.out)
        tokens = sorted(p["token"] for p in doc["profiles"])
        self.assertEqual(tokens, ["vcpu:big", "vcpu:small", "vdisk:scratch"])
        text = self.kern("config", "list", env={"KERN_CONFIG": cfg})
        self.assertIn("vcpu:small backend=cpu:0 cpus=0.5 memory=64 MiB", text.out)

    def test_kern_run(self):
        ok = self.kern("run", "--allow-uncapped", "--", "/bin/sh", "-c", "exit 3")
        self.assertEqual(ok.rc, 3, ok.describe())
        self.assertEqual(self.kern("run", "--allow-uncapped", "--", "/nonexistent/cmd").rc, 127)
        killed = self.kern("run", "--allow-uncapped", "--", "/bin/sh", "-c", "kill -TERM $$")
        self.assertEqual(killed.rc, 143, killed.describe())
        bad = self.kern("run", "vdisk:scratch", "--config", self.config(GOOD), "--", "/bin/true")
        self.assertEqual(bad.rc, 125, bad.describe())
        self.assertIn("kern run takes vcpu: profiles only", bad.err)
        if not self.s.host.cgroup:
            req = self.kern("run", "--require-limits", "--", "/bin/true")
            self.assertEqual(req.rc, 125, req.describe())
            loud = self.kern("run", "--", "/bin/true")
            self.assertEqual(len([l for l in loud.err.splitlines() if l.startswith("kern: warning: ")]), 1,
                             loud.describe())


if __name__ == "__main__":
    kerntest.main()
