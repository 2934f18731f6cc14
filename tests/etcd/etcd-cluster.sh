#!/usr/bin/env bash
# A private three-member etcd cluster on loopback for the lease tests.
#
#   etcd-cluster.sh start     STATE_DIR    fresh data directories, start all three, wait for a leader
#   etcd-cluster.sh endpoints STATE_DIR    print the client URLs, comma-separated
#   etcd-cluster.sh leader    STATE_DIR    print the index (0-2) of the member that leads
#   etcd-cluster.sh kill      STATE_DIR N  SIGKILL member N (a crash; its data stays)
#   etcd-cluster.sh down      STATE_DIR N  stop member N cleanly (SIGTERM), keep its data
#   etcd-cluster.sh up        STATE_DIR N  start member N again on its data, wait until it is healthy
#   etcd-cluster.sh pause     STATE_DIR N  SIGSTOP member N (silent: connections open, no answers)
#   etcd-cluster.sh resume    STATE_DIR N  SIGCONT member N
#   etcd-cluster.sh heal      STATE_DIR    resume and start every member, wait until all are healthy
#   etcd-cluster.sh move-leader STATE_DIR N  make member N etcd's leader
#   etcd-cluster.sh partition STATE_DIR N  cut member N from its peers and its clients, running
#   etcd-cluster.sh dropped   STATE_DIR N  print the packets the partition of member N dropped
#   etcd-cluster.sh unpartition STATE_DIR N  end the partition of member N
#   etcd-cluster.sh connections STATE_DIR PID  print the members (0-2) process PID has
#                                          client connections to, space-separated
#   etcd-cluster.sh stop      STATE_DIR    stop every member and delete everything
#
# STATE_DIR (for example the build directory) only remembers where the
# temporary directory is. Members listen on 127.0.0.1 only: client ports
# BASE..BASE+2, peer ports BASE+3..BASE+5, BASE = SDLIVE_ETCD_PORT_BASE
# (default 23870, away from etcd's own 2379/2380 and from the other suites).
# The data lives under /dev/shm when it exists (tests want speed, not
# durability), else under /tmp. Heartbeat 50 ms and election timeout 500 ms
# make leader changes and lease expiry quick (etcd's shortest TTL becomes
# 1 s instead of 2 s).
#
# A partition is packet filtering (iptables), so it is refused unless this
# runs in a network namespace other than $SDLIVE_E2E_OUTER_NETNS, the one
# the test started in (the test makes its own with unshare --net): rules
# are never added to the machine's own namespace. Member N runs with
# group id MEMBER_GID_BASE + BASE + N (no other effect: it stays root), so
# the rules can tell its packets from its peers' on the one loopback.
set -euo pipefail

