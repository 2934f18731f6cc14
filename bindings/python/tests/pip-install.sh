#!/usr/bin/env bash
# pip-install.sh <python> <package dir> <libsdlive.so.0>
# `pip install` of the package directory works offline, with no compiler
# and no build isolation (Debian's setuptools): into a --target, with the
# py.typed marker of its type hints; the installed copy imports, finds the
# library through SDLIVE_LIBRARY and through the loader's path, and reports
# its version (sdlive/_version.py), which must be the project's.
set -euo pipefail
python=$1 pkg=$2 lib=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# pip builds in the source tree: build from a copy, so the tree stays clean.
cp -r "$pkg" "$work/src"
rm -rf "$work/src/build" "$work/src"/*.egg-info
CC=/bin/false PIP_NO_INDEX=1 "$python" -m pip install --no-build-isolation --no-index \
  --disable-pip-version-check --no-cache-dir --no-deps --target "$work/site" "$work/src" \
  >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; echo "FAIL: pip install"; exit 1; }
tail -n 1 "$work/pip.log"
[[ -f $work/site/sdlive/__init__.py && -f $work/site/sdlive/supervisor.py && -f $work/site/sdlive/py.typed ]] ||
  { echo "FAIL: the package is not in the target"; ls -R "$work/site"; exit 1; }
[[ -z $(find "$work/site" -name '*.so') ]] || { echo "FAIL: something was compiled"; exit 1; }
want=$(sed -n 's/^project(sdlive VERSION \([0-9.]*\).*/\1/p' "$pkg/../../CMakeLists.txt")
check='import sdlive, sys; assert sdlive.__file__.startswith(sys.argv[1]), sdlive.__file__; print(sdlive.__version__, sdlive.library_version)'
out=$(cd "$work" && env -u PYTHONPATH SDLIVE_LIBRARY="$lib" PYTHONPATH="$work/site" "$python" -c "$check" "$work/site")
[[ $out == "$want $want" ]] || { echo "FAIL: installed package reports '$out', expected '$want $want'"; exit 1; }
libdir=$(dirname "$lib")
out=$(cd "$work" && env -u SDLIVE_LIBRARY LD_LIBRARY_PATH="$libdir" PYTHONPATH="$work/site" "$python" -c "$check" "$work/site")
[[ $out == "$want $want" ]] || { echo "FAIL: by SONAME: '$out'"; exit 1; }
meta=$(find "$work/site" -maxdepth 1 -name 'sdlive-*.dist-info')
[[ -n $meta ]] || { echo "FAIL: no dist-info"; exit 1; }
echo "PASS: pip installed $(basename "$meta") offline; it imports and loads libsdlive $want"
