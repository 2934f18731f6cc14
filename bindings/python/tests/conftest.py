# SPDX-License-Identifier: MIT
"""Fixtures of the binding's tests: a real AF_UNIX datagram socket posing
as the manager's notify socket, a clean watchdog environment, and
handles on the fake clock of the test library (fake_clock.c), which
SDLIVE_LIBRARY names.

The suite runs against the test library of a build (CTest sets it all:
ctest --test-dir build -L python). Run plainly, `python3 -m pytest`
stops at once, before any test, with one line saying what it needs
unless SDLIVE_LIBRARY names that library; the other paths the tests use
are then read from the file the build writes next to it
(sdlive-pytest.env), and the package under test is this directory's
parent, for the interpreters the tests start too."""

import array
import os
import select
import shutil
import socket
import sys
import tempfile

import pytest

ENV_KEYS = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")

NEEDS_LIBRARY = (
    "sdlive tests need SDLIVE_LIBRARY=<build>/bindings/python/tests/libsdlive-pytest-clock.so "
    "(the test library with a fake clock); run them with: ctest --test-dir build -L python")
# The file the build writes next to the test library: KEY=path lines for
# the libraries test_loading.py loads (tests/CMakeLists.txt).
BUILD_ENV_FILE = "sdlive-pytest.env"
BUILD_ENV_KEYS = ("SDLIVE_REAL_LIBRARY", "SDLIVE_OLD_LIBRARY")
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

CLOCK_CDEF = """
void sdlive_testclock_install(void *d);
void sdlive_testclock_advance(uint64_t usec);
uint64_t sdlive_testclock_now(void);
unsigned sdlive_testclock_wakeups(void);
"""
_clock_ffi = None


def clock_ffi():
    global _clock_ffi
    if _clock_ffi is None:
        import cffi
        _clock_ffi = cffi.FFI()
        _clock_ffi.cdef(CLOCK_CDEF)
    return _clock_ffi


def has_fake_clock(path):
    """True when path loads and has the test library's clock."""
    try:
        lib = clock_ffi().dlopen(path)
        lib.sdlive_testclock_now
    except (OSError, AttributeError):
        return False
    return True


def read_build_env(library):
    """The KEY=path lines of the build's file next to library, for the
    keys the tests read (others are ignored); {} when there is none."""
    found = {}
    try:
        with open(os.path.join(os.path.dirname(library), BUILD_ENV_FILE), encoding="utf-8") as f:
            for line in f:
                key, sep, value = line.rstrip("\n").partition("=")
                if sep and key in BUILD_ENV_KEYS and value:
                    found[key] = value
    except OSError:
        pass
    return found


def pytest_configure(config):
    """Stops the run, before any test, unless SDLIVE_LIBRARY names the
    test library; then completes what the tests read from the environment
    where the caller left it unset."""
    try:
        import cffi  # noqa: F401
    except ImportError:
        pytest.exit("sdlive tests need cffi in %s (Debian: python3-cffi)" % sys.executable,
                    returncode=pytest.ExitCode.USAGE_ERROR)
    library = os.environ.get("SDLIVE_LIBRARY")
    if not library or not has_fake_clock(library):
        pytest.exit(NEEDS_LIBRARY, returncode=pytest.ExitCode.USAGE_ERROR)
    if os.sep in library:  # a path: the same file for tests that change directory
        os.environ["SDLIVE_LIBRARY"] = library = os.path.abspath(library)
    for key, value in read_build_env(library).items():
        os.environ.setdefault(key, value)
    # The package under test: here and in the interpreters tests start.
    if not any(p and os.path.realpath(p) == PACKAGE_DIR for p in sys.path):
        sys.path.insert(0, PACKAGE_DIR)
    path = os.environ.get("PYTHONPATH", "")
    if not any(p and os.path.realpath(p) == PACKAGE_DIR for p in path.split(os.pathsep)):
        os.environ["PYTHONPATH"] = PACKAGE_DIR + (os.pathsep + path if path else "")


class FakeClock:
    """The test library's clock; times in seconds."""

    def __init__(self):
        path = os.environ.get("SDLIVE_LIBRARY")
        if not path:
            pytest.fail(NEEDS_LIBRARY)
        self.lib = clock_ffi().dlopen(path)
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
