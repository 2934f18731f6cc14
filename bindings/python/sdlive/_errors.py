# SPDX-License-Identifier: MIT
"""The exception of failed calls, and the conversions of Python values to
the library's microseconds."""

from __future__ import annotations

import math
import os
from typing import Literal, Optional, Union, overload

from ._lib import UINT64_MAX

# A duration in seconds as the calls take it; None (or +inf) where a call
# reads it as "no limit".
Seconds = Union[int, float]
# Text for a C string.
Text = Union[str, bytes, bytearray]


class SdliveError(OSError):
    """A libsdlive call failed: errno is the library's -errno, and the
    message names the call. "Nothing was sent" is not an error: it is a
    False (or 0) return value."""

    def __init__(self, errno_value: int, call: str) -> None:
        super().__init__(errno_value, os.strerror(errno_value))
        self.call = call

    def __str__(self) -> str:
        return "%s: %s" % (self.call, os.strerror(self.errno))


def check(r: int, call: str) -> int:
    """r when >= 0; raises SdliveError(-r) otherwise."""
    if r < 0:
        raise SdliveError(-r, call)
    return r


def usec(seconds: Optional[Seconds], what: str, forever: bool = True) -> int:
    """Microseconds (rounded up, so a wait is never cut short) from seconds,
    an int or float >= 0. None or +inf mean "no limit" (UINT64_MAX) when
    forever is true. A value beyond the 64-bit range also means no limit."""
    if seconds is None or (isinstance(seconds, float) and math.isinf(seconds) and seconds > 0):
        if forever:
            return UINT64_MAX
        raise ValueError("%s: a finite duration is needed" % what)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError("%s: seconds must be an int or a float, not %s"
                        % (what, type(seconds).__name__))
    if isinstance(seconds, float) and math.isnan(seconds):
        raise ValueError("%s: seconds is NaN" % what)
    if seconds < 0:
        raise ValueError("%s: seconds must be >= 0, not %r" % (what, seconds))
    if isinstance(seconds, int):
        value = seconds * 1000000
    else:
        value = math.ceil(seconds * 1e6)
    if value >= UINT64_MAX:
        if forever:
            return UINT64_MAX
        return UINT64_MAX - 1
    return int(value)


def seconds(value_usec: int) -> float:
    """Seconds (float) from microseconds."""
    return value_usec / 1e6


@overload
def cstring(text: Text, what: str, allow_none: Literal[False] = False) -> bytes: ...
@overload
def cstring(text: Optional[Text], what: str, allow_none: Literal[True]) -> Optional[bytes]: ...


def cstring(text: Optional[Text], what: str, allow_none: bool = False) -> Optional[bytes]:
    """UTF-8 bytes of text (str or bytes) for a C string; embedded NUL bytes
    cannot reach C and are refused."""
    if text is None:
        if allow_none:
            return None
        raise TypeError("%s: a string is needed, not None" % what)
    if isinstance(text, str):
        data = text.encode("utf-8", "surrogateescape")
    elif isinstance(text, (bytes, bytearray)):
        data = bytes(text)
    else:
        raise TypeError("%s: str or bytes needed, not %s" % (what, type(text).__name__))
    if b"\0" in data:
        raise ValueError("%s: embedded NUL byte" % what)
    return data
