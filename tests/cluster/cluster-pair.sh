#!/usr/bin/env bash
# Two sdlive-cluster processes sharing one store, without systemd:
#   1. exactly one of them leads;
#   2. the leader paused (SIGSTOP) past its lease: the standby takes over;
#      resumed (SIGCONT), the old leader's writes are rejected by the fence,
#      it goes back to standby, and the write log shows no overlap;
#   3. SIGTERM of the leader: it releases the lease, the standby takes over
#      within one election poll, the stopped one exits 0 within 1 s;
#   4. (PostgreSQL) the server restarts under the pair: both survive, one
#      leads, still no overlap.
#
#   cluster-pair.sh sqlite|postgresql SDLIVE_CLUSTER_BINARY [PG_SERVER_SCRIPT]
set -euo pipefail

backend=$1 bin=$2 pg=${3:-}
# The adversarial tests' helpers: $work, clean-up, fail, wait_for, members.
source "$(dirname "${BASH_SOURCE[0]}")/../adversarial/lib.sh"
adv_begin cluster-pair
LEASE_MS=2000 POLL_MS=200
adv_on_exit() { [[ $backend != postgresql ]] || "$pg" stop "$work" >/dev/null 2>&1; }

case $backend in
sqlite) url=sqlite:$work/cluster.db ;;
postgresql)
  "$pg" start "$work" >/dev/null
  url=$("$pg" url "$work") ;;
*) echo "usage: $0 sqlite|postgresql BINARY [PG_SCRIPT]" >&2; exit 2 ;;
esac

overlaps() { inspect | sed -n 's/.* overlaps=\([0-9]*\)$/\1/p'; }
# within <ms> <command...>: the command succeeds before the time is up.
within() {
  local deadline=$(($(now_ms) + $1))
  shift
  until "$@"; do
    (($(now_ms) < deadline)) || return 1
    sleep 0.02
  done
}
has_holder() { [[ -n $(holder) ]]; }
start() { member_start "$1" --maintenance-interval 500ms --maintenance-rate 200 "${@:2}"; }
other() { [[ $1 == a ]] && echo b || echo a; }

# 1. One leader.
start a --seed-inventory 30000
wait_for 5000 "a leads" holder_is a
start b
wait_for 3000 "b is standby" log_has b 'standby: lease "cluster" held by a'
sleep 1
[[ $(holder) == a ]] || fail "leadership moved without cause"
(($(grep -c 'elected:' "$work/a.log" "$work/b.log" | awk -F: '{s += $2} END {print s}') == 1)) ||
  fail "more than one election won"
echo "1. one leader (a), b waits"

# 2. Pause the leader past its lease. With SQLite, a process stopped inside
# a write transaction keeps the database's write lock: nobody, not even the
# standby, can write until it runs again or dies (under systemd the watchdog
# kills it; docs/store.md). Such a pause says nothing about fencing, so the
# leader is resumed and the scenario taken again with whoever then leads, up
# to three times.
L=a S=b
for try in 1 2 3; do
  seen_l=$(wc -l <"$work/$L.log") seen_s=$(wc -l <"$work/$S.log")
  kill -STOP "${pid_of[$L]}"
  t0=$(now_ms)
  within $((LEASE_MS + 2 * POLL_MS + 1000)) holder_is "$S" && break
  [[ $backend == sqlite ]] && tail -n "+$((seen_s + 1))" "$work/$S.log" | grep -q 'stayed locked' ||
    fail "$S did not take over from the paused $L"
  ((try < 3)) || fail "the leader was paused inside a write transaction three times in a row"
  echo "   ($L was paused inside a write transaction: resumed, and paused again)"
  kill -CONT "${pid_of[$L]}"
  wait_for $((2 * LEASE_MS)) "a leader after the resume" has_holder
  sleep 0.5
  L=$(holder) S=$(other "$(holder)")
done
took=$(($(now_ms) - t0))
sleep 0.5
kill -CONT "${pid_of[$L]}"
since() { tail -n "+$((seen_l + 1))" "$work/$L.log" | grep -q -- "$1"; }
wait_for 3000 "$L notices the loss" since 'lease lost'
wait_for 3000 "$L is standby again" since "standby: lease \"cluster\" held by $S"
# Its write must not land: the fence rejects it, or its own deadline has
# passed and it writes nothing (the main loop's deadline for acting, or the
# refresher's local expiry of the lease), whichever the resumed process
# meets first.
rejected=$(tail -n "+$((seen_l + 1))" "$work/$L.log" | grep -c 'write rejected by fencing' || true)
stopped=$(tail -n "+$((seen_l + 1))" "$work/$L.log" | grep -cE 'the deadline for acting passed|lease expired: ' || true)
((rejected + stopped >= 1)) || fail "$L resumed with neither a fenced write rejected nor its local deadline passed"
[[ $(overlaps) == 0 ]] || fail "the write log shows overlapping leaders: $(inspect)"
echo "2. paused leader $L: $S took over in ${took}ms (lease ${LEASE_MS}ms); $L's writes rejected: $rejected, local deadline passed: $stopped; overlaps 0"

# 3. Stop the leader: the standby takes over within one poll, timed by the
# standby's own log line (an --inspect process per look costs more than
# the poll itself under a sanitizer), then checked in the store.
seen_l=$(wc -l <"$work/$L.log")
t0=$(now_ms)
kill -TERM "${pid_of[$S]}"
wait_for $((POLL_MS + 500)) "$L takes over from the stopped $S" since 'elected: leading'
took=$(($(now_ms) - t0))
holder_is "$L" || fail "$L logged its election but does not hold the lease: $(inspect)"
wait "${pid_of[$S]}" || fail "$S exited with status $?"
(($(now_ms) - t0 <= 1000)) || fail "$S took more than 1 s to exit"
((took <= POLL_MS + 250)) || fail "takeover after SIGTERM took ${took}ms, more than one poll (${POLL_MS}ms)"
echo "3. SIGTERM: $S released the lease and exited 0; $L took over in ${took}ms (poll ${POLL_MS}ms)"

# 4. Store restart under the pair.
if [[ $backend == postgresql ]]; then
  seen_s=$(wc -l <"$work/$S.log")
  start "$S"
  wait_for 3000 "$S is standby" bash -c "tail -n +$((seen_s + 1)) '$work/$S.log' | grep -q 'standby: lease \"cluster\" held by $L'"
  "$pg" down "$work" >/dev/null
  sleep 1
  "$pg" up "$work" >/dev/null
  wait_for $((LEASE_MS * 3)) "one leader after the restart" bash -c "[[ -n \$('$bin' --store '$url' --inspect 2>/dev/null | grep held=1) ]]"
  sleep 2
  kill -0 "${pid_of[a]}" && kill -0 "${pid_of[b]}" || fail "a member died with the store"
  [[ $(overlaps) == 0 ]] || fail "overlap after the store restart: $(inspect)"
  echo "4. PostgreSQL restarted: both members alive, leader $(holder), overlaps 0"
fi

for node in a b; do
  kill -0 "${pid_of[$node]}" 2>/dev/null || continue
  kill -TERM "${pid_of[$node]}"
  wait "${pid_of[$node]}" || fail "$node exited with status $?"
done
echo "PASS ($backend): $(inspect | tr '\n' ' ')"
