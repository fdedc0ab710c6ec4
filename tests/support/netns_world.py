"""A test world in a user + network + mount namespace of the test's own (`unshare -rnm`): the
test file runs itself as `FILE --world DIR` inside it (the world's builder writes DIR/ready
once it is up, then waits for its stdin to close), and kern runs inside it through
`FILE --enter PID ARGV...`, so whatever kern's helpers reach is only the world: nothing leaves the
machine. Used by the network tests (test_box_egress.py, test_box_net_private.py)."""

import os
import signal
import subprocess
import sys
import time

SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def start(test_file, world_dir, timeout=60):
    """Starts `test_file --world world_dir` in a fresh user + network + mount namespace and waits
    for its ready file. Returns (Popen or None, problem or None)."""
    os.mkdir(world_dir)
    env = dict(os.environ, PATH=SYSTEM_PATH)
    world = subprocess.Popen(["unshare", "-rnm", "--propagation", "private", sys.executable,
                              os.path.abspath(test_file), "--world", world_dir],
                             stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + timeout
    while not os.path.exists(os.path.join(world_dir, "ready")):
        if world.poll() is not None or time.monotonic() > deadline:
            return world, "the test world did not come up: %s" % (world.stderr.read() or b"").decode()[-2000:]
        time.sleep(0.05)
    return world, None


def stop(world):
    """Closes the world's stdin (it stops what it started, reaps it and ends), killing it if it
    does not end."""
    if world is None:
        return
    world.stdin.close()
    try:
        world.wait(timeout=10)
    except subprocess.TimeoutExpired:
        world.kill()
        world.wait()


def enter_argv(test_file, world, argv):
    """argv run inside the world's namespaces (through the test file's --enter)."""
    return [sys.executable, os.path.abspath(test_file), "--enter", str(world.pid)] + list(argv)


def die_with_world():
    """preexec_fn for a server the world starts: it must not outlive the world."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def enter_main(pid, argv):
    """Joins the world's user, network and mount namespaces (as their owner), then runs argv."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    for kind, flag in (("user", 0x10000000), ("net", 0x40000000), ("mnt", 0x00020000)):
        fd = os.open("/proc/%s/ns/%s" % (pid, kind), os.O_RDONLY)
        if libc.setns(fd, flag) != 0:
            sys.exit("setns %s: %s" % (kind, os.strerror(ctypes.get_errno())))
        os.close(fd)
    os.chdir("/")
    os.execvp(argv[0], argv)


def _test_case_base():
    import kerntest

    class WorldTestCase(kerntest.KernTestCase):
        """Tests run against one world per class: `test_file` (the subclass's __file__) builds it,
        `world_name` names the skip, `world_tools` must be installed."""
        test_file = None
        world_name = "world"
        world_tools = ("unshare", "ip")
        world = None
        problem = None

        @classmethod
        def world_problem(cls):
            """A reason the world cannot be built here, or None (subclasses add their own)."""
            import shutil
            for tool in cls.world_tools:
                if shutil.which(tool, path=SYSTEM_PATH) is None:
                    return "%s is not installed (setup.sh deps test)" % tool
            return None

        @classmethod
        def setUpClass(cls):
            super().setUpClass()
            cls.world, cls.problem = None, cls.world_problem()
            if cls.problem is None:
                cls.dir = os.path.join(kerntest.session().tmp, cls.world_name)
                cls.world, cls.problem = start(cls.test_file, cls.dir)

        @classmethod
        def tearDownClass(cls):
            stop(cls.world)
            super().tearDownClass()

        def setUp(self):
            super().setUp()
            self.require(self.world_name, self.problem is None, self.problem or "")

        def in_world(self, argv):
            return enter_argv(self.test_file, self.world, argv)

    return WorldTestCase


WorldTestCase = _test_case_base()


def sh(*argv, env=None):
    """Runs one step of building a world; a failure ends the world with the step's stderr."""
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120, env=env)
    if p.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(argv), p.stderr.decode(errors="replace")))


