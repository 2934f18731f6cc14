#!/usr/bin/env bash
# Builds the Debian packages libsdlive0, libsdlive-dev and sdlive-daemons
# from this tree (CPack, docs/packaging.md) and prints their paths.
#   scripts/debs.sh [build dir]      (default: build/deb)
# The build uses Debian's compiler flags (dpkg-buildflags: hardening,
# debug information, which the packages strip).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/deb}
jobs=$(nproc)

eval "$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=None -DCMAKE_INSTALL_PREFIX=/usr \
  -DSDLIVE_PACKAGE_DEB=ON -DBUILD_TESTING=OFF \
  -DCMAKE_C_FLAGS="$CFLAGS $CPPFLAGS" \
  -DCMAKE_EXE_LINKER_FLAGS="$LDFLAGS" -DCMAKE_SHARED_LINKER_FLAGS="$LDFLAGS" >/dev/null
cmake --build "$build" -j"$jobs" >/dev/null
rm -f "$build"/*.deb
(cd "$build" && cpack -G DEB >/dev/null)
ls "$build"/*.deb
