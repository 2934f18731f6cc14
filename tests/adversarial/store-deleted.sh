#!/usr/bin/env bash
# The store deleted or replaced under a running SQLite leader, then another
# member started (an unlucky operator, or a hostile user who can write the
# store's directory):
#   1. deleted: the leader (with nothing to write, so its lease refresh is
#      what notices) steps down within one renew interval (lease/3);
#      a member started meanwhile refuses to create an empty store beside
#      the remaining write-ahead log; once the operator removes it, a new
#      store (a new identity) gets exactly one leader, and no write of the
#      old term lands in it;
#   2. replaced by a copy (same identity, another file): the leader (busy
#      with fenced maintenance writes) steps down within one renew
#      interval, then exactly one leader, overlaps 0.
# Never two leaders at once: whenever a member is elected, every other has
# logged its step-down.
#
#   store-deleted.sh SDLIVE_CLUSTER_BINARY
set -euo pipefail

bin=$1
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
adv_begin store-deleted
LEASE_MS=3000 POLL_MS=200
RENEW_MS=$((LEASE_MS / 3))
# Detection waits for the next renewal; the margin is for a loaded machine.
MARGIN_MS=700
db=$work/cluster.db url=sqlite:$work/cluster.db
field() { inspect | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# Elections won so far by node.
wins() { count "$1" 'elected:'; }
losses() { count "$1" 'lease lost'; }

start() { member_start "$1" --maintenance-interval 300ms --maintenance-rate 500 "${@:2}"; }

# One leader at a time: a member's elections never outnumber the losses of
# the others by more than one leader in all.
one_leader() {
  local leading=0 n
  for n in "$@"; do leading=$((leading + $(wins "$n") - $(losses "$n"))); done
  ((leading <= 1))
}

lost_more() { (($(losses "$1") > $2)); }
has_leader() { inspect | grep -q held=1; }
# steps_down <node> <since_ms> <losses before>: prints how long after
# since_ms the node logged its step-down.
steps_down() {
  local node=$1 t0=$2 before=$3
  wait_for $((RENEW_MS + MARGIN_MS + 2000)) "$node steps down" lost_more "$node" "$before"
  echo $(($(now_ms) - t0))
}

# 1. Deleted.
start a
wait_for 5000 "a leads" holder_is a
sleep 1
before=$(losses a)
gen=$(field generation)
t0=$(now_ms)
rm -- "$db"
took=$(steps_down a "$t0" "$before")
((took <= RENEW_MS + MARGIN_MS)) || fail "a stepped down ${took}ms after the deletion (renew interval ${RENEW_MS}ms)"
grep -q 'deleted or replaced' "$work/a.log" || fail "a did not say why it stepped down"
echo "1. deleted: a (generation $gen) stepped down ${took}ms after the deletion (renew interval ${RENEW_MS}ms)"

# A member started now must not create an empty store beside the log.
set +e
timeout 10 "$bin" --store "$url" --node b --lease "${LEASE_MS}ms" --election-poll "${POLL_MS}ms" >>"$work/b.log" 2>&1
status=$?
set -e
((status != 0 && status != 124)) || fail "b started on a deleted store (status $status)"
log_has b 'write-ahead log' || fail "b did not say why it refused"
[[ ! -e $db ]] || fail "b created $db"
echo "   a member started meanwhile refused to create an empty store (exit $status)"

# The operator decides: a new, empty store.
rm -f -- "$db-wal" "$db-shm"
start b --seed-inventory 5000
wait_for $((LEASE_MS * 2)) "a leader in the new store" has_leader
sleep 2
one_leader a b || fail "two leaders at once: $(grep -h -e elected: -e 'lease lost' "$work"/*.log)"
new_id_leader=$(holder)
[[ $(field overlaps) == 0 ]] || fail "overlapping writes in the new store: $(inspect)"
echo "   new store: leader $new_id_leader, overlaps 0, one leader at a time"

# 2. Replaced by a copy of itself.
L=$new_id_leader
before=$(losses "$L")
sqlite3 "$db" ".backup '$work/copy.db'"
t0=$(now_ms)
mv -- "$work/copy.db" "$db"
took=$(steps_down "$L" "$t0" "$before")
((took <= RENEW_MS + MARGIN_MS)) || fail "$L stepped down ${took}ms after the replacement (renew interval ${RENEW_MS}ms)"
wait_for $((LEASE_MS * 3)) "a leader in the replacement" has_leader
sleep 2
one_leader a b || fail "two leaders at once: $(grep -h -e elected: -e 'lease lost' "$work"/*.log)"
[[ $(field overlaps) == 0 ]] || fail "overlapping writes after the replacement: $(inspect)"
echo "2. replaced: $L stepped down ${took}ms after the replacement; leader now $(holder), overlaps 0"

for node in a b; do
  kill -TERM "${pid_of[$node]}"
  wait "${pid_of[$node]}" || fail "$node exited with status $?"
done
echo "PASS: $(inspect | tr '\n' ' ')"
