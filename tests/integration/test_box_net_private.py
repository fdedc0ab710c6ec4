"""--net private: pasta gives the box a network of its own. Published ports (-p) answer on the
host and close with the box (also when its launcher is SIGKILLed, and for a detached box); the
box's /etc/resolv.conf, /etc/hosts and /etc/hostname; bad values refused. Outbound access is
shown in a test world the test makes itself (`unshare -rnm`: a veth with a default route, public-
looking servers on its loopback, dnsmasq), which kern runs inside, so nothing leaves the machine;
in the same world, a server on the world's loopback is not reachable from the box."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
import netns_world  # noqa: E402
from busybox_rootfs import build_rootfs  # noqa: E402

SERVER = "198.51.100.7"     # on the world's loopback, outside the box's own addresses
DNS = "198.51.100.53"       # dnsmasq, the world's (non-loopback) resolver
GATEWAY = "203.0.113.1"     # the world's default gateway, copied into the box by pasta
PASTA = shutil.which("pasta", path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")

# A box command: a web server answering with MARK on port 8080 until the box is stopped.
SERVE = "mkdir -p /tmp/www && echo %s > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www"


def tun_problem():
    """Why pasta cannot open /dev/net/tun as this user, or None. A host without udev (a fresh
    container or VM) leaves it 0600 root; setup.sh makes it 0666 as Debian's udev rule does."""
    try:
        os.close(os.open("/dev/net/tun", os.O_RDWR))
        return None
    except OSError as e:
        return ("/dev/net/tun cannot be opened by uid %d (%s): pasta cannot make the box's interface; "
                "as root: chmod 0666 /dev/net/tun (./setup.sh deps does it)" % (os.getuid(), e.strerror))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def listening(port):
    s = socket.socket()
    s.settimeout(2)
    try:
        return s.connect_ex(("127.0.0.1", port)) == 0
    finally:
        s.close()


def http_get(port, deadline):
    """The body at http://127.0.0.1:PORT/, retried until deadline; None if it never answered."""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=3) as r:
                return r.read().decode().strip()
        except OSError:
            time.sleep(0.1)
    return None


def world_main(d):
    """Runs as root of a fresh user + network + mount namespace: builds the world, then waits."""

    def sh(*argv):
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)

    sh("ip", "link", "set", "lo", "up")
    # pasta copies the addresses and routes of the interface with the default route.
    sh("ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p")
    sh("ip", "link", "set", "eth0p", "up")
    sh("ip", "link", "set", "eth0", "up")
    sh("ip", "addr", "add", "203.0.113.10/24", "dev", "eth0")
    sh("ip", "route", "add", "default", "via", GATEWAY, "dev", "eth0")
    for addr in (SERVER, DNS):
        sh("ip", "addr", "add", addr + "/32", "dev", "lo")
    with open(os.path.join(d, "resolv.conf"), "w") as f:
        f.write("nameserver %s\nsearch world.test\n" % DNS)
    sh("mount", "--bind", os.path.join(d, "resolv.conf"), "/etc/resolv.conf")

    dns = subprocess.Popen(["dnsmasq", "-d", "-C", "/dev/null", "--no-resolv", "--no-hosts",
                            "--listen-address=" + DNS, "--bind-interfaces", "--user=root", "--group=root",
                            "--pid-file=" + os.path.join(d, "dnsmasq.pid"), "--address=/server.test/" + SERVER],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=netns_world.die_with_world)

    for addr in (SERVER, "127.0.0.1", "203.0.113.10"):
        netns_world.serve_hello(addr, 8000, lambda h: h.server.server_address[0])
    os.chmod(d, 0o755)
    with open(os.path.join(d, "ready"), "w") as f:
        f.write("%d\n" % os.getpid())
    sys.stdin.read()
    dns.kill()
    dns.wait()


