# SPDX-License-Identifier: MIT
"""Supervisor: one libsdlive handle, the service as the manager sees it."""

from __future__ import annotations

import asyncio
import enum
import errno
import os
import math
import select
import threading
import time
import weakref
from typing import (TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Literal, Optional, Protocol, Set,
                    Tuple, Union, cast)

from . import _lib
from ._errors import Seconds, SdliveError, Text, check, cstring, seconds, usec
from ._lib import CData
from ._lifetime import Lifetime
from ._loaded import ffi, lib

if TYPE_CHECKING:
    from .aio import _LoopState
    from .peer import Peer
    from .progress import Progress

__all__ = ["Supervisor", "Wake", "NotifyAccess"]


class Wake(enum.IntEnum):
    """Why idle() or wait_fd() returned. Only TIMEOUT is false."""
    TIMEOUT = 0
    STOP = 1
    FD = 2


class NotifyAccess(enum.IntEnum):
    """Values of NotifyAccess= for Supervisor.notify_access()."""
    NONE = 0
    MAIN = 1
    EXEC = 2
    ALL = 3


# A handle that is already closed: what a Supervisor holds until
# sdlive_new() has succeeded.
_CLOSED = Lifetime(ffi.NULL, lambda pointer: None)
_CLOSED.close()

class HasFileno(Protocol):
    """A file, socket or anything else with fileno()."""

    def fileno(self) -> int: ...


# A descriptor: its number, or an object that has one.
FileLike = Union[int, HasFileno]

_current: List[Supervisor] = []
# Reentrant: close() may run in a signal handler of the thread holding it.
_current_lock = threading.RLock()


