# shellcheck shell=bash
# etcd's own faults as both etcd failover tests run them (sourced by
# cluster-defaults-etcd.sh and cluster-failover-etcd.sh once they define
# holder, generation, log_lines, log_since, unit_of, etcd_sh and etcd_do).
#
#   etcd_no_failover LEADER STANDBY TOKEN LEADER_OFFSET STANDBY_OFFSET MS
#       the same leader and token for MS, no "lease lost" in LEADER's log
#       after its offset, STANDBY never elected after its own
#   etcd_partition_leaders_member MS
#       the etcd member the leader's process talks to, made etcd's leader
#       first, cut from its peers and its clients for MS (it keeps
#       running): no failover, etcd elects another leader, packets were
#       dropped; sets leader, gen, target, new_member, dropped, before and
#       after (the members the leader's process talked to) for the row

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
