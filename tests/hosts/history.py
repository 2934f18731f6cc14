# SPDX-License-Identifier: MIT
"""The history of one run: JSON lines, one event each, stamped with the
test's monotonic milliseconds since its start (`t`) and the real time
(`rt`, ms since the epoch: the store's clock on this machine; it is never
stepped by the test). What writes events here:

- every line a member or worker logs (kind "log"), every STATUS= and
  WATCHDOG=1 it sends to its notify socket (kinds "status", "pet");
- the lease watchers on each PostgreSQL host (kind "lease": the store's
  clock, whether that server is a primary, the lease row, job counts);
- the nemesis schedule (kind "nemesis", phases "start" and "end");
- after the run, the store's fenced write log and job tables (kinds
  "write", "run") as the final primary holds them."""

import json
import os
import socket
import threading
import time


class History:
    def __init__(self, path):
        self.path = path
        self.t0 = time.monotonic()
        self.rt0 = time.time()
        self.lock = threading.Lock()
        self.f = open(path, "w", buffering=1)

    def now_ms(self):
        return int((time.monotonic() - self.t0) * 1000)

    def add(self, kind, **fields):
        ev = {"t": self.now_ms(), "rt": int(time.time() * 1000), "kind": kind}
        ev.update(fields)
        with self.lock:
            self.f.write(json.dumps(ev, sort_keys=True) + "\n")
        return ev

    def note(self, text):
        """A harness line: on stderr with its timestamp, and in the history."""
        ev = self.add("harness", text=text)
        print("[%8.3f] %s" % (ev["t"] / 1000.0, text), flush=True)

    def close(self):
        with self.lock:
            self.f.close()


def read(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class NotifyRecorder:
    """A notify socket for one process: records STATUS= and WATCHDOG=1
    with their arrival time (the daemons run outside systemd, so this is
    the manager's view)."""

    def __init__(self, history, src, path):
        self.history, self.src, self.path = history, src, path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        os.chmod(path, 0o666)
        self.last_status = None
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                return
            for line in data.decode("utf-8", "replace").split("\n"):
                if line.startswith("STATUS="):
                    text = line[len("STATUS="):]
                    if text != self.last_status:
                        self.history.add("status", src=self.src, text=text)
                        self.last_status = text
                elif line == "WATCHDOG=1":
                    self.history.add("pet", src=self.src)
                elif line in ("READY=1", "STOPPING=1"):
                    self.history.add("notify", src=self.src, text=line)

    def close(self):
        self.sock.close()


class LineRecorder:
    """Every line of a process's stdout and stderr, as "log" events."""

    def __init__(self, history, src, stream, copy_path):
        self.history, self.src = history, src
        self.copy = open(copy_path, "a", buffering=1)
        self.thread = threading.Thread(target=self.loop, args=(stream,), daemon=True)
        self.thread.start()

    def loop(self, stream):
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            ev = self.history.add("log", src=self.src, text=line)
            self.copy.write("[%8.3f] %s\n" % (ev["t"] / 1000.0, line))
        self.copy.close()
