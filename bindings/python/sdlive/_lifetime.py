# SPDX-License-Identifier: MIT
"""Lifetime: when a C object may be freed while Python threads use it.

A libsdlive object (the handle, a peer, a progress loop) must not be freed
while a call on it runs: the C library leaves that to its caller. Python
code cannot be trusted with such a rule (a helper thread that pets while
the main thread closes, an object kept past its Supervisor), so every call
through this binding is counted here, and the object is freed by whoever
leaves last:

    with life as pointer:          # ffi.NULL once closed
        lib.sdlive_something(pointer)

close() marks the object closed (later calls get ffi.NULL, which the
library treats as "nothing to do", or raise where the wrapper says so) and
frees it at once when no call is in flight; otherwise the last call in
flight frees it on its way out. close() itself never waits, so it may run
in a signal handler of a thread that is inside a call, or inside a call on
the same object.

The lock is reentrant for the same reason: a Python signal handler may run
in the thread that holds it (between two bytecodes), and what it calls
(request_stop(), close()) takes it again.
"""

from __future__ import annotations

import threading
from typing import Callable, Literal, Optional

from ._lib import CData
from ._loaded import ffi

__all__ = ["Lifetime"]


class Lifetime:
    """Counts the calls in flight on one C object and frees it after the
    last of them once it is closed. free(pointer) runs exactly once, with
    no call in flight and no lock held."""

    __slots__ = ("_pointer", "_free", "_lock", "_users", "_closed")

    def __init__(self, pointer: CData, free: Callable[[CData], object]) -> None:
        self._pointer = pointer
        self._free = free
        self._lock = threading.RLock()
        self._users: int = 0
        self._closed: bool = False

    @property
    def closed(self) -> bool:
        return self._closed

    def hold(self) -> CData:
        """Counts one user and returns the pointer (ffi.NULL once closed).
        Every hold counts, even on a closed object: then every release
        decrements, and the last one out frees."""
        with self._lock:
            self._users += 1
            return ffi.NULL if self._closed else self._pointer

    def release(self, *exc: object) -> Literal[False]:
        """Undoes one hold(); frees the object if it is the last one out
        of a closed object. (As __exit__, it lets exceptions through.)"""
        with self._lock:
            self._users -= 1
            pointer = self._take_if_done_locked()
        if pointer is not None:
            self._free(pointer)
        return False

    __enter__ = hold
    __exit__ = release

    def close(self, while_in_use: Optional[Callable[[CData], object]] = None) -> bool:
        """Closes: frees now when no call is in flight, else leaves that
        to the last call. while_in_use(pointer), when given, runs under
        the lock while calls are still in flight (to wake a blocked wait:
        it must be safe against those calls). True for the first close."""
        with self._lock:
            if self._closed:
                return False
            self._closed = True
            if self._users > 0 and while_in_use is not None:
                while_in_use(self._pointer)
            pointer = self._take_if_done_locked()
        if pointer is not None:
            self._free(pointer)
        return True

    def _take_if_done_locked(self) -> Optional[CData]:
        if not self._closed or self._users > 0 or self._pointer == ffi.NULL:
            return None
        pointer, self._pointer = self._pointer, ffi.NULL
        return pointer
