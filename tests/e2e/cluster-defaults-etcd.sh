# The etcd rows of cluster-defaults.sh (sourced by it with backend etcd,
# after row 5: WatchdogSec is still raised to 60 s by the host-loss
# drop-in, so no watchdog ends a pause here). Uses its helpers and
# etcd_do (etcd-cluster.sh on the test's cluster), and etcd-faults.sh.
source "$(dirname -- "${BASH_SOURCE[0]}")/etcd-faults.sh"
KEEPALIVE_MS=$((LEASE_MS / 3)) MARGIN_MS=$((LEASE_MS / 8))
# etcd deletes an expired lease's keys on its own tick of 500 ms.
ETCD_TICK_MS=500
POLL_MS=$(duration_ms "$(grep -A1 -- '--election-poll DUR' <<<"$help" | sed -n 's/^ *\([0-9]*m\?s\); .*/\1/p')")
((POLL_MS > 0)) || harness_fail "cannot read the shipped election poll"
# Quorum back: the key of the leader that stopped is kept by etcd's new
# leader for one more TTL, then deleted (tick) and the standby's watch (or,
# after its backoff of at most 2 polls, its read) takes it.
RETURN_BOUND_MS=$((LEASE_MS + ETCD_TICK_MS + 2 * POLL_MS))

# 6 paused past the TTL, resumed -------------------------------------------
leader=$(holder) standby=$(other "$(holder)")
unit=$(unit_of "$leader")
offset=$(log_lines "$leader") sd=$(harness_death_count "$(unit_of "$standby")")
gen=$(generation)
pid=$(harness_prop "$unit" MainPID)
kill -STOP "$pid"
t0=$(harness_now_us)
ms=$(takeover_ms "$standby" "$t0" 30)
# Let the new leader write under its token before the old one wakes.
sleep 2
kill -CONT "$pid"
harness_wait 10 "$leader notices the loss" log_since "$leader" "$offset" 'lease lost'
harness_wait 10 "$leader waits again" log_since "$leader" "$offset" "standby: lease \"cluster\" held by $standby"
rejected=$(tail -n "+$((offset + 1))" -- "$(log_of "$leader")" | grep -c 'write rejected by fencing' || true)
stopped=$(tail -n "+$((offset + 1))" -- "$(log_of "$leader")" | grep -c 'the deadline for acting passed\|lease expired' || true)
((rejected + stopped >= 1)) ||
  harness_fail "$leader resumed with neither a write rejected by the token nor its deadline for acting passed"
(($(generation) > gen)) || harness_fail "no new token after the pause"
holder_is "$standby" || harness_fail "$standby lost the lease to the resumed $leader"
check_bound "paused past the TTL, resumed" "$ms" "$((LEASE_MS + ETCD_TICK_MS))" "L + etcd tick + N"
echo "   (on resume $leader: $rejected write(s) rejected by the token, deadline for acting passed: $stopped)"
expect_alive "$(unit_of "$standby")" "$sd"

# 7 the etcd leader killed ---------------------------------------------------
leader=$(holder) standby=$(other "$(holder)")
gen=$(generation)
offset=$(log_lines "$leader") standby_offset=$(log_lines "$standby")
member=$(bash "$etcd_sh" leader "$HARNESS_RUN") || harness_fail "no etcd leader"
etcd_do kill "$member"
# Two keep-alive intervals and more: every keep-alive in that time goes
# through the election of a new etcd leader or after it.
watch_ms=$((2 * KEEPALIVE_MS + 2000))
etcd_no_failover "$leader" "$standby" "$gen" "$offset" "$standby_offset" "$watch_ms"
etcd_do up "$member"
[[ $(overlaps) == 0 ]] || harness_fail "two leaders' writes overlap: $(log_summary)"
printf '%-34s %6s      %s\n' "etcd leader (m$member) killed" "-" \
  "$leader kept its lease (token $gen) over ${watch_ms} ms; $(log_summary)"

