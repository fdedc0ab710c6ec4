# A tiny key-value store: "GET k", "SET k v", "INCR k" lines over TCP, one answer line each.
import socketserver
import sys

DATA = {}


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        for raw in self.rfile:
            words = raw.decode().split()
            if not words:
                continue
            cmd, args = words[0].upper(), words[1:]
            if cmd == "SET" and len(args) == 2:
                DATA[args[0]] = args[1]
                answer = "OK"
            elif cmd == "GET" and len(args) == 1:
                answer = DATA.get(args[0], "")
            elif cmd == "INCR" and len(args) == 1:
                DATA[args[0]] = str(int(DATA.get(args[0], "0")) + 1)
                answer = DATA[args[0]]
            else:
                answer = "ERR"
            self.wfile.write((answer + "\n").encode())


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 6379
    with Server(("127.0.0.1", port), Handler) as srv:
        print("store listening on", port, flush=True)
        srv.serve_forever()
