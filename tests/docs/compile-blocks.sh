#!/bin/sh
# Compiles every C code block (```c fences) of the given Markdown files
# against sdlive.h, so that no example in the docs rots.
#   compile-blocks.sh <cc> <include dir> <file.md>...
#
# A block is a translation unit as written. The line just before its fence
# may hold an HTML comment (invisible on the rendered page) saying how to
# compile it:
#   <!-- compile: declare: <C declarations> -->
#       the declarations go first, after the standard headers and sdlive.h
#       (for the functions and objects of the reader's own daemon);
#   <!-- compile: function; declare: ... -->
#       the block is a fragment: it becomes the body of a function.
# Nothing is ever skipped: a block compiles, or the test fails.
set -eu

cc=$1 include=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Splits each file into $tmp/block-N.c (with a prelude) and writes one line
# per block to $tmp/list: "N file:line".
awk -v dir="$tmp" '
        FNR == 1 { prev = "" }
        !inblock && /^```c[ \t]*$/ {
                n++
                inblock = 1
                directive = ""
                if (prev ~ /^<!-- compile: .* -->$/) {
                        directive = prev
                        sub(/^<!-- compile: /, "", directive)
                        sub(/ -->$/, "", directive)
                }
                wrap = directive ~ /(^|; *)function($|;)/
                decl = ""
                if (match(directive, /declare: .*/))
                        decl = substr(directive, RSTART + 9)
                out = dir "/block-" n ".c"
                print "#include <errno.h>" > out
                print "#include <poll.h>" > out
                print "#include <stdbool.h>" > out
                print "#include <stddef.h>" > out
                print "#include <stdint.h>" > out
                print "#include <stdio.h>" > out
                print "#include <stdlib.h>" > out
                print "#include <string.h>" > out
                print "#include <sdlive.h>" > out
                if (decl != "")
                        print decl > out
                if (wrap)
                        print "void doc_block_" n "(void);\nvoid doc_block_" n "(void) {" > out
                printf "#line %d \"%s\"\n", FNR + 1, FILENAME > out
                print n " " FILENAME ":" FNR > (dir "/list")
                next
        }
        inblock && /^```[ \t]*$/ {
                if (wrap)
                        print "}" > out
                close(out)
                inblock = 0
                next
        }
        inblock { print > out; next }
        { prev = $0 }
        END {
                if (inblock) {
                        print "unterminated ```c block in " FILENAME > "/dev/stderr"
                        exit 1
                }
        }' "$@"

[ -s "$tmp/list" ] || { echo "no C block found in: $*"; exit 1; }
status=0 total=0 ok=0
while read -r n where; do
        total=$((total + 1))
        if "$cc" -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror \
                -Wno-unused-function -Wno-unused-variable -Wno-unused-parameter \
                -I"$include" -c "$tmp/block-$n.c" -o "$tmp/block-$n.o" 2>"$tmp/err-$n"; then
                ok=$((ok + 1))
                echo "ok   $where"
        else
                echo "FAIL $where"
                sed 's/^/     /' "$tmp/err-$n"
                status=1
        fi
done <"$tmp/list"
echo "C blocks compiled: $ok of $total"
exit $status
