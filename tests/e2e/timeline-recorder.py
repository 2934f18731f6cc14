#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Stamps what an end-to-end run records with the time it was written.

The manager's log, the units' logs and the death records carry no times, so
this recorder watches them with inotify and writes every new line, stamped
with the wall clock in microseconds at the moment it appeared, to
<log dir>/events.tsv:

    <epoch_us> TAB <source file name> TAB <line>

and every file created in or removed from the fault-switch directory as

    <epoch_us> TAB fault-switch TAB create|delete <file name>

Runs until SIGTERM (the harness stops it at teardown); reads what is left
first. A line is at most 64 KiB; a longer one is cut.

    timeline-recorder.py <log dir> <fault-switch dir>
"""
import ctypes
import os
import select
import signal
import struct
import sys
import time

IN_MODIFY, IN_CREATE, IN_DELETE, IN_MOVED_TO = 0x2, 0x100, 0x200, 0x80
LINE_MAX = 65536
# What a field of events.tsv must not hold (the drawer reads it in
# universal-newline mode, so "\r" too ends a line): "\r" is dropped (CRLF
# logs), a tab or "\n" becomes a space.
ONE_FIELD = {ord("\t"): " ", ord("\n"): " ", ord("\r"): None}

libc = ctypes.CDLL(None, use_errno=True)


def now_us():
    return time.time_ns() // 1000


class Recorder:
    def __init__(self, log_dir, switch_dir):
        self.log_dir = log_dir
        self.switch_dir = switch_dir
        self.out = open(os.path.join(log_dir, "events.tsv"), "a", buffering=1, encoding="utf-8")
        self.offsets = {}  # file name -> bytes read
        self.partial = {}  # file name -> an unfinished line
        self.fd = libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
        if self.fd < 0:
            sys.exit("timeline-recorder: inotify_init1: %s" % os.strerror(ctypes.get_errno()))
        self.watches = {}
        for path, mask in ((log_dir, IN_MODIFY | IN_CREATE | IN_MOVED_TO),
                           (os.path.join(log_dir, "deaths"), IN_MODIFY | IN_CREATE),
                           (switch_dir, IN_CREATE | IN_DELETE)):
            wd = libc.inotify_add_watch(self.fd, path.encode(), mask)
            if wd >= 0:
                self.watches[wd] = path

    def emit(self, stamp, source, text):
        """One line of events.tsv: a tab or line break in the source (a
        file name) or the text (a file name too, for fault switches) would
        start another field or another event, so it becomes a space."""
        self.out.write("%d\t%s\t%s\n" % (stamp, source.translate(ONE_FIELD), text.translate(ONE_FIELD)))

    def read_new(self, directory, name, stamp):
        if name == "events.tsv" or name.endswith(".svg") or name.endswith(".png"):
            return
        path = os.path.join(directory, name)
        key = os.path.relpath(path, self.log_dir)
        try:
            with open(path, "rb") as f:
                f.seek(self.offsets.get(key, 0))
                data = f.read(1 << 20)
        except OSError:
            return
        if not data:
            return
        self.offsets[key] = self.offsets.get(key, 0) + len(data)
        text = self.partial.pop(key, b"") + data
        lines = text.split(b"\n")
        if lines[-1]:
            self.partial[key] = lines[-1][:LINE_MAX]
        for line in lines[:-1]:
            self.emit(stamp, key, line[:LINE_MAX].decode("utf-8", "replace"))

    def handle(self):
        try:
            buf = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        stamp = now_us()
        pos = 0
        while pos + 16 <= len(buf):
            wd, mask, _, length = struct.unpack_from("iIII", buf, pos)
            name = buf[pos + 16:pos + 16 + length].rstrip(b"\0").decode("utf-8", "replace")
            pos += 16 + length
            directory = self.watches.get(wd)
            if directory is None or not name:
                continue
            if directory == self.switch_dir:
                self.emit(stamp, "fault-switch", "%s %s" % ("create" if mask & IN_CREATE else "delete", name))
            elif not mask & IN_DELETE:
                self.read_new(directory, name, stamp)

    def drain(self):
        for directory in self.watches.values():
            if directory == self.switch_dir:
                continue
            for name in sorted(os.listdir(directory)):
                if os.path.isfile(os.path.join(directory, name)):
                    self.read_new(directory, name, now_us())


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    recorder = Recorder(sys.argv[1], sys.argv[2])
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    recorder.drain()
    while not stopping:
        try:
            ready, _, _ = select.select([recorder.fd], [], [], 0.5)
        except InterruptedError:
            continue
        if ready:
            recorder.handle()
    recorder.handle()
    recorder.drain()


if __name__ == "__main__":
    main()
