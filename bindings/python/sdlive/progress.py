# SPDX-License-Identifier: MIT
"""Progress loops: keepalives only while every registered loop moves."""

from __future__ import annotations

import functools
import inspect
import threading
from typing import (Any, AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Literal,
                    Optional, Tuple, TypeVar, cast)

from ._errors import Seconds, Text, check, cstring, seconds, usec
from ._lib import CData
from ._lifetime import Lifetime
from ._loaded import ffi, lib
from .supervisor import _CLOSED, Supervisor

T = TypeVar("T")
# A function the decorator wraps; the wrapper has its signature.
F = TypeVar("F", bound=Callable[..., Any])

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

    def __init__(self, name: Text, max_silence: Seconds,
                 supervisor: Optional[Supervisor] = None) -> None:
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
        self._life: Lifetime = _CLOSED
        self._lock = threading.RLock()
        self._active = 0

    def __repr__(self) -> str:
        return "<sdlive.Progress %r max_silence=%r%s>" % (
            self.name, self.max_silence, "" if self.registered else " unregistered")

    # -- registration ------------------------------------------------------

    @property
    def registered(self) -> bool:
        return not self._life.closed

    def register(self) -> Progress:
        """Registers the loop (it starts as just beaten). Idempotent.
        Raises SdliveError ENOSPC when 32 loops are registered already."""
        with self._lock:
            self._register_locked()
        return self

    def _register_locked(self) -> None:
        if not self._life.closed:
            return
        sup = self._sup
        if self._late and (sup is None or sup.handle == ffi.NULL):
            sup = self._sup = Supervisor.current()
        if sup is None:  # late, and no Supervisor is open
            raise RuntimeError("sdlive.progress(%r): no Supervisor is open; enter one "
                               "(with sdlive.Supervisor() as sup) or use sup.progress()"
                               % self.name)

        def create(h: CData) -> CData:
            ret = ffi.new("sdlive_progress **")
            check(lib.sdlive_progress_register(h, self._name_c, self._max_usec, ret),
                  "sdlive_progress_register")
            return ret[0]
        self._life = sup._child(
            create, lib.sdlive_progress_unregister,
            lambda: RuntimeError("sdlive.progress(%r): its Supervisor is closed" % self.name))
        sup._progress.add(self)

    def unregister(self) -> None:
        """Unregisters the loop (once no beat is running); it may be
        registered again later. Beats meanwhile do nothing."""
        with self._lock:
            life, self._life = self._life, _CLOSED
            if not life.closed:
                if self._sup is not None:
                    self._sup._progress.discard(self)
                life.close()

    def _forget(self) -> None:
        # Its Supervisor is closing.
        with self._lock:
            life, self._life = self._life, _CLOSED
            life.close()

    # -- beats -------------------------------------------------------------

    def beat(self) -> None:
        """Proves the loop moved (one clock read and a store in C). Does
        nothing while unregistered, or once its Supervisor is closed."""
        with self._life as p:
            lib.sdlive_progress_beat(p)

    def park(self) -> None:
        """The loop is legitimately waiting: not stalled until its next
        beat."""
        with self._life as p:
            lib.sdlive_progress_park(p)

    def age(self) -> Tuple[Optional[float], bool]:
        """(seconds since the last beat, parked) ; (None, False) when not
        registered."""
        with self._life as p:
            if p == ffi.NULL:
                return None, False
            out = ffi.new("uint64_t *")
            r = check(lib.sdlive_progress_age(p, out), "sdlive_progress_age")
        return seconds(out[0]), r > 0

    def iterate(self, iterable: Iterable[T]) -> Iterator[T]:
        """Yields the items of iterable, beating before each one is taken:
        a body stuck on one item stops the beats."""
        for item in iterable:
            self.beat()
            yield item
        self.beat()

    async def aiterate(self, aiterable: AsyncIterable[T]) -> AsyncIterator[T]:
        """iterate() for an async iterable."""
        async for item in aiterable:
            self.beat()
            yield item
        self.beat()

    # -- context manager ---------------------------------------------------

    def __enter__(self) -> Progress:
        self.register()
        self.beat()
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.unregister()
        return False

    async def __aenter__(self) -> Progress:
        return self.__enter__()

    async def __aexit__(self, *exc: object) -> Literal[False]:
        return self.__exit__(*exc)

    # -- decorator ---------------------------------------------------------

    def _start_call(self) -> None:
        with self._lock:
            self._register_locked()
            self._active += 1
        self.beat()

    def _end_call(self) -> None:
        with self._lock:
            self._active -= 1
            if self._active == 0:
                self.park()

    def __call__(self, func: F) -> F:
        """The decorator: func wrapped (same signature), with the wrapper's
        .progress set to this object."""
        if inspect.isasyncgenfunction(func):
            @functools.wraps(func)
            async def agen_wrapper(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
                self._start_call()
                try:
                    async for item in func(*args, **kwargs):
                        self.beat()
                        yield item
                finally:
                    self._end_call()
            return cast(F, _tagged(agen_wrapper, self))
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
                self._start_call()
                try:
                    for item in func(*args, **kwargs):
                        self.beat()
                        yield item
                finally:
                    self._end_call()
            return cast(F, _tagged(gen_wrapper, self))
        if inspect.iscoroutinefunction(func):
            @functools.wraps(func)
            async def coro_wrapper(*args: Any, **kwargs: Any) -> Any:
                self._start_call()
                try:
                    return await func(*args, **kwargs)
                finally:
                    self._end_call()
            return cast(F, _tagged(coro_wrapper, self))

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            self._start_call()
            try:
                return func(*args, **kwargs)
            finally:
                self._end_call()
        return cast(F, _tagged(wrapper, self))


def _tagged(wrapper: Callable[..., Any], progress: Progress) -> Callable[..., Any]:
    """wrapper, with .progress set: the decorator's result (which the
    decorator types as the function it wraps)."""
    setattr(wrapper, "progress", progress)
    return wrapper


def progress(name: Text, max_silence: Seconds) -> Progress:
    """A Progress bound, on first use, to Supervisor.current(): for
    decorating functions and methods defined before the Supervisor
    exists."""
    return Progress(name, max_silence, None)