class PrivateNetwork(kerntest.KernTestCase):
    def setUp(self):
        super().setUp()
        self.require("pasta", PASTA is not None, "pasta is not installed (apt-get install passt; setup.sh deps)")
        self.require("tun", tun_problem() is None, tun_problem() or "")

    def flags(self, *more):
        return ["--allow-uncapped", "--net", "private"] + list(more)

    def serve(self, port, mark, *more, name=None):
        return self.spawn_box(["sh", "-c", SERVE % mark], flags=self.flags("-p", "127.0.0.1:%d:8080" % port, *more),
                              name=name, started=True)

    def pasta_of(self, kern_pid):
        """The pid of kern's pasta child, or None."""
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % p) as f:
                    st = f.read()
                with open("/proc/%s/cmdline" % p, "rb") as f:
                    argv0 = f.read().split(b"\0")[0]
            except OSError:
                continue
            if int(st.rpartition(")")[2].split()[1]) == kern_pid and argv0 == b"pasta":
                return int(p)
        return None

    def serving_with_pasta(self, tag):
        """A box serving on a fresh published port, answering; returns (port, Spawned, pasta pid)."""
        port = free_port()
        mark = kerntest.unique_marker(tag)
        sp = self.serve(port, mark)
        self.assertEqual(http_get(port, time.monotonic() + 15), mark)
        pasta = self.pasta_of(sp.pid)
        self.assertIsNotNone(pasta, "no pasta under kern pid %d" % sp.pid)
        return port, sp, pasta

    def wait_closed(self, port, what):
        deadline = time.monotonic() + 5
        while listening(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(listening(port), "something still listens on 127.0.0.1:%d %s" % (port, what))

    # ---- publishing

    def test_a_server_in_the_box_answers_on_the_published_port_until_the_box_ends(self):
        port = free_port()
        self.assertFalse(listening(port))  # the discriminant: nothing of the host's there before
        mark = kerntest.unique_marker("pub")
        sp = self.serve(port, mark)
        self.assertEqual(sp.wait_started()[:1], b"\x01")
        self.assertEqual(http_get(port, time.monotonic() + 15), mark)
        sp.kill(signal.SIGTERM)
        run = sp.finish(30)
        self.assertEqual(run.rc, 143, run.describe())
        self.assertNotIn("pasta ended", run.err, run.describe())  # stopped by kern: no warning
        self.wait_closed(port, "after the box ended")
        self.assertIsNone(self.pasta_of(sp.pid))

    def test_two_boxes_two_ports(self):
        p1, p2 = free_port(), free_port()
        m1, m2 = kerntest.unique_marker("one"), kerntest.unique_marker("two")
        a, b = self.serve(p1, m1), self.serve(p2, m2)
        deadline = time.monotonic() + 15
        self.assertEqual(http_get(p1, deadline), m1)
        self.assertEqual(http_get(p2, deadline), m2)
        for sp in (a, b):
            sp.kill(signal.SIGTERM)
            sp.finish(30)
        self.wait_closed(p1, "after box one")
        self.wait_closed(p2, "after box two")

    def test_nothing_listens_after_the_launcher_is_sigkilled(self):
        port, sp, pasta = self.serving_with_pasta("kill9")
        sp.kill(signal.SIGKILL)
        sp.finish(30)
        self.wait_closed(port, "after kern was SIGKILLed")
        deadline = time.monotonic() + 5
        while os.path.exists("/proc/%d" % pasta) and not kerntest.is_zombie(pasta) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(kerntest.is_zombie(pasta) or not os.path.exists("/proc/%d" % pasta), "pasta %d runs on" % pasta)

    def test_a_pasta_that_dies_takes_the_network_and_kern_says_so(self):
        port, sp, pasta = self.serving_with_pasta("pastadies")
        os.kill(pasta, signal.SIGKILL)
        self.wait_closed(port, "after pasta was killed")
        time.sleep(0.2)
        sp.kill(signal.SIGTERM)
        run = sp.finish(30)
        self.assertIn("kern: warning: pasta ended (killed by", run.err, run.describe())
        self.assertIn("the box has no network from now on", run.err, run.describe())
        self.assertEqual(run.err.count("pasta ended"), 1, run.describe())

    def test_a_detached_box_publishes_until_it_is_stopped(self):
        self.use_private_runtime_dir()
        port = free_port()
        mark = kerntest.unique_marker("det")
        name = self.s.new_name()
        run = self.box(["sh", "-c", SERVE % mark], name=name,
                       flags=["-d"] + self.flags("-p", "127.0.0.1:%d:8080" % port), timeout=30)
        self.assertExit(run, 0)
        self.assertEqual(http_get(port, time.monotonic() + 15), mark)
        stop = self.kern("stop", "-t", "1", name, timeout=30)
        self.assertExit(stop, 0)
        self.wait_closed(port, "after kern stop")
        self.kern("rm", name)

    def test_ranges_and_a_box_port_alone(self):
        # -p 127.0.0.1::8080: a host port kern chooses, which kern port names; -p A-B:C-D: one
        # port each. Both answer with the box's servers (the discriminant: the host ports were
        # free before, and what answers is the box's mark).
        self.use_private_runtime_dir()
        lo = free_port()
        while listening(lo + 1) or lo + 1 > 65535:
            lo = free_port()
        mark = kerntest.unique_marker("rng")
        serve2 = ("mkdir -p /tmp/www && echo %s > /tmp/www/index.html && httpd -p 8081 -h /tmp/www && "
                  "exec httpd -f -p 8080 -h /tmp/www") % mark
        name = self.s.new_name()
        run = self.box(["sh", "-c", serve2], name=name, timeout=30,
                       flags=["-d"] + self.flags("-p", "127.0.0.1::8080", "-p", "127.0.0.1:%d-%d:8080-8081" % (lo, lo + 1)))
        self.assertExit(run, 0)
        self.addCleanup(self.kern, "rm", "-f", name, timeout=30)
        port = self.kern("port", name, "8080")
        self.assertExit(port, 0)
        chosen = sorted(int(l.rpartition(":")[2]) for l in port.out.splitlines())
        self.assertIn(lo, chosen, port.describe())
        others = [c for c in chosen if c != lo]
        self.assertEqual(len(others), 1, port.describe())
        deadline = time.monotonic() + 15
        for p in (others[0], lo, lo + 1):
            self.assertEqual(http_get(p, deadline), mark, "127.0.0.1:%d" % p)
        self.assertExit(self.kern("stop", "-t", "1", name, timeout=30), 0)
        for p in (others[0], lo, lo + 1):
            self.wait_closed(p, "after kern stop")

    def test_a_taken_port_fails_the_start_and_leaves_nothing(self):
        self.use_private_runtime_dir()
        taken = socket.socket()
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        mark = kerntest.unique_marker("taken")
        try:
            run = self.box(["sh", "-c", "echo %s ran" % mark],
                           flags=self.flags("-p", "127.0.0.1:%d:8080" % port), timeout=30)
        finally:
            taken.close()
        self.assertKernError(run, "--net private: -p 127.0.0.1:%d:8080: bind 127.0.0.1:%d/tcp" % (port, port),
                             "address already in use")
        self.assertNotIn("ran", run.out)
        self.assertNothingLeft(mark)
        self.assertFalse(listening(port))

    def test_a_port_taken_on_one_address_fails_the_start_and_leaves_nothing(self):
        # 127.0.0.1:PORT is another service's: pasta alone would have bound [::]:PORT and
        # started the box, so that 127.0.0.1:PORT reached the other service.
        self.use_private_runtime_dir()
        taken = socket.socket()
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        mark = kerntest.unique_marker("half")
        try:
            run = self.box(["sh", "-c", "echo %s ran" % mark], flags=self.flags("-p", "%d:8080" % port), timeout=30)
            v6 = socket.socket(socket.AF_INET6)
            v6.settimeout(2)
            on_v6 = v6.connect_ex(("::1", port)) == 0
            v6.close()
        finally:
            taken.close()
        self.assertExit(run, 125)
        self.assertKernError(run, "-p %d:8080: bind 0.0.0.0:%d/tcp" % (port, port), "address already in use")
        self.assertNotIn("ran", run.out)
        self.assertFalse(on_v6, "something listened on [::1]:%d" % port)
        self.assertNothingLeft(mark)
        self.assertEqual(self.registered_boxes(), [])
        # The discriminant: the same -p on a port nobody holds starts the box.
        ok = self.box(["sh", "-c", "echo %s ran" % mark], flags=self.flags("-p", "%d:8080" % free_port()), timeout=30)
        self.assertExit(ok, 0)
        self.assertIn(mark + " ran", ok.out)

    # ---- the box's files

    def test_a_tree_owned_by_root_or_another_user_gets_the_files(self):
        # Its /etc is unmapped in the box: nothing can be written there, so the files are bound
        # over the image's (a regular file, a symlink out of /etc); one the tree lacks cannot
        # get a mount point, and the box says it runs without it.
        trees = kerntest.root_part()
        self.require("root", trees is not None, "the trees owned by root and by another user are made as root: "
                     "run this test as root (it drops to the test user itself)")
        for owner, tree in sorted(trees.items()):
            with self.subTest(owner=owner):
                run = self.box(["sh", "-c", "cat /etc/hostname; echo --; cat /etc/hosts; echo --; cat /etc/resolv.conf"],
                               flags=self.flags("--hostname", "web", "--dns", "192.0.2.53"), rootfs=tree)
                self.assertExit(run, 0)
                hostname, hosts, resolv = run.out.split("--\n")
                self.assertIn("127.0.1.1\tweb\n", hosts)
                self.assertIn("nameserver 192.0.2.53\n", resolv)
                if owner == "root":
                    self.assertEqual(hostname, "web\n")
                    self.assertNotIn("warning", run.err, run.describe())
                else:  # no /etc/hostname in this tree
                    self.assertEqual(hostname, "")
                    self.assertIn("kern: warning: the box runs without bind-file /etc/hostname", run.err, run.describe())
                # The tree is as it was.
                with open(os.path.join(tree, "etc/hosts")) as f:
                    self.assertEqual(f.read(), "image hosts\n")
                self.assertEqual(os.readlink(os.path.join(tree, "etc/resolv.conf")),
                                 "../run/systemd/resolve/stub-resolv.conf")


    def test_dns_and_add_host_show_in_the_boxs_files(self):
        run = self.box(["sh", "-c", "cat /etc/resolv.conf; echo --; cat /etc/hosts; echo --; cat /etc/hostname"],
                       flags=self.flags("--hostname", "web", "--dns", "192.0.2.53", "--dns", "2001:DB8::53",
                                        "--add-host", "db.internal:10.0.0.5", "--add-host", "v6.internal:::1"))
        self.assertExit(run, 0)
        resolv, hosts, hostname = run.out.split("--\n")
        self.assertIn("nameserver 192.0.2.53\nnameserver 2001:db8::53\n", resolv)
        self.assertEqual(resolv.count("nameserver"), 2, resolv)
        self.assertIn("127.0.0.1\tlocalhost\n", hosts)
        self.assertIn("127.0.1.1\tweb\n", hosts)
        self.assertIn("10.0.0.5\tdb.internal\n::1\tv6.internal\n", hosts)
        self.assertEqual(hostname, "web\n")
        # The discriminant: a --net none box has the image's files (the test image has none).
        plain = self.box(["sh", "-c", "cat /etc/hosts /etc/resolv.conf"], flags=["--allow-uncapped"])
        self.assertNotIn("db.internal", plain.out)
        self.assertNotIn("192.0.2.53", plain.out)

    def test_a_host_network_box_gets_the_hosts_files_over_a_root_owned_tree(self):
        trees = kerntest.root_part()
        self.require("root", trees is not None, "the tree owned by root is made as root: run this test as root "
                     "(it drops to the test user itself)")
        run = self.box(["sh", "-c", "cat /etc/hostname; echo --; cat /etc/hosts; echo --; cat /etc/resolv.conf"],
                       flags=["--allow-uncapped", "--net", "host", "--hostname", "web"], rootfs=trees["root"])
        self.assertExit(run, 0)
        hostname, hosts, resolv = run.out.split("--\n")
        self.assertEqual(hostname, "web\n")
        with open("/etc/hosts") as f:
            self.assertEqual(hosts, f.read().rstrip("\n") + "\n127.0.1.1\tweb\n")
        if os.path.exists("/etc/resolv.conf"):
            with open("/etc/resolv.conf") as f:
                self.assertEqual(resolv, f.read())
        with open(os.path.join(trees["root"], "etc/hosts")) as f:
            self.assertEqual(f.read(), "image hosts\n")  # the tree is as it was

    def test_network_is_the_spelling_of_net(self):
        run = self.box(None, flags=["--network", "private", "-p", "8080:80", "--dns", "192.0.2.1", "--show-config"])
        self.assertExit(run, 0)
        self.assertIn("network: private", run.out)
        self.assertIn("publish: 8080:80/tcp", run.out)
        self.assertIn("dns: 192.0.2.1", run.out)

    # ---- refusals

    def test_bad_values_are_refused_with_a_hint(self):
        for flags, needle in ((self.flags("-p", "99999:80"), "is not a port"),
                              (self.flags("-p", "8000-8001:80"), "different lengths"),
                              (self.flags("-p", "1-2000"), "at most 1024"),
                              (self.flags("-p", "8080:80/sctp"), "tcp or udp"),
                              (["-p", "8080:80"], "--net private"),
                              (["--dns", "192.0.2.1"], "--net private"),
                              (self.flags("--add-host", "nocolon"), "needs NAME:IP"),
                              (self.flags("--add-host", "db:not-an-ip"), "is not an IP address"),
                              (self.flags("--dns", "dns.example"), "is not an IP address"),
                              (self.flags("-p", "8080:80", "-p", "8080:81"), "published twice"),
                              (["--net", "privat"], "is not none, host or private")):
            run = self.box(["true"], flags=flags)
            self.assertKernError(run, needle)
            self.assertIn("kern: hint: ", run.err, run.describe())

    def test_without_pasta_the_box_does_not_start(self):
        mark = kerntest.unique_marker("nopasta")
        run = self.box(["sh", "-c", "echo %s ran" % mark], flags=self.flags(), env={"PATH": "/nonexistent"})
        self.assertKernError(run, "--net private needs pasta", "apt-get install passt")
        self.assertNotIn("ran", run.out)

    def test_a_warm_kernel_refuses_a_private_network(self):
        run = self.kern("kernel", "start", self.s.new_name(), "--net", "private", "--rootfs", self.s.rootfs,
                        "--lang", "python")
        self.assertNotEqual(run.rc, 0, run.describe())
        self.assertIn("kern: error: kern kernel start --net private: not implemented yet", run.err, run.describe())


class PrivateNetworkWorld(netns_world.WorldTestCase):
    """Outbound: the box reaches the world's servers (and its resolver) through pasta, as kern's
    own user would; the world's loopback stays out of reach (pasta runs with --no-map-gw and
    -T/-U none) unless --add-host NAME:host-gateway asks for it."""
    test_file = __file__
    world_name = "private-net-world"
    world_tools = ("unshare", "dnsmasq", "ip")

    @classmethod
    def world_problem(cls):
        if PASTA is None:
            return "pasta is not installed (apt-get install passt; setup.sh deps)"
        return super().world_problem()

    def setUp(self):
        super().setUp()
        self.require("tun", tun_problem() is None, tun_problem() or "")

    def world_box(self, cmd, *flags):
        host_tree = ["-v", "/usr:/usr:ro", "-v", "/usr/lib:/lib:ro", "-v", "/usr/lib64:/lib64:ro"]  # python3
        argv = self.in_world(self._argv_box(cmd, ["--allow-uncapped"] + host_tree + list(flags), self.s.new_name(),
                                            None))
        return self._popen(argv, None, subprocess.DEVNULL, (), False, None).finish(60)

    def test_outbound_reaches_the_worlds_servers_and_resolver_but_not_its_loopback(self):
        get = ("python3 -c \"import sys,urllib.request as u;print(u.urlopen('http://%s:8000/',timeout=5).read().decode())\""
               " 2>/dev/null; echo \" %s=$?\"; ")
        script = ("cat /etc/resolv.conf; " + get % (SERVER, "server") +
                  "python3 -c \"import socket;print(socket.gethostbyname('server.test'))\"; echo \" dns=$?\"; " +
                  get % (GATEWAY, "gateway") + get % ("127.0.0.1", "loopback"))
        run = self.world_box(["sh", "-c", script], "--net", "private")
        self.assertExit(run, 0)
        # The world's resolver is not loopback: the box gets it (and the world's search domain).
        self.assertIn("nameserver %s\n" % DNS, run.out, run.describe())
        self.assertIn("search world.test\n", run.out, run.describe())
        self.assertIn("hello from %s\n server=0" % SERVER, run.out, run.describe())
        self.assertIn("%s\n dns=0" % SERVER, run.out, run.describe())
        # The world's 127.0.0.1:8000 answers the world (below), never the box: its gateway
        # address is not mapped to the world's loopback, and the box's 127.0.0.1 is its own.
        self.assertNotIn("hello from 127.0.0.1", run.out, run.describe())
        self.assertNotIn("gateway=0", run.out, run.describe())
        self.assertNotIn("loopback=0", run.out, run.describe())
        control = self.host_run(self.in_world(["python3", "-c", "import urllib.request;print(urllib.request.urlopen("
                                                                "'http://127.0.0.1:8000/', timeout=5).read().decode())"]))
        self.assertIn("hello from 127.0.0.1", control.out, control.describe())

    def test_host_gateway_reaches_the_worlds_loopback_only_when_asked(self):
        # --add-host NAME:host-gateway: NAME is the world's default gateway, which pasta then maps
        # to the world's loopback (podman's host.containers.internal). The discriminant, in the
        # same run: the same gateway address given as a plain IP maps nothing.
        get = ("python3 -c \"import urllib.request as u;print(u.urlopen('http://hg:8000/',timeout=5).read().decode())\""
               " 2>/dev/null; echo \" hg=$?\"; grep -w hg /etc/hosts")
        run = self.world_box(["sh", "-c", get], "--net", "private", "--add-host", "hg:host-gateway")
        self.assertExit(run, 0)
        self.assertIn("%s\thg" % GATEWAY, run.out, run.describe())
        self.assertIn("hello from 127.0.0.1\n hg=0", run.out, run.describe())
        plain = self.world_box(["sh", "-c", get], "--net", "private", "--add-host", "hg:" + GATEWAY)
        self.assertExit(plain, 0)
        self.assertIn("%s\thg" % GATEWAY, plain.out, plain.describe())
        self.assertNotIn("hello from", plain.out, plain.describe())
        self.assertNotIn("hg=0", plain.out, plain.describe())

    def test_a_box_with_net_none_reaches_nothing_in_the_same_world(self):
        run = self.world_box(["sh", "-c", "python3 -c \"import urllib.request as u;u.urlopen('http://%s:8000/',"
                                          "timeout=3)\" 2>/dev/null; echo \" server=$?\"" % SERVER])
        self.assertNotIn("server=0", run.out, run.describe())
        self.assertNotIn("hello from", run.out, run.describe())


def make_foreign_trees(user):
    """As root: a busybox tree owned by root and one owned by another user (nobody), with an
    /etc/hosts of the image's and /etc/resolv.conf a symlink, as Ubuntu's images have it; the
    root one has an /etc/hostname too."""
    top = tempfile.mkdtemp(prefix="kern-itest-foreign-", dir="/var/tmp")
    os.chmod(top, 0o755)
    trees = {}
    for owner, uid in (("root", 0), ("nobody", 65534)):
        tree = os.path.join(top, owner)
        build_rootfs(tree, None, top)
        with open(os.path.join(tree, "etc/hosts"), "w") as f:
            f.write("image hosts\n")
        os.symlink("../run/systemd/resolve/stub-resolv.conf", os.path.join(tree, "etc/resolv.conf"))
        if owner == "root":
            with open(os.path.join(tree, "etc/hostname"), "w") as f:
                f.write("image\n")
        subprocess.run(["chown", "-R", "-h", "%d:%d" % (uid, uid), tree], check=True)
        trees[owner] = tree
    return trees, lambda: shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    netns_world.main(world_main, lambda: kerntest.main(make_foreign_trees))
