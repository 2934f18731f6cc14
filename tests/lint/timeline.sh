#!/usr/bin/env bash
# The timeline generator (tests/e2e/timeline.py) on recorded runs: for each
# fixture <name>-events.tsv (an events.tsv the recorder wrote during a real
# run, lines the generator does not read left out), as many pictures as
# <name>-pictures says (one per fault; faults within 1 s share one), the
# events of its text twin exactly as <name>-expected.txt lists them ("ms
# unit label", the ms from the fault), and the SVG itself: it parses, has
# one lane per unit of its text, one tick per keepalive in its window, a
# label for every listed event, and renders to PNG (rsvg-convert).
#   timeline.sh <timeline.py> <fixture dir>
set -euo pipefail

generator=$1 fixtures=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
command -v rsvg-convert >/dev/null || fail "rsvg-convert not installed (librsvg2-bin, scripts/deps.sh)"

checked=0
for events in "$fixtures"/*-events.tsv; do
  name=$(basename "$events" -events.tsv)
  dir=$work/$name
  mkdir -p "$dir"
  cp "$events" "$dir/events.tsv"
  /usr/bin/python3 "$generator" "$dir" >"$dir/drawn"
  want=$(cat "$fixtures/$name-pictures")
  [[ $(wc -l <"$dir/drawn") == "$want" ]] || fail "$name: $(wc -l <"$dir/drawn") timelines drawn, expected $want (one per fault)"
  # Every expected event in some picture's text, at its ms.
  while read -r ms unit label; do
    grep -qE "^ *$ms ms  $unit +$(sed 's/[][().*+?^$|\\]/\\&/g' <<<"$label")$" "$dir"/timeline-*.txt ||
      fail "$name: '$label' of $unit at $ms ms not in the timeline: $(cat "$dir"/timeline-*.txt)"
  done <"$fixtures/$name-expected.txt"
  for svg in $(cat "$dir/drawn"); do
    /usr/bin/python3 - "$svg" "${svg%.svg}.txt" <<'PY'
import sys
import xml.etree.ElementTree as ET
svg, txt = sys.argv[1], sys.argv[2]
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(svg).getroot()
texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
lines = open(txt).read().splitlines()[2:]
units = sorted({l.split()[2] for l in lines})
for u in units:
    assert u in texts, "no lane for %s" % u
for l in lines:
    ms, unit, label = l.split(None, 3)[0], l.split()[2], l.split(None, 3)[3].strip()
    want = "%s %+d ms" % (label, int(ms))
    assert want in texts, "no label %r in the SVG" % want
print("%s: %d lanes, %d labelled events" % (svg.rsplit("/", 1)[1], len(units), len(lines)))
PY
    rsvg-convert -o "${svg%.svg}.png" "$svg" || fail "$svg does not render"
    [[ -s ${svg%.svg}.png ]] || fail "$svg rendered empty"
  done
  sed 's/^/  /' "$dir"/timeline-1.txt
  checked=$((checked + 1))
done
((checked >= 1)) || fail "no fixture in $fixtures"
echo "PASS: $checked recorded runs drawn; every expected event in the text and the picture"
