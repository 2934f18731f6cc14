#!/usr/bin/env bash
# sdlive-cluster members with the lease in etcd (--lease-store etcd:...)
# against a fake etcd JSON gateway on 127.0.0.1 (etcd-gateway.py), made
# hostile on demand. One scenario a run:
#
#   endpoint-proxy502, endpoint-notjson, endpoint-reset
#       the first endpoint answers a proxy's 502 page, a 200 that is not
#       JSON, or closes the connection: the member leads through the second,
#       which wins the calls back (requests to each counted and bounded)
#   endpoint-silent-first
#       the healthy first endpoint goes silent for 2.5 s beside a broken
#       second: once it is back, the member leads again
#   slow
#       every valid answer 440 ms late, the race for the key always lost
#       (read, grant, acquire, revoke), WatchdogSec 2 s: the longest gap
#       between keepalives stays within WatchdogSec/2
#   short-ttl
#       grants answered with TTL 1 s for a 16 s lease: no term is taken,
#       the attempts back off, the keepalives go on, the log says why
#   slow-short
#       an honest etcd answering in 450 ms, --lease 1s: as short-ttl
#   huge-ttl
#       keep-alives answered with TTL 9e9 s, then etcd gone: the leader
#       stops acting within the 3 s it asked for
#   watch-flood
#       the key held by another, the standby's watch flooded with events:
#       the standby's CPU stays under 10 % of a core
#   acquire-error
#       the acquire answered with etcd's UNAVAILABLE: the log says the
#       acquire's reason, not the later revoke's empty one
#
#   etcd-gateway.sh SCENARIO SDLIVE_CLUSTER_BINARY
set -euo pipefail

scenario=$1 bin=$2
PY=/usr/bin/python3
here=$(dirname "${BASH_SOURCE[0]}")
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID STATE_DIRECTORY RUNTIME_DIRECTORY SDLIVE_NODE \
      SDLIVE_WEDGE_FILE SDLIVE_SPIN_ELECTION_FILE CREDENTIALS_DIRECTORY
WATCHDOG_USEC=2000000
GAP_MAX_MS=$((WATCHDOG_USEC / 2000))
# shellcheck source=lib.sh
source "$here/lib.sh"
adv_begin "etcd-$scenario"
T=$work
mono_ms() { $PY -c 'import time; print(int(time.monotonic() * 1000))'; }

# gateway_start N [LIFETIME_S]: N endpoints, their URLs (comma-separated) in $urls.
gateway_start() {
  mkdir -p "$T/gw"
  $PY "$here/etcd-gateway.py" "$T/gw" "$1" "${2:-90}" >>"$T/gateway.log" 2>&1 &
  pids+=($!)
  wait_for 5000 "the gateway listening" test -s "$T/gw/urls"
  urls=$(<"$T/gw/urls")
}
# mode JSON: how the gateway behaves from now on.
mode() { printf '%s\n' "$1" >"$T/gw/mode.json.tmp" && mv "$T/gw/mode.json.tmp" "$T/gw/mode.json"; }
# counted EXPR: a figure of counts.json (a Python expression over c).
counted() { $PY -c 'import json, sys; c = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$T/gw/counts.json" "$1"; }

# Every WATCHDOG=1 a member sends, as monotonic milliseconds.
keepalives_start() {
  $PY - "$T/notify.sock" "$T/keepalives" <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "w", buffering=1) as out:
    while True:
        if b"WATCHDOG=1" in s.recv(4096).split(b"\n"):
            out.write("%d\n" % int(time.monotonic() * 1000))
EOF
  pids+=($!)
  wait_for 5000 "the notify listener" test -S "$T/notify.sock"
}
# max_gap FROM_MS TO_MS: the longest time without a keepalive in between.
max_gap() {
  awk -v from="$1" -v to="$2" '
    $1 >= from - 1000 && $1 <= to { if (last && $1 > from && $1 - last > gap) gap = $1 - last; last = $1 }
    END { if (last < to - 1000) gap = 999999; print gap + 0 }' "$T/keepalives"
}

