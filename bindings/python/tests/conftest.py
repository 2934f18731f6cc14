# SPDX-License-Identifier: MIT
"""Fixtures of the binding's tests: a real AF_UNIX datagram socket posing
as the manager's notify socket, a clean watchdog environment, and
handles on the fake clock of the test library (fake-clock.c), which
SDLIVE_LIBRARY names when CTest runs these tests."""

import array
import os
import select
import shutil
import socket
import tempfile

import cffi
import pytest

ENV_KEYS = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")

_clock_ffi = cffi.FFI()
_clock_ffi.cdef("""
void sdlive_testclock_install(void *d);
void sdlive_testclock_advance(uint64_t usec);
uint64_t sdlive_testclock_now(void);
unsigned sdlive_testclock_wakeups(void);
""")


class FakeClock:
    """The test library's clock; times in seconds."""

    def __init__(self):
        path = os.environ.get("SDLIVE_LIBRARY")
        if not path:
            pytest.fail("SDLIVE_LIBRARY must name the test library (run through ctest)")
        self.lib = _clock_ffi.dlopen(path)
        try:
            self.lib.sdlive_testclock_now
        except AttributeError:
            pytest.fail("%s is not the test library with the fake clock" % path)

    def install(self, sup):
        """Puts sup on the fake clock: the library's and the cache of
        pet()'s (time.monotonic() there)."""
        self.lib.sdlive_testclock_install(sup.handle)
        sup._mono = self.now
        sup._forget_due()
        return sup

    def advance(self, seconds):
        self.lib.sdlive_testclock_advance(int(round(seconds * 1e6)))

    def now(self):
        return self.lib.sdlive_testclock_now() / 1e6

    def wakeups(self):
        return self.lib.sdlive_testclock_wakeups()


class Manager:
    """A bound, non-blocking datagram socket; NOTIFY_SOCKET points at it."""

    def __init__(self, abstract=False):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        self.dir = None
        if abstract:
            name = "sdlive-pytest-%d-%s" % (os.getpid(), os.urandom(4).hex())
            self.sock.bind("\0" + name)
            self.address = "@" + name
        else:
            self.dir = tempfile.mkdtemp(prefix="sdlive-py.")
            self.address = os.path.join(self.dir, "notify")
            self.sock.bind(self.address)
        self.sock.setblocking(False)

    def close(self):
        self.sock.close()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def recv(self, timeout=0.0):
        """The next datagram as text, or None when none came in timeout."""
        r, _, _ = select.select([self.sock], [], [], timeout)
        if not r:
            return None
        return self.sock.recv(65536).decode("utf-8", "surrogateescape")

    def recv_fds(self, timeout=1.0, max_fds=300):
        """(text, [fds]) of the next datagram, taking its SCM_RIGHTS fds."""
        r, _, _ = select.select([self.sock], [], [], timeout)
        assert r, "no datagram arrived"
        fds = array.array("i")
        msg, anc, flags, _ = self.sock.recvmsg(
            65536, socket.CMSG_SPACE(max_fds * fds.itemsize))
        assert not flags & socket.MSG_CTRUNC
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - (len(data) % fds.itemsize)])
        return msg.decode(), list(fds)

    def drain(self):
        """Every queued datagram, as text."""
        out = []
        while True:
            m = self.recv()
            if m is None:
                return out
            out.append(m)


@pytest.fixture
def clean_env(monkeypatch):
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    return monkeypatch


@pytest.fixture
def manager(clean_env):
    m = Manager()
    clean_env.setenv("NOTIFY_SOCKET", m.address)
    yield m
    m.close()


@pytest.fixture
def armed(manager, clean_env):
    """manager, with WATCHDOG_USEC set by the test through armed(usec)."""
    def arm(watchdog_seconds, pid=None):
        clean_env.setenv("WATCHDOG_USEC", str(int(watchdog_seconds * 1e6)))
        if pid is not None:
            clean_env.setenv("WATCHDOG_PID", str(pid))
        return manager
    return arm


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def fake_sup(clock):
    """make(**options): a Supervisor on the fake clock, closed after the test."""
    import sdlive
    made = []

    def make(**options):
        sup = clock.install(sdlive.Supervisor(**options))
        made.append(sup)
        return sup
    yield make
    for sup in made:
        sup.close()
