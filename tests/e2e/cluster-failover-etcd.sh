#!/usr/bin/env bash
# Cluster failover with the lease in etcd, times scaled as in
# cluster-failover.sh (WatchdogSec=1s, lease 3s, election poll 500ms): two
# instances of the shipped sdlive-cluster@.service with the lease in a
# three-member etcd cluster on loopback (tests/etcd/etcd-cluster.sh, ports
# 23880-23885, election timeout 500 ms) and the work in SQLite, fenced by
# token; the leader writes throughout (a paced maintenance pass over 20,000
# seeded blobs). The whole run, etcd included, lives in a network namespace
# of its own (unshare --net, loopback up), the only place the partition's
# packet filter is set up. Each row against its bound (docs/cluster.md,
# "The arithmetic with the lease in etcd"), printed as a table:
#   1. SIGKILL: the release step deletes the key by token, the watch wakes;
#   2. systemctl stop: the stopping leader releases;
#   3. main loop wedged: the health gate releases;
#   4. paused (SIGSTOP): the watchdog's kill and the release step;
#   5. the leader key deleted in etcd behind the leader's back: its own
#      deadline stays valid (its keep-alives still succeed), the standby
#      takes the key at once, and the store rejects the deposed leader's
#      next write by its token; no write of the old token after the new
#      term's first;
#   6. the etcd leader killed: no failover of our leader;
#   7. one etcd member partitioned (cut from its peers and its clients,
#      running): the one our leader's client talks to, made etcd's leader
#      first; etcd elects another, our leader keeps its lease past a TTL (its
#      client moved to another member), no failover;
#   8. etcd's quorum lost: our leader stops before its TTL could run out in
#      etcd, nobody leads until the quorum is back;
#   9. paused past the TTL, resumed; 10. host loss.
# Rows 6 to 10 run with WatchdogSec raised by a drop-in (rows 9 and 10
# pause a process, which cannot pet; the others need no watchdog).
# Throughout and at the end: 0 overlaps in the write log, and every term's
# first write is its claim at its own token (the only such write of the
# term until the coordinator runs), the store's token mark raised to the
# term's token as soon as it leads. From row 6 the
# members also coordinate jobs: two workers work a run through rows 6 and
# 7, every job done and counted once.
#
#   cluster-failover-etcd.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"

# A network namespace of our own before anything else: the test's etcd,
# its manager and its members all run inside it.
harness_own_netns "$0" "$@"

harness_start "$@"
harness_units_install
[[ -n $(harness_unit_of cluster) ]] || harness_fail "this build ships no sdlive-cluster@.service"

WD_MS=1000 LEASE_MS=3000 POLL_MS=500
KEEPALIVE_MS=$((LEASE_MS / 3)) MARGIN_MS=$((LEASE_MS / 8))
STALE_MS=$((WD_MS / 2)) CHECK_MS=$((WD_MS / 8)) PET_MS=$((WD_MS / 6))
# etcd (etcd-cluster.sh): election timeout E, and its expiry tick.
ETCD_ELECTION_MS=500 ETCD_TICK_MS=500
# The abort and the release step after the watchdog's kill, as in
# cluster-failover.sh.
RELEASE_MS=500
# Measurement: the holder read from etcd every 20 ms by curl.
SLACK_MS=300
CLAIM='requeue in-flight jobs of every worker'
# What a leader logs when its own deadline for acting stopped it (the
# store's check before a write, the refresher's local expiry).
DEADLINE_PASSED='deadline for acting passed\|time to act ran out\|lease expired: '
bin=$(harness_binary cluster)
db=$(harness_state_dir cluster)/cluster.db
url=sqlite:$db

