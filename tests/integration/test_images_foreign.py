"""Images made by other tools, with the configs real tools write, loaded and run by kern.

Built at test time, offline, from Debian's busybox-static (nothing binary is committed):
- podman as root with storage of its own (--root/--runroot in a temp dir, runc, cgroupfs):
  `podman import` of a busybox tarball, then `podman build` from a Containerfile with
  ENV/RUN/COPY/WORKDIR/USER: files owned by uid 0, 1000 and 65534, a name that is not UTF-8,
  a directory removed by RUN rm (whiteout) and one removed and made again (opaque or
  per-file whiteouts, as podman writes them), a hard link to a file of a lower layer, a
  symlink to an absolute path; saved as docker-archive and oci-archive.
- skopeo copies between oci:, docker-archive: and oci-archive:, and `copy --all` of an index.
- umoci: a layout with 60 layers, and configs podman refuses to write: a WorkingDir missing
  from the image or /proc/self/fd/N, a User by name / numeric / unknown to /etc/passwd, Env
  with bytes that are not UTF-8 and `=` in values, an Entrypoint of one empty string, Cmd null;
  an index of several platforms.

Each case compares the box's stdout with `podman run` of the same image in the same run where
podman runs it (id, pwd, env, ls -ln), or checks kern's refusal (exit 125 and a `kern: error:`
line). Runs as root (CTest does): podman builds and runs as root, kern runs as the test user.
Skip names: root, user, podman, umoci, skopeo, busybox."""

import functools
import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import build_images  # noqa: E402
import host_probe  # noqa: E402
import kerntest  # noqa: E402
from test_oci_engines import run  # noqa: E402

