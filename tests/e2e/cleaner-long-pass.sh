#!/usr/bin/env bash
# Scenario 2: the cleaner, during one pass that lasts at least 3 x
# WatchdogSec (a generated tree walked at --max-rate), is not killed: it pets
# per entry, so a long pass is progress, not a wedge.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"
harness_units_install

unit=$(harness_unit_of cleaner)
[[ -n $unit ]] || harness_fail "the cleaner is not in this build"
harness_armed "$unit" || harness_fail "$unit: shipped without WatchdogSec="

entries=4000 rate=1000 # >= 4 s per pass against WatchdogSec=1s
blobs=$(harness_state_dir cleaner)/blobs
private=$(dirname -- "$(harness_state_dir cleaner)") # what systemd makes, mode 0700
[[ -d $private ]] || mkdir -m 0700 -- "$private"
mkdir -p -- "$blobs"
"$(harness_binary cleaner)" --blob-dir "$blobs" --populate "$entries" 2>>"$HARNESS_LOG_DIR/populate.log" ||
  harness_fail "cannot populate $blobs (see $HARNESS_LOG_DIR/populate.log)"
scanned_min=$entries

harness_exec_start "$unit" --max-rate "$rate" --pass-interval 1h
harness_reload
harness_start_units "$unit"
start=$(harness_now_us)
harness_expect "$unit" WatchdogUSec 1s

pass_done() { [[ $(harness_prop "$unit" StatusText) == "idle: pass 1 took"* ]]; }
seen_in_pass=0
while ! pass_done; do
  harness_expect_healthy "$unit" 0
  [[ $(harness_prop "$unit" StatusText) == "pass 1: scanned"* ]] && seen_in_pass=1
  (($(harness_now_us) - start < 30000000)) || harness_fail "the pass did not finish in 30 s"
  sleep 0.25
done
took_ms=$(harness_ms_since "$start")
harness_show "$unit"
harness_expect_healthy "$unit" 0
((seen_in_pass)) || harness_fail "never saw the cleaner report progress inside the pass"
((took_ms >= 3000)) || harness_fail "the pass took only ${took_ms} ms, < 3 x WatchdogSec: the test proves nothing"
status=$(harness_prop "$unit" StatusText)
scanned=$(sed -n 's/.*scanned \([0-9]*\),.*/\1/p' <<<"$status")
((scanned >= scanned_min)) || harness_fail "the pass scanned $scanned entries, expected >= $scanned_min"
echo "PASS: a ${took_ms} ms pass over $scanned entries (WatchdogSec=1s) with NRestarts=0"
