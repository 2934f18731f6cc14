# shellcheck shell=bash
# What the adversarial shell tests share. Source it, then call
#
#   adv_begin NAME [MODE]   makes the test's private directory $work
#                           (/tmp/sdlive-NAME.XXXXXX, mode MODE, default 700)
#
# and from then on, at exit: every PID the test appended to $pids is killed,
# adv_on_exit runs if the test defines it (a server to stop), and $work is
# removed. When the test fails, the last lines of each log under $work
# (ADV_LOGS, a glob relative to $work, default "*.log") are shown first.
#
#   fail MSG...             prints "FAIL: MSG" to stderr and exits 1
#   now_ms                  the wall clock in milliseconds
#   wait_for MS WHAT CMD... runs CMD every 20 ms until it succeeds; after MS
#                           milliseconds fails with "timed out: WHAT"
#
# For tests that run sdlive-cluster members ($bin) on one store ($url)
# without systemd (also sourced by tests/cluster/cluster-pair.sh):
#
#   member_start NODE ARGS... starts member NODE (--lease LEASE_MS,
#                           --election-poll POLL_MS, then ARGS), its output
#                           appended to $work/NODE.log, its PID in
#                           pid_of[NODE] and $pids
#   inspect                 the store's state (--inspect)
#   holder                  the lease's holder, nothing when it is free
#   holder_is NODE          NODE holds the lease
#   log_has NODE TEXT       NODE's log has TEXT
#   count NODE TEXT         how many lines of NODE's log have TEXT

pids=()
ADV_LOGS=${ADV_LOGS:-*.log}

adv_cleanup() {
  local rc=$? pid f
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  if ((rc != 0)); then
    for f in "$work"/$ADV_LOGS; do [[ -f $f ]] && { echo "--- $f"; tail -n 25 "$f"; }; done
  fi
  if declare -F adv_on_exit >/dev/null; then adv_on_exit || true; fi
  rm -rf "$work"
  exit "$rc"
}

adv_begin() {
  work=$(mktemp -d "/tmp/sdlive-$1.XXXXXX")
  chmod "${2:-700}" "$work"
  trap adv_cleanup EXIT
}

fail() { echo "FAIL: $*" >&2; exit 1; }
now_ms() { local t=${EPOCHREALTIME/./}; echo $((10#$t / 1000)); }
wait_for() {
  local deadline=$(($(now_ms) + $1)) what=$2
  shift 2
  until "$@"; do
    (($(now_ms) < deadline)) || fail "timed out: $what"
    sleep 0.02
  done
}

declare -A pid_of
member_start() {
  local node=$1
  shift
  "$bin" --store "$url" --node "$node" --lease "${LEASE_MS}ms" --election-poll "${POLL_MS}ms" \
    "$@" >>"$work/$node.log" 2>&1 &
  pid_of[$node]=$!
  pids+=($!)
}
inspect() { "$bin" --store "$url" --inspect 2>/dev/null; }
holder() { inspect | sed -n 's/^lease=cluster held=1 holder=\([^ ]*\).*/\1/p'; }
holder_is() { [[ $(holder) == "$1" ]]; }
log_has() { grep -q -- "$2" "$work/$1.log"; }
count() { grep -c -- "$2" "$work/$1.log" || true; }
