#!/usr/bin/env python3
"""An OTLP/HTTP receiver on 127.0.0.1 for the benchmarks: takes every request, answers 200 and
keeps nothing. Prints its port; stops by itself after LIFETIME seconds (default 3 hours).

usage: otlp_sink.py [LIFETIME]
"""

import http.server
import sys
import threading


class Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
print(server.server_address[1], flush=True)
threading.Timer(float(sys.argv[1]) if len(sys.argv) > 1 else 3 * 3600, server.shutdown).start()
server.serve_forever()