def name_world(d, addresses, resolved, hosts=None):
    """Inside the world: loopback up with `addresses` on it; /etc/resolv.conf naming a dnsmasq on
    127.0.0.1 that answers the names of `resolved` ({name: address}); /etc/hosts with localhost
    and `hosts` ({name: address}). Returns the dnsmasq process (the world kills and reaps it) once
    it answers the first name of `resolved`."""
    sh("ip", "link", "set", "lo", "up")
    for addr in addresses:
        sh("ip", "addr", "add", addr + "/32", "dev", "lo")
    with open(os.path.join(d, "resolv.conf"), "w") as f:
        f.write("nameserver 127.0.0.1\n")
    with open(os.path.join(d, "hosts"), "w") as f:
        f.write("127.0.0.1 localhost\n" + "".join("%s %s\n" % (a, n) for n, a in (hosts or {}).items()))
    sh("mount", "--bind", os.path.join(d, "resolv.conf"), "/etc/resolv.conf")
    sh("mount", "--bind", os.path.join(d, "hosts"), "/etc/hosts")
    dns = ["dnsmasq", "-d", "-C", "/dev/null", "--no-resolv", "--no-hosts", "--listen-address=127.0.0.1",
           "--bind-interfaces", "--user=root", "--group=root", "--pid-file=" + os.path.join(d, "dnsmasq.pid")]
    dns += ["--address=/%s/%s" % (n, a) for n, a in resolved.items()]
    proc = subprocess.Popen(dns, stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "dnsmasq.log"), "w"),
                            preexec_fn=die_with_world)
    first = next(iter(resolved))
    for _ in range(100):  # dnsmasq answers once it listens
        if subprocess.run(["python3", "-c", "import socket; socket.getaddrinfo(%r, 443)" % first],
                          stderr=subprocess.DEVNULL).returncode == 0:
            break
        time.sleep(0.05)
    return proc


def make_pki(d, names):
    """A test CA (d/ca.pem) and a certificate for `names` signed by it. Returns (ca, cert, key)."""
    ca, ck = os.path.join(d, "ca.pem"), os.path.join(d, "ca.key")
    sk, sc, csr = os.path.join(d, "srv.key"), os.path.join(d, "srv.pem"), os.path.join(d, "srv.csr")
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ck, "-out", ca, "-days", "2",
       "-subj", "/CN=kern test CA")
    sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", sk, "-out", csr, "-subj", "/CN=" + names[0])
    ext = os.path.join(d, "san.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=" + ",".join("DNS:" + n for n in names) + "\n")
    sh("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ck, "-CAcreateserial", "-out", sc, "-days", "2",
       "-extfile", ext)
    return ca, sc, sk


def trust_only(d, ca):
    """Inside the world: the CA file `ca` becomes the world's whole system trust store
    (/etc/ssl/certs/ca-certificates.crt, a bind mount over /etc/ssl/certs)."""
    import shutil
    certs = os.path.join(d, "certs")
    os.mkdir(certs)
    shutil.copy(ca, os.path.join(certs, "ca-certificates.crt"))
    sh("mount", "--bind", certs, "/etc/ssl/certs")


def start_docker_registry(d, addr):
    """Inside the world: Debian's docker-registry, plain HTTP on `addr` ("127.0.0.1:5000"), its
    storage under d/registry. Returns the process (the world kills and reaps it) once it answers."""
    import urllib.request
    data = os.path.join(d, "registry")
    os.mkdir(data)
    config = os.path.join(d, "registry.yml")
    with open(config, "w") as f:
        f.write("version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\n"
                "http:\n  addr: %s\n" % (data, addr))
    proc = subprocess.Popen(["docker-registry", "serve", config], stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(d, "registry.log"), "w"), preexec_fn=die_with_world)
    for _ in range(200):
        try:
            urllib.request.urlopen("http://%s/v2/" % addr, timeout=1)
            break
        except OSError:
            time.sleep(0.05)
    return proc


def registry_request(addr, method, path, headers=(), body=None):
    """(status, headers, body) of a plain-HTTP request to the docker-registry on `addr`."""
    import urllib.error
    import urllib.request
    req = urllib.request.Request("http://%s%s" % (addr, path), method=method, headers=dict(headers), data=body)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def serve_https(addr, handler, cert, key, port=443):
    """A threaded HTTPS server of `handler` (a BaseHTTPRequestHandler class) on addr:port with the
    certificate `cert`/`key`, serving on a daemon thread. Returns the server."""
    import http.server
    import ssl
    import threading
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True

    srv = Server((addr, port), handler)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def serve_hello(addr, port, name_of, tls=None):
    """A threaded HTTP server on addr:port (TLS with the SSLContext `tls`) that answers every GET
    with "hello from NAME", NAME = name_of(handler): the Host header, the address asked..."""
    import http.server
    import threading

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = ("hello from %s" % name_of(self)).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer((addr, port), Hello)
    if tls is not None:
        srv.socket = tls.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def main(world_main, tests_main):
    """A world test file's entry point: `--world DIR` builds the world, `--enter PID ARGV...`
    runs ARGV in it, anything else runs the tests."""
    if len(sys.argv) == 3 and sys.argv[1] == "--world":
        world_main(sys.argv[2])
    elif len(sys.argv) > 3 and sys.argv[1] == "--enter":
        enter_main(sys.argv[2], sys.argv[3:])
    else:
        tests_main()
