# SPDX-License-Identifier: MIT
"""The binding's version: the one place it is written. pyproject.toml reads
it from here (setuptools' dynamic version), sdlive.__version__ is this, and
the build checks it equals the project's version (tests/pip-install.sh)."""

__version__ = "0.2.0"
