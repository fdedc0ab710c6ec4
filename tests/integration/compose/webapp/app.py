# The web page: counts its hits in the store and answers "Hello! I have been seen N times."
import http.server
import os
import socket

STORE = (os.environ.get("STORE_HOST", "127.0.0.1"), int(os.environ.get("STORE_PORT", "6379")))


def hits():
    with socket.create_connection(STORE, timeout=5) as s:
        s.sendall(b"INCR hits\n")
        return s.makefile().readline().strip()


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("Hello from %s! I have been seen %s times.\n" % (os.environ.get("GREETING_FROM", "kern"), hits())).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    http.server.ThreadingHTTPServer(("0.0.0.0", int(os.environ.get("PORT", "8000"))), Page).serve_forever()
