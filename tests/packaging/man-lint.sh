#!/bin/sh
# Every rendered manual page is clean under mandoc's linter: no error, no
# warning, no style note. Cross references to pages of other packages are
# not checked (mandoc only knows its own database).
#   man-lint.sh <page>...
set -eu

status=0
count=0
for page in "$@"; do
        count=$((count + 1))
        out=$(mandoc -T lint -W style "$page" 2>&1 | grep -v -e 'referenced manual not found' -e 'mandoc.db' || true)
        if [ -n "$out" ]; then
                printf '%s\n' "$out"
                status=1
        fi
done
[ "$count" -gt 0 ] || { echo "no manual pages given"; exit 1; }
[ $status -eq 0 ] && echo "man-lint: $count pages clean under mandoc -T lint -W style"
exit $status
