# SPDX-License-Identifier: MIT
"""Loading libsdlive.so.0 through cffi's ABI mode (no compiler involved).

The library is found through SDLIVE_LIBRARY (a path) or, by default, the
dynamic loader's search for the SONAME "libsdlive.so.0". Its run-time
version (sdlive_version()) must be at least MIN_VERSION with the same major
number, since the declarations below are those of that API version.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Tuple

import cffi

# cffi ships no type stubs (Debian has none either): its FFI object, the
# loaded library and every cdata value (pointers, buffers) are typed Any,
# under this one name, and nowhere else in the package.
CData = Any

SONAME = "libsdlive.so.0"
# The API these declarations describe: include/sdlive.h of that version.
MIN_VERSION: Tuple[int, int, int] = (0, 2, 0)

CDEF = """
const char *sdlive_version(void);

typedef struct sdlive sdlive;
typedef struct sdlive_progress sdlive_progress;
typedef struct sdlive_peer sdlive_peer;

typedef struct sdlive_options {
        size_t size;
        uint32_t flags;
        uint64_t pet_interval_usec;
} sdlive_options;

int sdlive_new(sdlive **ret, const sdlive_options *opts);
sdlive *sdlive_free(sdlive *d);
int sdlive_supervised(const sdlive *d);

int sdlive_notify_ready(sdlive *d);
int sdlive_notify_stopping(sdlive *d);
int sdlive_notify_reloading(sdlive *d);
int sdlive_notify_status(sdlive *d, const char *format, ...);
int sdlive_notify_errno(sdlive *d, int error);
int sdlive_notify_extend_timeout(sdlive *d, uint64_t usec);
int sdlive_notify_barrier(sdlive *d, uint64_t timeout_usec);
int sdlive_notify_mainpid(sdlive *d, int pid);
int sdlive_notify_exit_status(sdlive *d, int status);
int sdlive_notify_bus_error(sdlive *d, const char *name);
int sdlive_notify_access(sdlive *d, int access);
int sdlive_notify_raw(sdlive *d, const char *key, const char *value);
int sdlive_notify_fdstore(sdlive *d, const int *fds, size_t n_fds, const char *name,
                          unsigned flags);
int sdlive_notify_fdstore_remove(sdlive *d, const char *name);

int sdlive_watchdog_enabled(const sdlive *d, uint64_t *ret_usec);
int sdlive_pet_watchdog(sdlive *d);
int sdlive_watchdog_trigger(sdlive *d);
int sdlive_watchdog_set_timeout(sdlive *d, uint64_t usec);
uint64_t sdlive_pet_interval(const sdlive *d);
uint64_t sdlive_watchdog_next_due(const sdlive *d);
int sdlive_watchdog_fd(sdlive *d);
int sdlive_last_pet_age(const sdlive *d, uint64_t *ret_usec);

int sdlive_idle(sdlive *d, uint64_t usec);
int sdlive_wait_fd(sdlive *d, int fd, short events, uint64_t usec);
int sdlive_request_stop(sdlive *d);
int sdlive_stopping(const sdlive *d);

int sdlive_progress_register(sdlive *d, const char *name, uint64_t max_silence_usec,
                             sdlive_progress **ret);
void sdlive_progress_beat(sdlive_progress *p);
void sdlive_progress_park(sdlive_progress *p);
sdlive_progress *sdlive_progress_unregister(sdlive_progress *p);
int sdlive_progress_age(const sdlive_progress *p, uint64_t *ret_usec);
int sdlive_progress_stalled(sdlive *d, char *name, size_t size);

int sdlive_peer_new(sdlive *d, uint64_t timeout_usec, uint64_t heartbeat_usec,
                    sdlive_peer **ret);
sdlive_peer *sdlive_peer_free(sdlive_peer *p);
void sdlive_peer_received(sdlive_peer *p);
void sdlive_peer_sent(sdlive_peer *p);
int sdlive_peer_expired(const sdlive_peer *p);
int sdlive_peer_heartbeat_due(const sdlive_peer *p);
int sdlive_peer_poll_timeout(const sdlive_peer *p);
"""

# Constants of sdlive.h (an ABI-mode cdef cannot read #defines).
HANDLE_SIGNALS = 1 << 0
UNSET_WATCHDOG_ENV = 1 << 1
TRIGGER_ON_STALL = 1 << 2
FDSTORE_NO_POLL = 1 << 0
PET_INTERVAL_MIN_USEC = 1000
NOTIFY_FDS_MAX = 253
FDNAME_MAX = 255
PROGRESS_MAX = 32
PROGRESS_NAME_MAX = 31
UINT64_MAX = (1 << 64) - 1


class LibraryError(ImportError):
    """libsdlive could not be loaded, or is not a version this binding
    speaks to. The message says which library was tried and why."""


def parse_version(text: str) -> Optional[Tuple[int, int, int]]:
    """(major, minor, patch) from "MAJOR.MINOR.PATCH", or None."""
    parts = text.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def load(path: Optional[str] = None) -> Tuple[CData, CData, str]:
    """Loads the library and checks its version. path: a file to load
    instead of SDLIVE_LIBRARY or the SONAME. Returns (ffi, lib, version)."""
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    if path is None:
        path = os.environ.get("SDLIVE_LIBRARY") or SONAME
    origin = "SDLIVE_LIBRARY=" + path if os.environ.get("SDLIVE_LIBRARY") == path else path
    try:
        lib = ffi.dlopen(path)
    except OSError as e:
        raise LibraryError(
            "sdlive: cannot load %s (%s); install libsdlive0, or set "
            "SDLIVE_LIBRARY to the path of libsdlive.so.0" % (origin, e)) from None
    try:
        version_fn = lib.sdlive_version
    except AttributeError:
        raise LibraryError("sdlive: %s has no sdlive_version(): not libsdlive" % origin) from None
    raw = ffi.string(version_fn()).decode("ascii", "replace")
    version = parse_version(raw)
    if version is None:
        raise LibraryError("sdlive: %s reports version %r, not MAJOR.MINOR.PATCH" % (origin, raw))
    want = ".".join(map(str, MIN_VERSION))
    if version[0] != MIN_VERSION[0] or version < MIN_VERSION:
        raise LibraryError(
            "sdlive: %s is version %s; this binding needs %d.x at least %s"
            % (origin, raw, MIN_VERSION[0], want))
    bind_all(lib)
    return ffi, lib, raw


def bind_all(lib: CData) -> None:
    """Looks every declared function up now. cffi binds one on its first
    use, under a lock that is not reentrant: a Python signal handler that
    closes a Supervisor (or requests a stop) while its thread is binding
    another call would wait on that lock for ever."""
    for name in dir(lib):
        try:
            getattr(lib, name)
        except AttributeError:
            pass  # missing from this library: its first use says so
