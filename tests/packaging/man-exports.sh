#!/bin/sh
# Installs the build into a temporary DESTDIR and checks that every function
# libsdlive.so exports opens a manual page by its own name
# (share/man/man3/<name>.3, a page or a link to its group's page) that
# names it in NAME and declares it in SYNOPSIS.
#   man-exports.sh <build dir> <installed man dir, absolute> <libsdlive.so>
set -eu

build=$1 mandir=$2 lib=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

DESTDIR=$work/root cmake --install "$build" >"$work/install.log" ||
        { cat "$work/install.log"; exit 1; }
man3=$work/root$mandir/man3

nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' |
        sort -u >"$work/exported"
[ -s "$work/exported" ] || { echo "no exported functions found in $lib"; exit 1; }

status=0
while read -r sym; do
        page=$man3/$sym.3
        [ -e "$page" ] || [ ! -e "$page.gz" ] || { gzip -dc "$page.gz" >"$work/$sym.3"; page=$work/$sym.3; }
        if [ ! -e "$page" ]; then
                echo "$sym: no manual page ($page)"
                status=1
                continue
        fi
        # The NAME section lists it, the SYNOPSIS declares it.
        if ! awk -v s="$sym" '
                /^\.Sh / { sec = $2 }
                sec == "NAME" && $1 == ".Nm" && ($2 == s || $2 == s ",") { n = 1 }
                sec == "SYNOPSIS" && ($1 == ".Fn" || $1 == ".Fo") && $2 == s { f = 1 }
                END { exit !(n && f) }' "$page"; then
                echo "$sym: $(basename "$(readlink -f "$page")") does not list it in NAME and SYNOPSIS"
                status=1
        fi
done <"$work/exported"
[ $status -eq 0 ] && echo "man-exports: $(wc -l <"$work/exported") exported functions, each with its page"
exit $status
