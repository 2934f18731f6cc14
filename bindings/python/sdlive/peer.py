# SPDX-License-Identifier: MIT
"""Peer liveness: an inactivity deadline reset only by frames received,
and a heartbeat schedule for the sending side."""

from ._errors import check, usec
from ._loaded import ffi, lib

__all__ = ["Peer"]


class Peer:
    """The liveness state of one connection (see sdlive_peer_new(3)): the
    peer counts as dead once nothing was received from it for timeout
    seconds; a heartbeat is owed every heartbeat seconds (float("inf"):
    never). None picks the defaults, 30 s and 10 s. Use as a context
    manager or call close()."""

    def __init__(self, supervisor, timeout=None, heartbeat=None):
        t = 0 if timeout is None else usec(timeout, "timeout", forever=False)
        hb = 0 if heartbeat is None else usec(heartbeat, "heartbeat")
        if timeout is not None and t == 0:
            raise ValueError("timeout: must be > 0 (None for the default)")
        if heartbeat is not None and hb == 0:
            raise ValueError("heartbeat: must be > 0 (None for the default)")
        h = supervisor.handle
        ret = ffi.new("sdlive_peer **")
        check(lib.sdlive_peer_new(h, t, hb, ret), "sdlive_peer_new")
        self._p = ret[0]

    def close(self):
        p, self._p = self._p, ffi.NULL
        lib.sdlive_peer_free(p)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def received(self):
        """A frame arrived from the peer: restarts the inactivity window."""
        lib.sdlive_peer_received(self._p)

    def sent(self):
        """We sent a frame: restarts the heartbeat schedule."""
        lib.sdlive_peer_sent(self._p)

    @property
    def expired(self):
        """True once the peer was silent for the whole window."""
        return lib.sdlive_peer_expired(self._p) > 0

    @property
    def heartbeat_due(self):
        """True when a heartbeat is owed to the peer."""
        return lib.sdlive_peer_heartbeat_due(self._p) > 0

    def poll_timeout(self):
        """Seconds until the earlier of the inactivity deadline and the
        next heartbeat (0.0 when one is due): the timeout of this
        iteration's select()/poll() wait."""
        return lib.sdlive_peer_poll_timeout(self._p) / 1000.0

