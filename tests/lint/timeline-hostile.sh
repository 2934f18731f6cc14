#!/usr/bin/env bash
# The timeline generator (tests/e2e/timeline.py), its recorder and the
# harness step that runs it, against what the logs they read can hold:
#
#   input     unit names, fault switches, labels and a title with control
#             characters and characters XML refuses: every SVG parses
#             (xml.etree) and no control character reaches the SVG or its
#             text twin; "WATCHDOG=1" or "READY=1" inside STATUS= text is
#             not drawn as a keepalive or readiness, and a daemon event's
#             words inside another log line are not drawn as that event.
#   scale     3,000 and 30,000 labelled marks in one lane: each drawn within
#             SCALE_LIMIT_SEC; prints the seconds.
#   harness   harness_timelines (tests/e2e/harness-timeline.sh): a drawing
#             that outlasts HARNESS_TIMELINE_TIMEOUT_SEC is stopped and said
#             in the log; one that finishes lists its pictures.
#   recorder  a fault switch whose file name holds a line break and a tab
#             is one event of events.tsv, not two.
#
#   timeline-hostile.sh MODE <tests/e2e dir>
set -euo pipefail

mode=$1 e2e=$2
generator=$e2e/timeline.py
work=$(mktemp -d)
# Only this shell cleans up: bash runs the EXIT trap in a background
# subshell too when a signal ends it.
trap '[[ $BASHPID != '$$' ]] || rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
SCALE_LIMIT_SEC=20

# marks N DIR: an events.tsv of one fault and N "health gate closed" lines
# of its unit within 7 s after it.
marks() {
  mkdir -p "$2"
  /usr/bin/python3 - "$1" "$2/events.tsv" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
t0 = 1796116643361953
with open(path, "w") as f:
    f.write("%d\tfault-switch\tcreate bench.service\n" % t0)
    for i in range(n):
        f.write("%d\tbench.service.log\t<4>health gate closed: %d\n" % (t0 + 1000 + i * (7_000_000 // n), i))
PY
}

case $mode in
input)
  /usr/bin/python3 - "$work/events.tsv" <<'PY'
import sys
t0 = 1796116643361953
unit = "evil\x1b[2J\x07\x85.service"
ms = lambda m: t0 + m * 1000
lines = [
    # Two keepalives before the fault: the only ones to draw.
    (ms(-800), "manager.log", unit + ": Got notification message from PID 7 (WATCHDOG=1)"),
    (ms(-400), "manager.log", unit + ": Got notification message from PID 7 (WATCHDOG=1)"),
    (ms(0), "fault-switch", "create " + unit),
    (ms(50), "scenario", unit + ": note \x01\x08\x0b\x0c\x1b]0;x\x07\x7f\u0085\ufffe\uffff end"),
]
# STATUS= text that says WATCHDOG=1 or READY=1 is text.
for i in range(1, 10):
    lines.append((ms(100 * i), "manager.log", unit + ": Got notification message from PID 7 (STATUS=ok, WATCHDOG=1)"))
lines += [
    (ms(1200), "manager.log", unit + ": Got notification message from PID 7 (STATUS=up, READY=1, WATCHDOG=1)"),
    (ms(1300), unit + ".log", "<6>coordinator: worker elected: leading with generation 9 connected"),
    (ms(1400), "manager.log", unit + ": Main process exited, code=killed, status=9/KILL"),
    (ms(1500), "manager.log", unit + ": Changed dead -> start"),
    (ms(1600), "manager.log", unit + ": Got notification message from PID 8 (READY=1, STATUS=serving, WATCHDOG=1)"),
    (ms(1700), unit + ".log", "<5>elected: leading with generation 3 (the fencing token)"),
]
with open(sys.argv[1], "w", encoding="utf-8") as f:
    for t, source, text in lines:
        f.write("%d\t%s\t%s\n" % (t, source, text))
PY
  /usr/bin/python3 "$generator" "$work" --title $'title \e[31m\a' >"$work/drawn" || fail "the generator failed"
  [[ -s $work/drawn ]] || fail "no timeline drawn"
  mapfile -t drawn <"$work/drawn"
  /usr/bin/python3 - "${drawn[@]}" <<'PY'
import re, sys
import xml.etree.ElementTree as ET
SVG = "{http://www.w3.org/2000/svg}"
BAD = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ufffe\uffff]")
for svg in sys.argv[1:]:
    txt = svg[:-len(".svg")] + ".txt"
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        sys.exit("FAIL: %s is not XML: %s" % (svg, e))
    for path in (svg, txt):
        text = open(path, encoding="utf-8").read()
        bad = BAD.search(text)
        if bad:
            sys.exit("FAIL: %s holds U+%04X" % (path, ord(bad.group())))
    texts = [t.text or "" for t in root.iter(SVG + "text")]
    twin = open(txt, encoding="utf-8").read()
    ticks = [l for l in root.iter(SVG + "line") if l.get("stroke") == "#0277bd" and l.get("stroke-width") == "1.5"]
    checks = [
        (len(ticks) == 2, "%d keepalive ticks drawn, 2 sent (the rest is STATUS= text)" % len(ticks)),
        (twin.count("READY=1") == 1, "READY=1 drawn %d times, sent once (the other is after STATUS=)"
         % twin.count("READY=1")),
        ("leads (generation 9)" not in twin, "a worker's log line drawn as leading"),
        ("leads (generation 3)" in twin, "the real election not drawn"),
        (any("evil\\x1b[2J\\x07\\x85.service" == t for t in texts), "the unit's lane not named, escaped"),
        (any("note \\x01\\x08\\x0b\\x0c\\x1b]0;x\\x07\\x7f\\x85\\ufffe\\uffff end" in t for t in texts),
         "the scenario's label not shown, escaped: %r" % [t for t in texts if "note" in t]),
        (root.find(SVG + "title").text == "title \\x1b[31m\\x07", "the title not escaped"),
    ]
    for ok, why in checks:
        if not ok:
            sys.exit("FAIL: %s: %s" % (svg, why))
    print("%s: parses, no control character, %d keepalive ticks, %d labels" % (svg.rsplit("/", 1)[1], len(ticks),
                                                                            len(texts)))
PY
  echo "PASS: hostile log lines drawn as valid XML, escaped, keepalives only as the field they are"
  ;;
scale)
  for n in 3000 30000; do
    marks "$n" "$work/$n"
    start=${EPOCHREALTIME/./}
    timeout "$SCALE_LIMIT_SEC" /usr/bin/python3 "$generator" "$work/$n" >/dev/null && rc=0 || rc=$?
    took_ms=$(((${EPOCHREALTIME/./} - start) / 1000))
    ((rc != 124)) || fail "$n marks: not drawn within $SCALE_LIMIT_SEC s"
    ((rc == 0)) || fail "$n marks: the generator failed (exit $rc)"
    grep -q 'health gate closed' "$work/$n/timeline-1.txt" || fail "$n marks: no label drawn"
    echo "$n marks: drawn in $took_ms ms"
  done
  echo "PASS: 3,000 and 30,000 marks each drawn within $SCALE_LIMIT_SEC s"
  ;;
