# SPDX-License-Identifier: MIT
"""Progress loops: keepalives only while every registered loop moves."""

import functools
import inspect
import threading

from ._errors import check, cstring, seconds, usec
from ._loaded import ffi, lib
from .supervisor import _CLOSED

__all__ = ["Progress", "progress"]


class Progress:
    """A loop that must beat at least every max_silence seconds while it
    runs. While it is silent past that, the Supervisor's keepalives are
    withheld (the watchdog then restarts the service) and STATUS= names
    it; a pet thread elsewhere cannot keep a stuck loop alive.

    Three ways to use it:

      with sup.progress("scan", 30) as loop:        # registered inside
          for entry in loop.iterate(entries):        # beats per item
              clean(entry)

      @sup.progress("request", 5)                    # each call must end
      def handle(request): ...                       # within 5 s

      @sdlive.progress("pass", 30)                   # bound to the current
      def maintenance_pass(self):                    # Supervisor.current()
          ...

    As a decorator (the wrapper's .progress is this object, for beats
    inside a long call), the loop is registered on the first call and stays
    registered until the Supervisor closes: it beats when a call starts
    and is parked (waiting, not stalled) once no call is running. A
    generator or async generator beats on each item it yields; an async
    function as a plain one. The context manager also works with
    `async with`, and aiterate() beats per item of an async iterable.
    """

    def __init__(self, name, max_silence, supervisor=None):
        self.name = name
        self._name_c = cstring(name, "progress name")
        if not self._name_c:
            raise ValueError("progress name: must not be empty")
        self.max_silence = max_silence
        self._max_usec = usec(max_silence, "max_silence", forever=False)
        if self._max_usec == 0:
            raise ValueError("max_silence: must be > 0")
        self._sup = supervisor
        self._late = supervisor is None
        # The registration: closed while unregistered. Each registration
        # counts as a user of the Supervisor's handle until it is freed.
        self._life = _CLOSED
        self._lock = threading.RLock()
        self._active = 0

    def __repr__(self):
        return "<sdlive.Progress %r max_silence=%r%s>" % (
            self.name, self.max_silence, "" if self.registered else " unregistered")

    # -- registration ------------------------------------------------------

    @property
    def registered(self):
        return not self._life.closed

    def register(self):
        """Registers the loop (it starts as just beaten). Idempotent.
        Raises SdliveError ENOSPC when 32 loops are registered already."""
        with self._lock:
            self._register_locked()
        return self

    def _register_locked(self):
        if not self._life.closed:
            return
        if self._late and (self._sup is None or self._sup.handle == ffi.NULL):
            from .supervisor import Supervisor
            self._sup = Supervisor.current()
            if self._sup is None:
                raise RuntimeError("sdlive.progress(%r): no Supervisor is open; enter one "
                                   "(with sdlive.Supervisor() as sup) or use sup.progress()"
                                   % self.name)
        def create(h):
            ret = ffi.new("sdlive_progress **")
            check(lib.sdlive_progress_register(h, self._name_c, self._max_usec, ret),
                  "sdlive_progress_register")
            return ret[0]
        self._life = self._sup._child(
            create, lib.sdlive_progress_unregister,
            lambda: RuntimeError("sdlive.progress(%r): its Supervisor is closed" % self.name))
        self._sup._progress.add(self)

    def unregister(self):
        """Unregisters the loop (once no beat is running); it may be
        registered again later. Beats meanwhile do nothing."""
        with self._lock:
            life, self._life = self._life, _CLOSED
            if not life.closed:
                self._sup._progress.discard(self)
                life.close()

    def _forget(self):
        # Its Supervisor is closing.
        with self._lock:
            life, self._life = self._life, _CLOSED
            life.close()

    # -- beats -------------------------------------------------------------

    def beat(self):
        """Proves the loop moved (one clock read and a store in C). Does
        nothing while unregistered, or once its Supervisor is closed."""
        with self._life as p:
            lib.sdlive_progress_beat(p)

    def park(self):
        """The loop is legitimately waiting: not stalled until its next
        beat."""
        with self._life as p:
            lib.sdlive_progress_park(p)

    def age(self):
        """(seconds since the last beat, parked) ; (None, False) when not
        registered."""
        with self._life as p:
            if p == ffi.NULL:
                return None, False
            out = ffi.new("uint64_t *")
            r = check(lib.sdlive_progress_age(p, out), "sdlive_progress_age")
        return seconds(out[0]), r > 0

    def iterate(self, iterable):
        """Yields the items of iterable, beating before each one is taken:
        a body stuck on one item stops the beats."""
        for item in iterable:
            self.beat()
            yield item
        self.beat()

    async def aiterate(self, aiterable):
        """iterate() for an async iterable."""
        async for item in aiterable:
            self.beat()
            yield item
        self.beat()

    # -- context manager ---------------------------------------------------

    def __enter__(self):
        self.register()
        self.beat()
        return self

    def __exit__(self, *exc):
        self.unregister()
        return False

    async def __aenter__(self):
        return self.__enter__()

    async def __aexit__(self, *exc):
        return self.__exit__(*exc)

    # -- decorator ---------------------------------------------------------

    def _start_call(self):
        with self._lock:
            self._register_locked()
            self._active += 1
        self.beat()

    def _end_call(self):
        with self._lock:
            self._active -= 1
            if self._active == 0:
                self.park()

    def __call__(self, func):
        if inspect.isasyncgenfunction(func):
            @functools.wraps(func)
            async def agen_wrapper(*args, **kwargs):
                self._start_call()
                try:
                    async for item in func(*args, **kwargs):
                        self.beat()
                        yield item
                finally:
                    self._end_call()
            agen_wrapper.progress = self
            return agen_wrapper
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                self._start_call()
                try:
                    for item in func(*args, **kwargs):
                        self.beat()
                        yield item
                finally:
                    self._end_call()
            gen_wrapper.progress = self
            return gen_wrapper
        if inspect.iscoroutinefunction(func):
            @functools.wraps(func)
            async def coro_wrapper(*args, **kwargs):
                self._start_call()
                try:
                    return await func(*args, **kwargs)
                finally:
                    self._end_call()
            coro_wrapper.progress = self
            return coro_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self._start_call()
            try:
                return func(*args, **kwargs)
            finally:
                self._end_call()
        wrapper.progress = self
        return wrapper


def progress(name, max_silence):
    """A Progress bound, on first use, to Supervisor.current(): for
    decorating functions and methods defined before the Supervisor
    exists."""
    return Progress(name, max_silence, None)
