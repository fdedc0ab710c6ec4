# Reads the secret, appends a line to the named volume, serves the static files and the log.
import http.server
import os
import time

with open("/run/secrets/db_password") as f:
    password = f.read().strip()
with open("/data/boots.log", "a") as log:
    log.write("%d secret-length=%d\n" % (time.time(), len(password)))
os.chdir("/static")
http.server.ThreadingHTTPServer(("0.0.0.0", 8080), http.server.SimpleHTTPRequestHandler).serve_forever()
