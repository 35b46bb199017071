"""A file server on 127.0.0.1 for tests/tools: serves DIR, marks every answer
cacheable for ten minutes (so pip's HTTP cache keeps it), answers files without an
extension as JSON (npm's packuments), appends each request's path to LOG, and
writes its port to PORTFILE once it listens. Stops on SIGTERM.

Usage: python3 serve.py DIR PORTFILE LOG
"""
import functools
import http.server
import os
import signal
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self):
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def guess_type(self, path):
        if "." not in os.path.basename(path):
            return "application/json"
        return super().guess_type(path)

    def log_message(self, fmt, *args):
        with open(LOG, "a") as f:
            f.write(self.path + "\n")


DIR, PORTFILE, LOG = sys.argv[1:4]
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=DIR))
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
with open(PORTFILE + ".new", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORTFILE + ".new", PORTFILE)
server.serve_forever()