IMAGE_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
# podman's own defaults would ask for limits above this host's hard ones and crun refuses a
# cgroup v1/v2 hybrid: runc, cgroupfs, and limits any host grants root.
CONTAINERS_CONF = """[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
netns = "none"
[engine]
cgroup_manager = "cgroupfs"
events_logger = "none"
runtime = "runc"
"""
# WorkingDirs of /proc/self/fd/N: stdin, the first descriptors a runtime may hold open.
FD_WORKDIRS = (0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
# The environment but for what each engine adds of its own: HOSTNAME (a name of each), and
# podman's TERM=xterm and container=podman.
ENV_CMD = "env | grep -Ev '^(HOSTNAME|container|TERM)=' | sort"
CONTAINERFILE = r"""FROM localhost/kt-base:1
ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin GREETING="a=b=c"
RUN echo 'app:x:1000:1000:app:/home/app:/bin/sh' >> /etc/passwd && echo 'app:x:1000:' >> /etc/group && mkdir -p /home/app
RUN mkdir -p /data/gone /opq && echo keep > /data/keep && echo gone > /data/gone/f && echo old > /opq/old \
 && echo one > /data/hl && touch /own0 /own1000 /own65534 && chown 1000:1000 /own1000 \
 && chown 65534:65534 /own65534 && touch "/data/$(printf 'bad\377name')"
RUN rm -rf /data/gone /opq && mkdir /opq && echo new > /opq/new && ln /data/hl /data/hl2 && ln -s /etc/group /abs-link
COPY hello.txt /srv/hello.txt
WORKDIR /srv/work
USER app
CMD ["/bin/sh", "-c", "id; pwd"]
"""

# A service that becomes healthy after a while, by its image's own check.
HEALTH_CONTAINERFILE = """FROM localhost/kt-base:1
HEALTHCHECK --interval=1s --timeout=3s --retries=1 CMD test -f /tmp/healthy
CMD ["/bin/sh", "-c", "sleep 3; touch /tmp/healthy; exec sleep 600"]
"""


def checked(argv, **kw):
    r = run(argv, **kw)
    if r.rc != 0:
        raise RuntimeError("%s failed:\n%s" % (argv[0], r.describe()))
    return r


def reference_safe_tempdir(prefix):
    """A fresh dir under the temp root whose path podman accepts as an image name: `podman run
    oci:DIR:TAG` names the image localhost/DIR, and a component such as "imgforeign-_x1" or one
    ending in "_" (mkdtemp draws from letters, digits and "_") is an invalid reference format.
    Hex digits are always valid."""
    while True:
        path = os.path.join(tempfile.gettempdir(), prefix + secrets.token_hex(5))
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            continue


class World:
    """A world-readable temp dir with every image, built once as root; `problem` says why not."""

    def __init__(self):
        self.kern_bin = os.path.abspath(os.environ.get("KERN_BIN", ""))
        self.user = os.environ.get("KERN_TEST_USER") or kerntest.DEFAULT_TEST_USER
        self.tmp = reference_safe_tempdir("kern-itest-imgforeign-")
        os.chmod(self.tmp, 0o755)
        self.podman = shutil.which("podman")
        self.umoci = shutil.which("umoci")
        self.skopeo = shutil.which("skopeo")
        self.runc = shutil.which("runc")
        self.podman_problem = self.umoci_problem = None
        conf = os.path.join(self.tmp, "containers.conf")
        with open(conf, "w") as f:
            f.write(CONTAINERS_CONF)
        self.podman_env = {"CONTAINERS_CONF": conf, "HOME": self.tmp}
        if not self.podman or not self.runc:
            self.podman_problem = "podman or runc is not installed (apt-get install podman runc)"
        else:
            try:
                self._build_podman()
            except (RuntimeError, OSError) as e:
                self.podman_problem = "podman could not build the images here: %s" % e
        if not self.umoci:
            self.umoci_problem = "umoci is not installed (apt-get install umoci)"
        else:
            try:
                self._build_umoci()
            except (RuntimeError, OSError) as e:
                self.umoci_problem = "umoci could not build the images here: %s" % e
        subprocess.run(["chmod", "-R", "a+rX", self.tmp], check=True)
        pw = pwd.getpwnam(self.user)
        self.home = pw.pw_dir
        for d in ("xdg", "config"):
            os.mkdir(os.path.join(self.tmp, d), 0o700)
            os.chown(os.path.join(self.tmp, d), pw.pw_uid, pw.pw_gid)
        self.stores = 0

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    # ---- podman as root, storage of its own

    def pm(self, *args, timeout=300):
        argv = [self.podman, "--root", self.path("pm-root"), "--runroot", self.path("pm-run"),
                "--storage-driver", "overlay"] + list(args)
        return run(argv, env=self.podman_env, timeout=timeout)

    def _build_podman(self):
        base = self.path("base.tar")
        with open(base, "wb") as f:
            f.write(build_images.busybox_layer())
        r = self.pm("import", "--change", "ENV=PATH=" + IMAGE_PATH, base, "localhost/kt-base:1")
        if r.rc != 0:
            raise RuntimeError(r.describe())
        ctx = self.path("ctx")
        os.mkdir(ctx)
        with open(os.path.join(ctx, "Containerfile"), "w") as f:
            f.write(CONTAINERFILE)
        with open(os.path.join(ctx, "hello.txt"), "w") as f:
            f.write("hello from COPY\n")
        variants = {"kt-built:1": None, "kt-nobody:1": "USER nobody", "kt-numeric:1": "USER 1000:1000",
                    "kt-ghost:1": "USER ghost"}
        for tag, line in variants.items():
            if line is None:
                r = self.pm("build", "--layers=true", "-f", os.path.join(ctx, "Containerfile"), "-t",
                            "localhost/" + tag, ctx)
            else:
                with open(os.path.join(ctx, "Containerfile." + tag), "w") as f:
                    f.write("FROM localhost/kt-built:1\n%s\n" % line)
                r = self.pm("build", "-f", os.path.join(ctx, "Containerfile." + tag), "-t", "localhost/" + tag, ctx)
            if r.rc != 0:
                raise RuntimeError(r.describe())
        # A HEALTHCHECK is kept in Docker's image format only (podman's OCI default drops it).
        with open(os.path.join(ctx, "Containerfile.kt-health"), "w") as f:
            f.write(HEALTH_CONTAINERFILE)
        r = self.pm("build", "--format", "docker", "-f", os.path.join(ctx, "Containerfile.kt-health"), "-t",
                    "localhost/kt-health:1", ctx)
        if r.rc != 0:
            raise RuntimeError(r.describe())
        r = self.pm("save", "--format", "docker-archive", "-o", self.path("kt-health.tar"), "localhost/kt-health:1")
        if r.rc != 0:
            raise RuntimeError(r.describe())
        for fmt in ("docker-archive", "oci-archive"):
            r = self.pm("save", "--format", fmt, "-o", self.path("built.%s.tar" % fmt), "localhost/kt-built:1")
            if r.rc != 0:
                raise RuntimeError(r.describe())
        for tag in variants:
            name = tag.split(":")[0]
            r = self.pm("save", "--format", "docker-archive", "-o", self.path("%s.tar" % name), "localhost/" + tag)
            if r.rc != 0:
                raise RuntimeError(r.describe())

    # ---- umoci layouts

    def um(self, *args):
        return checked([self.umoci] + list(args))

    def _build_umoci(self):
        lay = self.path("umoci")
        base = self.path("base-layer.tar")
        with open(base, "wb") as f:
            f.write(build_images.busybox_layer())
        self.um("init", "--layout", lay)
        self.um("new", "--image", lay + ":base")
        self.um("raw", "add-layer", "--image", lay + ":base", base)
        self.um("config", "--image", lay + ":base", "--config.env", "PATH=" + IMAGE_PATH,
                "--config.cmd", "/bin/sh")
        # Files owned by three users, one whose name is not UTF-8, inserted as root.
        own = self.path("own")
        os.mkdir(own)
        for name, uid in ((b"own0", 0), (b"own1000", 1000), (b"own65534", 65534), (b"bad\xffname", 0)):
            p = os.path.join(own.encode(), name)
            with open(p, "wb") as f:
                f.write(b"x\n")
            os.chown(p, uid, uid)
        self.um("insert", "--image", lay + ":base", "--tag", "owned", own, "/own")
        configs = {
            "nowd": ["--config.workingdir", "/made/by/kern", "--config.cmd", "pwd"],
            "nobody": ["--config.user", "nobody", "--config.cmd", "id"],
            "numeric": ["--config.user", "1000:1000", "--config.cmd", "id"],
            "ghost": ["--config.user", "ghost", "--config.cmd", "id"],
            "env": ["--config.env", "BAD=a\udcffb", "--config.env", "EQ=k=v==w", "--config.env", "EMPTY=",
                    "--config.cmd", "env"],
            "emptyep": ["--config.entrypoint", "", "--config.cmd", "echo", "--config.cmd", "cmd-ran"],
            "nullcmd": ["--config.entrypoint", "echo", "--config.entrypoint", "ep-ran", "--clear", "config.cmd"],
            "nothing": ["--clear", "config.cmd"],
            "arm64": ["--architecture", "arm64"],
            "s390x": ["--architecture", "s390x"],
        }
        for n in FD_WORKDIRS:
            configs["fdwd%d" % n] = ["--config.workingdir", "/proc/self/fd/%d" % n, "--config.cmd", "pwd"]
        for tag, args in configs.items():
            argv = [self.umoci, "config", "--image", lay + ":base", "--tag", tag] + args
            argv = [a.encode("utf-8", "surrogateescape") for a in argv]
            r = run(argv)
            if r.rc != 0:
                raise RuntimeError(r.describe())
        # 60 small layers, each adding one file.
        self.um("config", "--image", lay + ":base", "--tag", "many")
        for i in range(60):
            d = self.path("layer%02d" % i)
            os.mkdir(d)
            with open(os.path.join(d, "f%02d" % i), "w") as f:
                f.write("%d\n" % i)
            self.um("insert", "--no-history", "--image", lay + ":many", d, "/many")

    # ---- kern as the test user

    def kern(self, *args, store=None, timeout=120):
        env = {"HOME": self.home, "XDG_RUNTIME_DIR": self.path("xdg"), "XDG_CONFIG_HOME": self.path("config"),
               "XDG_CACHE_HOME": store or self.path("cache")}
        return run([self.kern_bin] + list(args), env=env, user=self.user, timeout=timeout)

    def new_store(self):
        self.stores += 1
        d = self.path("store%d" % self.stores)
        os.mkdir(d, 0o700)
        shutil.chown(d, self.user)
        return d


def recorded_owners(store):
    """{path: (uid, gid)} of every tree's ownership records in a kern store."""
    trees = os.path.join(store, "kern", "trees")
    owners = {}
    for name in os.listdir(trees):
        if name.endswith(".owners.jsonl"):
            with open(os.path.join(trees, name)) as f:
                for line in f:
                    r = json.loads(line)
                    owners[r["path"]] = (r["uid"], r["gid"])
    return owners


def without_groups(out):
    """`id`'s line without its groups= list: podman adds the image's /etc/group memberships and
    the primary group; a kern box's process has no supplementary groups (kern-box(1))."""
    return re.sub(rb"^(uid=\S+ gid=\S+) groups=\S+$", rb"\1", out, flags=re.M)


@functools.lru_cache(maxsize=None)
def world():
    return World()


def tearDownModule():
    """podman's overlay storage leaves its own mount under the world's dir: unmounted, then the
    whole dir removed."""
    if world.cache_info().currsize == 0:
        return
    w = world()
    mounts = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4]
            if point == w.tmp or point.startswith(w.tmp + "/"):
                mounts.append(point)
    for point in sorted(mounts, key=len, reverse=True):
        subprocess.run(["umount", "-l", point], check=False)
    shutil.rmtree(w.tmp, ignore_errors=True)


