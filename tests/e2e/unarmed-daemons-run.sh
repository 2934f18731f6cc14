#!/usr/bin/env bash
# Scenario 4: the sentinel and the acceptor never pet, and their units do not
# arm the watchdog: they run 5 x the interval with no restart. Negative
# control: a drop-in arming WatchdogSec=1s on the sentinel gets it killed by
# the watchdog, proof that the exclusion rule matters and that this harness
# sees kills.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"
harness_units_install

sentinel=$(harness_unit_of sentinel)
acceptor=$(harness_unit_of acceptor)
[[ -n $sentinel ]] || harness_fail "the sentinel is not in this build"
units=("$sentinel")
if [[ -n $acceptor ]]; then units+=("$acceptor"); else harness_log "acceptor: not in this build, not checked"; fi

for unit in "${units[@]}"; do
  ! harness_armed "$unit" || harness_fail "$unit: shipped with WatchdogSec=, but it never pets"
done
harness_start_units "${units[@]}"
for unit in "${units[@]}"; do
  harness_expect "$unit" WatchdogUSec 0
done

socket=$XDG_RUNTIME_DIR/sdlive-acceptor/acceptor.sock
ping_acceptor() {
  local reply
  reply=$(harness_unix_request "$socket" ping) || harness_fail "the acceptor did not answer on $socket"
  [[ $reply == pong ]] || harness_fail "the acceptor answered \"$reply\" to ping"
}
[[ -n $acceptor ]] && ping_acceptor

harness_log "running ${units[*]} unarmed for 5 x 1 s"
harness_watch_healthy 5.5 0 "${units[@]}"
[[ -n $acceptor ]] && ping_acceptor
harness_show "${units[@]}"
status=$(harness_prop "$sentinel" StatusText)
[[ $status =~ ([0-9]+)\ wake-ups ]] && ((BASH_REMATCH[1] >= 5)) ||
  harness_fail "$sentinel: expected >= 5 wake-ups in its status, got \"$status\""

# Negative control: arm the sentinel as if it petted.
harness_dropin "$sentinel" 50-arm-watchdog "WatchdogSec=1s"
harness_reload
systemctl --user stop -- "$sentinel"
before=$(harness_death_count "$sentinel")
harness_start_units "$sentinel"
armed_at=$(harness_now_us)
harness_expect "$sentinel" WatchdogUSec 1s
died() { (($(harness_death_count "$sentinel") > before)); }
harness_wait 10 "the armed sentinel to be killed" died
killed_ms=$(harness_ms_since "$armed_at")
death=$(harness_deaths "$sentinel" | sed -n "$((before + 1))p")
[[ $death =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] ||
  harness_fail "$sentinel: armed, it died with \"$death\", expected a watchdog kill"
echo "negative control: $sentinel with WatchdogSec=1s was killed after ${killed_ms} ms ($death) though it was healthy"
echo "PASS: ${units[*]} ran unarmed 5 x 1 s with NRestarts=0; arming the sentinel gets it killed"