# Jobs (docs/jobs.md): both members coordinate on a unix socket; every
# leader creates a run of JOBS jobs of 10 ms busy work when it finds none
# unfinished; two workers (copies of the shipped sdlive-worker.service, as
# the cluster's user) work run 1 across the etcd faults.
JOBS=${SDLIVE_E2E_JOBS:-1000}
[[ -n $(harness_unit_of worker) ]] || harness_fail "this build ships no sdlive-worker.service"
jobs_inspect=$SDLIVE_BUILD_DIR/tests/coordinator/jobs-inspect
[[ -x $jobs_inspect ]] || harness_fail "$jobs_inspect is missing: build the jobs-inspect target"
J=$HARNESS_RUN/jobs
mkdir -m 1777 -- "$J"
WORKERS=(sdlive-jobworker-1.service sdlive-jobworker-2.service)
i=0
for unit in "${WORKERS[@]}"; do
  i=$((i + 1))
  harness_worker_copy "$unit" --coordinator "$J/a.sock" --coordinator "$J/b.sock" --identity "w$i" \
    --coordinator-timeout 1000ms --heartbeat 300ms --reconnect-max 300ms
done
jobs_field() { "$jobs_inspect" "$url" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$1=//p"; }
jobs_done_at_least() { local d; d=$(jobs_field done_count); ((${d:-0} >= $1)); }

etcd_sh=$(dirname -- "${BASH_SOURCE[0]}")/../etcd/etcd-cluster.sh
export SDLIVE_ETCD_PORT_BASE=23880
trap 'rc=$?; bash "$etcd_sh" stop "$HARNESS_RUN" >/dev/null 2>&1; (exit $rc); harness_teardown' EXIT
bash "$etcd_sh" start "$HARNESS_RUN" >/dev/null || harness_fail "cannot start the etcd cluster"
lease_url=etcd:$(bash "$etcd_sh" endpoints "$HARNESS_RUN")
etcd_do() { bash "$etcd_sh" "$1" "$HARNESS_RUN" ${2:+"$2"} >/dev/null || harness_fail "etcd-cluster.sh $1 $2 failed"; }

inspect() {
  local _try
  for _try in 1 2 3 4 5; do
    "$bin" --store "$url" --lease-store "$lease_url" --inspect 2>/dev/null && return 0
    sleep 0.02
  done
  return 1
}
log_summary() { inspect | tail -n 1; }
overlaps() { inspect | sed -n 's/.* overlaps=\([0-9]*\)$/\1/p'; }
source "$(dirname -- "${BASH_SOURCE[0]}")/cluster-failover-etcd-probes.sh"
source "$(dirname -- "${BASH_SOURCE[0]}")/etcd-faults.sh"
unit_of() { echo "sdlive-cluster@$1.service"; }
other() { [[ $1 == a ]] && echo b || echo a; }
log_of() { echo "$HARNESS_LOG_DIR/$(unit_of "$1").log"; }
log_lines() { wc -l <"$(log_of "$1")" 2>/dev/null || echo 0; }
log_since() { tail -n "+$(($2 + 1))" -- "$(log_of "$1")" | grep -q -- "$3"; }
expect_alive() { (($(harness_death_count "$1") == $2)) || harness_fail "$1 died: $(harness_deaths "$1")"; }


# takeover <standby> <t0 us> <seconds> <token before>: ms ($ms) from t0
# until the standby holds the key with a larger token; its claim then
# raises the store's mark to that token at once (checked within 2 s).
TERMS=()
takeover() {
  local deadline=$(($2 + $3 * 1000000)) g
  until holder_is "$1" && g=$(generation) && [[ -n $g ]] && ((g > $4)); do
    (($(harness_now_us) < deadline)) || harness_fail "$1 did not take over within $3 s"
    sleep 0.02
  done
  ms=$(harness_ms_since "$2")
  harness_wait 2 "the claim of $1's token $g raises the store's mark" mark_is "$g"
  TERMS+=("$g")
}
# await_takeover <standby> <t0 us> <seconds>: takeover from the token
# before the fault (harness_cluster_fault_row).
await_takeover() { takeover "$1" "$2" "$3" "$gen"; }
# new_term_above <token>: someone holds the key with a larger token.
new_term_above() { local g; g=$(generation); [[ -n $g ]] && ((g > $1)); }
# writes_beyond_claim <token>: the term wrote more than its claim.
writes_beyond_claim() { (($(wlog count "$1") >= 2)); }
# wait_leads <node>: the first term of a fresh start.
wait_leads() {
  harness_wait 20 "$1 leads" holder_is "$1"
  local g
  g=$(generation)
  harness_wait 2 "the claim of $1's token $g" mark_is "$g"
  TERMS+=("$g")
}

rejoin() {
  harness_wait 30 "$(unit_of "$1") active again" harness_prop_is "$(unit_of "$1")" ActiveState active
  harness_wait 10 "$1 waits as standby" log_since "$1" "$2" 'standby: lease "cluster" held by'
}

ROWS=()
check_bound() { # <label> <ms> <bound ms> <formula>
  (($2 <= $3 + SLACK_MS)) || harness_fail "$1: ${2} ms > bound $4 = $3 ms + ${SLACK_MS} ms"
  [[ $(overlaps) == 0 ]] || harness_fail "$1: two leaders' writes overlap: $(log_summary)"
  ROWS+=("$(printf '%-36s %6s ms   bound %-22s = %5s ms' "$1" "$2" "$4" "$3")")
  printf '%s   %s\n' "${ROWS[-1]}" "$(log_summary)"
}
row() { ROWS+=("$(printf '%-36s %9s   %s' "$1" "-" "$2")"); echo "${ROWS[-1]}"; }


# fault_to_elected <events offset> <unit> <fault> <standby>: ms from the
# scenario's mark of the fault to the standby's "elected" line.
fault_to_elected() { harness_event_ms "$1" scenario "^$2: fault: $3\$" "$(unit_of "$4").log" 'elected: leading'; }

# freeze_leader: the leader SIGSTOPped (marked on the timeline), the
# standby's takeover awaited; sets leader, standby, unit, offset, deaths,
# sd (the standby's deaths), gen, pid and ms (the fault to the standby's
# "elected" line).
freeze_leader() {
  leader=$(holder) standby=$(other "$(holder)")
  unit=$(unit_of "$leader")
  offset=$(log_lines "$leader") deaths=$(harness_death_count "$unit") sd=$(harness_death_count "$(unit_of "$standby")")
  gen=$(generation) pid=$(harness_prop "$unit" MainPID)
  local ev t0
  ev=$(harness_events_count)
  harness_event "$unit" "fault: SIGSTOP"
  kill -STOP "$pid"
  t0=$(harness_now_us)
  takeover "$standby" "$t0" 10 "$gen"
  ms=$(fault_to_elected "$ev" "$unit" SIGSTOP "$standby")
}

# configure [jobs]: scaled arguments, the lease in etcd, with "jobs" the
# coordinator too; both started, a leads.
configure() {
  local node jobs_args
  for node in a b; do
    jobs_args=()
    [[ ${1:-} == jobs ]] && jobs_args=(--coordinator-socket "$J/$node.sock" --worker-timeout 1000ms
      --worker-heartbeat 300ms --job-run "$JOBS" --job-payload "\"spin 10000\"")
    harness_exec_start "$(unit_of "$node")" --lease 3s --election-poll 500ms --maintenance-interval 500ms \
      --maintenance-rate 100 --seed-inventory 20000 "${jobs_args[@]}"
    # RestartSec=2s: a killed leader comes back after the standby took over.
    # ExecStart= and ExecStopPost= both read the lease store.
    harness_dropin "$(unit_of "$node")" 30-etcd "Environment=\"SDLIVE_LEASE_STORE=$lease_url\"
RestartSec=2s
ReadWritePaths=$J"
  done
  harness_reload
  systemctl --user stop "$(unit_of a)" "$(unit_of b)"
  local ob
  ob=$(log_lines b)
  harness_start_units "$(unit_of a)"
  wait_leads a
  harness_start_units "$(unit_of b)"
  harness_wait 10 "b waits" log_since b "$ob" 'standby: lease "cluster" held by a'
  harness_wait 10 "a writes beyond its claim" writes_beyond_claim "$(generation)"
}

harness_log "lease $lease_url, store $url; W=${WD_MS} L=${LEASE_MS} P=${POLL_MS} ms"
configure
echo "failure of the leader -> standby leads (scaled: W=${WD_MS} ms, L=${LEASE_MS} ms, P=${POLL_MS} ms, etcd E=${ETCD_ELECTION_MS} ms):"

# 1 SIGKILL -------------------------------------------------------------------
harness_cluster_fault_row crash 10 500

# 2 clean stop -------------------------------------------------------------------
harness_cluster_fault_row stop 10 500

# 3 wedge ----------------------------------------------------------------------
leader=$(holder) standby=$(other "$(holder)")
unit=$(unit_of "$leader")
offset=$(log_lines "$leader") deaths=$(harness_death_count "$unit") sd=$(harness_death_count "$(unit_of "$standby")") gen=$(generation)
ev=$(harness_events_count)
harness_event "$unit" "fault: wedge"
touch -- "$(harness_wedge_file "$unit")"
t0=$(harness_now_us)
takeover "$standby" "$t0" 10 "$gen"
ms=$(fault_to_elected "$ev" "$unit" wedge "$standby")
log_since "$leader" "$offset" 'health gate closed' || harness_fail "$leader: the gate never closed"
check_bound "main loop wedged (gate)" "$ms" "$((STALE_MS + 2 * CHECK_MS + PET_MS))" "S + 2 I + p + N"
harness_cluster_wedge_ends "$leader" "$offset" "$deaths" "$sd" 10

# 4 SIGSTOP ---------------------------------------------------------------------
freeze_leader
kill -CONT "$pid" 2>/dev/null || true
pause_bound=$((WD_MS + RELEASE_MS < LEASE_MS + ETCD_TICK_MS ? WD_MS + RELEASE_MS : LEASE_MS + ETCD_TICK_MS))
check_bound "paused (SIGSTOP)" "$ms" "$pause_bound" "min(W + R, L + T) + N"
harness_wait 10 "$leader deposed" bash -c "tail -n +$((offset + 1)) '$(log_of "$leader")' | grep -q 'lease lost' ||
  (( \$(wc -l < '$HARNESS_LOG_DIR/deaths/$unit' 2>/dev/null || echo 0) > $deaths ))"
holder_is "$standby" || harness_fail "$standby lost the lease to the resumed $leader"
rejoin "$leader" "$offset"
expect_alive "$(unit_of "$standby")" "$sd"

# 5 the key deleted behind the leader's back -------------------------------------
# Anyone who may write the key (an operator's etcdctl del) deposes the
# leader in etcd without its knowing: its keep-alives still succeed and
# its deadline for acting keeps moving, so only the token stands between
# its next write and the data.
leader=$(holder) standby=$(other "$(holder)")
offset=$(log_lines "$leader") sd=$(harness_death_count "$(unit_of "$standby")") gen=$(generation)
harness_wait 5 "$leader writes beyond its claim" writes_beyond_claim "$gen"
ev=$(harness_events_count)
harness_event "$(unit_of "$leader")" "fault: key deleted"
etcd_post /v3/kv/deleterange "{\"key\":\"$ETCD_LEADER_KEY64\"}" >/dev/null || harness_fail "cannot delete the leader key"
t0=$(harness_now_us)
takeover "$standby" "$t0" 5 "$gen"
ms=$(fault_to_elected "$ev" "$(unit_of "$leader")" "key deleted" "$standby")
gen2=$(generation)
until log_since "$leader" "$offset" "token $gen of $leader is lower than token [0-9]*"; do
  (($(harness_ms_since "$t0") < 5000)) || harness_fail "$leader (token $gen) made no write rejected by the token within 5 s of $standby's term (token $gen2)"
  sleep 0.02
done
reject_ms=$(harness_event_ms "$ev" scenario "^$(unit_of "$leader"): fault: key deleted\$" "$(unit_of "$leader").log" "token $gen of $leader is lower than token")
rejected=$(tail -n "+$((offset + 1))" -- "$(log_of "$leader")" | grep -c "write rejected by fencing.*token $gen of $leader is lower than token" || true)
! log_since "$leader" "$offset" "$DEADLINE_PASSED" || harness_fail "$leader's deadline for acting passed: not the token's rejection"
late=$(wlog late "$gen" "$gen2")
((late == 0)) || harness_fail "$late write(s) of the deposed token $gen after token $gen2's first"
harness_wait 5 "$leader steps down" log_since "$leader" "$offset" "standby: lease \"cluster\" held by $standby"
check_bound "leader key deleted in etcd" "$ms" 500 "N (the watch, goal)"
row "... the deposed leader's next write" "rejected by token $gen < $gen2 after ${reject_ms} ms ($rejected write(s)), 0 writes of $gen after $gen2's first"
expect_alive "$(unit_of "$standby")" "$sd"
expect_alive "$(unit_of "$leader")" "$(harness_death_count "$(unit_of "$leader")")"

# From here on: WatchdogSec raised (rows 9 and 10 pause a process, which
# cannot pet), and the members coordinate jobs. The coordinator's start
# puts back the jobs in flight as the claim does, so the claim alone is
# the first write only in the terms so far.
CLAIM_ONLY_MAX=$(generation)
for node in a b; do harness_dropin "$(unit_of "$node")" 40-pause "WatchdogSec=30s"; done
configure jobs

# 6 the etcd leader killed ----------------------------------------------------------
# The workers start on run 1, which runs on through rows 6 and 7.
harness_start_units "${WORKERS[@]}"
harness_wait 30 "a tenth of run 1 done" jobs_done_at_least $((JOBS / 10))
jobs_at_start=$(jobs_field done_count)
# No failover while 2 E + K/4 < L - M - K (the refresher retries every K/4).
(( 2 * ETCD_ELECTION_MS + KEEPALIVE_MS / 4 < LEASE_MS - MARGIN_MS - KEEPALIVE_MS )) ||
  harness_fail "the scaled times leave no room for an etcd election"
leader=$(holder) standby=$(other "$(holder)")
gen=$(generation) offset=$(log_lines "$leader") standby_offset=$(log_lines "$standby")
member=$(bash "$etcd_sh" leader "$HARNESS_RUN") || harness_fail "no etcd leader"
etcd_do kill "$member"
watch_ms=$((2 * KEEPALIVE_MS + 2000))
etcd_no_failover "$leader" "$standby" "$gen" "$offset" "$standby_offset" "$watch_ms"
etcd_do up "$member"
row "etcd leader (m$member) killed" "no failover: $leader kept token $gen over ${watch_ms} ms"

# 7 one etcd member partitioned ------------------------------------------------------
# The member our leader's client talks to, made etcd's leader first: cut
# from its peers and its clients, it keeps running. etcd elects another
# leader; our leader's keep-alives move to another member and the lease
# outlives a whole TTL.
watch_ms=$((LEASE_MS + 2000))
etcd_partition_leaders_member "$watch_ms"
row "etcd leader m$target partitioned" "no failover: $leader kept token $gen over ${watch_ms} ms > L; etcd elected m$new_member; $dropped packets dropped; $leader's connections to members [${before% }] -> [${after% }]"

# Run 1 complete: every job done, counted exactly once.
jobs_during=$(($(jobs_field done_count) - jobs_at_start))
harness_wait 60 "all $JOBS jobs of run 1 done" jobs_done_at_least "$JOBS"
sleep 0.3 # late RESULTs land
line=$("$jobs_inspect" "$url")
[[ $(jobs_field done_count) == "$JOBS" && $(jobs_field jobs_done) == "$JOBS" && $(jobs_field missing) == 0 ]] ||
  harness_fail "jobs lost or double-counted: $line"
systemctl --user stop "${WORKERS[@]}"
row "jobs (run 1, during rows 6 and 7)" "$jobs_during of $JOBS jobs done during the etcd faults; $JOBS done once each, 0 lost, 0 double-counted: $line"

# 8 etcd's quorum lost -----------------------------------------------------------------
leader=$(holder) standby=$(other "$(holder)")
gen=$(generation) offset=$(log_lines "$leader") standby_offset=$(log_lines "$standby")
RETURN_BOUND_MS=$((LEASE_MS + ETCD_TICK_MS + 2 * POLL_MS))
etcd_quorum_lost "$leader" "$standby" "$offset" "$standby_offset"
harness_wait 5 "a new term after the quorum came back" new_term_above "$gen"
new_gen=$(generation)
harness_wait 2 "the claim of token $new_gen" mark_is "$new_gen"
TERMS+=("$new_gen")
check_bound "etcd quorum lost: leader stops" "$stop_ms" "$stop_bound" "L - M + 2 E"
check_bound "etcd quorum back: a leader" "$back_ms" "$RETURN_BOUND_MS" "L + T + 2 P"
row "... without quorum" "nobody elected over ${outage_ms} ms"

# 9 paused past the TTL, resumed ------------------------------------------------------
freeze_leader
sleep 1   # the new term writes before the old one wakes
kill -CONT "$pid"
harness_wait 10 "$leader waits again" log_since "$leader" "$offset" "standby: lease \"cluster\" held by $standby"
harness_resumed_fenced "$leader" "$(log_of "$leader")" "$offset" "token $gen of $leader is lower than token" "$DEADLINE_PASSED"
(($(wlog late "$gen" "$(generation)") == 0)) || harness_fail "writes of the deposed token $gen after the new term's first"
holder_is "$standby" || harness_fail "$standby lost the lease to the resumed $leader"
check_bound "paused past the TTL, resumed" "$ms" "$((LEASE_MS + ETCD_TICK_MS))" "L + T + N"
row "... on resume" "$rejected write(s) rejected by the token, deadline for acting passed: $stopped"
expect_alive "$(unit_of "$standby")" "$sd"

# 10 host loss: frozen, then killed; its late release step releases nothing
freeze_leader
gen2=$(generation)
systemctl --user kill --signal=SIGKILL -- "$unit"
harness_wait 10 "$leader's release step" log_since "$leader" "$offset" 'nothing to release'
holder_is "$standby" && [[ $(generation) == "$gen2" ]] || harness_fail "the dead leader's release step touched $standby's key"
check_bound "host loss (frozen, then killed)" "$ms" "$((LEASE_MS + ETCD_TICK_MS))" "L + T + N"
rejoin "$leader" "$offset"
expect_alive "$(unit_of "$standby")" "$sd"

# The claims: every term's first write is its claim at its own token, and
# every term seen above wrote it; before the coordinator ran, the claim is
# the term's one such write.
claims=$(wlog claims "$CLAIM")
while IFS=$'\t' read -r term _ n first; do
  [[ $first == "$CLAIM" ]] || harness_fail "term $term's first write is \"$first\", not its claim"
  ((term > CLAIM_ONLY_MAX || n == 1)) || harness_fail "term $term has $n claims"
done <<<"$claims"
for term in "${TERMS[@]}"; do
  grep -q "^$term	" <<<"$claims" || harness_fail "term $term (seen leading) wrote no claim"
done
[[ $(wlog mark) == "$(awk -F'\t' 'END { print $1 }' <<<"$claims")" ]] || harness_fail "the token mark is not the last term's"
[[ $(overlaps) == 0 ]] || harness_fail "two leaders' writes overlap: $(log_summary)"

echo
echo "failure (scaled, lease in etcd)       measured     bound"
printf '%s\n' "${ROWS[@]}"
echo "terms: $(wc -l <<<"$claims"), each first writing its claim at its own token (${#TERMS[@]} seen leading); $(log_summary)"
echo "PASS (etcd, scaled)"