class ForeignImageCase(unittest.TestCase):
    maxDiff = None

    def require(self, name, condition, reason):
        kerntest.require(self, name, condition, reason)

    def setUp(self):
        self.require("root", os.geteuid() == 0, "podman builds as root here: run this test as root (CTest does)")
        try:
            pwd.getpwnam(os.environ.get("KERN_TEST_USER") or kerntest.DEFAULT_TEST_USER)
        except KeyError:
            self.require("user", False, "no test user (useradd -m kerntest)")
        self.require("busybox", os.access(build_images.BUSYBOX, os.X_OK),
                     build_images.BUSYBOX + " is missing (apt-get install busybox-static)")
        self.w = world()
        if not self.w.kern_bin or not os.access(self.w.kern_bin, os.X_OK):
            self.fail("KERN_BIN is not set or not executable: %r" % self.w.kern_bin)

    def assertExit(self, r, code, msg=""):
        if r.rc != code:
            self.fail("expected exit code %s, got %s%s\n%s" % (code, r.rc, (": " + msg) if msg else "", r.describe()))

    def assertBoxError(self, r, *needles):
        self.assertExit(r, 125)
        lines = [l for l in r.err.splitlines() if l.startswith("kern: error: ")]
        self.assertTrue(lines, r.describe())
        for n in needles:
            self.assertIn(n, lines[0], r.describe())

    def kbox(self, image, cmd=None, flags=(), store=None):
        argv = ["box", "--image", image] + list(flags)
        if cmd is not None:
            argv += ["--"] + list(cmd)
        return self.w.kern(*argv, store=store)

    def kload(self, path):
        store = self.w.new_store()
        r = self.w.kern("load", "-i", path, store=store)
        self.assertExit(r, 0)
        return store

    def pmrun(self, image, cmd=None, flags=()):
        return self.w.pm("run", "--rm", *flags, image, *(cmd or ()), timeout=120)

    def need_uid_range(self):
        check = host_probe.check_uid_range(self.w.user, pwd.getpwnam(self.w.user).pw_uid)
        self.require("uid-range", check, check.detail)

    def same_as_podman(self, kimage, pimage, cmd, store=None, flags=(), pflags=()):
        """kern's stdout and exit code are podman's for cmd in the same image, but for the
        supplementary groups `id` prints (kern-box(1): the box's process has none)."""
        k = self.kbox(kimage, cmd, flags=flags, store=store)
        p = self.pmrun(pimage, cmd, flags=pflags)
        self.assertExit(p, 0, "podman itself")
        self.assertExit(k, 0)
        self.assertEqual(k.out_b, without_groups(p.out_b), "kern:\n%s\npodman:\n%s" % (k.describe(), p.describe()))
        return k


