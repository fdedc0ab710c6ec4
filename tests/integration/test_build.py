"""kern build, as the unprivileged user (kern-build(1); issue 26): a multi-stage Dockerfile (a build
stage that makes a program with what the busybox image has, a final stage that copies only the
result), COPY with globs and .dockerignore, ARG and ENV expansion, USER and WORKDIR in the result's
config, heredocs, a RUN that deletes a file of a lower layer (a whiteout in its layer, the file gone
in the box); the result run with kern box; the per-instruction cache (nothing changed: no step
runs; a step added at the end: only it runs; a copied file changed: from that COPY on); bad input
refused with a clear error and nothing left behind. kern diff and kern commit of a detached box,
and kern history."""

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import fuse_fs  # noqa: E402
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402

DOCKERFILE = r"""# syntax=docker/dockerfile:1
ARG BASE=busybox:latest
FROM ${BASE} AS build
ARG GREETING=hello
WORKDIR /src
COPY *.txt ./
COPY src/ ./src/
# The "compiler" of this image is sed: it turns greet.in into a program.
RUN <<EOF
set -e
mkdir -p /out/bin
sed -e "s/@GREETING@/$GREETING/" /src/src/greet.in > /out/bin/greet
chmod 0755 /out/bin/greet
cat /src/a.txt /src/b.txt > /out/joined
EOF

FROM busybox:latest
ENV APP_HOME=/app \
    MODE=release
ENV PATH=/app/bin:$PATH
WORKDIR $APP_HOME
COPY --from=build /out/ ./
COPY --chmod=0640 conf/app.conf /etc/app.conf
RUN rm /etc/hostname && echo "$MODE" > /app/mode
COPY <<EOF /app/notes.txt
built for $MODE
EOF
USER nobody
LABEL org.example.stage=final
CMD ["greet"]
"""

# The steps of DOCKERFILE that make a layer (the others never say "Using cache"): WORKDIR /src,
# two COPYs and the RUN of the build stage; WORKDIR /app, three COPYs and the RUN of the last.
LAYER_STEPS = 9


def busybox_loaded(case, work):
    path = os.path.join(work, "busybox.tar")
    build_images.write_docker_archive(path, [build_images.busybox_layer()], ["busybox:latest"])
    case.assertExit(case.kern("load", "-i", path), 0)


