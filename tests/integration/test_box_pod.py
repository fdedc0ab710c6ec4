"""Pods and named networks, as the unprivileged user: the boxes of a pod reach each other by name
and share its net, ipc and uts namespaces (kern exec into one sees the same), a box outside does
not; a named network shares the net alone; a pod with --net private publishes its ports on the
host, and `kern pod rm -f` leaves nothing of it; flags a pod's box cannot have, a missing or
stopped pod, removing a pod with running boxes and a network named like a --net word are
refused; `kern pod stop` stops its boxes and `kern pod start` brings it back."""

import json
import os
import shutil
import socket
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
from detached_case import DetachedCase  # noqa: E402

PASTA = shutil.which("pasta", path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
# A box command: a web server answering with MARK on PORT until the box is stopped.
SERVE = "mkdir -p /tmp/www && echo %s > /tmp/www/index.html && exec httpd -f -p %d -h /tmp/www"
NS = "for n in net ipc uts; do readlink /proc/self/ns/$n; done; hostname"


def tun_problem():
    try:
        os.close(os.open("/dev/net/tun", os.O_RDWR))
        return None
    except OSError as e:
        return "/dev/net/tun cannot be opened by uid %d (%s): pasta cannot make the pod's interface" % (
            os.getuid(), e.strerror)


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
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=3) as r:
                return r.read().decode().strip()
        except OSError:
            time.sleep(0.1)
    return None


def own_pids_naming(word):
    """Pids of this user's processes whose command line names `word`."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            if os.stat("/proc/" + p).st_uid != os.getuid():
                continue
            with open("/proc/%s/cmdline" % p, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if any(word.encode() in a for a in argv):
            out.append(int(p))
    return out


def children_named(parent, argv0):
    """Pids of `parent`'s children whose argv[0] ends in argv0."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                st = f.read()
            with open("/proc/%s/cmdline" % p, "rb") as f:
                a0 = f.read().split(b"\0")[0]
        except OSError:
            continue
        if int(st.rpartition(")")[2].split()[1]) == parent and a0.endswith(argv0.encode()):
            out.append(int(p))
    return out


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


