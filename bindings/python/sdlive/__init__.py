# SPDX-License-Identifier: MIT
"""sdlive: progress-gated, rate-limited systemd watchdog keepalives for
Python daemons, over libsdlive.so.0 (its stable ABI, loaded with cffi).

    import sdlive

    with sdlive.Supervisor(handle_signals=True) as sup:   # READY=1
        while not sup.stop_requested:
            with sup.progress("scan", max_silence=30) as loop:
                for item in loop.iterate(work()):
                    handle(item)
            sup.idle(60)                                  # pets when due
                                                          # STOPPING=1

Importing raises sdlive.LibraryError (an ImportError) when libsdlive.so.0
is missing (set SDLIVE_LIBRARY to its path) or older than this binding.
Failed calls raise SdliveError, an OSError carrying the errno.
"""

from ._lib import LibraryError, MIN_VERSION
from ._loaded import library_version
from ._errors import SdliveError
from .supervisor import NotifyAccess, Supervisor, Wake
from .progress import Progress, progress
from .peer import Peer

__version__ = "0.2.0"

__all__ = [
    "LibraryError", "MIN_VERSION", "NotifyAccess", "Peer", "Progress", "SdliveError",
    "Supervisor", "Wake", "library_version", "progress",
]