class BuildTest(DetachedCase):

    def setUp(self):
        super().setUp()
        self.work = tempfile.mkdtemp(prefix="build-", dir=self.s.tmp)
        os.chmod(self.work, 0o755)
        busybox_loaded(self, self.work)
        self.ctx = os.path.join(self.work, "ctx")
        files = {
            "Dockerfile": DOCKERFILE,
            "a.txt": "alpha\n",
            "b.txt": "beta\n",
            "secret.txt": "do not ship\n",
            "src/greet.in": "#!/bin/sh\necho '@GREETING@ from a kern build'\n",
            "src/notes.md": "not named by *.txt\n",
            "conf/app.conf": "level=3\n",
            ".dockerignore": "# the context's secrets stay out\nsecret.txt\n**/*.tmp\n",
            "junk.tmp": "x\n",
        }
        for rel, text in files.items():
            p = os.path.join(self.ctx, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)

    def build(self, *args, ok=True):
        run = self.kern("build", *args, self.ctx, timeout=300)
        if ok:
            self.assertExit(run, 0)
        return run

    def run_image(self, image, *cmd, flags=()):
        return self.kern("box", "--image", image, *flags, "--", *cmd, timeout=60)

    def saved(self, ref):
        """The config and layer tars of `ref` as `kern save` writes them."""
        out = os.path.join(self.work, "saved.tar")
        self.assertExit(self.kern("save", "-o", out, ref), 0)
        with tarfile.open(out) as t:
            manifest = json.load(t.extractfile("manifest.json"))
            config = json.load(t.extractfile(manifest[0]["Config"]))
            layers = [t.extractfile(l).read() for l in manifest[0]["Layers"]]
        os.unlink(out)
        return config, layers

    def test_multi_stage_build_runs_and_has_the_config(self):
        run = self.build("-t", "kern-test/app:1", "--build-arg", "GREETING=hi")
        self.assertIn("STEP", run.out)
        # The result runs as its USER: the program the build stage made, the files, the expansion.
        got = self.run_image("kern-test/app:1", "sh", "-c",
                             "greet; cat /app/joined /app/mode /app/notes.txt; id -u; pwd; ls -l /etc/app.conf",
                             flags=["--uid-range"])
        self.assertExit(got, 0)
        lines = got.out.splitlines()
        self.assertEqual(lines[:7], ["hi from a kern build", "alpha", "beta", "release", "built for release",
                                     "65534", "/app"], got.describe())
        self.assertTrue(lines[7].startswith("-rw-r-----"), got.describe())
        # The whiteout: /etc/hostname of the base is gone; the control: /etc/passwd is there.
        gone = self.run_image("kern-test/app:1", "sh", "-c", "test ! -e /etc/hostname && test -e /etc/passwd",
                              flags=["-u", "0"])
        self.assertExit(gone, 0)
        base = self.run_image("busybox:latest", "test", "-e", "/etc/hostname")
        self.assertExit(base, 0)
        config, layers = self.saved("kern-test/app:1")
        c = config["config"]
        self.assertEqual(c["User"], "nobody")
        self.assertEqual(c["WorkingDir"], "/app")
        self.assertEqual(c["Cmd"], ["greet"])
        self.assertIn("APP_HOME=/app", c["Env"])
        self.assertTrue(any(e.startswith("PATH=/app/bin:") for e in c["Env"]), c["Env"])
        self.assertEqual(c["Labels"]["org.example.stage"], "final")
        self.assertEqual(len(config["rootfs"]["diff_ids"]), len(layers))
        names = []
        for raw in layers:
            with tarfile.open(fileobj=io.BytesIO(raw)) as t:
                names += t.getnames()
        self.assertIn("etc/.wh.hostname", names)
        # Only the build stage's result: its sources and the ignored files are not in the image.
        self.assertFalse([n for n in names if n.endswith("greet.in") or n.endswith("secret.txt") or n.endswith(".tmp")],
                         names)
        # The images of the steps (the cache) are listed with -a only, as Docker's intermediate ones.
        # (Other tests' rebuilt names leave unnamed results, listed as Docker lists them.)
        listed = self.kern("images").out.count("<none>")
        self.assertGreaterEqual(self.kern("images", "-a").out.count("<none>"), listed + 8)
        hist = self.kern("history", "--no-trunc", "kern-test/app:1")
        self.assertExit(hist, 0)
        self.assertIn("RUN rm /etc/hostname", hist.out)

    def test_dockerignore_and_globs(self):
        with open(os.path.join(self.ctx, "Dockerfile"), "w") as f:
            f.write("FROM busybox:latest\nCOPY . /ctx/\nCOPY *.txt /txt/\n")
        self.build("-t", "kern-test/ctx:1")
        got = self.run_image("kern-test/ctx:1", "sh", "-c", "cd /ctx && find . -type f | sort; ls /txt")
        self.assertExit(got, 0)
        files = got.out.split()
        self.assertIn("./a.txt", files)
        self.assertIn("./src/greet.in", files)
        self.assertNotIn("./secret.txt", files)
        self.assertNotIn("./junk.tmp", files)
        self.assertIn("b.txt", files)
        self.assertNotIn("secret.txt", files)

    def test_cache_per_instruction(self):
        first = self.build("-t", "kern-test/c:1")
        self.assertNotIn("Using cache", first.out)
        again = self.build("-t", "kern-test/c:1")
        self.assertEqual(again.out.count("--> Using cache"), LAYER_STEPS, again.out)
        self.assertEqual(first.out.strip().splitlines()[-1], again.out.strip().splitlines()[-1], "the same image")
        # A step added at the end: every step before it comes from the cache, only it runs.
        with open(os.path.join(self.ctx, "Dockerfile"), "a") as f:
            f.write("RUN echo appended > /tmp/last\n")
        last = self.build("-t", "kern-test/c:1")
        self.assertEqual(last.out.count("--> Using cache"), LAYER_STEPS, last.out)
        # That RUN ran as USER nobody: its file is nobody's in the layer (a box's /tmp is a
        # tmpfs of its own, so the layer is read from kern save).
        _, layers = self.saved("kern-test/c:1")
        with tarfile.open(fileobj=io.BytesIO(layers[-1])) as t:
            m = t.getmember("tmp/last")
            self.assertEqual((m.uid, t.extractfile(m).read()), (65534, b"appended\n"))
        # A copied file changed: the build stage runs again from that COPY (WORKDIR /src stays
        # cached), and the final stage from its COPY --from on.
        with open(os.path.join(self.ctx, "b.txt"), "w") as f:
            f.write("gamma\n")
        changed = self.build("-t", "kern-test/c:1")
        self.assertEqual(changed.out.count("--> Using cache"), 2, changed.out)  # WORKDIR /src, WORKDIR /app
        got = self.run_image("kern-test/c:1", "cat", "/app/joined", flags=["-u", "0"])
        self.assertEqual(got.out, "alpha\ngamma\n", got.describe())
        # Only the mtime changed: still cached.
        os.utime(os.path.join(self.ctx, "b.txt"), (1, 1))
        touched = self.build("-t", "kern-test/c:1")
        self.assertEqual(touched.out.count("--> Using cache"), LAYER_STEPS + 1, touched.out)
        nocache = self.build("--no-cache", "-t", "kern-test/c:1")
        self.assertNotIn("Using cache", nocache.out)
        prune = self.kern("builder", "prune", "-f")
        self.assertExit(prune, 0)
        after = self.build("-t", "kern-test/c:1")
        self.assertNotIn("Using cache", after.out)

    def test_source_date_epoch_gives_the_same_image(self):
        """Two builds from nothing (--no-cache) with SOURCE_DATE_EPOCH set make one image; the
        control: without it, the creation times differ and so do the images."""
        ids = []
        for _ in range(2):
            run = self.kern("build", "--no-cache", "-q", self.ctx, env={"SOURCE_DATE_EPOCH": "1700000000"}, timeout=300)
            self.assertExit(run, 0)
            ids.append(run.out.strip())
        self.assertEqual(ids[0], ids[1])
        config, layers = self.saved(ids[0][7:19])
        self.assertEqual(config["created"], "2023-11-14T22:13:20Z")
        with tarfile.open(fileobj=io.BytesIO(layers[-1])) as t:
            self.assertTrue(all(m.mtime <= 1700000000 for m in t.getmembers()))
        plain = self.kern("build", "--no-cache", "-q", self.ctx, timeout=300)
        self.assertExit(plain, 0)
        self.assertNotEqual(plain.out.strip(), ids[0])

    def test_bad_input_is_refused_and_leaves_nothing(self):
        staging = os.path.join(self.s.cache, "kern", "staging")
        before = self.kern("images", "-q", "--no-trunc").out
        cases = [
            ("FROM busybox:latest\nFROBNICATE x\n", "FROBNICATE"),
            ("FROM busybox:latest\nCOPY missing.txt /x\n", "missing.txt"),
            ("FROM busybox:latest\nRUN exit 3\n", "exit code 3"),
            ("RUN true\n", "FROM"),
            ("FROM busybox:latest\nADD http://example.com/x.tgz /x\n", "does not download"),
        ]
        for text, needle in cases:
            with open(os.path.join(self.ctx, "Dockerfile"), "w") as f:
                f.write(text)
            run = self.build(ok=False)
            self.assertNotEqual(run.rc, 0, run.describe())
            errors = [l for l in run.err.splitlines() if l.startswith("kern: error: ")]
            self.assertTrue(errors and needle in run.err, run.describe())
            self.assertEqual([n for n in os.listdir(staging) if not n.startswith("build-")], [],
                             "staging is empty after " + needle)
        # A name that cannot be given: refused before anything runs (a usage error).
        with open(os.path.join(self.ctx, "Dockerfile"), "w") as f:
            f.write("FROM busybox:latest\nRUN touch /x\n")
        run = self.kern("build", "-t", "Bad Name!", self.ctx, timeout=60)
        self.assertExit(run, 2)
        self.assertNotIn("STEP", run.out)
        self.assertEqual(self.kern("images", "-q", "--no-trunc").out, before)
        self.assertEqual(self.registered_boxes(), [])


