# shellcheck shell=bash
# harness-timeline.sh: the timeline of a scenario (every line, death and
# fault switch stamped, the events read back in milliseconds); sourced by
# harness.sh, whose functions it uses.

HARNESS_SOURCE_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)

# The timeline recorder (timeline-recorder.py): stamps every line the
# manager, the units and the death records write, and every fault switch
# created or removed, into $HARNESS_LOG_DIR/events.tsv. Without Debian's
# python3 there is no recorder and no timeline, and the run says so.
harness_recorder_start() {
  if [[ ! -x /usr/bin/python3 ]]; then
    harness_log "no /usr/bin/python3: no timeline for this run"
    return 0
  fi
  : >"$HARNESS_LOG_DIR/events.tsv"
  setpriv --pdeathsig TERM /usr/bin/python3 "$HARNESS_SOURCE_DIR/timeline-recorder.py" \
    "$HARNESS_LOG_DIR" "$HARNESS_WEDGE_DIR" 2>>"$HARNESS_LOG_DIR/recorder.err" &
  HARNESS_RECORDER_PID=$!
}

# harness_event <unit> <text>: a scenario's own mark on the timeline (e.g.
# "fault: SIGKILL" just before it kills), stamped now.
harness_event() {
  [[ -n ${HARNESS_RECORDER_PID:-} ]] || return 0
  printf '%s\tscenario\t%s: %s\n' "$(harness_now_us)" "$1" "$2" >>"$HARNESS_LOG_DIR/events.tsv"
}

# harness_events_count: the lines on the timeline so far (an offset).
harness_events_count() { wc -l <"$HARNESS_LOG_DIR/events.tsv"; }
# harness_event_ms <events offset> <source> <regex> <source> <regex>: ms on
# the timeline from the first line of the first source matching its regex
# to the first of the second, both after the offset (stamped as they were
# written: starting systemctl or a probe takes hundreds of ms on a loaded
# machine). Waits up to 5 s for both lines; fails the run without them.
harness_event_ms() {
  local t0 t1 _try
  for _try in $(seq 1 50); do
    t0=$(tail -n "+$(($1 + 1))" -- "$HARNESS_LOG_DIR/events.tsv" | awk -F'\t' -v s="$2" -v r="$3" '$2 == s && $3 ~ r { print $1; exit }')
    t1=$(tail -n "+$(($1 + 1))" -- "$HARNESS_LOG_DIR/events.tsv" | awk -F'\t' -v s="$4" -v r="$5" '$2 == s && $3 ~ r { print $1; exit }')
    [[ -n $t0 && -n $t1 ]] && { echo $(((t1 - t0) / 1000)); return 0; }
    sleep 0.1
  done
  harness_fail "no timeline for $3 -> $5"
}

# At teardown, once the manager is gone: stops the recorder and draws one
# SVG timeline per injected fault beside the logs (timeline.py), listing
# each. The drawing gets HARNESS_TIMELINE_TIMEOUT_SEC (default 30) seconds;
# one that runs out of time or fails is said in the log, with the pictures
# it finished. Never fails the run.
harness_timelines() {
  [[ -n ${HARNESS_RECORDER_PID:-} ]] || return 0
  kill -TERM "$HARNESS_RECORDER_PID" 2>/dev/null
  wait "$HARNESS_RECORDER_PID" 2>/dev/null || true
  HARNESS_RECORDER_PID=
  local svg rc=0 limit=${HARNESS_TIMELINE_TIMEOUT_SEC:-30} drawn=$HARNESS_LOG_DIR/timelines.list
  timeout --kill-after=5 "$limit" /usr/bin/python3 "$HARNESS_SOURCE_DIR/timeline.py" "$HARNESS_LOG_DIR" \
    >"$drawn" 2>>"$HARNESS_LOG_DIR/recorder.err" || rc=$?
  while read -r svg; do
    harness_log "timeline: $svg"
  done <"$drawn"
  if ((rc == 124 || rc == 137)); then
    harness_log "timeline: drawing stopped after ${limit} s, $(wc -l <"$drawn") picture(s) finished ($(wc -l <"$HARNESS_LOG_DIR/events.tsv") lines in events.tsv)"
  elif ((rc != 0)); then
    harness_log "timeline: drawing failed (exit $rc): $(tail -n 1 "$HARNESS_LOG_DIR/recorder.err")"
  fi
}
