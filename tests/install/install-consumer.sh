#!/bin/sh
# Installs the build into a temporary prefix, then builds and runs a small
# consumer against the installed tree, through pkg-config and through
# find_package(sdlive).
#   install-consumer.sh <build dir> <consumer source dir> <cc> [extra cflags]
set -eu

build=$1 src=$2 cc=$3 extra=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >"$work/install.log" ||
        { cat "$work/install.log"; exit 1; }
libdir=$(dirname "$(find "$prefix" -name 'libsdlive.so' | head -n 1)")
[ -n "$libdir" ] || { echo "libsdlive.so was not installed"; exit 1; }
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID

status=0

echo "== pkg-config"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs sdlive)
echo "pkg-config --cflags --libs sdlive: $flags"
# shellcheck disable=SC2086 # flags are words
if "$cc" -std=c99 -Wall -Wextra -Werror $extra -o "$work/consumer-pc" "$src/consumer.c" $flags &&
        "$work/consumer-pc"; then
        echo "pkg-config consumer: ok"
else
        echo "pkg-config consumer: FAILED"
        status=1
fi

echo "== find_package(sdlive)"
if cmake -S "$src" -B "$work/cmake-build" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$extra" \
        -DCMAKE_EXE_LINKER_FLAGS="$extra" >"$work/cmake.log" 2>&1 &&
        cmake --build "$work/cmake-build" >>"$work/cmake.log" 2>&1 &&
        "$work/cmake-build/consumer"; then
        echo "find_package consumer: ok"
else
        cat "$work/cmake.log"
        echo "find_package consumer: FAILED"
        status=1
fi
exit $status
