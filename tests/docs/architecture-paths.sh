#!/bin/sh
# SPDX-License-Identifier: MIT
# Every file or folder docs/architecture.md names exists: a `quoted` name
# with a slash is a path from the top of the tree; a bare file name (a.c,
# b.h) must be a file somewhere under src/, include/, examples/ or units/;
# a pattern (examples/<daemon>/) is not a name.
# Usage: architecture-paths.sh TOP
set -u
top=$1
page=$top/docs/architecture.md
missing=0 checked=0
for name in $(grep -o '`[^` ]*`' "$page" | tr -d '`' | sort -u); do
        case $name in
        *"<"*) ;; # a pattern such as examples/<daemon>/
        */*) [ -e "$top/$name" ] || { echo "missing: $name"; missing=$((missing + 1)); }
             checked=$((checked + 1)) ;;
        *.c|*.h|*.in)
             [ -n "$(find "$top/src" "$top/include" "$top/examples" "$top/units" -name "$name" -print -quit)" ] ||
                     { echo "missing: $name"; missing=$((missing + 1)); }
             checked=$((checked + 1)) ;;
        esac
done
echo "docs/architecture.md: $checked names checked, $missing missing"
[ "$checked" -gt 20 ] || { echo "too few names found: is the page there?"; exit 1; }
[ "$missing" -eq 0 ]