class PodmanBuiltTest(ForeignImageCase):
    """The image of CONTAINERFILE, as podman saves it."""

    def setUp(self):
        super().setUp()
        self.require("podman", self.w.podman_problem is None, self.w.podman_problem or "")

    def test_docker_archive_sees_what_podman_sees(self):
        self.need_uid_range()
        store = self.kload(self.w.path("built.docker-archive.tar"))
        img = "localhost/kt-built:1"
        # The image's own Cmd: id and pwd as USER app in WORKDIR /srv/work.
        k = self.same_as_podman(img, img, None, store=store, flags=["--uid-range"])
        self.assertEqual(k.out, "uid=1000(app) gid=1000(app)\n/srv/work\n")
        # Without a range only id 0 exists in the box: USER app is refused, not run as root.
        self.assertBoxError(self.kbox(img, store=store), "app", "only id 0 is mapped")
        self.same_as_podman(img, img, ["/bin/sh", "-c", ENV_CMD],
                            store=store, flags=["--uid-range"])
        # ls -ln of the files; modes, owners and times of the directories (their link counts,
        # sizes and `total` are the file system's own: overlay merges count them otherwise).
        # /srv/work is left out: podman gives WORKDIR to the USER (1000), and image files of a
        # user other than root are root's in a kern box (test_owners_and_a_name_that_is_not_utf8).
        # /srv's time too: each runtime makes the WORKDIR in it as the box starts, which sets
        # /srv's mtime to that second (CI saw the two runs one second apart).
        self.same_as_podman(img, img, ["/bin/sh", "-c", "ls -ln --full-time /data /opq /srv | grep -Ev '^(total|d)';"
                                       " stat -c '%A %u %g %Y %n' /data /opq; stat -c '%A %u %g %n' /srv"],
                            store=store, flags=["--uid-range"])
        self.same_as_podman(img, img, ["cat", "/srv/hello.txt", "/opq/new", "/data/keep"], store=store,
                            flags=["--uid-range"])

    def test_a_podman_built_healthcheck_is_the_boxs(self):
        # podman wrote the HEALTHCHECK; kern image inspect shows it, and a detached box on the image
        # goes starting -> healthy by it. The control: --no-healthcheck leaves the box without one.
        store = self.kload(self.w.path("kt-health.tar"))
        img = "localhost/kt-health:1"
        pm = self.w.pm("image", "inspect", img)
        self.assertExit(pm, 0)
        self.assertIn("test -f /tmp/healthy", pm.out, pm.describe())
        ins = self.w.kern("image", "inspect", img, store=store)
        self.assertExit(ins, 0)
        self.assertIn("test -f /tmp/healthy", ins.out, ins.describe())
        status = {}
        for flags in ((), ("--no-healthcheck",)):
            name = "kt-hc-%d-%d" % (os.getpid(), len(flags))
            r = self.w.kern("box", "-d", "--name", name, "--image", img, *flags, store=store)
            self.assertExit(r, 0)
            self.addCleanup(self.w.kern, "rm", "-f", name, store=store)
            seen = []
            # The image's check turns healthy after 3 s; the control is watched for 5 s.
            deadline = time.monotonic() + (5 if flags else 40)
            while time.monotonic() < deadline:
                rec = json.loads(self.w.kern("inspect", name, store=store).out)
                rec = rec[0] if isinstance(rec, list) else rec
                st = (rec.get("health") or {}).get("status")
                if not seen or seen[-1] != st:
                    seen.append(st)
                if st == "healthy":
                    break
                time.sleep(0.2)
            status[flags] = seen
        self.assertEqual(status[()][0], "starting", status)
        self.assertEqual(status[()][-1], "healthy", status)
        self.assertEqual(status[("--no-healthcheck",)], [None], status)

    def test_whiteouts_hard_links_and_absolute_symlink(self):
        store = self.kload(self.w.path("built.oci-archive.tar"))
        img = "localhost/kt-built:1"
        k = self.same_as_podman(img, img, ["ls", "-a", "/data", "/opq"], store=store, flags=["-u", "0"],
                                pflags=["--user", "0"])
        self.assertNotIn("gone", k.out)
        self.assertNotIn("old", k.out)
        cmd = ["/bin/sh", "-c", "stat -c '%h' /data/hl /data/hl2; [ /data/hl -ef /data/hl2 ] && echo same;"
               " readlink /abs-link; cat /abs-link"]
        k = self.same_as_podman(img, img, cmd, store=store, flags=["-u", "0"], pflags=["--user", "0"])
        self.assertTrue(k.out.startswith("2\n2\nsame\n/etc/group\n"), k.describe())
        # The link resolves inside the box: the image's group file, not the host's.
        self.assertIn("app:x:1000:", k.out)
        self.assertNotIn(self.w.user, k.out)

    def test_owners_and_a_name_that_is_not_utf8(self):
        self.need_uid_range()
        store = self.kload(self.w.path("built.docker-archive.tar"))
        img = "localhost/kt-built:1"
        cmd = ["/bin/sh", "-c", "ls -n / | grep own | awk '{print $3, $4, $9}'; for f in /data/*; do echo \"$f\"; done"]
        p = self.pmrun(img, cmd)
        self.assertExit(p, 0)
        self.assertIn(b"0 0 own0\n1000 1000 own1000\n65534 65534 own65534\n", p.out_b)
        self.assertIn(b"/data/bad\xffname\n", p.out_b)
        # kern records the owners other than root in the store and does not apply them: in
        # the box, with or without --uid-range, every file of the image is root's (kern(1),
        # kern-box(1)); the name's bytes arrive as they are.
        self.assertEqual(recorded_owners(store), {"/own1000": (1000, 1000), "/own65534": (65534, 65534)})
        for flags in (["--uid-range", "-u", "0"], ["-u", "0"]):
            k = self.kbox(img, cmd, flags=flags, store=store)
            self.assertExit(k, 0)
            self.assertEqual(k.out_b, p.out_b.replace(b"1000 1000", b"0 0").replace(b"65534 65534", b"0 0"))

    def test_skopeo_forms_of_the_podman_image(self):
        self.require("skopeo", self.w.skopeo, "skopeo is not installed (apt-get install skopeo)")
        self.need_uid_range()
        d = tempfile.mkdtemp(dir=self.w.tmp)
        os.chmod(d, 0o755)
        lay, arch = os.path.join(d, "layout"), os.path.join(d, "again.tar")
        checked([self.w.skopeo, "copy", "oci-archive:" + self.w.path("built.oci-archive.tar"), "oci:%s:v1" % lay])
        checked([self.w.skopeo, "copy", "docker-archive:" + self.w.path("built.docker-archive.tar"),
                 "oci-archive:%s:skopeo/again:v2" % arch])
        subprocess.run(["chmod", "-R", "a+rX", d], check=True)
        want = "uid=1000(app) gid=1000(app)\n/srv/work\n"
        k = self.kbox("oci:%s:v1" % lay, flags=["--uid-range"], store=self.w.new_store())
        self.assertExit(k, 0)
        self.assertEqual(k.out, want)
        store = self.kload(arch)
        k = self.kbox("skopeo/again:v2", flags=["--uid-range"], store=store)
        self.assertExit(k, 0)
        self.assertEqual(k.out, want)

    def test_users_by_name_number_and_unknown(self):
        self.need_uid_range()
        for tag, want in (("kt-nobody", "uid=65534(nobody) gid=65534(nobody)"),
                          ("kt-numeric", "uid=1000(app) gid=1000(app)")):
            store = self.kload(self.w.path(tag + ".tar"))
            img = "localhost/%s:1" % tag
            k = self.same_as_podman(img, img, ["id"], store=store, flags=["--uid-range"])
            self.assertTrue(k.out.startswith(want), k.describe())
        store = self.kload(self.w.path("kt-ghost.tar"))
        p = self.pmrun("localhost/kt-ghost:1", ["id"])
        self.assertNotEqual(p.rc, 0, "podman runs an unknown user?\n" + p.describe())
        self.assertBoxError(self.kbox("localhost/kt-ghost:1", ["id"], flags=["--uid-range"], store=store),
                            "the image's User", "ghost", "/etc/passwd")


