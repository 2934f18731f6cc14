#!/usr/bin/env bash
# Scenario 6: each daemon started outside systemd (no NOTIFY_SOCKET, no
# WATCHDOG_USEC) runs normally: it keeps running, does its work, logs no
# error, and exits 0 within 1 s of SIGTERM. No manager needed.
set -euo pipefail
: "${SDLIVE_BUILD_DIR:?set SDLIVE_BUILD_DIR to the build tree}"
logs=${SDLIVE_E2E_LOG_DIR:-$(mktemp -d /tmp/sdlive-e2e-logs.XXXXXX)}
rm -rf -- "$logs"
mkdir -p -- "$logs"
work=$(mktemp -d /tmp/sdlive-e2e-outside.XXXXXX)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  rm -rf -- "$work"
}
trap cleanup EXIT

fail() { printf 'e2e: FAIL: %s\n' "$*" >&2; tail -n 5 "$logs"/*.log >&2 || true; exit 1; }
now_us() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }

# daemon -> its arguments for a short, local run
declare -A args=(
  [worker]="--interval 200ms"
  [cleaner]="--blob-dir $work/blobs --pass-interval 300ms"
  [sentinel]="--interval 300ms"
  [acceptor]="--socket $work/acceptor.sock"
  [cluster]="--store sqlite:$work/cluster.db --node outside --lease 3s --election-poll 500ms --maintenance-interval 500ms"
)
mkdir -p -- "$work/blobs"

declare -A pid_of=()
ran=()
for daemon in worker cleaner sentinel acceptor cluster; do
  bin=$SDLIVE_BUILD_DIR/examples/$daemon/sdlive-$daemon
  if [[ ! -e $SDLIVE_BUILD_DIR/examples/$daemon ]]; then
    echo "e2e: $daemon: not in this build, not checked" >&2
    continue
  fi
  [[ -x $bin ]] || fail "$bin is not built"
  # shellcheck disable=SC2086 # args are word lists
  env -u NOTIFY_SOCKET -u WATCHDOG_USEC -u WATCHDOG_PID -u SDLIVE_WEDGE_FILE \
    -u SDLIVE_HANG_EXECUTOR_FILE -u STATE_DIRECTORY -u RUNTIME_DIRECTORY \
    "$bin" ${args[$daemon]} </dev/null >"$logs/$daemon.log" 2>&1 &
  pid_of[$daemon]=$!
  pids+=($!)
  ran+=("$daemon")
done
((${#ran[@]})) || fail "no daemon is built"

sleep 2
for daemon in "${ran[@]}"; do
  kill -0 "${pid_of[$daemon]}" 2>/dev/null || fail "$daemon exited on its own outside systemd"
done
if [[ -n ${pid_of[acceptor]:-} ]]; then
  reply=$(timeout 2 perl -MIO::Socket::UNIX -e '
    my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]) or die "connect: $!\n";
    print $s "ping\n"; print scalar <$s>;' -- "$work/acceptor.sock") || fail "acceptor: no answer"
  [[ $reply == pong ]] || fail "acceptor answered \"$reply\""
fi

for daemon in "${ran[@]}"; do
  pid=${pid_of[$daemon]}
  start=$(now_us)
  kill -TERM "$pid"
  status=0
  wait "$pid" || status=$?
  took_ms=$((($(now_us) - start) / 1000))
  ((status == 0)) || fail "$daemon: exit status $status after SIGTERM"
  ((took_ms < 1000)) || fail "$daemon: took ${took_ms} ms to exit after SIGTERM"
  ! grep -q '^<[0-3]>' "$logs/$daemon.log" || fail "$daemon logged an error outside systemd"
  grep -q '^<[4-7]>' "$logs/$daemon.log" || fail "$daemon logged nothing"
  printf 'outside systemd: %-9s ran 2 s, exited 0 in %3d ms after SIGTERM; first log line: %s\n' \
    "$daemon" "$took_ms" "$(head -n 1 "$logs/$daemon.log")"
done
pids=()
echo "PASS: ${ran[*]} run normally without NOTIFY_SOCKET"
