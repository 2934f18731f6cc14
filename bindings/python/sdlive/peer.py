# SPDX-License-Identifier: MIT
"""Peer liveness: an inactivity deadline reset only by frames received,
and a heartbeat schedule for the sending side."""

from __future__ import annotations

import errno
import threading
from typing import Literal, Optional

from ._errors import Seconds, SdliveError, check, usec
from ._lib import CData
from ._lifetime import Lifetime
from ._loaded import ffi, lib
from .supervisor import _CLOSED, Supervisor

__all__ = ["Peer"]


class Peer:
    """The liveness state of one connection (see sdlive_peer_new(3)): the
    peer counts as dead once nothing was received from it for timeout
    seconds; a heartbeat is owed every heartbeat seconds (float("inf"):
    never). None picks the defaults, 30 s and 10 s. Use as a context
    manager or call close(). Any thread may call it (the calls take
    turns). It holds its Supervisor (a Supervisor made
    for it alone stays open as long as the peer lives); once either is
    closed, its calls raise SdliveError EBADF."""

    def __init__(self, supervisor: Supervisor, timeout: Optional[Seconds] = None,
                 heartbeat: Optional[Seconds] = None) -> None:
        self._life: Lifetime = _CLOSED  # what close() and __del__ see if this fails
        self._turns = threading.RLock()
        t = 0 if timeout is None else usec(timeout, "timeout", forever=False)
        hb = 0 if heartbeat is None else usec(heartbeat, "heartbeat")
        if timeout is not None and t == 0:
            raise ValueError("timeout: must be > 0 (None for the default)")
        if heartbeat is not None and hb == 0:
            raise ValueError("heartbeat: must be > 0 (None for the default)")
        # The C peer reads the handle's clock on every call: the peer keeps
        # its Supervisor (a reference) and the handle (a counted use) alive
        # until it is freed.
        self._sup = supervisor

        def create(h: CData) -> CData:
            ret = ffi.new("sdlive_peer **")
            check(lib.sdlive_peer_new(h, t, hb, ret), "sdlive_peer_new")
            return ret[0]
        self._life = supervisor._child(
            create, lib.sdlive_peer_free,
            lambda: SdliveError(errno.EBADF, "sdlive: the Supervisor is closed"))
        supervisor._peers.add(self)

    def close(self) -> None:
        """Frees the peer (once no call on it runs). Later calls raise
        SdliveError EBADF; so do calls after its Supervisor closed."""
        self._life.close()

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.close()
        return False

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _call(self, function: CData) -> CData:
        """function(peer pointer): the C call's result (an int, or None
        for the calls that return nothing)."""
        # The C peer belongs to one connection loop (its calls must not
        # overlap); here threads may share it, so its calls take turns.
        # Reentrant: a signal handler may use the peer in a thread that is
        # between two of its calls' bytecodes, never inside the C call.
        with self._turns, self._life as p:
            if p == ffi.NULL:
                raise SdliveError(errno.EBADF, "sdlive: the Peer is closed")
            return function(p)

    def received(self) -> None:
        """A frame arrived from the peer: restarts the inactivity window."""
        self._call(lib.sdlive_peer_received)

    def sent(self) -> None:
        """We sent a frame: restarts the heartbeat schedule."""
        self._call(lib.sdlive_peer_sent)

    @property
    def expired(self) -> bool:
        """True once the peer was silent for the whole window."""
        r: int = self._call(lib.sdlive_peer_expired)
        return r > 0

    @property
    def heartbeat_due(self) -> bool:
        """True when a heartbeat is owed to the peer."""
        r: int = self._call(lib.sdlive_peer_heartbeat_due)
        return r > 0

    def poll_timeout(self) -> float:
        """Seconds until the earlier of the inactivity deadline and the
        next heartbeat (0.0 when one is due): the timeout of this
        iteration's select()/poll() wait."""
        milliseconds: int = self._call(lib.sdlive_peer_poll_timeout)
        return milliseconds / 1000.0
