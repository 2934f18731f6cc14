#!/bin/sh
# Builds libsdlive.so from a source tree (library only, optimised, with
# debug information) and writes its ABI as libabigail XML: the exported
# symbols and the types of the public header, nothing private.
# The committed baseline (abi/) and the gate's check use this one recipe.
#   abi-dump.sh <source dir> <cc> <output .abi>
set -eu

src=$1 cc=$2 out=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake -S "$src" -B "$work/build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DSDLIVE_BUILD_EXAMPLES=OFF -DBUILD_TESTING=OFF -DSDLIVE_SANITIZE= \
        -DSDLIVE_BUILD_STATIC=OFF >"$work/log" 2>&1 &&
        cmake --build "$work/build" --target sdlive >>"$work/log" 2>&1 ||
        { cat "$work/log"; exit 1; }
lib=$(find "$work/build/src" -name 'libsdlive.so.*.*' -type f | head -n 1)
[ -n "$lib" ] || { echo "no libsdlive.so built"; exit 1; }
abidw --headers-dir "$src/include" --drop-private-types --drop-undefined-syms \
        --no-corpus-path --short-locs --out-file "$out" "$lib"
