"""--egress-allow in a test world the test makes itself: a user + network + mount namespace
(`unshare -rnm`) with only loopback, public-looking addresses on it (11.0.0.1 allowed.test,
11.0.0.2 other.test), dnsmasq answering those names (and allowed names that point at private,
metadata and loopback addresses), HTTPS servers with a test CA and a plain HTTP server. kern runs
inside that namespace (setns), so its proxy resolves and connects only there: nothing leaves
the machine. The box itself runs the host's curl and python3 (bound read-only from /usr)."""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import kerntest  # noqa: E402
import netns_world  # noqa: E402

HOSTS = {"allowed.test": "11.0.0.1", "other.test": "11.0.0.2"}
# A plain HTTP server that answers at once and keeps the connection open HOLD_S seconds more.
HOLD = ("hold.allowed.test", "11.0.0.3")
HOLD_S = 20
RESOLVED = {"allowed.test": "11.0.0.1", "other.test": "11.0.0.2", HOLD[0]: HOLD[1], "private.allowed.test": "10.0.0.5",
            "meta.allowed.test": "169.254.169.254", "local.allowed.test": "127.0.0.1"}

# The box's client for what curl cannot say: a raw CONNECT, a ClientHello with another name, a
# plain request whose Host differs, a direct socket. Prints one result line.
CLIENT = r'''
import socket, ssl, sys
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])


def read_all(sock):
    data = b""
    while True:
        b = sock.recv(4096)
        if not b:
            return data.decode(errors="replace")
        data += b


if mode == "direct":
    s = socket.socket()
    s.settimeout(5)
    print("direct errno=%d" % s.connect_ex((host, port)))
    sys.exit(0)
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
if mode == "connect":
    s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host, port, host, port)).encode())
    print("status=" + s.recv(4096).decode(errors="replace").split("\r\n")[0])
elif mode == "sni":  # CONNECT host, then a ClientHello naming sys.argv[4]
    s.sendall(("CONNECT %s:%d HTTP/1.1\r\n\r\n" % (host, port)).encode())
    print("status=" + s.recv(4096).decode().split("\r\n")[0])
    ctx = ssl.create_default_context(cafile="/w/ca.pem")
    try:
        t = ctx.wrap_socket(s, server_hostname=sys.argv[4])
        t.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % sys.argv[4]).encode())
        print("tls=ok body=" + read_all(t).split("\r\n\r\n", 1)[-1].strip())
    except (OSError, ssl.SSLError) as e:
        print("tls=failed %s" % type(e).__name__)
elif mode == "host":  # GET http://host/ with Host: sys.argv[4]
    s.sendall(("GET http://%s:%d/ HTTP/1.1\r\nHost: %s\r\n\r\n" % (host, port, sys.argv[4])).encode())
    data = read_all(s)
    print("status=" + data.split("\r\n")[0] + " body=" + data.split("\r\n\r\n", 1)[-1].strip())
'''


def hold_server(addr, port):
    """Answers the first request of each connection with "ok" (HTTP/1.1, so the client may keep
    the connection), then keeps its end open HOLD_S seconds."""
    import socket
    import threading

    srv = socket.create_server((addr, port))

    def serve(c):
        with c:
            c.recv(4096)
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            time.sleep(HOLD_S)

    def loop():
        while True:
            c, _ = srv.accept()
            threading.Thread(target=serve, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()


def world_main(d):
    """Runs as root of a fresh user + network + mount namespace: builds the world, then waits."""
    import ssl

    dns_proc = netns_world.name_world(d, list(HOSTS.values()) + [HOLD[1]], RESOLVED)
    hold_server(HOLD[1], 80)
    _, sc, sk = netns_world.make_pki(d, ["allowed.test", "www.allowed.test", "other.test"])
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sc, sk)
    for addr in HOSTS.values():
        for port, tls in ((443, ctx), (80, None)):
            netns_world.serve_hello(addr, port, lambda h: h.headers.get("Host", "?"), tls)
    with open(os.path.join(d, "client.py"), "w") as f:
        f.write(CLIENT)
    os.chmod(d, 0o755)
    with open(os.path.join(d, "ready"), "w") as f:
        f.write("%d\n" % os.getpid())
    sys.stdin.read()  # until the test closes our stdin (or kills us)
    dns_proc.kill()
    dns_proc.wait()  # reaped here, not left a zombie of the host's init


