#!/bin/sh
# Every place that names the API version agrees with the project's: the
# header's SDLIVE_VERSION_* macros, the pkg-config file, the shared library's
# file name, and the newest symbol version node (a node LIBSDLIVE_M.N holds
# the functions added in M.N, so it may not be newer than the project).
#   version-check.sh <project version> <sdlive.h> <libsdlive.sym> <sdlive.pc> <libsdlive.so.*>
set -eu

version=$1 header=$2 sym=$3 pc=$4 lib=$5
status=0
fail() { echo "FAIL: $*"; status=1; }

macro() { sed -n "s/^#define SDLIVE_VERSION_$1 \([0-9][0-9]*\)\$/\1/p" "$header"; }
header_version="$(macro MAJOR).$(macro MINOR).$(macro PATCH)"
[ "$header_version" = "$version" ] || fail "sdlive.h says $header_version, the project $version"

pc_version=$(sed -n 's/^Version: //p' "$pc")
[ "$pc_version" = "$version" ] || fail "sdlive.pc says '$pc_version', the project $version"

case $(basename "$lib") in
libsdlive.so."$version") ;;
*) fail "library file $(basename "$lib") does not carry $version" ;;
esac

major=${version%%.*} rest=${version#*.} minor=${rest%%.*}
newest=$(sed -n 's/^LIBSDLIVE_\([0-9][0-9.]*\) {$/\1/p' "$sym" | sort -t. -k1,1n -k2,2n | tail -n1)
node_major=${newest%%.*}
node_minor=0
case $newest in *.*) node_minor=${newest#*.} ;; esac
if [ "$node_major" -gt "$major" ] ||
   { [ "$node_major" -eq "$major" ] && [ "$node_minor" -gt "$minor" ]; }; then
        fail "version node LIBSDLIVE_$newest is newer than the project $version"
fi

[ $status -eq 0 ] && echo "version $version: sdlive.h, sdlive.pc, $(basename "$lib"), newest node LIBSDLIVE_$newest"
exit $status
