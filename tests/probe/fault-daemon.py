#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A daemon that does not pet and knows nothing of sdlive, for the
sdlive-probe e2e scenarios: an HTTP server, a raw TCP listener and a
heartbeat file, each of which a fault file can break.

  fault-daemon.py --fault-file F [--http-port P] [--tcp-port P] [--beat PATH]
                  [--start-delay SEC]

F holds one word, read at each request, accept and beat: "ok" (or no file),
"500" (HTTP answers 500 with a body), "hang" (HTTP requests never get an
answer), "no-accept" (the TCP listener stops accepting), "stale" (the
heartbeat file is no longer touched). SIGTERM: logs it and exits 0."""
import argparse
import http.server
import os
import signal
import socket
import sys
import threading
import time


def fault(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return "ok"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fault-file", required=True)
    p.add_argument("--http-port", type=int)
    p.add_argument("--tcp-port", type=int)
    p.add_argument("--beat")
    p.add_argument("--start-delay", type=float, default=0)
    a = p.parse_args()

    def on_term(signum, frame):
        print(f"fault-daemon {os.getpid()}: got SIGTERM, exiting", flush=True)
        os._exit(0)
    signal.signal(signal.SIGTERM, on_term)
    print(f"fault-daemon {os.getpid()}: starting (delay {a.start_delay}s)", flush=True)
    time.sleep(a.start_delay)

    if a.beat:
        def beat():
            while True:
                if fault(a.fault_file) != "stale":
                    with open(a.beat, "a"):
                        os.utime(a.beat)
                time.sleep(0.1)
        threading.Thread(target=beat, daemon=True).start()

    if a.tcp_port:
        # A backlog of 1: once accepting stops, two handshakes fill the
        # queue and the next connect waits (times out).
        lsock = socket.socket()
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsock.bind(("127.0.0.1", a.tcp_port))
        lsock.listen(1)

        def accept():
            while True:
                if fault(a.fault_file) == "no-accept":
                    time.sleep(0.05)
                    continue
                lsock.settimeout(0.05)
                try:
                    c, _ = lsock.accept()
                    c.close()
                except socket.timeout:
                    pass
        threading.Thread(target=accept, daemon=True).start()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            mode = fault(a.fault_file)
            if mode == "hang":
                threading.Event().wait()
            code = 500 if mode == "500" else 200
            body = b"database unreachable\n" if code == 500 else b"ok\n"
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    print(f"fault-daemon {os.getpid()}: serving", flush=True)
    if a.http_port:
        http.server.ThreadingHTTPServer(("127.0.0.1", a.http_port), Handler).serve_forever()
    threading.Event().wait()


if __name__ == "__main__":
    sys.exit(main())