class PodTest(DetachedCase):

    def make(self, kind, name, *flags):
        run = self.kern(kind, "create", name, *flags)
        self.assertExit(run, 0)
        self.addCleanup(self.kern, kind, "rm", "-f", "-i", name, timeout=60)
        return name

    def detached(self, name, cmd, flags):
        run = self.box(cmd, flags=["-d"] + list(flags), name=name)
        self.assertExit(run, 0)
        self.addCleanup(self.kern, "rm", "-f", name, timeout=30)
        self.wait_for(name, lambda r: r["state"] == "running")
        return name

    def pod_inspect(self, kind, name):
        run = self.kern(kind, "inspect", name)
        self.assertExit(run, 0)
        return json.loads(run.out)[0]

    def fetch_in_box(self, server, port, flags):
        """A box with FLAGS fetching http://SERVER:PORT/ by name with busybox nc, retried for a few
        seconds (busybox wget, linked statically, segfaults here: nc does the request)."""
        script = ("i=0; while [ $i -lt 30 ]; do printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 %s %d "
                  "| grep -q . && printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 %s %d && exit 0; "
                  "i=$((i+1)); sleep 0.2; done; exit 1" % (server, port, server, port))
        return self.box(["sh", "-c", script], flags=flags)

    def test_a_pods_boxes_reach_each_other_by_name_and_share_net_ipc_uts(self):
        pod = self.make("pod", self.s.new_name("pod"))
        mark = kerntest.unique_marker("pod")
        # The server's own shell notes its net namespace before it becomes httpd.
        server = self.detached(self.s.new_name("srv"), ["sh", "-c", "readlink /proc/self/ns/net > /tmp/ns; " +
                                                         SERVE % (mark, 7000)], ["--pod", pod])
        client = self.fetch_in_box(server, 7000, ["--pod", pod])
        self.assertExit(client, 0)
        self.assertIn(mark, client.out)
        # Namespaces: the client's, the server's own init's and a kern exec into the server.
        mine = self.box(["sh", "-c", NS], flags=["--pod", pod])
        self.assertExit(mine, 0)
        m = mine.out.split()
        ex = self.kern("exec", server, "--", "sh", "-c", NS + "; cat /tmp/ns")
        self.assertExit(ex, 0)
        e = ex.out.split()
        self.assertEqual(m[:3], e[:3], "net, ipc and uts shared\n" + mine.describe() + ex.describe())
        self.assertEqual(m[3], pod, "a pod's boxes have its name as hostname")
        self.assertEqual(e[3], pod)
        self.assertEqual(e[4], e[0], "kern exec sees the box's own net namespace")
        self.assertTrue(e[0].startswith("net:["), ex.describe())
        self.assertNotEqual(e[0], os.readlink("/proc/self/ns/net"), "not the host's")
        # The control: a box outside the pod has a net namespace of its own and no such name.
        out = self.box(["sh", "-c", NS], flags=["--net", "none"])
        self.assertExit(out, 0)
        self.assertNotEqual(out.out.split()[0], m[0])
        self.assertNotEqual(out.out.split()[2], m[2])
        far = self.fetch_in_box(server, 7000, ["--net", "none"])
        self.assertNotEqual(far.rc, 0, far.describe())
        self.assertNotIn(mark, far.out)
        # The pod's hosts file names the server; `kern pod ps` lists it.
        hosts = self.box(["cat", "/etc/hosts"], flags=["--pod", pod])
        self.assertIn("127.0.0.1\t" + server + "\n", hosts.out)
        ps = self.kern("pod", "ps", pod)
        self.assertExit(ps, 0)
        self.assertIn(server, ps.out)

    def test_a_named_network_shares_the_net_alone(self):
        net = self.make("network", self.s.new_name("net"))
        mark = kerntest.unique_marker("net")
        server = self.detached(self.s.new_name("srv"), ["sh", "-c", SERVE % (mark, 7001)], ["--network", net])
        client = self.fetch_in_box(server, 7001, ["--network", net])
        self.assertExit(client, 0)
        self.assertIn(mark, client.out)
        name = self.s.new_name("cli")
        mine = self.box(["sh", "-c", NS], flags=["--network", net], name=name)
        self.assertExit(mine, 0)
        m = mine.out.split()
        ex = self.kern("exec", server, "--", "sh", "-c", NS)
        self.assertExit(ex, 0)
        e = ex.out.split()
        self.assertEqual(m[0], e[0], "net shared\n" + mine.describe() + ex.describe())
        self.assertNotEqual(m[1], e[1], "ipc not shared")
        self.assertNotEqual(m[2], e[2], "uts not shared")
        self.assertEqual(m[3], name)
        self.assertEqual(e[3], server)
        # The control: outside the network, the name does not answer.
        far = self.fetch_in_box(server, 7001, [])
        self.assertNotEqual(far.rc, 0, far.describe())

    def test_a_private_pod_publishes_its_port_and_rm_f_leaves_nothing(self):
        self.require("pasta", PASTA is not None, "pasta is not installed (apt-get install passt; setup.sh deps)")
        self.require("tun", tun_problem() is None, tun_problem() or "")
        port = free_port()
        self.assertFalse(listening(port))
        pod = self.make("pod", self.s.new_name("pub"), "--net", "private", "-p", "127.0.0.1:%d:8080" % port)
        info = self.pod_inspect("pod", pod)
        holder, supervisor = info.get("holder_pid"), info.get("supervisor_pid")
        mark = kerntest.unique_marker("pub")
        box = self.detached(self.s.new_name("srv"), ["sh", "-c", SERVE % (mark, 8080)], ["--pod", pod])
        self.assertEqual(http_get(port, time.monotonic() + 15), mark)
        ls = self.kern("pod", "ls")
        self.assertExit(ls, 0)
        line = [l for l in ls.out.splitlines() if pod in l]
        self.assertTrue(line and str(port) in line[0], ls.describe())
        self.assertTrue(own_pids_naming(pod), "the control: the scan sees the pod's processes")
        pasta = children_named(supervisor, "pasta") if supervisor else []
        pids = [p for p in (holder, supervisor) if p] + pasta
        self.assertTrue(holder and supervisor and pasta and all(alive(p) for p in pids), json.dumps(info))
        rm = self.kern("pod", "rm", "-f", pod)
        self.assertExit(rm, 0)
        self.assertFalse(listening(port), "the port is still open after pod rm -f")
        self.assertFalse(os.path.exists(info["dir"]), info["dir"])
        self.assertEqual(kerntest.pids_left(pod, 3.0), [])
        self.assertEqual(own_pids_naming(pod), [])
        self.assertEqual([p for p in pids if alive(p)], [], "holder, supervisor or pasta left")
        self.assertNotEqual(self.kern("inspect", box).rc, 0, "the pod's box is gone too")
        self.assertNotIn(pod, self.kern("pod", "ls", "-q").out.split())

    def test_refusals(self):
        pod = self.make("pod", self.s.new_name("ref"))
        r = self.box(["true"], flags=["--pod", pod, "-p", "1:2"])
        self.assertKernError(r, "-p")
        self.assertIn("kern pod create", r.err)
        r = self.box(["true"], flags=["--pod", "it-nope-pod"])
        self.assertKernError(r, "it-nope-pod")
        # The control: the same box without the bad flag runs.
        self.assertExit(self.box(["true"], flags=["--pod", pod]), 0)
        # A running box blocks rm; -f removes it and the pod.
        box = self.detached(self.s.new_name("run"), ["sleep", "60"], ["--pod", pod])
        r = self.kern("pod", "rm", pod)
        self.assertNotEqual(r.rc, 0, r.describe())
        self.assertIn("kern: error: ", r.err)
        self.assertIn(box, r.err)
        self.assertExit(self.kern("pod", "inspect", pod), 0)
        self.assertExit(self.kern("pod", "rm", "-f", pod), 0)
        self.assertNotEqual(self.kern("inspect", box).rc, 0)
        self.assertNotEqual(self.kern("pod", "inspect", pod).rc, 0)
        # A stopped pod.
        pod2 = self.make("pod", self.s.new_name("stp"))
        self.assertExit(self.kern("pod", "stop", pod2), 0)
        r = self.box(["true"], flags=["--pod", pod2])
        self.assertKernError(r, pod2, "kern pod start")
        # Networks named like --net's words.
        r = self.kern("network", "create", "private")
        self.assertNotEqual(r.rc, 0, r.describe())
        self.assertIn("kern: error: ", r.err)
        self.assertIn('"private"', r.err)
        self.assertExit(self.kern("network", "create", "it-fine-net-%d" % os.getpid()), 0)
        self.assertExit(self.kern("network", "rm", "it-fine-net-%d" % os.getpid()), 0)

    def test_stop_stops_the_boxes_and_start_brings_the_pod_back(self):
        pod = self.make("pod", self.s.new_name("cyc"))
        box = self.detached(self.s.new_name("cyc"), ["sleep", "120"], ["--pod", pod])
        self.assertEqual(self.pod_inspect("pod", pod)["state"], "running")
        self.assertExit(self.kern("pod", "stop", "-t", "1", pod), 0)
        self.assertNotEqual(self.inspect(box)["state"], "running")
        ps = self.kern("ps", "-a")
        row = [l for l in ps.out.splitlines() if box in l]
        self.assertTrue(row and "xited" in row[0], ps.describe())
        self.assertEqual(self.pod_inspect("pod", pod)["state"], "stopped")
        self.assertNotEqual(self.box(["true"], flags=["--pod", pod]).rc, 0)
        self.assertExit(self.kern("pod", "start", pod), 0)
        back = self.pod_inspect("pod", pod)
        self.assertEqual(back["state"], "running")
        self.assertTrue(back.get("holder_pid") and alive(back["holder_pid"]), json.dumps(back))
        again = self.box(["sh", "-c", "hostname"], flags=["--pod", pod])
        self.assertExit(again, 0)
        self.assertEqual(again.out.strip(), pod)
        # The holder keeps no capability (it holds the namespaces, nothing more), while a box of
        # the pod has the box's set: the discriminant and its control in one run.
        def caps(pid):
            with open("/proc/%d/status" % pid) as f:
                return {l.split(":")[0]: l.split()[1] for l in f if l.startswith(("CapEff", "CapBnd", "NoNewPrivs"))}
        held = caps(back["holder_pid"])
        self.assertEqual((held["CapEff"], held["CapBnd"], held["NoNewPrivs"]), ("0000000000000000", "0000000000000000", "1"),
                         held)
        inside = self.box(["sh", "-c", "grep CapEff /proc/self/status"], flags=["--pod", pod])
        self.assertExit(inside, 0)
        self.assertNotEqual(inside.out.split()[-1], "0000000000000000", inside.describe())


if __name__ == "__main__":
    kerntest.main()