usage() { echo "usage: $0 start|endpoints|leader|heal|stop STATE_DIR, or kill|down|up|pause|resume|move-leader|partition|dropped|unpartition STATE_DIR N, or connections STATE_DIR PID" >&2; exit 2; }
(($# >= 2)) || usage
cmd=$1
state_file=$2/etcd-cluster.dir
base=${SDLIVE_ETCD_PORT_BASE:-23870}
if ! [[ $base =~ ^[0-9]+$ ]] || ((base < 1024 || base > 65000)); then
  echo "etcd-cluster.sh: SDLIVE_ETCD_PORT_BASE=$base is not a port in 1024..65000" >&2
  exit 2
fi

if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
  echo "etcd-cluster.sh: etcd and etcdctl not found (install etcd-server and etcd-client)" >&2
  exit 1
fi
export ETCDCTL_API=3

client_url() { echo "http://127.0.0.1:$((base + $1))"; }
peer_url() { echo "http://127.0.0.1:$((base + 3 + $1))"; }
endpoints() { echo "$(client_url 0),$(client_url 1),$(client_url 2)"; }
initial_cluster() { echo "m0=$(peer_url 0),m1=$(peer_url 1),m2=$(peer_url 2)"; }
MEMBER_GID_BASE=2000000000
member_gid() { echo $((MEMBER_GID_BASE + base + $1)); }
chain_of() { echo "sdlive-etcd-m$1"; }

cluster_dir() {
  [[ -f $state_file ]] || { echo "etcd-cluster.sh: no cluster recorded in $state_file" >&2; exit 1; }
  cat "$state_file"
}

member_arg() {
  [[ ${1:-} =~ ^[012]$ ]] || { echo "etcd-cluster.sh: member must be 0, 1 or 2" >&2; exit 2; }
  echo "$1"
}

# launch DIR N STATE: start member N in the background, its pid in DIR/mN.pid.
launch() {
  local dir=$1 n=$2 state=$3
  setsid setpriv --regid "$(member_gid "$n")" --clear-groups etcd --name "m$n" --data-dir "$dir/m$n" \
    --listen-client-urls "$(client_url "$n")" --advertise-client-urls "$(client_url "$n")" \
    --listen-peer-urls "$(peer_url "$n")" --initial-advertise-peer-urls "$(peer_url "$n")" \
    --initial-cluster "$(initial_cluster)" --initial-cluster-state "$state" \
    --initial-cluster-token sdlive-test --heartbeat-interval 50 --election-timeout 500 \
    --log-level warn --logger zap >>"$dir/m$n.log" 2>&1 </dev/null &
  echo $! >"$dir/m$n.pid"
}

# A pid that runs: killed members may linger as zombies (nobody waits for them).
pid_runs() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != Z ]]
}
alive() { [[ -f $1/m$2.pid ]] && pid_runs "$(cat "$1/m$2.pid")"; }

# wait_healthy URLS SECONDS: until every URL answers health (which needs a leader).
wait_healthy() {
  local deadline=$((SECONDS + $2))
  until etcdctl --endpoints="$1" --command-timeout=2s endpoint health >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

signal_member() {
  local dir=$1 n=$2 sig=$3 pid
  alive "$dir" "$n" || return 0
  pid=$(cat "$dir/m$n.pid")
  kill "-$sig" "$pid"
  for _ in $(seq 100); do pid_runs "$pid" || break; sleep 0.05; done
  if pid_runs "$pid"; then kill -KILL "$pid"; sleep 0.2; fi
  rm -f "$dir/m$n.pid"
}

case $cmd in
start)
  if [[ -f $state_file ]]; then "$0" stop "$2" || true; fi
  for port in $(seq "$base" $((base + 5))); do
    if timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null; then
      echo "etcd-cluster.sh: port $port is already in use (set SDLIVE_ETCD_PORT_BASE)" >&2
      exit 1
    fi
  done
  parent=/tmp
  [[ -d /dev/shm && -w /dev/shm ]] && parent=/dev/shm
  dir=$(mktemp -d "$parent/sdlive-etcd.XXXXXX")
  echo "$dir" >"$state_file"
  for n in 0 1 2; do launch "$dir" "$n" new; done
  wait_healthy "$(endpoints)" 30 || { tail -n 20 "$dir"/m*.log >&2; exit 1; }
  ;;
endpoints)
  cluster_dir >/dev/null
  endpoints
  ;;
leader)
  cluster_dir >/dev/null
  for n in 0 1 2; do
    if etcdctl --endpoints="$(client_url "$n")" --command-timeout=1s endpoint status 2>/dev/null |
       awk -F', ' '{ exit !($5 == "true") }'; then
      echo "$n"; exit 0
    fi
  done
  echo "etcd-cluster.sh: no member says it leads" >&2
  exit 1
  ;;
kill)
  dir=$(cluster_dir); n=$(member_arg "${3:-}")
  signal_member "$dir" "$n" KILL
  ;;
down)
  dir=$(cluster_dir); n=$(member_arg "${3:-}")
  signal_member "$dir" "$n" TERM
  ;;
