# Exit 0 when the store answers PING: the health check of db.
import socket
import sys

try:
    with socket.create_connection(("127.0.0.1", 6379), timeout=2) as s:
        s.sendall(b"PING\n")
        sys.exit(0 if s.makefile().readline().strip() == "PONG" else 1)
except OSError:
    sys.exit(1)
