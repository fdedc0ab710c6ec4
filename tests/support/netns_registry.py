#!/usr/bin/env python3
"""Runs one kern command against a fake registry inside a network namespace of the caller's own
(`unshare -rn netns_registry.py ...`), where 10.254.0.1 is an address on that namespace's lo:
a host that is not loopback by kern's rules, yet reachable only inside the namespace, so that
nothing leaves the machine. Prints one JSON object: kern's exit code and stderr, and every
connection and request the registry (127.0.0.1) and the outside listener (10.254.0.1) saw.

    netns_registry.py MODE KERN ARGS...      (kern's stdin is passed on)

MODE: realm-outside   /v2/ asks for a bearer token from http://10.254.0.1:PORT/token
      realm-loopback  the same realm on http://127.0.0.1:PORT/token (the control)
      redirect-outside  every /v2/ request is redirected to http://10.254.0.1:PORT/...
      redirect-loopback the same redirect to http://127.0.0.1:PORT/... (the control)
      proxy-outside   the registry asks for basic credentials; the other listener on
                      10.254.0.1 answers the same way, as a proxy given in http_proxy would
The registry listens on 127.0.0.1:5000, the other listener on port 8080.
"""
import http.server
import json
import subprocess
import sys
import threading

OUTSIDE = "10.254.0.1"
# Fixed ports: the namespace is new, so they are free, and the caller can store credentials for
# 127.0.0.1:5000 before the run.
REGISTRY_PORT, OTHER_PORT = 5000, 8080


class Listener(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host, port, handler, log):
        self.log = log
        self.peer = None  # the other listener, for the realm and redirect URLs
        super().__init__((host, port), handler)

    def verify_request(self, request, client_address):
        self.log.append({"connection": client_address[0]})
        return True

    def url(self):
        return "http://%s:%d" % self.server_address[:2]


def make_handler(mode, role):
    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, code, body=b"", headers=()):
            self.send_response(code)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.server.log.append({"path": self.path, "authorization": self.headers.get("Authorization")})
            if mode == "proxy-outside":
                # A registry asking for basic credentials (and, as a proxy, answering the same).
                if self.headers.get("Authorization"):
                    return self.reply(200, b"{}")
                return self.reply(401, headers=[("WWW-Authenticate", 'Basic realm="fake"')])
            if role == "registry":
                if mode.startswith("redirect"):
                    return self.reply(302, headers=[("Location", self.server.peer.url() + self.path)])
                if self.headers.get("Authorization") == "Bearer tok":
                    return self.reply(200, b"{}")
                realm = self.server.peer.url() + "/token"
                return self.reply(401, headers=[("WWW-Authenticate", 'Bearer realm="%s",service="fake"' % realm)])
            if self.path.startswith("/token"):
                return self.reply(200, b'{"token":"tok"}', [("Content-Type", "application/json")])
            return self.reply(200, b"{}")
    return H


def main():
    mode, argv = sys.argv[1], sys.argv[2:]
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "addr", "add", OUTSIDE + "/32", "dev", "lo"], check=True)
    logs = {"registry": [], "other": []}
    registry = Listener("127.0.0.1", REGISTRY_PORT, make_handler(mode, "registry"), logs["registry"])
    other_host = OUTSIDE if mode.endswith("-outside") else "127.0.0.1"
    other = Listener(other_host, OTHER_PORT, make_handler(mode, "other"), logs["other"])
    registry.peer = other
    for srv in (registry, other):
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        p = subprocess.run(argv, stdin=sys.stdin, capture_output=True, text=True, timeout=60)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = "timeout", "", ""
    registry.shutdown()
    other.shutdown()
    json.dump({"rc": rc, "out": out, "err": err, "other_host": other_host, "registry": logs["registry"],
               "other": logs["other"]}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
