#!/usr/bin/env bash
# plain-pytest.sh <python> <test dir> <a library without the fake clock>
# `python3 -m pytest` run plainly, without the test library in
# SDLIVE_LIBRARY (unset, a missing file, the real libsdlive.so.0), stops
# before any test with pytest's usage error (4), quickly, and prints one
# line: what the tests need and how to run them.
# SDLIVE_PYTHON_PRELOAD: a sanitizer runtime, preloaded into the
# interpreter alone (sanitized builds), as run-pytest.sh does.
set -euo pipefail
python=$1 dir=$2 other=$3
preload=()
[[ -z ${SDLIVE_PYTHON_PRELOAD:-} ]] || preload=(LD_PRELOAD="$SDLIVE_PYTHON_PRELOAD")
want="sdlive tests need SDLIVE_LIBRARY=<build>/bindings/python/tests/libsdlive-pytest-clock.so (the test library with a fake clock); run them with: ctest --test-dir build -L python"
check() {  # check <what> <env args...>
  local what=$1 rc=0 out start=$SECONDS
  shift
  out=$(cd "$dir" && env -u SDLIVE_LIBRARY PYTHONDONTWRITEBYTECODE=1 "${preload[@]}" "$@" \
    "$python" -m pytest -p no:cacheprovider -q 2>&1) || rc=$?
  local took=$((SECONDS - start))
  ((rc == 4)) || { echo "$out"; echo "FAIL ($what): pytest exit $rc, expected 4 (stopped before any test)"; exit 1; }
  [[ $(wc -l <<<"$out") == 1 && $out == *"$want" ]] ||
    { echo "$out"; echo "FAIL ($what): expected one line ending in: $want"; exit 1; }
  ((took <= 15)) || { echo "FAIL ($what): took ${took} s to stop"; exit 1; }
  echo "PASS ($what): $out"
}
check "SDLIVE_LIBRARY unset"
check "SDLIVE_LIBRARY missing" SDLIVE_LIBRARY=/nonexistent/libsdlive-pytest-clock.so
check "SDLIVE_LIBRARY without the fake clock" SDLIVE_LIBRARY="$other"