up)
  dir=$(cluster_dir); n=$(member_arg "${3:-}")
  alive "$dir" "$n" || launch "$dir" "$n" existing
  wait_healthy "$(client_url "$n")" 30 || { tail -n 20 "$dir/m$n.log" >&2; exit 1; }
  ;;
pause | resume)
  dir=$(cluster_dir); n=$(member_arg "${3:-}")
  if ! alive "$dir" "$n"; then
    [[ $cmd == resume ]] && exit 0 # nothing stopped to resume
    echo "etcd-cluster.sh: member $n is not running" >&2
    exit 1
  fi
  if [[ $cmd == pause ]]; then kill -STOP "$(cat "$dir/m$n.pid")"; else kill -CONT "$(cat "$dir/m$n.pid")"; fi
  ;;
move-leader)
  cluster_dir >/dev/null; n=$(member_arg "${3:-}")
  id=$(etcdctl --endpoints="$(client_url "$n")" --command-timeout=2s endpoint status | awk -F', ' '{ print $2 }')
  [[ $id =~ ^[0-9a-f]+$ ]] || { echo "etcd-cluster.sh: no member id for member $n" >&2; exit 1; }
  leader=$("$0" leader "$2")
  [[ $leader == "$n" ]] || etcdctl --endpoints="$(client_url "$leader")" --command-timeout=5s move-leader "$id" >/dev/null
  ;;
partition | dropped | unpartition)
  here=$(readlink /proc/self/ns/net)
  if [[ -z ${SDLIVE_E2E_OUTER_NETNS:-} || $here == "${SDLIVE_E2E_OUTER_NETNS}" ]]; then
    echo "etcd-cluster.sh: $cmd needs a network namespace of the test's own (SDLIVE_E2E_OUTER_NETNS names the one to stay out of)" >&2
    exit 1
  fi
  cluster_dir >/dev/null; n=$(member_arg "${3:-}")
  chain=$(chain_of "$n")
  case $cmd in
  partition)
    # What member N sends marks its connection (those it dialed to its
    # peers, those it accepted); a marked connection is dropped both ways,
    # and so is whatever anyone sends to its ports.
    iptables -w -N "$chain"
    iptables -w -A "$chain" -m owner --gid-owner "$(member_gid "$n")" -j CONNMARK --set-mark $((0x5d00 + n))
    iptables -w -A "$chain" -m connmark --mark $((0x5d00 + n)) -j DROP
    iptables -w -A "$chain" -p tcp -m multiport --dports "$((base + n)),$((base + 3 + n))" -j DROP
    iptables -w -I OUTPUT -j "$chain"
    ;;
  dropped)
    iptables -w -L "$chain" -v -n -x | awk '$3 == "DROP" { sum += $1 } END { print sum + 0 }'
    ;;
  unpartition)
    iptables -w -D OUTPUT -j "$chain"
    iptables -w -F "$chain"
    iptables -w -X "$chain"
    ;;
  esac
  ;;
connections)
  [[ ${3:-} =~ ^[0-9]+$ ]] || usage
  ss -tnpH state established | awk -v pid="pid=$3," -v base="$base" '
    index($0, pid) { n = split($4, a, ":"); p = a[n] - base; if (p >= 0 && p <= 2) print p }' | sort -u | tr '\n' ' '
  ;;
heal)
  dir=$(cluster_dir)
  for n in 0 1 2; do
    if alive "$dir" "$n"; then kill -CONT "$(cat "$dir/m$n.pid")"; else launch "$dir" "$n" existing; fi
  done
  wait_healthy "$(endpoints)" 30 || { tail -n 20 "$dir"/m*.log >&2; exit 1; }
  ;;
stop)
  [[ -f $state_file ]] || exit 0
  dir=$(cat "$state_file")
  for n in 0 1 2; do signal_member "$dir" "$n" KILL; done
  case $dir in /dev/shm/sdlive-etcd.* | /tmp/sdlive-etcd.*) rm -rf "$dir" ;; esac
  rm -f "$state_file"
  ;;
*)
  usage
  ;;
esac
