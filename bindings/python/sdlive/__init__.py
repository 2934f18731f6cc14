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

The package is typed (PEP 561, py.typed); its version is sdlive/_version.py.
"""

from __future__ import annotations

# "as": re-exported (the name is not in __all__).
from ._version import __version__ as __version__
from ._lib import LibraryError, MIN_VERSION
from ._loaded import library_version
from ._errors import SdliveError
from .supervisor import NotifyAccess, Supervisor, Wake
from .progress import Progress, progress
from .peer import Peer

__all__ = [
    "LibraryError", "MIN_VERSION", "NotifyAccess", "Peer", "Progress", "SdliveError",
    "Supervisor", "Wake", "library_version", "progress",
]
