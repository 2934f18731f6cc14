# SPDX-License-Identifier: MIT
"""The process's one loaded libsdlive (see _lib.load)."""

from __future__ import annotations

from ._lib import CData, load

ffi: CData
lib: CData
library_version: str
ffi, lib, library_version = load()
