#!/usr/bin/env bash
# Builds the Debian packages libsdlive0, libsdlive-dev and sdlive-daemons
# from this tree (CPack, docs/packaging.md) and prints their paths.
#   scripts/debs.sh [build dir]      (default: build/deb)
# The build uses Debian's compiler flags (scripts/distro-flags.sh:
# hardening, debug information, which the packages strip).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/deb}
jobs=$(nproc)

. "$root/scripts/distro-flags.sh"
distro_cmake_flags flags "$root"
cmake -S "$root" -B "$build" "${flags[@]}" -DCMAKE_INSTALL_PREFIX=/usr \
  -DSDLIVE_PACKAGE_DEB=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" -j"$jobs" >/dev/null
rm -f "$build"/*.deb
(cd "$build" && cpack -G DEB >/dev/null)
ls "$build"/*.deb
