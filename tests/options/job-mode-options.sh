#!/bin/sh
# SPDX-License-Identifier: MIT
# Prints the worker's job-mode options, one per line, as its page
# documents them: the OPTIONS entries from the one whose text begins
# "Job mode" to the one that text names after "from here to". The page is
# the one list the tests read for a build without the cluster platform,
# which leaves these options out; man-options-worker checks the page
# against the options the default build's --help lists.
#   job-mode-options.sh <sdlive-worker.8>
set -eu

awk '
        /^\.Sh / { sec = $2; next }
        sec != "OPTIONS" { next }
        $1 == ".It" && $2 == "Fl" {
                item = "-" $3
                if (first != "") {
                        list = list item "\n"
                        if (item == last) { done = 1; exit }
                }
                next
        }
        first == "" && /^Job mode/ { first = item; list = item "\n"; next }
        first != "" && last == "" && /from here to$/ { naming = 1; next }
        naming && $1 == ".Fl" { last = "-" $2; naming = 0 }
        END {
                if (!done) {
                        print "job-mode-options.sh: " FILENAME " has no entry \"Job mode ... from here to .Fl OPTION\"" > "/dev/stderr"
                        exit 1
                }
                printf "%s", list
        }' "$1"