# 7b one etcd member partitioned ----------------------------------------------
# The member our leader's client talks to, made etcd's leader first, is
# cut from its peers and its clients and keeps running: etcd elects
# another leader, our leader's keep-alives move to another member, and
# the lease outlives a whole TTL with the same token.
watch_ms=$((LEASE_MS + 2000))
etcd_partition_leaders_member "$watch_ms"
[[ $(overlaps) == 0 ]] || harness_fail "two leaders' writes overlap: $(log_summary)"
printf '%-34s %6s      %s\n' "etcd leader m$target partitioned" "-" \
  "$leader kept its lease (token $gen) over ${watch_ms} ms > L; etcd elected m$new_member; $dropped packets dropped; connections [${before% }] -> [${after% }]"

# 8 etcd's quorum lost ---------------------------------------------------------
leader=$(holder) standby=$(other "$(holder)")
offset=$(log_lines "$leader") standby_offset=$(log_lines "$standby")
member=$(bash "$etcd_sh" leader "$HARNESS_RUN") || harness_fail "no etcd leader"
m1=$(((member + 1) % 3)) m2=$(((member + 2) % 3))
etcd_do kill "$m1"
etcd_do kill "$m2"
t0=$(harness_now_us)
# Our leader stops at the deadline of the last keep-alive etcd answered:
# its send + L - M, before etcd's expiry (send + L). The etcd leader left
# alone still answers keep-alives until it steps down: its check of the
# quorum runs once per election timeout E (500 ms here), so up to 2 E
# after the loss; no later send is answered.
ETCD_ELECTION_MS=500
stop_bound=$((LEASE_MS - MARGIN_MS + 2 * ETCD_ELECTION_MS))
until log_since "$leader" "$offset" 'lease lost'; do
  (($(harness_ms_since "$t0") <= stop_bound + SLACK_MS)) ||
    harness_fail "$leader still leads $(harness_ms_since "$t0") ms into the quorum loss (bound L - L/8 + 2 E = ${stop_bound} ms)"
  sleep 0.05
done
stop_ms=$(harness_ms_since "$t0")
# Nobody leads while the quorum is gone, also past the TTL.
outage_ms=$((LEASE_MS + 3000))
while (($(harness_ms_since "$t0") < outage_ms)); do
  for node in a b; do
    o=$([[ $node == "$leader" ]] && echo "$offset" || echo "$standby_offset")
    ! tail -n "+$((o + 1))" -- "$(log_of "$node")" | grep 'elected: leading' | grep -q . ||
      harness_fail "$node was elected without etcd's quorum"
  done
  sleep 0.25
done
etcd_do up "$m1"
etcd_do up "$m2"
t1=$(harness_now_us)
# A leader is one that was elected (the key alone may still be the
# stopped leader's, kept by etcd until its lease runs out).
elected_since() {
  tail -n "+$(($([[ $1 == "$leader" ]] && echo "$offset" || echo "$standby_offset") + 1))" -- "$(log_of "$1")" |
    grep -q 'elected: leading'
}
until elected_since a || elected_since b; do
  (($(harness_ms_since "$t1") <= RETURN_BOUND_MS + SLACK_MS)) ||
    harness_fail "no leader $((RETURN_BOUND_MS + SLACK_MS)) ms after the quorum came back (bound L + tick + 2 polls)"
  sleep 0.05
done
back_ms=$(harness_ms_since "$t1")
new_leader=$(holder)
[[ $(overlaps) == 0 ]] || harness_fail "two leaders' writes overlap: $(log_summary)"
check_bound "etcd quorum lost: leader stops" "$stop_ms" "$stop_bound" "L - L/8 + 2 E (before expiry)"
check_bound "etcd quorum back: a leader" "$back_ms" "$RETURN_BOUND_MS" "L + tick + 2 polls"
echo "   (nobody elected over ${outage_ms} ms without quorum; $new_leader leads after it is back)"
