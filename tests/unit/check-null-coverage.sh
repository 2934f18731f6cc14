#!/bin/sh
# Every function of the version script is called in the NULL test
# (test_null_everywhere in test_lifecycle.c), so a new function cannot
# escape the header's NULL rule unnoticed.
#   check-null-coverage.sh <libsdlive.sym> <test_lifecycle.c>
set -eu

script=$1 test=$2
body=$(sed -n '/^static void test_null_everywhere/,/^}/p' "$test")
[ -n "$body" ] || { echo "no test_null_everywhere in $test"; exit 1; }
missing=0 n=0
for fn in $(sed -e 's:/\*.*\*/::g' "$script" | awk '
        /\/\*/ { c = 1 } c { if (/\*\//) c = 0; next }
        /global:/ { g = 1; next }
        /local:/ || /}/ { g = 0 }
        g { gsub(/[ \t;]/, ""); if ($0 != "") print }'); do
        n=$((n + 1))
        if ! printf '%s\n' "$body" | grep -q "\b$fn("; then
                echo "not called with NULL: $fn"
                missing=1
        fi
done
[ $missing -eq 0 ] && echo "NULL test calls all $n exported functions"
exit $missing