class BuildOnFuseTest(DetachedCase):
    """The image store on bindfs (FUSE 2), what a home on sshfs or gocryptfs gives kern build:
    overlayfs cannot take a directory there as a RUN step's upper layer (the mount failed with
    EACCES before), so the step's upper goes to a scratch dir in the runtime dir, and the build,
    its cache and the image work; nothing is left in either staging dir."""

    def setUp(self):
        super().setUp()
        self.work = tempfile.mkdtemp(prefix="build-fuse-", dir=self.s.tmp)
        os.chmod(self.work, 0o755)
        self.store_root = fuse_fs.bindfs(self, os.path.join(self.work, "fuse-src"), os.path.join(self.work, "fuse"))
        busybox_loaded(self, self.work)
        self.ctx = os.path.join(self.work, "ctx")
        os.makedirs(self.ctx)
        with open(os.path.join(self.ctx, "Dockerfile"), "w") as f:
            f.write("FROM busybox:latest\nRUN echo built > /built && mkdir /d && echo a > /d/a\n"
                    "COPY f /f\nRUN rm /d/a && cat /f /built > /both\n")
        with open(os.path.join(self.ctx, "f"), "w") as f:
            f.write("from the context\n")

    def base_env(self):
        env = super().base_env()
        env["XDG_CACHE_HOME"] = self.store_root
        return env

    def test_build_with_the_store_on_fuse(self):
        fs = subprocess.run(["stat", "-f", "-c", "%T", self.store_root], capture_output=True, text=True)
        self.assertIn("fuse", fs.stdout)
        self.assertExit(self.kern("build", "-t", "on/fuse:1", self.ctx, timeout=300), 0)
        run = self.kern("box", "--image", "on/fuse:1", "--", "sh", "-c", "cat /both; ls /d | wc -l")
        self.assertExit(run, 0)
        self.assertEqual(run.out, "from the context\nbuilt\n0\n")
        again = self.kern("build", "-t", "on/fuse:2", self.ctx, timeout=300)
        self.assertExit(again, 0)
        self.assertEqual(again.out.count("Using cache"), 3, again.out)
        self.assertExit(self.kern("image", "verify"), 0)
        for staging in (os.path.join(self.store_root, "kern", "staging"),
                        os.path.join(self.runtime_kern_dir(), "build-upper", "staging")):
            self.assertEqual(os.listdir(staging), [], staging)


