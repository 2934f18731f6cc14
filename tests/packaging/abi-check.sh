#!/bin/sh
# The ABI gate: libsdlive.so built from this tree against the released
# baseline (abi/libsdlive.so.0.abi). Fails on any change to a released
# symbol (removed, re-versioned, retyped, or a public type it reaches
# changed), and on any change to sdlive_options but fields appended at its
# end. Added functions and appended fields pass.
#   abi-check.sh <source dir> <cc> <abi dir>
set -eu

src=$1 cc=$2 abi=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
base=$abi/libsdlive.so.0.abi

sh "$here/abi-dump.sh" "$src" "$cc" "$work/new.abi"

echo "== abidiff against the baseline (additions listed, they pass)"
abidiff --suppressions "$abi/sdlive.abignore" "$base" "$work/new.abi" || true
status=0
abidiff --no-added-syms --suppressions "$abi/sdlive.abignore" "$base" "$work/new.abi" \
        >"$work/verdict" 2>&1 || {
        echo "FAIL: incompatible change to released symbols (abidiff status $?):"
        cat "$work/verdict"
        status=1
}

# Fields of a struct as "offset name type", the type resolved to a name.
#   members <file.abi> <struct name>
members() {
        awk -v want="$2" '
                # The value of attribute key on line l ("" when absent).
                function attr(l, key,    i, rest) {
                        i = index(l, " " key "=\047")
                        if (!i) return ""
                        rest = substr(l, i + length(key) + 3)
                        return substr(rest, 1, index(rest, "\047") - 1)
                }
                function typename(t, depth) {
                        if (named[t] != "") return named[t]
                        if (depth > 8 || kind[t] == "") return "?"
                        return kind[t] "(" typename(under[t], depth + 1) ")"
                }
                { line[NR] = $0 }
                attr($0, "id") != "" {
                        id = attr($0, "id")
                        named[id] = attr($0, "name")
                        under[id] = attr($0, "type-id")
                        if (match($0, /<[a-z-]+/)) kind[id] = substr($0, RSTART + 1, RLENGTH - 1)
                }
                END {
                        for (i = 1; i <= NR; i++) {
                                l = line[i]
                                if (l ~ /<class-decl / && attr(l, "name") == want) { inside = 1; continue }
                                if (!inside) continue
                                if (l ~ /<\/class-decl>/) break
                                if (attr(l, "layout-offset-in-bits") != "") off = attr(l, "layout-offset-in-bits")
                                if (l ~ /<var-decl /) print off, attr(l, "name"), typename(attr(l, "type-id"), 0)
                        }
                }' "$1"
}

echo "== sdlive_options layout"
members "$base" sdlive_options >"$work/released"
members "$work/new.abi" sdlive_options >"$work/now"
[ -s "$work/released" ] || { echo "FAIL: no sdlive_options in $base"; exit 1; }
echo "released:"; sed 's/^/  /' "$work/released"
echo "now:"; sed 's/^/  /' "$work/now"
n=$(wc -l <"$work/released")
if ! head -n "$n" "$work/now" | cmp -s - "$work/released"; then
        echo "FAIL: sdlive_options' released fields moved, changed type or went away"
        status=1
fi

[ $status -eq 0 ] && echo "abi: compatible with the released libsdlive.so.0"
exit $status
