#!/usr/bin/env bash
# The elected leader's maintenance pass over 200,000 blobs plus artifacts
# and nodes, at WatchdogSec=1s: every inner-loop item pets, so the pass,
# however long, is progress and the leader is never killed. The pass must
# last at least 2 x WatchdogSec (as the daemon times it), else it proves
# nothing: a faster machine needs a larger inventory.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"
harness_units_install

unit=$(harness_unit_of cluster big)
[[ -n $unit ]] || harness_fail "this build ships no sdlive-cluster@.service"
harness_armed "$unit" || harness_fail "$unit: shipped without WatchdogSec="

blobs=200000
harness_exec_start "$unit" --lease 3s --election-poll 500ms --maintenance-interval 1h \
  --seed-inventory "$blobs"
harness_reload
harness_start_units "$unit"
harness_expect "$unit" WatchdogUSec 1s
watchdog_ms=1000
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
took=$(sed -n 's/.*pass 1 took \(.*\) over [0-9]* items.*/\1/p' <<<"$status")
# ms_of <duration as the daemon prints it: 850ms, 4.2s, 12s, 1min 5s>
ms_of() {
  if [[ $1 =~ ^([0-9]+)(us|ms|s)$ ]]; then
    case ${BASH_REMATCH[2]} in
      us) echo 0 ;; ms) echo "${BASH_REMATCH[1]}" ;; s) echo $((BASH_REMATCH[1] * 1000)) ;;
    esac
  elif [[ $1 =~ ^([0-9]+)\.([0-9])s$ ]]; then
    echo $((BASH_REMATCH[1] * 1000 + BASH_REMATCH[2] * 100))
  elif [[ $1 =~ ^([0-9]+)min( ([0-9]+)s)?$ ]]; then
    echo $(((BASH_REMATCH[1] * 60 + ${BASH_REMATCH[3]:-0}) * 1000))
  else
    harness_fail "cannot read the pass's duration \"$1\" in: $status"
  fi
}
took_ms=$(ms_of "$took") || exit 1
((took_ms >= 2 * watchdog_ms)) ||
  harness_fail "the pass took only $took, < 2 x WatchdogSec (${watchdog_ms} ms): the test proves nothing"
echo "PASS: one maintenance pass over $items items took $took (${took_ms} ms >= 2 x WatchdogSec=1s), NRestarts=0"