# member NODE LEASE POLL [ENDPOINTS] [watchdog]: starts NODE; its log is $T/NODE.log.
member() {
  local node=$1 lease=$2 poll=$3 endpoints=${4:-$urls} env=()
  [[ ${5:-} == watchdog ]] && env=(NOTIFY_SOCKET="$T/notify.sock" WATCHDOG_USEC="$WATCHDOG_USEC")
  env "${env[@]}" "$bin" --store "sqlite:$T/store.db" --lease-store "etcd:$endpoints" --node "$node" \
    --lease "$lease" --election-poll "$poll" --lease-record "" --maintenance-interval 1h >>"$T/$node.log" 2>&1 &
  pid_of[$node]=$!
  pids+=($!)
}
leads() { log_has "$1" "elected: leading"; }
holds() { "$bin" --store "sqlite:$T/store.db" --lease-store "etcd:$urls" --inspect 2>/dev/null |
            grep -q "^lease=cluster held=1 holder=$1 "; }

case $scenario in
endpoint-proxy502 | endpoint-notjson | endpoint-reset)
  broken=${scenario#endpoint-}
  gateway_start 2
  mode "{\"members\": [\"$broken\", \"ok\"]}"
  member a 3s 500ms
  wait_for 5000 "a leads through the second endpoint" leads a
  sleep 3 # a term's keep-alives and its standby-free reads
  bad=$(counted 'c["requests"][0]') good=$(counted 'c["requests"][1]')
  echo "etcd $scenario first: $bad requests to it, $good to the healthy member (bound: at most 3 to it)"
  holds a || fail "a no longer holds the lease"
  # The election's client and the refresher's try it once each.
  ((bad <= 3)) || fail "$bad requests went to the broken endpoint"
  # Read, grant, acquire, and a keep-alive a second.
  ((good >= 5)) || fail "only $good requests reached the healthy member"
  ;;
endpoint-silent-first)
  gateway_start 2
  mode '{"members": ["ok", "proxy502"]}'
  member a 3s 500ms
  wait_for 5000 "a leads" leads a
  member b 3s 500ms
  wait_for 5000 "b is standby" log_has b 'held by a'
  # Silent past the lease: the leader loses it, both members' calls go to
  # the broken endpoint meanwhile.
  mode '{"members": ["silent", "proxy502"]}'
  sleep 5
  mode '{"members": ["ok", "proxy502"]}'
  sleep 4
  bad=$(counted 'c["requests"][1]') holder=none
  holds a && holder=a
  holds b && holder=b
  echo "etcd endpoint-silent-first: 4 s after the first endpoint came back: holder $holder;" \
       "a lost the lease $(count a 'lease lost') time(s); $bad requests to the broken endpoint"
  [[ $holder != none ]] || fail "nobody leads 4 s after the first endpoint came back"
  last=$(grep -E 'elected: leading|lease lost' "$T/$holder.log" | tail -n 1)
  [[ $last == *"elected: leading"* ]] || fail "$holder holds the key but is not leading"
  ;;
slow)
  gateway_start 1
  mode '{"delay_ms": 440, "race": true}'
  keepalives_start
  member b 3s 500ms "$urls" watchdog
  wait_for 5000 "b's first attempt" log_has b 'held by other'
  from=$(mono_ms) grants0=$(counted 'c["grants"]')
  sleep 8
  to=$(mono_ms)
  gap=$(max_gap "$from" "$to") grants=$(($(counted 'c["grants"]') - grants0))
  echo "etcd slow (440 ms an answer, WatchdogSec $((WATCHDOG_USEC / 1000)) ms): $grants attempts of four" \
       "calls in $((to - from)) ms, longest gap between keepalives ${gap} ms (bound ${GAP_MAX_MS} ms)"
  ((grants >= 2)) || fail "only $grants attempts: is the race attempted?"
  ((gap <= GAP_MAX_MS)) || fail "no keepalive for ${gap} ms"
  kill -0 "${pid_of[b]}" || fail "b exited"
  ;;
