# SPDX-License-Identifier: MIT
"""Finding and checking the library: SDLIVE_LIBRARY, the SONAME, errors
for a missing, foreign or too old library. Each case in a fresh
interpreter, against this build's real libsdlive.so.0."""

import os
import subprocess
import sys

import pytest

from sdlive import _lib

PROBE = "import sdlive; print(sdlive.library_version)"


def run(env_changes, code=PROBE):
    env = dict(os.environ)
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=30)


def real():
    path = os.environ.get("SDLIVE_REAL_LIBRARY")
    if not path:
        pytest.fail("SDLIVE_REAL_LIBRARY must name this build's libsdlive.so.0")
    return path


def test_sdlive_library_names_the_file():
    r = run({"SDLIVE_LIBRARY": real()})
    assert r.returncode == 0, r.stderr
    assert tuple(map(int, r.stdout.strip().split("."))) >= _lib.MIN_VERSION


def test_default_is_the_soname_through_the_loader():
    r = run({"SDLIVE_LIBRARY": None, "LD_LIBRARY_PATH": os.path.dirname(real())})
    assert r.returncode == 0, r.stderr


def test_real_library_does_the_work(tmp_path):
    code = ("import sdlive, socket, os\n"
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(%r)\n"
            "os.environ['NOTIFY_SOCKET'] = %r; os.environ['WATCHDOG_USEC'] = '6000000'\n"
            "with sdlive.Supervisor() as sup:\n"
            "    assert sup.pet() and not sup.pet()\n"
            "print(s.recv(64), s.recv(64), s.recv(64))\n") % (
        str(tmp_path / "n"), str(tmp_path / "n"))
    r = run({"SDLIVE_LIBRARY": real()}, code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "b'READY=1' b'WATCHDOG=1' b'STOPPING=1'"


def test_missing_library_is_a_clear_import_error(tmp_path):
    missing = str(tmp_path / "libsdlive.so.0")
    r = run({"SDLIVE_LIBRARY": missing})
    assert r.returncode != 0
    assert "sdlive.LibraryError" in r.stderr or "LibraryError" in r.stderr
    assert "SDLIVE_LIBRARY=" + missing in r.stderr and "install libsdlive0" in r.stderr


def test_missing_by_soname(tmp_path):
    r = run({"SDLIVE_LIBRARY": None, "LD_LIBRARY_PATH": str(tmp_path)},
            "import sdlive")
    if r.returncode == 0:  # an installed libsdlive0 is found: check it is one
        r = run({"SDLIVE_LIBRARY": None}, PROBE)
        assert r.returncode == 0
    else:
        assert "cannot load libsdlive.so.0" in r.stderr


def test_too_old_library_is_refused():
    old = os.environ.get("SDLIVE_OLD_LIBRARY")
    if not old:
        pytest.fail("SDLIVE_OLD_LIBRARY must name the test's old library")
    r = run({"SDLIVE_LIBRARY": old})
    assert r.returncode != 0
    assert "is version 0.1.9; this binding needs 0.x at least 0.2.0" in r.stderr


def test_a_library_that_is_not_sdlive():
    r = run({"SDLIVE_LIBRARY": "libc.so.6"})
    assert r.returncode != 0
    assert "has no sdlive_version(): not libsdlive" in r.stderr


def test_library_error_is_an_import_error():
    assert issubclass(_lib.LibraryError, ImportError)
    with pytest.raises(_lib.LibraryError):
        _lib.load("/nonexistent/libsdlive.so.0")


@pytest.mark.parametrize("text,want", [
    ("0.2.0", (0, 2, 0)), ("1.10.3", (1, 10, 3)), ("0.2", None), ("a.b.c", None),
    ("0.2.0-rc1", None), ("", None), ("0..1", None),
])
def test_parse_version(text, want):
    assert _lib.parse_version(text) == want
