# SPDX-License-Identifier: MIT
"""The binding's version is written once, in sdlive/_version.py: what
sdlive.__version__ says, what pyproject.toml gives pip, and the
project's version."""

import os
import re
import warnings

import sdlive

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join("sdlive", "_version.py")
# Not the package's files: these tests (version strings as test data) and
# what tools leave behind.
SKIP_DIRS = {"tests", "build", "__pycache__", ".mypy_cache", ".pytest_cache"}


def files_holding(text):
    """Paths (relative to the package dir) of the files that contain text
    as a whole version (not a part of a longer one)."""
    pattern = re.compile(rb"(?<![\d.])" + re.escape(text.encode()) + rb"(?![\d.])")
    found = []
    for root, dirs, names in os.walk(PACKAGE_DIR):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")]
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                if pattern.search(f.read()):
                    found.append(os.path.relpath(path, PACKAGE_DIR))
    return sorted(found)


def test_the_version_is_written_in_one_file():
    assert re.fullmatch(r"\d+\.\d+\.\d+", sdlive.__version__)
    assert files_holding(sdlive.__version__) == [SOURCE]


def test_pyproject_gives_pip_that_version():
    from setuptools.config.pyprojecttoml import read_configuration
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # [tool.setuptools] is "beta" to setuptools
        project = read_configuration(os.path.join(PACKAGE_DIR, "pyproject.toml"),
                                     expand=True)["project"]
    assert "version" in project.get("dynamic", []), "pyproject.toml writes a version of its own"
    assert project["version"] == sdlive.__version__


def test_it_is_the_projects_version():
    with open(os.path.join(PACKAGE_DIR, "..", "..", "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"^project\(sdlive VERSION ([0-9.]+)", f.read(), re.M)
    assert m, "CMakeLists.txt has no project(sdlive VERSION ...)"
    assert sdlive.__version__ == m.group(1)
