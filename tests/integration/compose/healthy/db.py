# A store that answers PING with PONG, after a moment (so that service_healthy has to wait).
import socketserver
import time


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        for raw in self.rfile:
            self.wfile.write(b"PONG\n" if raw.strip().upper() == b"PING" else b"ERR\n")


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


if __name__ == "__main__":
    time.sleep(2)
    with Server(("127.0.0.1", 6379), Handler) as srv:
        srv.serve_forever()