short-ttl | slow-short)
  gateway_start 1
  if [[ $scenario == short-ttl ]]; then
    mode '{"grant_ttl": 1}'
    lease=16s
  else
    mode '{"delay_ms": 450}'
    lease=1s
  fi
  keepalives_start
  member b "$lease" 500ms "$urls" watchdog
  from=$(mono_ms)
  sleep 8
  to=$(mono_ms)
  gap=$(max_gap "$from" "$to") grants=$(counted 'c["grants"]') terms=$(count b 'elected: leading')
  refused=$(count b 'term refused')
  echo "etcd $scenario (--lease $lease): $grants grants, $terms terms, $refused refused in $((to - from)) ms;" \
       "longest gap between keepalives ${gap} ms (bound ${GAP_MAX_MS} ms)"
  ((terms == 0)) || fail "$terms terms taken with no time to act"
  ((refused >= 1)) || fail "no refusal logged"
  log_has b 'leaves -\?[0-9]* ms to act' || fail "the refusal does not say the time left"
  # One lease time (at least a poll), doubling: 1 s, 2 s, 4 s for a 1 s lease.
  ((grants <= 4)) || fail "$grants grants in 8 s: no backoff"
  ((gap <= GAP_MAX_MS)) || fail "no keepalive for ${gap} ms"
  ;;
huge-ttl)
  gateway_start 1
  mode '{"keepalive_ttl": 9000000000}'
  member a 3s 500ms
  wait_for 5000 "a leads" leads a
  sleep 2 # keep-alives answered with the huge TTL
  mode '{"members": ["reset"]}'
  t0=$(now_ms)
  wait_for 8000 "a stepping down with etcd gone" log_has a 'lease lost'
  took=$(($(now_ms) - t0))
  echo "etcd huge-ttl: keep-alives answered TTL 9e9 s, etcd gone: a stepped down after ${took} ms" \
       "(bound 3000 ms, the TTL asked)"
  ! log_has a '[0-9]h left' || fail "a believed hours were left"
  ((took <= 3000)) || fail "a kept leading ${took} ms after etcd was gone"
  ;;
watch-flood)
  gateway_start 1
  mode '{"held_by": "other"}'
  member b 3s 500ms
  wait_for 5000 "b is standby" log_has b 'held by other'
  mode '{"held_by": "other", "watch_flood": true}'
  sleep 1
  ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
  hz=$(getconf CLK_TCK) c0=$(ticks "${pid_of[b]}") t0=$(now_ms)
  sleep 5
  c1=$(ticks "${pid_of[b]}") t1=$(now_ms)
  cpu=$(((c1 - c0) * 1000 / hz)) wall=$((t1 - t0)) flood=$(($(counted 'c["flood_bytes"]') / 1024))
  # The gateway writes until the socket's buffers are full: what it got
  # into them is what the standby could have read at once.
  echo "etcd watch-flood: the standby used ${cpu} ms of CPU in ${wall} ms (bound 10 %);" \
       "the gateway got ${flood} KiB of events into the connection"
  ((flood >= 1024)) || fail "only ${flood} KiB of flood was sent"
  ((cpu * 10 <= wall)) || fail "the standby used ${cpu} ms of CPU in ${wall} ms"
  holds other || fail "the flood moved the lease"
  ;;
acquire-error)
  gateway_start 1
  mode '{"txn_unavailable": true}'
  member b 3s 500ms
  wait_for 5000 "b finds etcd unavailable" log_has b 'etcd unavailable'
  line=$(grep -m1 'etcd unavailable' "$T/b.log")
  echo "etcd acquire-error: b logged: ${line#*> }"
  grep -q 'etcd unavailable (.*request timed out' "$T/b.log" || fail "the acquire's reason is not in the log"
  ! log_has b 'etcd unavailable ()' || fail "the reason was wiped"
  ;;
*)
  fail "unknown scenario $scenario"
  ;;
esac
echo PASS