class BuildHostileTest(DetachedCase):
    """What a Dockerfile, its context or its base image cannot make kern build do: read or write
    the host outside the context and the store. Each refusal beside its control."""

    def setUp(self):
        super().setUp()
        self.work = tempfile.mkdtemp(prefix="hostile-", dir=self.s.tmp)
        os.chmod(self.work, 0o755)
        busybox_loaded(self, self.work)
        self.ctx = os.path.join(self.work, "ctx")
        os.makedirs(self.ctx)
        with open(os.path.join(self.ctx, "a.txt"), "w") as f:
            f.write("from the context\n")

    def dockerfile(self, text):
        with open(os.path.join(self.ctx, "Dockerfile"), "w") as f:
            f.write(text)

    def build(self, *args, env=None):
        return self.kern("build", *args, self.ctx, env=env, timeout=300)

    def test_a_context_symlink_resolves_inside_the_context(self):
        """A symlink named as a source resolves as if the context were "/" (as Docker's does): a
        link to /etc/passwd names the context's etc/passwd, never the host's. Below a copied
        directory, symlinks stay symlinks."""
        os.symlink("/etc/passwd", os.path.join(self.ctx, "link"))
        self.dockerfile("FROM busybox:latest\nCOPY link /copied\n")
        run = self.build()
        self.assertNotEqual(run.rc, 0, run.describe())
        self.assertIn('COPY "link": not found in the build context', run.err)
        # The control: the host's file is there, and would have been read had kern followed it.
        self.assertTrue(os.path.isfile(os.path.realpath(os.path.join(self.ctx, "link"))))
        os.makedirs(os.path.join(self.ctx, "etc"))
        with open(os.path.join(self.ctx, "etc", "passwd"), "w") as f:
            f.write("context passwd\n")
        self.dockerfile("FROM busybox:latest\nCOPY link /copied\nCOPY . /all/\n")
        self.assertExit(self.build("-t", "kern-test/h1:1"), 0)
        got = self.kern("box", "--image", "kern-test/h1:1", "--", "sh", "-c", "cat /copied; readlink /all/link")
        self.assertEqual(got.out, "context passwd\n/etc/passwd\n", got.describe())

    def test_a_source_cannot_leave_the_context(self):
        self.dockerfile("FROM busybox:latest\nCOPY ../../../../../../etc/passwd /stolen\n")
        run = self.build()
        self.assertNotEqual(run.rc, 0, run.describe())
        self.assertIn("not found in the build context", run.err)
        # The control: the same name inside the context is copied.
        os.makedirs(os.path.join(self.ctx, "etc"))
        with open(os.path.join(self.ctx, "etc", "passwd"), "w") as f:
            f.write("context passwd\n")
        self.assertExit(self.build("-t", "kern-test/h2:1"), 0)
        got = self.kern("box", "--image", "kern-test/h2:1", "--", "cat", "/stolen")
        self.assertEqual(got.out, "context passwd\n")

    def test_add_drops_archive_members_that_leave_the_destination(self):
        out_name = "kern-escape-" + os.path.basename(self.work)
        with tarfile.open(os.path.join(self.ctx, "evil.tar.gz"), "w:gz") as t:
            for name, data in (("../../../../../tmp/" + out_name, b"out"), ("ok/inside", b"in\n")):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
        self.dockerfile("FROM busybox:latest\nADD evil.tar.gz /x/\n")
        self.assertExit(self.build("-t", "kern-test/h3:1"), 0)
        got = self.kern("box", "--image", "kern-test/h3:1", "--", "sh", "-c",
                        "cat /x/ok/inside; find / -xdev -name '%s' 2>/dev/null | wc -l" % out_name)
        self.assertEqual(got.out.split(), ["in", "0"], got.describe())
        self.assertFalse(os.path.exists("/tmp/" + out_name))

    def test_a_base_image_symlink_keeps_the_copy_in_its_tree(self):
        target = os.path.join(self.work, "host-dir")
        layer = build_images.Layer()
        layer.symlink("app", "../../../../../../.." + target)
        path = os.path.join(self.work, "hostile.tar")
        build_images.write_docker_archive(path, [build_images.busybox_layer(), layer.bytes()], ["kern-test/hostile:1"])
        self.assertExit(self.kern("load", "-i", path), 0)
        self.dockerfile("FROM kern-test/hostile:1\nCOPY a.txt /app/\nRUN cat %s/a.txt\n" % target)
        run = self.build("-t", "kern-test/h4:1")
        self.assertExit(run, 0)
        self.assertIn("from the context", run.out)  # inside the box, at the symlink's in-tree target
        self.assertFalse(os.path.exists(target), "nothing was written on the host at " + target)

    def test_a_build_secret_is_a_0400_file_of_the_step_and_in_no_layer(self):
        """RUN --mount=type=secret: the file given with --secret is /run/secrets/ID (0400) in that
        step only, and no layer, history or config of the image holds its bytes. The control:
        a step without the mount does not see it."""
        secret = os.path.join(self.work, "token")
        with open(secret, "w") as f:
            f.write("s3cret-build-token")
        self.dockerfile("FROM busybox:latest\n"
                        "RUN --mount=type=secret,id=tok sh -c "
                        "'stat -c %a /run/secrets/tok > /mode && wc -c < /run/secrets/tok > /len'\n"
                        "RUN test ! -e /run/secrets/tok && echo absent > /later\n")
        self.assertExit(self.build("-t", "kern-test/h6:1", "--secret", "id=tok,src=" + secret), 0)
        got = self.kern("box", "--image", "kern-test/h6:1", "--", "cat", "/mode", "/len", "/later")
        self.assertEqual(got.out.split(), ["400", "18", "absent"], got.describe())
        out = os.path.join(self.work, "h6.tar")
        self.assertExit(self.kern("save", "-o", out, "kern-test/h6:1"), 0)
        with open(out, "rb") as f:
            self.assertNotIn(b"s3cret-build-token", f.read())
        names = []
        with tarfile.open(out) as t:
            manifest = json.load(t.extractfile("manifest.json"))
            for l in manifest[0]["Layers"]:
                with tarfile.open(fileobj=io.BytesIO(t.extractfile(l).read())) as lt:
                    names += lt.getnames()
        self.assertFalse([n for n in names if n.startswith("run/secrets")], names)

    def test_run_sees_no_host_environment_and_cannot_write_the_context(self):
        self.dockerfile("FROM busybox:latest\nENV IN_FILE=yes\nRUN env > /env\n"
                        "RUN --mount=type=bind,target=/ctx sh -c 'cat /ctx/a.txt; echo x > /ctx/new' || true\n")
        run = self.build("-t", "kern-test/h5:1", env={"KERN_HOST_SECRET": "s3cret"})
        self.assertExit(run, 0)
        env = self.kern("box", "--image", "kern-test/h5:1", "--", "cat", "/env").out
        self.assertIn("IN_FILE=yes", env)
        self.assertNotIn("s3cret", env)
        self.assertIn("from the context", run.out)  # the bind is there, read-only
        self.assertFalse(os.path.exists(os.path.join(self.ctx, "new")))


