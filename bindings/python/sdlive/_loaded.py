# SPDX-License-Identifier: MIT
"""The process's one loaded libsdlive (see _lib.load)."""

from ._lib import load

ffi, lib, library_version = load()
