"""A KernTestCase for warm kernels: finds (or builds) the language root and starts kernels."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kerntest  # noqa: E402
import kernel_client  # noqa: E402

_rootfs = None


def lang_rootfs(session):
    """(path, features) of the language root, or (None, reason)."""
    global _rootfs
    if _rootfs is None:
        shared = kernel_client.shared_rootfs_path()
        feats = kernel_client.read_features(shared) if shared else None
        if feats is not None:
            _rootfs = (shared, feats)
        else:
            try:
                _rootfs = kernel_client.build_lang_rootfs(os.path.join(session.tmp, "lang-rootfs"))
            except Exception as e:  # noqa: BLE001 - any failure becomes the skip/fail reason
                _rootfs = (None, str(e))
    return _rootfs


class KernelTestCase(kerntest.KernTestCase):
    lang = "python"

    def setUp(self):
        super().setUp()
        path, feats = lang_rootfs(self.s)
        if path is None:
            self.fail("no language root file system: %s" % feats)
        self.root = path
        self.features = feats
        self.require("lang-" + self.lang, self.lang in feats or self.lang == "repl",
                     "the host has no %s to copy into the test root" % self.lang)
        self.kernels = []

    def tearDown(self):
        for k in self.kernels:
            if k.p.poll() is None:
                k.close()

    def serve(self, lang=None, flags=(), cmd=None, env=None):
        argv = [self.s.kern, "kernel", "serve", "--rootfs", self.root]
        if lang:
            argv += ["--lang", lang]
        argv += list(flags)
        if cmd:
            argv += ["--"] + list(cmd)
        full_env = self.base_env()
        full_env.update(env or {})
        k = kernel_client.ServeKernel(argv, full_env)
        self.kernels.append(k)
        self.assertEqual(k.ready.get("status"), "ready", k.ready)
        return k

    def assertKernelError(self, run, code, *needles):
        """Exit `code`, a `kern: error: ` line naming each needle, nothing on stdout."""
        self.assertExit(run, code)
        self.assertTrue([l for l in run.err.splitlines() if l.startswith("kern: error: ")], run.describe())
        for n in needles:
            self.assertIn(n, run.err, run.describe())
        self.assertEqual(run.out, "", run.describe())

    def assertDone(self, r, rc=0):
        self.assertEqual(r.get("status"), "done", r)
        self.assertEqual(r.get("rc"), rc, r)

    def text(self, r, i=0):
        return r["results"][i]["text/plain"]

    def wait_poll(self, k, cell_id, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = k.request({"op": "poll", "cell_id": cell_id})
            if r.get("status") != "running":
                return r
            time.sleep(0.05)
        self.fail("cell %s still running after %ss" % (cell_id, timeout))

    def kernel_pids(self, k):
        """Host pids of the serve process's descendants (launcher, box init, interpreter, ...)."""
        out, todo = [], [k.p.pid]
        while todo:
            pid = todo.pop()
            try:
                with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                    kids = [int(x) for x in f.read().split()]
            except OSError:
                kids = []
            out += kids
            todo += kids
        return out