class ComposeBuildTest(DetachedCase):
    """A compose service with build: (no image: named PROJECT-SERVICE) is built by kern build at
    `up` when its image is missing, and again with `up --build` or `kern compose build`."""

    def setUp(self):
        super().setUp()
        self.work = tempfile.mkdtemp(prefix="cbuild-", dir=self.s.tmp)
        os.chmod(self.work, 0o755)
        busybox_loaded(self, self.work)
        self.dir = os.path.join(self.work, "built")
        os.makedirs(os.path.join(self.dir, "web"))
        with open(os.path.join(self.dir, "compose.yaml"), "w") as f:
            f.write("services:\n"
                    "  web:\n"
                    "    build:\n"
                    "      context: ./web\n"
                    "      args:\n"
                    "        WORD: composed\n"
                    "    command: sh -c 'cat /word; sleep 60'\n")
        with open(os.path.join(self.dir, "web", "Dockerfile"), "w") as f:
            f.write("FROM busybox:latest\nARG WORD=plain\nRUN echo $WORD > /word\n")
        self.addCleanup(self.compose, "down")

    def compose(self, *args):
        return self.kern("compose", "--project-directory", self.dir, *args, timeout=300)

    def test_up_builds_the_missing_image(self):
        up = self.compose("up", "-d")
        self.assertExit(up, 0)
        self.assertIn("STEP", up.out)
        img = self.kern("images", "built-web")
        self.assertIn("built-web", img.out, img.describe())
        got = self.compose("exec", "web", "cat", "/word")
        self.assertEqual(got.out, "composed\n", got.describe())
        # Up again: the image is there, nothing is built.
        again = self.compose("up", "-d")
        self.assertExit(again, 0)
        self.assertNotIn("STEP", again.out)
        rebuilt = self.compose("build")
        self.assertExit(rebuilt, 0)
        self.assertIn("Using cache", rebuilt.out)


