#!/usr/bin/env bash
# The leader example (examples/leader) under a real manager: two nodes on
# one SQLite store, armed at WatchdogSec=1s. One leads and the other stands
# by, both healthy (the standby idles, the leader waits on the lease-lost
# descriptor: both pet). The leader's pass is wedged: the health gate gives
# the lease back, the standby takes over within WatchdogSec + lease + poll,
# the watchdog kills the wedged node (ABRT), it comes back as a standby,
# and the new leader's fenced writes land: two generations wrote, with no
# overlap in the write log.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"

bin=$SDLIVE_BUILD_DIR/examples/leader/sdlive-leader-example
[[ -x $bin ]] || harness_fail "$bin is not built"
state=$HARNESS_LOG_DIR/leader-example
mkdir -p -- "$state" "$HARNESS_WEDGE_DIR"
url=sqlite:$state/store.db
lease_ms=2000 poll_ms=200 watchdog_ms=1000
bound_ms=$((watchdog_ms + lease_ms + poll_ms))

# write_unit <node> [extra args]: the example, armed at 1 s, restarted.
write_unit() {
  local node=$1
  shift
  cat >"$HARNESS_UNIT_HOME/sdlive-test-leader-$node.service" <<UNIT
[Unit]
Description=sdlive test: the leader example, node $node
[Service]
Type=notify
WatchdogSec=1s
Restart=always
RestartSec=500ms
ExecStart=$bin --store $url --node $node --lease ${lease_ms}ms --poll ${poll_ms}ms --pass-interval 200ms --stale-after 1s --wedge-file $HARNESS_WEDGE_DIR/leader-$node $*
$(harness_record_lines)
UNIT
}
a=sdlive-test-leader-a.service b=sdlive-test-leader-b.service
write_unit a --seed-nodes 40
write_unit b
harness_reload

inspect() { "$bin" --store "$url" --inspect; }
leads() { harness_notified "$1" "STATUS=leader: generation $2,"; }
standby() { harness_notified "$1" "STATUS=standby: the lease is held by another node"; }

harness_start_units "$a"
harness_wait 10 "node a to lead" leads "$a" 1
harness_start_units "$b"
harness_wait 10 "node b to stand by" standby "$b"
harness_watch_healthy 3 0 "$a" "$b"
before=$(inspect)
[[ $before =~ ^holder=a\ generation=1\ held=1\ writes=([0-9]+) ]] || harness_fail "unexpected lease before the wedge: $before"
((BASH_REMATCH[1] > 0)) || harness_fail "the leader wrote nothing before the wedge: $before"

touch -- "$HARNESS_WEDGE_DIR/leader-a"
wedged=$(harness_now_us)
harness_wait 10 "node b to take over" leads "$b" 2
takeover_ms=$(harness_ms_since "$wedged")
((takeover_ms <= bound_ms)) ||
  harness_fail "node b took over ${takeover_ms} ms after the wedge, bound WatchdogSec + lease + poll = ${bound_ms} ms"
died() { (($(harness_death_count "$a") > 0)); }
harness_wait 10 "the wedged node a to be killed" died
killed_ms=$(harness_ms_since "$wedged")
death=$(harness_deaths "$a")
[[ $death =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] || harness_fail "$a: died with \"$death\", expected \"watchdog killed ABRT\""
rm -f -- "$HARNESS_WEDGE_DIR/leader-a"
back() { harness_prop_is "$a" NRestarts 1 && harness_prop_is "$a" ActiveState active; }
harness_wait 10 "node a to be restarted" back

# A node checks in and falls silent again: the new leader marks it, fenced.
"$bin" --store "$url" --checkin node-00001 || harness_fail "the check-in failed"
wrote() { [[ $(inspect) =~ generations=2\  ]]; }
harness_wait 10 "the new leader's fenced write" wrote
harness_watch_healthy 2 0 "$b"
after=$(inspect)
[[ $after =~ ^holder=b\ generation=2\ held=1\ .*\ overlaps=0$ ]] || harness_fail "unexpected lease after the failover: $after"
harness_notified "$a" "STATUS=standby: the lease is held by another node" ||
  harness_fail "the restarted node a never stood by"

printf 'leader-example: takeover %d ms after the wedge (bound %d ms), node a killed after %d ms (%s)\n' \
  "$takeover_ms" "$bound_ms" "$killed_ms" "$death"
echo "lease: before $before; after $after"
echo "PASS: the wedged leader lost its lease to the standby within the bound, was killed by the watchdog and came back as a standby; two generations wrote, none overlapping"
