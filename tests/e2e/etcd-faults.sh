# shellcheck shell=bash
# etcd's own faults as both etcd failover tests run them, and the leader
# key read straight from etcd (sourced by cluster-defaults.sh with backend
# etcd and by cluster-failover-etcd.sh; they define holder, generation,
# log_of, log_lines, log_since, unit_of, lease_url, etcd_sh and etcd_do
# before they call these).
#
#   etcd_post PATH JSON
#       JSON posted to PATH of etcd's JSON gateway, at the first endpoint
#       of $lease_url that answers; fails when none does
#   etcd_key, etcd_holder, etcd_generation
#       the cluster's leader key as etcd answers it; its holder and token
#       (empty, never a failure, while no endpoint answers: etcd electing)
#   etcd_no_failover LEADER STANDBY TOKEN LEADER_OFFSET STANDBY_OFFSET MS
#       the same leader and token for MS, no "lease lost" in LEADER's log
#       after its offset, STANDBY never elected after its own
#   etcd_partition_leaders_member MS
#       the etcd member the leader's process talks to, made etcd's leader
#       first, cut from its peers and its clients for MS (it keeps
#       running): no failover, etcd elects another leader, packets were
#       dropped; sets leader, gen, target, new_member, dropped, before and
#       after (the members the leader's process talked to) for the row
#   etcd_quorum_lost LEADER STANDBY LEADER_OFFSET STANDBY_OFFSET
#       the two etcd members that do not lead killed: LEADER stops ("lease
#       lost") within stop_bound = L - M + 2 E (LEASE_MS, MARGIN_MS,
#       ETCD_ELECTION_MS; + SLACK_MS), nobody is elected for L + 3 s after
#       their offsets; both back, one of the two is elected within
#       RETURN_BOUND_MS (+ SLACK_MS); sets stop_ms, stop_bound, outage_ms
#       and back_ms for the rows

# The cluster daemon's leader key, in base64 as the JSON gateway takes it.
ETCD_LEADER_KEY64=$(printf %s sdlive/cluster/leader | base64)

etcd_post() {
  local endpoint endpoints=${lease_url#etcd:}
  for endpoint in ${endpoints//,/ }; do
    curl -sf --max-time 0.5 -X POST "$endpoint$1" -d "$2" && return 0
  done
  return 1
}
etcd_key() { etcd_post /v3/kv/range "{\"key\":\"$ETCD_LEADER_KEY64\"}"; }
# A failed probe would end a script under set -e without a word.
etcd_holder() { { etcd_key || true; } | sed -n 's/.*"value":"\([^"]*\)".*/\1/p' | { base64 -d 2>/dev/null || true; }; }
etcd_generation() { { etcd_key || true; } | sed -n 's/.*"create_revision":"\([0-9]*\)".*/\1/p'; }

etcd_no_failover() {
  local t h
  t=$(harness_now_us)
  while (($(harness_ms_since "$t") < $6)); do
    h=$(holder) # empty while etcd elects
    [[ -z $h || $h == "$1" ]] || harness_fail "the lease moved from $1 to $h"
    sleep 0.25
  done
  [[ $(holder) == "$1" && $(generation) == "$3" ]] || harness_fail "$1's lease (token $3) did not survive"
  ! log_since "$1" "$4" 'lease lost' || harness_fail "$1 lost its lease"
  ! log_since "$2" "$5" 'elected: leading' || harness_fail "$2 was elected"
}

etcd_partition_leaders_member() {
  local standby offset standby_offset pid
  leader=$(holder) standby=$(other "$(holder)")
  gen=$(generation) offset=$(log_lines "$leader") standby_offset=$(log_lines "$standby")
  pid=$(harness_prop "$(unit_of "$leader")" MainPID)
  before=$(bash "$etcd_sh" connections "$HARNESS_RUN" "$pid")
  target=${before%% *}
  [[ $target =~ ^[012]$ ]] || harness_fail "$leader (pid $pid) has no connection to an etcd member"
  etcd_do move-leader "$target"
  [[ $(bash "$etcd_sh" leader "$HARNESS_RUN") == "$target" ]] || harness_fail "m$target did not become etcd's leader"
  etcd_do partition "$target"
  etcd_no_failover "$leader" "$standby" "$gen" "$offset" "$standby_offset" "$1"
  dropped=$(bash "$etcd_sh" dropped "$HARNESS_RUN" "$target")
  new_member=$(bash "$etcd_sh" leader "$HARNESS_RUN" 2>/dev/null) || new_member=""
  after=$(bash "$etcd_sh" connections "$HARNESS_RUN" "$pid")
  etcd_do unpartition "$target"
  ((dropped > 0)) || harness_fail "the partition of m$target dropped no packet"
  [[ $new_member =~ ^[012]$ && $new_member != "$target" ]] ||
    harness_fail "etcd elected no other leader while m$target was cut off (leader: ${new_member:-none})"
  etcd_do heal
}

# etcd_elected_since NODE OFFSET: NODE's log has "elected" past OFFSET.
etcd_elected_since() { tail -n "+$(($2 + 1))" -- "$(log_of "$1")" | grep -q 'elected: leading'; }

etcd_quorum_lost() {
  local member m1 m2 t0 t1
  member=$(bash "$etcd_sh" leader "$HARNESS_RUN") || harness_fail "no etcd leader"
  m1=$(((member + 1) % 3)) m2=$(((member + 2) % 3))
  etcd_do kill "$m1"
  etcd_do kill "$m2"
  t0=$(harness_now_us)
  # LEADER stops at the deadline of the last keep-alive etcd answered: its
  # send + L - M, before etcd's expiry (send + L). The etcd leader left
  # alone still answers keep-alives until it steps down: its check of the
  # quorum runs once per election timeout E, so up to 2 E after the loss;
  # no later send is answered.
  stop_bound=$((LEASE_MS - MARGIN_MS + 2 * ETCD_ELECTION_MS))
  until log_since "$1" "$3" 'lease lost'; do
    (($(harness_ms_since "$t0") <= stop_bound + SLACK_MS)) ||
      harness_fail "$1 still leads $(harness_ms_since "$t0") ms into the quorum loss (bound L - M + 2 E = ${stop_bound} ms)"
    sleep 0.05
  done
  stop_ms=$(harness_ms_since "$t0")
  # Nobody leads while the quorum is gone, also past the TTL.
  outage_ms=$((LEASE_MS + 3000))
  while (($(harness_ms_since "$t0") < outage_ms)); do
    ! etcd_elected_since "$1" "$3" && ! etcd_elected_since "$2" "$4" ||
      harness_fail "a member was elected without etcd's quorum"
    sleep 0.25
  done
  etcd_do up "$m1"
  etcd_do up "$m2"
  t1=$(harness_now_us)
  # A leader is one that was elected (the key alone may still be the
  # stopped leader's, kept by etcd until its lease runs out).
  until etcd_elected_since "$1" "$3" || etcd_elected_since "$2" "$4"; do
    (($(harness_ms_since "$t1") <= RETURN_BOUND_MS + SLACK_MS)) ||
      harness_fail "no leader $((RETURN_BOUND_MS + SLACK_MS)) ms after the quorum came back (bound L + T + 2 P)"
    sleep 0.05
  done
  back_ms=$(harness_ms_since "$t1")
}
