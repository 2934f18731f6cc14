#!/bin/sh
# The options a daemon's section 8 page documents (.It Fl lines of OPTIONS)
# are exactly those its --help lists.
#   man-options.sh <page.8> <daemon binary> [--job-mode-left-out]
# With --job-mode-left-out (the worker built without the cluster platform)
# the job-mode options the page documents (tests/options/job-mode-options.sh)
# are left out of this build: --help must not list them, and the page's
# other options must match.
set -eu

page=$1 bin=$2
shift 2
if [ "${1:-}" = --job-mode-left-out ]; then
        left_out=$(sh "$(dirname "$0")/../options/job-mode-options.sh" "$page")
        # shellcheck disable=SC2086 # one option per word
        set -- $left_out
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --help: option entries are indented by at most four spaces; continuation
# lines are indented further.
"$bin" --help | grep -E '^ {1,4}-' |
        grep -oE '(^|[ ,])--?[A-Za-z0-9][A-Za-z0-9-]*' | tr -d ' ,' | sort -u >"$work/help"

# The page: every Fl argument of an .It line in the OPTIONS section;
# ".Fl -interval" is --interval, ".Fl h" is -h.
awk '
        /^\.Sh / { sec = $2 }
        sec == "OPTIONS" && $1 == ".It" {
                for (i = 2; i < NF; i++)
                        if ($i == "Fl") print "-" $(i + 1)
        }' "$page" | tr -d ',' | sort -u >"$work/page"

[ -s "$work/help" ] || { echo "$bin --help lists no options"; exit 1; }
for absent in "$@"; do
        ! grep -qxF -- "$absent" "$work/help" ||
                { echo "$(basename "$bin") --help lists $absent, which this build should leave out"; exit 1; }
        grep -qxF -- "$absent" "$work/page" ||
                { echo "$(basename "$page") does not document $absent"; exit 1; }
        grep -vxF -- "$absent" "$work/page" >"$work/page.left" || true
        mv "$work/page.left" "$work/page"
done
if ! diff -u "$work/help" "$work/page" >"$work/diff"; then
        echo "$(basename "$page") and $(basename "$bin") --help disagree (- help only, + page only):"
        cat "$work/diff"
        exit 1
fi
echo "man-options: $(basename "$page"): $(wc -l <"$work/help") options, as --help lists them${1:+ ($# documented options left out of this build)}"
