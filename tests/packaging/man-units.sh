#!/bin/sh
# sdlive-units(7) names every shipped service unit, and says "Armed." for
# exactly the units that carry WatchdogSec=.
#   man-units.sh <sdlive-units.7> <dir of rendered units>
set -eu

page=$1 units=$2
status=0
count=0
for unit in "$units"/*.service; do
        [ -e "$unit" ] || continue
        count=$((count + 1))
        name=$(basename "$unit")
        verdict=$(awk -v u="$name" '
                /^\.Sh / { sec = $2 }
                sec == "NAME" && $1 == ".Nm" && ($2 == u || $2 == u ",") { named = 1 }
                found { print (named ? "" : "unnamed ") $0; exit }
                sec == "DESCRIPTION" && $1 == ".It" && $2 == "Pa" && $3 == u { found = 1 }
                END { if (!found) print "missing" }' "$page")
        if grep -q '^WatchdogSec=' "$unit"; then want=Armed.; else want="Not armed"; fi
        case $verdict in
        "$want"*) ;;
        *)
                echo "$name: the page says '$verdict', the unit wants '$want'"
                status=1
                ;;
        esac
done
[ "$count" -gt 0 ] || { echo "no units in $units"; exit 1; }
[ $status -eq 0 ] && echo "man-units: $count units, each documented with its watchdog setting"
exit $status
