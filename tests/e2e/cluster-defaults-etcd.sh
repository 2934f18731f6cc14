# The etcd rows of cluster-defaults.sh (sourced by it with backend etcd,
# after row 5: WatchdogSec is still raised to 60 s by the host-loss
# drop-in, so no watchdog ends a pause here). Uses its helpers, etcd_do
# (etcd-cluster.sh on the test's cluster) and etcd-faults.sh (which it
# sourced).
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
harness_resumed_fenced "$leader" "$(log_of "$leader")" "$offset" 'write rejected by fencing' \
  'the deadline for acting passed\|lease expired'
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
# etcd's election timeout E, as etcd-cluster.sh sets it.
ETCD_ELECTION_MS=500
etcd_quorum_lost "$leader" "$standby" "$offset" "$standby_offset"
new_leader=$(holder)
[[ $(overlaps) == 0 ]] || harness_fail "two leaders' writes overlap: $(log_summary)"
check_bound "etcd quorum lost: leader stops" "$stop_ms" "$stop_bound" "L - M + 2 E (before expiry)"
check_bound "etcd quorum back: a leader" "$back_ms" "$RETURN_BOUND_MS" "L + T + 2 P"
echo "   (nobody elected over ${outage_ms} ms without quorum; $new_leader leads after it is back)"