class DiffCommitTest(DetachedCase):

    def setUp(self):
        super().setUp()
        self.work = tempfile.mkdtemp(prefix="commit-", dir=self.s.tmp)
        os.chmod(self.work, 0o755)
        busybox_loaded(self, self.work)

    def test_diff_and_commit_of_a_detached_box(self):
        run = self.kern("box", "-d", "--image", "busybox:latest", "--",
                        "sh", "-c", "echo new > /root/new; rm /etc/hostname; echo x >> /etc/passwd; touch /root/done; sleep 30")
        self.assertExit(run, 0)
        name = run.out.strip()
        self.addCleanup(self.kern, "rm", "-f", name, timeout=30)
        for _ in range(200):
            diff = self.kern("diff", name)
            if "A /root/done" in diff.out:
                break
        self.assertExit(diff, 0)
        lines = diff.out.splitlines()
        for want in ("C /root", "A /root/new", "C /etc", "D /etc/hostname", "C /etc/passwd"):
            self.assertIn(want, lines, diff.describe())
        # Mount points kern made are not changes.
        self.assertFalse([l for l in lines if l.split(" ", 1)[1] in ("/proc", "/dev", "/sys", "/tmp")], lines)
        self.assertExit(self.kern("stop", "-t", "1", name, timeout=30), 0)
        commit = self.kern("commit", "-m", "from a test", "-c", 'CMD ["cat", "/root/new"]', name,
                           "kern-test/committed:1")
        self.assertExit(commit, 0)
        got = self.kern("box", "--image", "kern-test/committed:1")
        self.assertExit(got, 0)
        self.assertEqual(got.out, "new\n")
        gone = self.kern("box", "--image", "kern-test/committed:1", "--", "sh", "-c",
                         "test ! -e /etc/hostname && tail -1 /etc/passwd")
        self.assertEqual(gone.out, "x\n", gone.describe())
        hist = self.kern("history", "--no-trunc", "kern-test/committed:1")
        self.assertIn("from a test", hist.out)
        # The control: the image it came from is unchanged.
        base = self.kern("box", "--image", "busybox:latest", "--", "sh", "-c",
                         "test -e /etc/hostname && test ! -e /root/new")
        self.assertExit(base, 0)

    def test_diff_refuses_an_unknown_box(self):
        run = self.kern("diff", "no-such-box")
        self.assertNotEqual(run.rc, 0)
        self.assertIn("kern: error:", run.err)


if __name__ == "__main__":
    kerntest.main()