class EgressWorld(netns_world.WorldTestCase):
    test_file = __file__
    world_name = "egress-world"
    world_tools = ("unshare", "dnsmasq", "openssl", "curl", "ip")

    # ---- helpers

    def box_flags(self, allow="allowed.test"):
        return ["--allow-uncapped", "-v", "/usr:/usr:ro", "-v", "/usr/lib:/lib:ro", "-v", "/usr/lib64:/lib64:ro",
                "-v", self.dir + ":/w:ro", "--egress-allow", allow]

    def egress_box(self, cmd, allow="allowed.test"):
        argv = self.in_world(self._argv_box(cmd, self.box_flags(allow), self.s.new_name(), None))
        return self._popen(argv, None, subprocess.DEVNULL, (), False, "env").finish(120)

    def world_run(self, argv):
        return self.host_run(self.in_world(argv), timeout=60)

    def egress_records(self, run):
        return [r for r in run.report_records() if r.get("event") == "egress"]

    # ---- tests

    def test_curl_reaches_an_allowed_name_and_its_subdomain_and_is_refused_another(self):
        run = self.egress_box(["sh", "-c",
                               "for h in allowed.test www.allowed.test other.test; do "
                               "curl -sS --max-time 20 --cacert /w/ca.pem https://$h/; echo \" rc=$?\"; done; "
                               "curl -sS --max-time 20 http://allowed.test/; echo \" rc=$?\""])
        self.assertExit(run, 0)
        self.assertIn("hello from allowed.test rc=0", run.out, run.describe())
        self.assertIn("hello from www.allowed.test rc=0", run.out, run.describe())
        self.assertIn("403", run.err, run.describe())
        self.assertNotIn("hello from other.test", run.out, run.describe())
        self.assertEqual(run.out.count("hello from allowed.test rc=0"), 2, run.describe())
        # The discriminant: other.test answers in this world when asked directly, outside the box.
        direct = self.world_run(["curl", "-sS", "--max-time", "20", "--cacert", self.dir + "/ca.pem",
                                 "https://other.test/"])
        self.assertEqual(direct.out, "hello from other.test", direct.describe())
        recs = self.egress_records(run)
        got = [(r["decision"], r["method"], r["host"], r["port"]) for r in recs]
        self.assertIn(("allowed", "CONNECT", "allowed.test", 443), got, recs)
        self.assertIn(("allowed", "CONNECT", "www.allowed.test", 443), got, recs)
        self.assertIn(("refused", "CONNECT", "other.test", 443), got, recs)
        self.assertIn(("allowed", "GET", "allowed.test", 80), got, recs)
        ok = [r for r in recs if r["decision"] == "allowed"]
        self.assertTrue(all(r["bytes_in"] > 0 and r["bytes_out"] > 0 and r["address"] == "11.0.0.1" for r in ok), recs)
        self.assertEqual([r["reason"] for r in recs if r["host"] == "other.test"], ["host not in the allowlist"])

    def test_a_tunnel_open_when_the_box_ends_still_has_its_record(self):
        # curl has its answer and the box ends while the server still holds its side of the
        # connection: the proxy's connection process is mid-copy when kern stops the helpers.
        run = self.egress_box(["curl", "-sS", "--max-time", "10", "http://%s/" % HOLD[0]])
        self.assertExit(run, 0)
        self.assertEqual(run.out, "ok", run.describe())
        got = [(r["decision"], r["method"], r["host"], r["reason"]) for r in self.egress_records(run)]
        self.assertEqual(got, [("allowed", "GET", HOLD[0], "the egress proxy ended")], run.describe())
        # The box ran shorter than the server's hold: kern did not wait for the server.
        self.assertLess(run.seconds, HOLD_S, run.describe())

    def test_the_box_itself_has_no_route(self):
        run = self.egress_box(["python3", "/w/client.py", "direct", "11.0.0.1", "443"])
        self.assertIn("direct errno=101", run.out, run.describe())  # ENETUNREACH
        control = self.world_run(["python3", self.dir + "/client.py", "direct", "11.0.0.1", "443"])
        self.assertIn("direct errno=0", control.out, control.describe())

    def test_connect_refusals(self):
        cases = [("11.0.0.1", 443, "an IP address never matches"), ("allowed.test", 22, "port 22 is not 80 or 443"),
                 ("private.allowed.test", 443, "private (10.0.0.0/8)"),
                 ("meta.allowed.test", 443, "link-local/metadata"), ("local.allowed.test", 443, "loopback"),
                 ("allowed.test", 443, None)]
        script = "; ".join("python3 /w/client.py connect %s %d" % (h, p) for h, p, _ in cases)
        run = self.egress_box(["sh", "-c", script])
        lines = [l for l in run.out.splitlines() if l.startswith("status=")]
        self.assertEqual(len(lines), len(cases), run.describe())
        for (host, port, why), line in zip(cases, lines):
            if why is None:
                self.assertIn("200", line, run.describe())
            else:
                self.assertIn("403", line, "%s:%d\n%s" % (host, port, run.describe()))
        reasons = {(r["host"], r["port"]): r["reason"] for r in self.egress_records(run) if r["decision"] == "refused"}
        for host, port, why in cases:
            if why:
                self.assertIn(why, reasons.get((host, port), ""), reasons)

    def test_domain_fronting_is_refused(self):
        run = self.egress_box(["sh", "-c", "python3 /w/client.py sni allowed.test 443 other.test; "
                                           "python3 /w/client.py sni allowed.test 443 allowed.test; "
                                           "python3 /w/client.py host allowed.test 80 other.test; "
                                           "python3 /w/client.py host allowed.test 80 allowed.test"])
        lines = run.out.splitlines()
        self.assertIn("tls=failed", "\n".join(lines[0:2]), run.describe())  # SNI other.test: cut
        self.assertIn("tls=ok body=hello from allowed.test", run.out, run.describe())  # positive control
        hosts = [l for l in lines if l.startswith("status=HTTP/1.") and "body=" in l]
        self.assertEqual(len(hosts), 2, run.describe())
        self.assertIn("403", hosts[0], run.describe())
        self.assertIn("Host header differs", hosts[0], run.describe())
        self.assertIn("200", hosts[1], run.describe())
        self.assertIn("body=hello from allowed.test", hosts[1], run.describe())
        reasons = [r["reason"] for r in self.egress_records(run) if r["decision"] == "refused"]
        self.assertIn("TLS server name differs from the CONNECT host", reasons)

    def _helpers(self, kern_pid):
        """(relay, proxy) pids: kern's children in its pid namespace; the relay's network is the box's."""
        def ns(pid, kind):
            return os.readlink("/proc/%d/ns/%s" % (pid, kind))
        kids = []
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    with open("/proc/%s/stat" % p) as f:
                        if int(f.read().rpartition(")")[2].split()[1]) == kern_pid:
                            kids.append(int(p))
                except (OSError, ValueError):
                    pass
        relay = proxy = None
        for k in kids:
            try:
                if ns(k, "pid") != ns(kern_pid, "pid"):
                    continue  # box init
                if ns(k, "net") == ns(kern_pid, "net"):
                    proxy = k
                else:
                    relay = k
            except OSError:
                pass
        return relay, proxy

    def _start_with_helpers(self, argv):
        """Starts kern (argv) and waits until its relay and proxy run; returns (Spawned, relay, proxy)."""
        sp = self._popen(argv, None, subprocess.DEVNULL, (), False, None)
        self.addCleanup(self._reap_spawned, sp)
        deadline = time.monotonic() + 30
        relay = proxy = None
        while time.monotonic() < deadline and not (relay and proxy):
            relay, proxy = self._helpers(sp.pid)
            time.sleep(0.05)
        self.assertTrue(relay and proxy, "helpers not found under kern pid %d" % sp.pid)
        return sp, relay, proxy

    def _kill_helper(self, which):
        go = os.path.join(self.dir, "go-" + which)
        cmd = ["sh", "-c", "curl -sS --max-time 20 --cacert /w/ca.pem https://allowed.test/; echo \" before=$?\"; "
                           "while [ ! -e /w/go-%s ]; do sleep 0.05; done; "
                           "curl -sS --max-time 20 --cacert /w/ca.pem https://allowed.test/; echo \" after=$?\"" % which]
        argv = self.in_world(self._argv_box(cmd, self.box_flags(), self.s.new_name(), None))
        sp, relay, proxy = self._start_with_helpers(argv)
        time.sleep(1.0)  # the first curl
        os.kill(relay if which == "relay" else proxy, signal.SIGKILL)
        time.sleep(0.3)
        with open(go, "w"):
            pass
        run = sp.finish(60)
        self.assertIn("hello from allowed.test before=0", run.out, run.describe())
        self.assertRegex(run.out, r"after=(7|56|35)", run.describe())
        self.assertNotIn("after=0", run.out, run.describe())
        self.assertIn("kern: warning: the egress %s ended (killed by" % which, run.err, run.describe())
        self.assertIn("the box has no network egress from now on", run.err, run.describe())

    def test_helpers_hold_no_capabilities_and_run_under_seccomp(self):
        argv = self.in_world(self._argv_box(["sh", "-c", "while [ ! -e /w/go-status ]; do sleep 0.05; done"],
                                            self.box_flags(), self.s.new_name(), None))
        sp, relay, proxy = self._start_with_helpers(argv)

        def status(pid):
            with open("/proc/%d/status" % pid) as f:
                return dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
        try:
            for pid in (relay, proxy):
                st = status(pid)
                for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
                    self.assertEqual(int(st[cap].strip(), 16), 0, "%s of %d: %s" % (cap, pid, st[cap]))
                self.assertEqual(st["Seccomp"].strip(), "2", pid)
                self.assertEqual(st["NoNewPrivs"].strip(), "1", pid)
            # The discriminant: kern itself, the helpers' parent, has neither.
            self.assertEqual(status(sp.pid)["Seccomp"].strip(), "0")
        finally:
            with open(os.path.join(self.dir, "go-status"), "w"):
                pass
        run = sp.finish(60)
        self.assertExit(run, 0)

    def test_killing_the_relay_leaves_no_egress(self):
        self._kill_helper("relay")

    def test_killing_the_proxy_leaves_no_egress(self):
        self._kill_helper("proxy")

    def test_flag_errors(self):
        for flags, needle in ((["--egress-allow", "1.2.3.4"], "is an address"),
                              (["--egress-allow", "*.pypi.org"], "is not a domain name"),
                              (["--egress-allow", "pypi.org", "--net", "host"], "--egress-allow"),
                              (["--egress-allow", "pypi.org", "--net", "private"], "--egress-allow")):
            run = self.box(["true"], flags=flags)
            self.assertKernError(run, needle)

    def test_a_warm_kernel_refuses_the_allowlist_rather_than_running_without_its_proxy(self):
        run = self.kern("kernel", "start", self.s.new_name(), "--egress-allow", "pypi.org", "--rootfs",
                        self.s.rootfs, "--lang", "python")
        self.assertNotEqual(run.rc, 0, run.describe())
        self.assertIn("kern: error: kern kernel start --egress-allow: not implemented yet", run.err, run.describe())

    def test_show_config_names_the_proxy(self):
        run = self.box(None, flags=["--egress-allow", "PyPI.org,files.pythonhosted.org", "--show-config"])
        self.assertExit(run, 0)
        self.assertIn("egress_allow: pypi.org,files.pythonhosted.org", run.out)
        self.assertIn("env: HTTPS_PROXY=http://127.0.0.1:3128", run.out)
        self.assertIn("env: NO_PROXY=localhost,127.0.0.1", run.out)
        self.assertIn("network: none", run.out)


if __name__ == "__main__":
    netns_world.main(world_main, kerntest.main)