class Supervisor:
    """A daemon's link to its service manager over libsdlive.

    The environment (NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID) is read
    once, here. Outside systemd every call is a cheap no-op that reports
    "not sent". As a context manager it sends READY=1 on entry and
    STOPPING=1 on exit, then releases the handle.

    handle_signals: SIGTERM and SIGINT request a stop (idle() returns
    within a millisecond) instead of Python's default handling; at most one
    Supervisor per process may own them (SdliveError EBUSY); close()
    restores the previous handlers. For asyncio, prefer
    add_signal_handlers(), which also wakes idle_async().
    unset_watchdog_env: remove WATCHDOG_USEC/WATCHDOG_PID from the
    environment so child processes do not inherit the watchdog.
    trigger_on_stall: send WATCHDOG=trigger as soon as a progress loop goes
    stale instead of waiting for WatchdogSec= to run out.
    pet_interval: seconds between keepalives (default WatchdogSec / 6);
    also tracks pets outside systemd.

    Threads: every method may be called from any thread, close() too: a
    call in flight in another thread keeps the handle alive until it
    returns (a wait returns Wake.STOP at once), and later calls act as
    outside systemd. Peers and progress loops keep their Supervisor, and
    so the handle, alive; closing it closes them. Blocking calls (idle,
    wait_fd, barrier) release the GIL.
    Fork: in a child process (os.fork, multiprocessing's fork) the inherited
    Supervisor speaks for nobody: it sends nothing and pets nothing, so a
    child cannot keep a wedged parent alive. Create a new Supervisor in the
    child if it must speak for the service.
    """

    def __init__(self, *, handle_signals: bool = False, unset_watchdog_env: bool = False,
                 trigger_on_stall: bool = False, pet_interval: Optional[Seconds] = None) -> None:
        # What close() and __del__ see if this fails: already closed.
        self._life = _CLOSED
        flags = 0
        if handle_signals:
            flags |= _lib.HANDLE_SIGNALS
        if unset_watchdog_env:
            flags |= _lib.UNSET_WATCHDOG_ENV
        if trigger_on_stall:
            flags |= _lib.TRIGGER_ON_STALL
        opts = ffi.new("sdlive_options *")
        opts.size = ffi.sizeof("sdlive_options")
        opts.flags = flags
        opts.pet_interval_usec = 0 if pet_interval is None else usec(
            pet_interval, "pet_interval", forever=False)
        if pet_interval is not None and opts.pet_interval_usec == 0:
            raise ValueError("pet_interval: must be > 0 (None for the default)")
        ret = ffi.new("sdlive **")
        check(lib.sdlive_new(ret, opts), "sdlive_new")
        # Every call on the handle, and every peer and progress loop made
        # from it, counts as a user: the handle is freed after the last.
        self._life = Lifetime(ret[0], lib.sdlive_free)
        if unset_watchdog_env:
            # The library's unsetenv() does not reach os.environ's copy, which
            # subprocess and os.fork+exec children inherit.
            os.environ.pop("WATCHDOG_USEC", None)
            os.environ.pop("WATCHDOG_PID", None)
        self._pid = os.getpid()
        self._progress: Set[Progress] = set()
        self._peers: weakref.WeakSet[Peer] = weakref.WeakSet()
        # asyncio.py's state: one per event loop in use, and the loops
        # attach_loop() attached.
        self._async: Dict[asyncio.AbstractEventLoop, _LoopState] = {}
        self._attached: List[Tuple[asyncio.AbstractEventLoop, _LoopState]] = []
        # Reentrant: request_stop() may run in a signal handler of the thread
        # that holds it.
        self._async_lock = threading.RLock()
        # The next keepalive's time (seconds on time.monotonic(), which is
        # the library's CLOCK_MONOTONIC), cached so that a not-due pet()
        # costs one monotonic() call and no foreign call; see pet().
        self._mono: Callable[[], float] = time.monotonic
        self._due = 0.0
        self._due_lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------

    def close(self) -> None:
        """Releases the handle, its descriptors, its progress loops and its
        peers. Idempotent, and safe from any thread: a call running in
        another thread finishes first (an idle() or wait_fd() there
        returns Wake.STOP at once) and the handle is freed when the last
        such call returns. Afterwards every call acts as outside systemd,
        except idle() and wait_fd(), which raise SdliveError EBADF, and the
        peers, which raise it too."""
        with _current_lock:
            while self in _current:
                _current.remove(self)
        # Closed first, so that nothing new registers; a wait in flight is
        # woken (sdlive_request_stop() is safe against any call).
        if not self._life.close(while_in_use=lib.sdlive_request_stop):
            return
        # The next pet() asks the closed handle (0: not sent). No lock: a
        # signal handler may close in a thread inside pet().
        self._due = 0.0
        for p in list(self._progress):
            p._forget()
        self._progress.clear()
        for peer in list(self._peers):
            peer.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> Supervisor:
        with _current_lock:
            _current.append(self)
        self.ready()
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        try:
            self.stopping()
        finally:
            self.close()
        return False

    @staticmethod
    def current() -> Optional[Supervisor]:
        """The most recently entered Supervisor still open, or None (what
        sdlive.progress() binds to)."""
        with _current_lock:
            return _current[-1] if _current else None

    @property
    def handle(self) -> CData:
        """The C handle (cffi cdata "sdlive *"), NULL once closed. Calls of
        your own on it are not counted: it may be freed under them once
        close() has run."""
        return ffi.NULL if self._life.closed else self._life._pointer

    def _call(self, function: CData, *args: Any) -> int:
        """function(handle, *args) with the handle kept alive meanwhile
        (ffi.NULL once closed: the library's answer outside systemd). Every
        function of the handle returns an integer."""
        with self._life as h:
            r: int = function(h, *args)
            return r

    def _child(self, create: Callable[[CData], CData], destroy: Callable[[CData], object],
               closed: Callable[[], BaseException]) -> Lifetime:
        """The Lifetime of a C object made from the handle (a peer, a
        progress loop): create(handle) makes it, destroy(pointer) frees
        it. It holds the handle, as a user, until it is freed; closed() is
        the exception raised when the handle already is."""
        h = self._life.hold()
        try:
            if h == ffi.NULL:
                raise closed()
            pointer = create(h)
        except BaseException:
            self._life.release()
            raise
        handle_life = self._life

        def free(p: CData) -> None:
            destroy(p)
            handle_life.release()
        return Lifetime(pointer, free)

    @property
    def owned(self) -> bool:
        """False in a process other than the one that created it."""
        return os.getpid() == self._pid

    # -- state -------------------------------------------------------------

    def supervised(self) -> bool:
        """True when NOTIFY_SOCKET names a socket (and this is the creating
        process). Raises SdliveError when NOTIFY_SOCKET is malformed."""
        return check(self._call(lib.sdlive_supervised), "sdlive_supervised") > 0

    def watchdog_enabled(self) -> Optional[float]:
        """WatchdogSec in seconds when the watchdog is armed, else None.
        Raises SdliveError when WATCHDOG_USEC/WATCHDOG_PID were malformed
        (EINVAL) or out of range (ERANGE)."""
        out = ffi.new("uint64_t *")
        if check(self._call(lib.sdlive_watchdog_enabled, out), "sdlive_watchdog_enabled") == 0:
            return None
        return seconds(out[0])

    @property
    def pet_interval(self) -> Optional[float]:
        """Seconds between keepalives, None when pets are not tracked."""
        v = self._call(lib.sdlive_pet_interval)
        return None if v == 0 else seconds(v)

    @property
    def next_due(self) -> Optional[float]:
        """time.monotonic() instant of the next keepalive, None when pets
        are not tracked."""
        v = self._call(lib.sdlive_watchdog_next_due)
        return None if v == _lib.UINT64_MAX else seconds(v)

    def last_pet_age(self) -> Optional[float]:
        """Seconds since the last healthy keepalive, None when pets are
        not tracked. Grows while nothing pets or a progress loop stalls."""
        out = ffi.new("uint64_t *")
        r = self._call(lib.sdlive_last_pet_age, out)
        if r == -errno.ENODATA:
            return None
        check(r, "sdlive_last_pet_age")
        return seconds(out[0])

    def watchdog_fd(self) -> Optional[int]:
        """A timerfd that polls readable when a keepalive is due (then call
        pet(), which re-arms it); owned by the Supervisor, do not close it.
        None when pets are not tracked."""
        r = self._call(lib.sdlive_watchdog_fd)
        if r == -errno.ENODATA:
            return None
        return check(r, "sdlive_watchdog_fd")

    # -- notify ------------------------------------------------------------

    def ready(self) -> bool:
        """READY=1. True when sent, False when not supervised."""
        return check(self._call(lib.sdlive_notify_ready), "sdlive_notify_ready") > 0

    def stopping(self) -> bool:
        """STOPPING=1."""
        return check(self._call(lib.sdlive_notify_stopping), "sdlive_notify_stopping") > 0

    def reloading(self) -> bool:
        """RELOADING=1 with MONOTONIC_USEC= (Type=notify-reload); call
        ready() when the reload is done."""
        return check(self._call(lib.sdlive_notify_reloading), "sdlive_notify_reloading") > 0

    def status(self, text: Text) -> bool:
        """STATUS=text, one line: control characters become spaces, the text
        is cut to one datagram. Kept and sent again when a stalled progress
        loop recovers."""
        data = ffi.new("char[]", cstring(text, "status"))
        return check(self._call(lib.sdlive_notify_status, b"%s", data), "sdlive_notify_status") > 0

    def notify_errno(self, error: int) -> bool:
        """ERRNO=error (a positive errno value)."""
        return check(self._call(lib.sdlive_notify_errno, _int(error, "error")),
                     "sdlive_notify_errno") > 0

    def extend_timeout(self, seconds_: Seconds) -> bool:
        """EXTEND_TIMEOUT_USEC=: asks for more start/stop/runtime time."""
        return check(self._call(lib.sdlive_notify_extend_timeout,
            usec(seconds_, "extend_timeout", forever=False)),
            "sdlive_notify_extend_timeout") > 0

    def barrier(self, timeout: Optional[Seconds] = None) -> bool:
        """BARRIER=1: returns True once the manager has processed every
        message sent before; False when not supervised. Blocks up to
        timeout seconds (None: no limit), releasing the GIL; raises
        SdliveError ETIMEDOUT when it runs out."""
        return check(self._call(lib.sdlive_notify_barrier, usec(timeout, "barrier")),
                     "sdlive_notify_barrier") > 0

    def mainpid(self, pid: int) -> bool:
        """MAINPID=pid (> 1)."""
        return check(self._call(lib.sdlive_notify_mainpid, _int(pid, "pid")),
                     "sdlive_notify_mainpid") > 0

    def exit_status(self, status: int) -> bool:
        """EXIT_STATUS=status (0..255)."""
        return check(self._call(lib.sdlive_notify_exit_status, _int(status, "status")),
                     "sdlive_notify_exit_status") > 0

    def bus_error(self, name: Text) -> bool:
        """BUSERROR=name, a D-Bus error name."""
        return check(self._call(lib.sdlive_notify_bus_error, cstring(name, "bus_error")),
                     "sdlive_notify_bus_error") > 0

    def notify_access(self, access: Union[NotifyAccess, int, str]) -> bool:
        """NOTIFYACCESS=: a NotifyAccess value (or its name, "main")."""
        if isinstance(access, str):
            try:
                access = NotifyAccess[access.upper()]
            except KeyError:
                raise ValueError("notify_access: unknown access %r" % access) from None
        return check(self._call(lib.sdlive_notify_access, _int(access, "access")),
                     "sdlive_notify_access") > 0

    def notify_raw(self, key: Text, value: Text) -> bool:
        """KEY=VALUE for a field with no call of its own (validated). A
        field the library has a call for (READY, WATCHDOG, STATUS, MAINPID,
        FDSTORE, BARRIER, ...) raises SdliveError with EPERM: its own
        call's checks, the progress gate included, cannot be bypassed."""
        return check(self._call(lib.sdlive_notify_raw, cstring(key, "key"),
                                            cstring(value, "value")), "sdlive_notify_raw") > 0

    def fdstore(self, fds: Union[FileLike, Iterable[FileLike]], name: Optional[Text] = None,
                poll: bool = True) -> bool:
        """Hands descriptors (ints or objects with fileno()) to the
        manager's FD store (FileDescriptorStoreMax= in the unit). They stay
        open and yours to close. poll=False: FDPOLL=0."""
        items: Iterable[FileLike]
        if isinstance(fds, int) or hasattr(fds, "fileno"):
            items = [cast(FileLike, fds)]
        else:
            items = fds
        numbers = [f if isinstance(f, int) else f.fileno() for f in items]
        if any(isinstance(f, bool) for f in numbers):
            raise TypeError("fdstore: descriptors must be ints")
        if len(numbers) > _lib.NOTIFY_FDS_MAX:
            raise SdliveError(errno.EINVAL, "sdlive_notify_fdstore")
        array = ffi.new("int[]", numbers) if numbers else ffi.NULL
        name_c = cstring(name, "name", allow_none=True)
        return check(self._call(
            lib.sdlive_notify_fdstore, array, len(numbers), ffi.NULL if name_c is None else name_c,
            0 if poll else _lib.FDSTORE_NO_POLL), "sdlive_notify_fdstore") > 0

    def fdstore_remove(self, name: Text) -> bool:
        """FDSTOREREMOVE=1: the manager closes every stored fd of that name."""
        return check(self._call(lib.sdlive_notify_fdstore_remove, cstring(name, "name")),
                     "sdlive_notify_fdstore_remove") > 0

    # -- watchdog ----------------------------------------------------------

    def pet(self) -> bool:
        """Sends WATCHDOG=1 if a keepalive is due: True when sent. Call it
        as often as you like from any thread: at most one keepalive goes
        out per interval. While a registered progress loop is stalled the
        keepalive is withheld (False). A failed send raises SdliveError
        (EAGAIN: the manager's queue is full); the next pet tries again.

        Not due, it costs one time.monotonic() call: the time the library
        gives for the next keepalive is cached here, and the library is
        called only once it has come. The cache is only ever early, never
        late: the library moves that time later on its own (a pet in
        idle() or another thread: the call then finds nothing due and
        refreshes it), and every call of this binding that can move it
        earlier refreshes it (set_watchdog_timeout(); while a loop is
        stalled nothing is cached, so its recovery beat is seen at once)."""
        if self._mono() < self._due:
            return False
        return self._pet_due()

    def _pet_due(self) -> bool:
        with self._due_lock, self._life as h:
            r: int = lib.sdlive_pet_watchdog(h)
            if r < 0:
                self._due = 0.0
                raise SdliveError(-r, "sdlive_pet_watchdog")
            self._cache_due_locked(h, r)
            return r > 0

    def _cache_due_locked(self, h: CData, sent: int = 1) -> None:
        if sent == 0 and lib.sdlive_progress_stalled(h, ffi.NULL, 0) > 0:
            self._due = 0.0  # withheld: ask the library every time
            return
        due = lib.sdlive_watchdog_next_due(h)
        self._due = math.inf if due == _lib.UINT64_MAX else due / 1e6

    def _forget_due(self) -> None:
        """The library's schedule moved (its clock was replaced, say):
        the next pet() asks it."""
        with self._due_lock:
            self._due = 0.0

    def watchdog_trigger(self) -> bool:
        """WATCHDOG=trigger: the manager acts as if the watchdog ran out."""
        return check(self._call(lib.sdlive_watchdog_trigger), "sdlive_watchdog_trigger") > 0

    def set_watchdog_timeout(self, seconds_: Seconds) -> bool:
        """WATCHDOG_USEC=: arms the watchdog at that timeout; the pet
        interval follows (a sixth of it) unless it was set."""
        value = usec(seconds_, "set_watchdog_timeout", forever=False)
        with self._due_lock:
            try:
                return check(self._call(lib.sdlive_watchdog_set_timeout, value),
                             "sdlive_watchdog_set_timeout") > 0
            finally:
                self._due = 0.0

    # -- idle and stop -----------------------------------------------------

    def idle(self, seconds_: Optional[Seconds] = None) -> Wake:
        """Sleeps for seconds (None: until stopped), petting when a
        keepalive is due and waking for nothing else. Returns Wake.STOP
        within a millisecond of a stop request, else Wake.TIMEOUT. The
        GIL is released meanwhile: other threads run."""
        limit = usec(seconds_, "idle")
        with self._life as h:
            return Wake(check(lib.sdlive_idle(_open(h), limit), "sdlive_idle"))

    def wait_fd(self, fd: FileLike, events: int = select.POLLIN,
                seconds_: Optional[Seconds] = None) -> Wake:
        """As idle(), but also returns Wake.FD as soon as fd (an int or an
        object with fileno()) polls ready for events."""
        if not isinstance(fd, int):
            fd = fd.fileno()
        mask, limit = _short(events), usec(seconds_, "wait_fd")
        with self._life as h:
            return Wake(check(lib.sdlive_wait_fd(_open(h), fd, mask, limit), "sdlive_wait_fd"))

    def request_stop(self) -> None:
        """Wakes every idle()/wait_fd()/idle_async() now and later. Any
        thread; from a Python signal handler too."""
        self._call(lib.sdlive_request_stop)
        with self._async_lock:
            waiters = [w for state in self._async.values() for w in state.waiters]
        for loop, fut in waiters:
            try:
                loop.call_soon_threadsafe(_resolve, fut, Wake.STOP)
            except RuntimeError:
                pass  # that loop is closed

    @property
    def stop_requested(self) -> bool:
        """True once a stop was requested."""
        return self._call(lib.sdlive_stopping) > 0

    # -- progress ----------------------------------------------------------

    def progress(self, name: Text, max_silence: Seconds) -> Progress:
        """A progress loop that must beat at least every max_silence
        seconds while it runs: see sdlive.Progress. Use it as a context
        manager, a decorator, or iterate(); while it is stalled keepalives
        are withheld and STATUS= names it."""
        from .progress import Progress
        return Progress(name, max_silence, self)

    def stalled(self) -> Optional[str]:
        """The name of a progress loop silent past its limit, else None."""
        buf = ffi.new("char[]", _lib.PROGRESS_NAME_MAX + 1)
        r = check(self._call(lib.sdlive_progress_stalled, buf, len(buf)), "sdlive_progress_stalled")
        return ffi.string(buf).decode("utf-8", "replace") if r > 0 else None

    def peer(self, timeout: Optional[Seconds] = None,
             heartbeat: Optional[Seconds] = None) -> Peer:
        """A connection's liveness state: see sdlive.Peer."""
        from .peer import Peer
        return Peer(self, timeout, heartbeat)

    # -- asyncio -----------------------------------------------------------

    async def idle_async(self, seconds_: Optional[Seconds] = None) -> Wake:
        """As idle(), for a coroutine: the event loop pets through the
        watchdog fd (loop.add_reader, no thread), so a blocked event loop
        withholds keepalives. Returns Wake.STOP as soon as request_stop()
        is called (add_signal_handlers() makes SIGTERM do that)."""
        from .aio import idle_async
        return await idle_async(self, seconds_)

    def attach_loop(self, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
        """Pets from the event loop whenever a keepalive is due, until
        detach_loop(): keepalives then stop when the loop blocks."""
        from .aio import attach
        attach(self, loop)

    def detach_loop(self, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
        """Undoes one attach_loop()."""
        from .aio import detach
        detach(self, loop)

    def add_signal_handlers(self, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
        """SIGTERM and SIGINT request a stop through the event loop."""
        from .aio import add_signal_handlers
        add_signal_handlers(self, loop)


def _open(h: CData) -> CData:
    """h, for a call that needs an open handle: a closed Supervisor cannot
    wait (the library would answer EINVAL for its NULL handle)."""
    if h == ffi.NULL:
        raise SdliveError(errno.EBADF, "sdlive: the Supervisor is closed")
    return h


def _resolve(fut: asyncio.Future[Wake], value: Wake) -> None:
    if not fut.done():
        fut.set_result(value)


def _int(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s: an int is needed, not %s" % (what, type(value).__name__))
    if not -(1 << 31) <= value < (1 << 31):
        raise OverflowError("%s: %d does not fit a C int" % (what, value))
    return value


def _short(value: int) -> int:
    value = int(value)
    if not 0 <= value < (1 << 15):
        raise ValueError("events: %#x is not a poll() event mask" % value)
    return value

