#!/usr/bin/env bash
# Each daemon started outside systemd with SIGPIPE at its default action
# ignores it once running, as systemd's services do: a peer that closes
# while the daemon writes (a TLS write goes through write(2)) must cost an
# EPIPE, not the daemon. Read from SigIgn in /proc/PID/status.
#
#   sigpipe-ignored.sh SDLIVE_WORKER SDLIVE_CLEANER SDLIVE_SENTINEL [SDLIVE_CLUSTER]
# (no cluster in a build without the cluster platform; its worker then runs
# its timer mode)
set -euo pipefail
worker=$1 cleaner=$2 sentinel=$3 cluster=${4:-}
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
adv_begin sigpipe
T=$work

# run NAME CMD...: started with SIGPIPE at its default action (Python's
# subprocess restores it), then its SigIgn must have bit 13 set.
run() {
  local name=$1 pid mask
  shift
  /usr/bin/python3 -c 'import os, signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$@" >"$T/$name.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do
    grep -q "supervis" "$T/$name.log" 2>/dev/null && break
    sleep 0.05
  done
  kill -0 "$pid" 2>/dev/null || { cat "$T/$name.log"; fail "$name exited"; }
  mask=$(sed -n 's/^SigIgn:[[:space:]]*//p' "/proc/$pid/status")
  if (((16#$mask >> 12) & 1)); then
    echo "$name: SIGPIPE ignored (SigIgn $mask)"
  else
    fail "$name does not ignore SIGPIPE (SigIgn $mask)"
  fi
  kill -TERM "$pid"
  wait "$pid" || true
}

mkdir -p "$T/blobs" "$T/store"
chmod 700 "$T/store"
if [[ -n $cluster ]]; then
  run cluster "$cluster" --store "sqlite:$T/store/cluster.db" --node a --lease-record ""
  run worker "$worker" --coordinator "$T/none.sock"
else
  run worker "$worker" --interval 1h
fi
run cleaner "$cleaner" --blob-dir "$T/blobs"
run sentinel "$sentinel"
echo PASS
