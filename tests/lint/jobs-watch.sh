#!/usr/bin/env bash
# sdlive-jobs --watch on a pseudo-terminal (script(1)) while a run advances
# at 40 jobs/s: three frames, each starting with cursor home + clear, the
# complete run marked "complete", the advancing one with a progress bar
# whose percentage and done count grow, a rate near 40 jobs/s, and the
# lease; piped (no terminal), frames without escapes; --count without
# --watch is bad usage.
#   jobs-watch.sh <sdlive-jobs> <jobs-watch-fixture>
set -euo pipefail

jobs=$1 fixture=$2
work=$(mktemp -d)
fixture_pid=
trap '[[ -z $fixture_pid ]] || kill "$fixture_pid" 2>/dev/null; rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
url=sqlite:$work/store.db

"$fixture" "$url" 8 >"$work/fixture.out" &
fixture_pid=$!
for _ in $(seq 100); do grep -q ready "$work/fixture.out" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$work/fixture.out" || fail "the fixture did not get ready"

script -qfec "$jobs --store $url --watch --count 3" "$work/tty" >/dev/null </dev/null
frames=$(grep -o $'\033\[H\033\[J' "$work/tty" | wc -l)
((frames == 3)) || fail "$frames frames redrawn (cursor home + clear), expected 3"
tr -d '\r' <"$work/tty" | sed $'s/\033\\[H\033\\[J/\\n=== frame\\n/g' >"$work/frames"
cat "$work/frames"
mapfile -t run2 < <(grep -E '^ +2 +400 ' "$work/frames")
((${#run2[@]} == 3)) || fail "run 2 shown ${#run2[@]} times, expected 3"
mapfile -t run1 < <(grep -E '^ +1 +3 +3 .* complete$' "$work/frames")
((${#run1[@]} == 3)) || fail "the complete run 1 not shown as complete in each frame"
prev_done=0 prev_pct=-1
for i in 0 1 2; do
  read -r _ total done _ _ _ rate bar pct <<<"${run2[i]}"
  [[ $bar =~ ^\[#*\.+\]$ ]] || fail "frame $((i + 1)): no progress bar: ${run2[i]}"
  pct=${pct%\%}
  ((done > prev_done && pct >= prev_pct && pct == done * 100 / total)) ||
    fail "frame $((i + 1)): done=$done ($pct%) after done=$prev_done ($prev_pct%)"
  if ((i == 0)); then
    [[ $rate == - ]] || fail "frame 1: a rate ($rate) before two frames"
  else
    [[ $rate =~ ^[0-9]+\.[0-9]$ ]] && ((${rate%.*} >= 20 && ${rate%.*} <= 60)) ||
      fail "frame $((i + 1)): $rate jobs/s, expected about 40 (20 to 60)"
  fi
  prev_done=$done prev_pct=$pct
done
[[ $(grep -c '^lease cluster: held by node-a, generation 1$' "$work/frames") == 3 ]] || fail "the lease line is missing"
echo "watch: 3 frames on a terminal; run 2 from ${run2[0]##* } to ${run2[2]##* }, rate $rate jobs/s"

"$jobs" --store "$url" --watch --count 2 >"$work/piped"
! grep -q $'\033' "$work/piped" || fail "escape sequences written to a pipe"
[[ $(grep -c '^sdlive-jobs --watch' "$work/piped") == 2 ]] || fail "not 2 frames on a pipe: $(cat "$work/piped")"
echo "watch: 2 frames on a pipe, no escapes"

set +e
"$jobs" --store "$url" --count 2 >/dev/null 2>&1
status=$?
set -e
((status == 2)) || fail "--count without --watch: exit status $status, expected 2"
echo "PASS: sdlive-jobs --watch redraws counts, rate and progress once a second"
