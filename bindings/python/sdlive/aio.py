# SPDX-License-Identifier: MIT
"""asyncio: the event loop itself pets, through the library's watchdog
timerfd and loop.add_reader(). No thread is involved, so keepalives stop
as soon as the loop is blocked (a coroutine calling time.sleep(), a
CPU-bound callback): exactly what a watchdog should see.

Per Supervisor and event loop one reader is installed while anything
needs it (idle_async() waits, attach_loop()); it calls pet() when the
timer fires, and pet() re-arms the timer for the next keepalive.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Optional, Set, Tuple

from ._errors import Seconds, usec
from ._lib import UINT64_MAX
from .supervisor import Supervisor, Wake, _resolve

# A coroutine waiting in idle_async(): its loop and the future it awaits.
_Waiter = Tuple[asyncio.AbstractEventLoop, "asyncio.Future[Wake]"]

__all__ = ["idle_async", "attach", "detach", "add_signal_handlers"]


class _LoopState:
    """What one event loop does for one Supervisor."""

    def __init__(self, fd: Optional[int]) -> None:
        self.fd = fd
        self.users = 0
        self.waiters: Set[_Waiter] = set()


def _acquire(sup: Supervisor, loop: asyncio.AbstractEventLoop) -> _LoopState:
    """Counts one user of the loop's reader, installing it for the first."""
    # A forked child's copy pets nothing (and must leave the parent's timer
    # alone): no reader there.
    fd = sup.watchdog_fd() if sup.owned else None
    with sup._async_lock:
        state = sup._async.get(loop)
        if state is None:
            state = sup._async[loop] = _LoopState(fd)
        state.users += 1
        first = state.users == 1
    if first and fd is not None:
        loop.add_reader(fd, _on_due, sup, state)
    # A keepalive already due goes out now rather than at the next event.
    if fd is not None:
        sup.pet()
    return state


def _on_due(sup: Supervisor, state: _LoopState) -> None:
    """The reader: a keepalive is due. A stop requested where this module
    did not see it (the library's own SIGTERM handler, handle_signals=True)
    ends the waits here, within one pet interval."""
    sup.pet()
    if sup.stop_requested:
        with sup._async_lock:
            waiters = list(state.waiters)
        for _, fut in waiters:
            _resolve(fut, Wake.STOP)


def _release(sup: Supervisor, loop: asyncio.AbstractEventLoop, state: _LoopState) -> None:
    with sup._async_lock:
        state.users -= 1
        last = state.users == 0
        if last:
            sup._async.pop(loop, None)
    if last and state.fd is not None and not loop.is_closed():
        loop.remove_reader(state.fd)


async def idle_async(sup: Supervisor, seconds: Optional[Seconds] = None) -> Wake:
    """Supervisor.idle_async(): waits seconds (None: until stopped) while
    the event loop pets when due. Wake.STOP as soon as request_stop() is
    called (any thread, a signal handler added by add_signal_handlers()),
    Wake.TIMEOUT otherwise."""
    limit = usec(seconds, "idle_async")
    loop = asyncio.get_running_loop()
    if sup.stop_requested:
        return Wake.STOP
    state = _acquire(sup, loop)
    fut: asyncio.Future[Wake] = loop.create_future()
    timer = None
    if limit != UINT64_MAX:
        timer = loop.call_later(limit / 1e6, _resolve, fut, Wake.TIMEOUT)
    waiter: _Waiter = (loop, fut)
    with sup._async_lock:
        state.waiters.add(waiter)
    try:
        if sup.stop_requested:  # requested between the check and now
            _resolve(fut, Wake.STOP)
        return await fut
    finally:
        if timer is not None:
            timer.cancel()
        with sup._async_lock:
            state.waiters.discard(waiter)
        _release(sup, loop, state)


def attach(sup: Supervisor, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
    """Supervisor.attach_loop(): the loop pets until detach()."""
    loop = loop or asyncio.get_event_loop()
    state = _acquire(sup, loop)
    sup._attached.append((loop, state))


def detach(sup: Supervisor, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
    """Supervisor.detach_loop(): undoes one attach()."""
    loop = loop or asyncio.get_event_loop()
    for i, (lp, state) in enumerate(sup._attached):
        if lp is loop:
            del sup._attached[i]
            _release(sup, loop, state)
            return
    raise ValueError("detach_loop: this loop is not attached")


def add_signal_handlers(sup: Supervisor, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
    """SIGTERM and SIGINT call sup.request_stop() from the event loop."""
    loop = loop or asyncio.get_event_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, sup.request_stop)