class UmociConfigTest(ForeignImageCase):
    """Configs umoci writes as asked, which podman's builder would not; podman runs the same
    layout (`podman run oci:DIR:TAG`) where it can here."""

    def setUp(self):
        super().setUp()
        self.require("umoci", self.w.umoci_problem is None, self.w.umoci_problem or "")
        self.store = self.w.new_store()

    def img(self, tag):
        return "oci:%s:%s" % (self.w.path("umoci"), tag)

    def box(self, tag, cmd=None, flags=()):
        return self.kbox(self.img(tag), cmd, flags=flags, store=self.store)

    def podman(self, tag, cmd=None):
        """podman's run of the same layout, or None when podman cannot run here."""
        if self.w.podman_problem:
            return None
        return self.pmrun(self.img(tag), cmd)

    def like_podman(self, tag, cmd=None, flags=()):
        k = self.box(tag, cmd, flags)
        self.assertExit(k, 0)
        p = self.podman(tag, cmd)
        if p is not None:
            self.assertExit(p, 0, "podman itself")
            self.assertEqual(k.out_b, without_groups(p.out_b), "kern:\n%s\npodman:\n%s" % (k.describe(), p.describe()))
        return k

    def test_missing_working_dir_is_made(self):
        k = self.like_podman("nowd")
        self.assertEqual(k.out, "/made/by/kern\n")

    def test_working_dir_through_proc_fd_is_refused(self):
        # runc's CVE-2024-21626: a WorkingDir of /proc/self/fd/N reached a directory descriptor
        # the runtime left open, outside the root. No N gets a kern box started.
        for n in FD_WORKDIRS:
            k = self.box("fdwd%d" % n)
            self.assertBoxError(k, "/proc/self/fd/%d" % n)
            self.assertEqual(k.out, "")

    def test_user_by_name_numeric_and_unknown(self):
        self.need_uid_range()
        k = self.like_podman("nobody", flags=["--uid-range"])
        self.assertTrue(k.out.startswith("uid=65534(nobody) gid=65534(nobody)"), k.describe())
        # No passwd line for 1000 here: podman writes one into the container's /etc/passwd
        # (its --passwd), Docker and kern leave the image's file as it is.
        k = self.box("numeric", flags=["--uid-range"])
        self.assertExit(k, 0)
        self.assertEqual(k.out, "uid=1000 gid=1000\n")
        k = self.box("ghost", flags=["--uid-range"])
        self.assertBoxError(k, "the image's User", "ghost", "/etc/passwd")
        self.assertNotIn("--help", k.err)
        p = self.podman("ghost")
        if p is not None:
            self.assertNotEqual(p.rc, 0, p.describe())

    def test_env_bytes_and_equals(self):
        k = self.like_podman("env", ["/bin/sh", "-c", ENV_CMD])
        env = k.out_b.split(b"\n")
        self.assertIn(b"EQ=k=v==w", env)
        self.assertIn(b"EMPTY=", env)
        # Go's JSON writer turns the lone byte into U+FFFD: the box gets those bytes.
        self.assertEqual([e for e in env if e.startswith(b"BAD=")], [b"BAD=a\xef\xbf\xbdb"])

    def test_entrypoint_of_an_empty_string_and_null_cmd(self):
        k = self.like_podman("emptyep")
        self.assertEqual(k.out, "cmd-ran\n")
        k = self.like_podman("emptyep", ["echo", "given"])
        self.assertEqual(k.out, "given\n")
        k = self.like_podman("nullcmd")
        self.assertEqual(k.out, "ep-ran\n")
        # Neither: podman refuses; kern runs /bin/sh (kern-box(1), The command), here on no input.
        k = self.box("nothing", ["/bin/sh", "-c", "echo sh-ran"])
        self.assertExit(k, 0)
        k = self.box("nothing")
        self.assertExit(k, 0)
        p = self.podman("nothing")
        if p is not None:
            self.assertNotEqual(p.rc, 0, p.describe())

    def test_owners_inserted_by_umoci(self):
        # umoci 0.4.7's insert ends the layer right after the last file's data (no padding or
        # end blocks), as Go's tar reader accepts.
        cmd = ["/bin/sh", "-c", "ls -n /own | awk 'NF > 3 {print $3, $4, $9}'"]
        k = self.box("owned", cmd)
        self.assertExit(k, 0)
        self.assertEqual(k.out_b, b"0 0 bad?name\n0 0 own0\n0 0 own1000\n0 0 own65534\n")
        self.assertEqual(recorded_owners(self.store), {"/own/own1000": (1000, 1000), "/own/own65534": (65534, 65534)})
        p = self.podman("owned", cmd)
        if p is not None:
            self.assertExit(p, 0)
            self.assertEqual(p.out_b, b"0 0 bad?name\n0 0 own0\n1000 1000 own1000\n65534 65534 own65534\n")

    def test_sixty_layers(self):
        k = self.like_podman("many", ["/bin/sh", "-c", "ls /many | wc -l; cat /many/f00 /many/f59"])
        self.assertEqual(k.out.split(), ["60", "0", "59"])

    def test_index_of_several_platforms(self):
        self.require("skopeo", self.w.skopeo, "skopeo is not installed (apt-get install skopeo)")
        src = self.w.path("umoci")
        with open(os.path.join(src, "index.json")) as f:
            index = json.load(f)
        by_tag = {m["annotations"]["org.opencontainers.image.ref.name"]: m for m in index["manifests"]}
        d = tempfile.mkdtemp(dir=self.w.tmp)
        os.chmod(d, 0o755)

        def index_of(tags, name):
            # An index blob over umoci's manifests, then `skopeo copy --all` writes it as skopeo does.
            lay = build_images.Layout(os.path.join(d, name + "-src"))
            for n in os.listdir(os.path.join(src, "blobs", "sha256")):
                shutil.copy(os.path.join(src, "blobs", "sha256", n), os.path.join(lay.path, "blobs", "sha256"))
            entries = []
            for tag, arch in tags:
                e = {k: by_tag[tag][k] for k in ("mediaType", "digest", "size")}
                e["platform"] = {"architecture": arch, "os": "linux"}
                entries.append(e)
            idx = {"schemaVersion": 2, "mediaType": build_images.OCI_INDEX, "manifests": entries}
            lay.tag(dict(mediaType=build_images.OCI_INDEX, **lay.blob(json.dumps(idx).encode())), "multi")
            lay.save()
            out = os.path.join(d, name)
            checked([self.w.skopeo, "copy", "--all", "oci:%s:multi" % lay.path, "oci:%s:multi" % out])
            subprocess.run(["chmod", "-R", "a+rX", d], check=True)
            return "oci:%s:multi" % out

        host = build_images.host_arch()
        fits = index_of([("arm64", "arm64"), ("nowd", host), ("s390x", "s390x")], "fits")
        k = self.kbox(fits, store=self.store)
        self.assertExit(k, 0)
        self.assertEqual(k.out, "/made/by/kern\n")
        none = index_of([("arm64", "arm64"), ("s390x", "s390x")], "none")
        self.assertBoxError(self.kbox(none, ["true"], store=self.store), "arm64", "s390x")


if __name__ == "__main__":
    kerntest.main(keep_root=True)
