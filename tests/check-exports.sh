#!/bin/sh
# Checks that libsdlive.so exports exactly the symbols of its version script,
# all in a version node, and that every function sdlive.h declares is one.
#   check-exports.sh <libsdlive.so> <libsdlive.sym> <sdlive.h> [cc]
set -eu

lib=$1 script=$2 header=$3 cc=${4:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Names listed under "global:" in the version script (comments stripped).
sed -e 's:/\*.*\*/::g' "$script" | awk '
        /\/\*/ { incomment = 1 } incomment { if (/\*\//) incomment = 0; next }
        /global:/ { g = 1; next }
        /local:/ || /}/ { g = 0 }
        g { gsub(/[ \t;]/, ""); if ($0 != "") print }' | sort -u >"$tmp/script"

# Defined dynamic symbols, without the version suffix; the version nodes
# themselves (absolute symbols) are not functions.
nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' >"$tmp/raw"
sed 's/@.*//' "$tmp/raw" | sort -u >"$tmp/exported"

# Functions the public header declares.
"$cc" -E -P -x c "$header" | grep -oE '\bsdlive_[a-z0-9_]+[[:space:]]*\(' |
        sed 's/[[:space:](]//g' | sort -u >"$tmp/header"

status=0
if ! diff -u "$tmp/script" "$tmp/exported" >"$tmp/diff1"; then
        echo "exports differ from $script (- script only, + library only):"
        cat "$tmp/diff1"
        status=1
fi
if grep -v '@@' "$tmp/raw" >"$tmp/unversioned"; then
        echo "exported without a version node:"
        cat "$tmp/unversioned"
        status=1
fi
if ! diff -u "$tmp/header" "$tmp/script" >"$tmp/diff2"; then
        echo "sdlive.h and $script disagree (- header only, + script only):"
        cat "$tmp/diff2"
        status=1
fi
[ $status -eq 0 ] && echo "exports: $(wc -l <"$tmp/exported") symbols, exactly the version script's"
exit $status