harness)
  # A recorder that runs until harness_timelines stops it. A TERM that
  # reaches the forked shell before it has become sleep is taken by the
  # shell's own handler and lost, so it is stopped only once it is sleep.
  stand_in_recorder() {
    sleep 60 </dev/null >/dev/null 2>&1 &
    HARNESS_RECORDER_PID=$!
    local _try
    for _try in $(seq 1 100); do
      [[ $(cat "/proc/$HARNESS_RECORDER_PID/comm" 2>/dev/null) != sleep ]] || return 0
      sleep 0.01
    done
    fail "the stand-in recorder never started"
  }
  harness_log() { printf 'e2e: %s\n' "$*" >>"$work/harness.log"; }
  # shellcheck source=../e2e/harness-timeline.sh
  source "$e2e/harness-timeline.sh"
  # A run of a few marks: drawn, its picture listed.
  HARNESS_LOG_DIR=$work/small
  marks 10 "$HARNESS_LOG_DIR"
  stand_in_recorder
  harness_timelines
  grep -q "^e2e: timeline: $work/small/timeline-1.svg$" "$work/harness.log" ||
    fail "the picture of a small run not listed: $(cat "$work/harness.log")"
  # A run too large to draw in the time given: stopped, and said so.
  HARNESS_LOG_DIR=$work/large HARNESS_TIMELINE_TIMEOUT_SEC=0.5
  marks 400000 "$HARNESS_LOG_DIR"
  stand_in_recorder
  start=${EPOCHREALTIME/./}
  harness_timelines
  took_ms=$(((${EPOCHREALTIME/./} - start) / 1000))
  grep -q "^e2e: timeline: drawing stopped after 0.5 s, 0 picture(s) finished (400001 lines in events.tsv)$" \
    "$work/harness.log" || fail "a drawing that ran out of time not reported: $(cat "$work/harness.log")"
  ((took_ms < 10000)) || fail "the teardown's drawing took $took_ms ms with a limit of 0.5 s"
  cat "$work/harness.log"
  echo "PASS: the teardown's drawing lists its pictures, and is stopped and reported after its limit ($took_ms ms)"
  ;;
recorder)
  mkdir -p "$work/logs/deaths" "$work/switch"
  /usr/bin/python3 "$e2e/timeline-recorder.py" "$work/logs" "$work/switch" &
  recorder=$!
  sleep 0.5
  touch "$work/switch/"$'x.service\n1796116643361953\tmanager.log\tx.service: Watchdog timeout (limit 1s)!'
  touch "$work/logs/plain.log"
  printf 'a line\twith a tab\n' >>"$work/logs/plain.log"
  for _ in $(seq 50); do grep -q 'with a tab' "$work/logs/events.tsv" 2>/dev/null && break; sleep 0.1; done
  kill -TERM "$recorder"
  wait "$recorder" || fail "the recorder failed"
  cat "$work/logs/events.tsv"
  awk -F'\t' 'NF != 3 || $1 !~ /^[0-9]+$/ { print "FAIL: not one event: " $0; bad = 1 } END { exit bad }' \
    "$work/logs/events.tsv" >&2 || exit 1
  [[ $(grep -c 'fault-switch' "$work/logs/events.tsv") == 1 ]] || fail "the fault switch is not one event"
  grep -q $'\tplain.log\ta line with a tab$' "$work/logs/events.tsv" || fail "the log line not recorded"
  echo "PASS: every file name and line is one event of three fields"
  ;;
*)
  fail "unknown mode $mode"
  ;;
esac
