#!/usr/bin/env bash
# The elected leader's maintenance pass over 100,000 blobs plus artifacts
# and nodes, at WatchdogSec=1s: every inner-loop item pets, so the pass,
# however long, is progress and the leader is never killed.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"
harness_units_install

unit=$(harness_unit_of cluster big)
[[ -n $unit ]] || harness_fail "this build ships no sdlive-cluster@.service"
harness_armed "$unit" || harness_fail "$unit: shipped without WatchdogSec="

blobs=100000
harness_exec_start "$unit" --lease 3s --election-poll 500ms --maintenance-interval 1h \
  --seed-inventory "$blobs"
harness_reload
harness_start_units "$unit"
harness_expect "$unit" WatchdogUSec 1s
start=$(harness_now_us)

pass_done() { [[ $(harness_prop "$unit" StatusText) == *"pass 1 took"* ]]; }
while ! pass_done; do
  harness_expect_healthy "$unit" 0
  (($(harness_now_us) - start < 60000000)) || harness_fail "the pass did not finish in 60 s"
  sleep 0.25
done
harness_show "$unit"
harness_expect_healthy "$unit" 0
status=$(harness_prop "$unit" StatusText)
items=$(sed -n 's/.* over \([0-9]*\) items.*/\1/p' <<<"$status")
((items >= blobs)) || harness_fail "the pass covered $items items, expected >= $blobs"
took=$(sed -n 's/.*pass 1 took \([^ ]*\) over.*/\1/p' <<<"$status")
echo "PASS: one maintenance pass over $items items took $took at WatchdogSec=1s, NRestarts=0"
