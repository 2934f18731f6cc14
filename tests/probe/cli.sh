#!/bin/bash
# SPDX-License-Identifier: MIT
#
# sdlive-probe outside systemd: bad options exit 2 with one line and never
# start the daemon; the daemon's exit status and signal become ours; the
# manager's signals reach it; a daemon that goes to the background is
# refused; a start whose probes never pass fails (exit 1); each kind of
# probe passes and fails against real servers.
#
# Usage: cli.sh SDLIVE-PROBE
set -u
PROBE=$1
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID SDLIVE_WEDGE_FILE
TMP=$(mktemp -d /tmp/sdlive-probe-cli.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A daemon that leaves a mark when it starts.
MARK="$TMP/started"
DAEMON=(/bin/sh -c "touch $MARK; exec sleep 30")

# refused PATTERN ARG...: exit 2, one line matching PATTERN, no daemon.
refused() {
        local pattern=$1 status; shift
        rm -f "$MARK"
        timeout 5 "$PROBE" "$@" >/dev/null 2>"$TMP/err"
        status=$?
        if [ "$status" != 2 ] || [ "$(wc -l <"$TMP/err")" != 1 ] || ! grep -q -- "^<3>.*$pattern" "$TMP/err"; then
                fail "$(printf '%q ' "$@"): exit $status, want 2 and one line matching '$pattern':"
                cat "$TMP/err"
        fi
        [ -e "$MARK" ] && fail "$(printf '%q ' "$@"): the daemon was started"
}

refused 'timeout is longer than the period' --period 1s --timeout 2s --tcp 127.0.0.1:1 -- "${DAEMON[@]}"
refused 'failure-threshold: 0 out of range' --failure-threshold 0 --tcp 127.0.0.1:1 -- "${DAEMON[@]}"
refused 'success-threshold: 0 out of range' --success-threshold 0 --tcp 127.0.0.1:1 -- "${DAEMON[@]}"
refused 'not an http:// or https:// URL' --http ftp://127.0.0.1/ -- "${DAEMON[@]}"
refused 'not an http:// or https:// URL' --http file:///etc/passwd -- "${DAEMON[@]}"
refused "command 'sdlive-no-such-check': not found" --exec 'sdlive-no-such-check -q' -- "${DAEMON[@]}"
refused "command '/nonexistent/daemon': not found" --tcp 127.0.0.1:1 -- /nonexistent/daemon
refused 'must be an IP address' --tcp localhost:80 -- "${DAEMON[@]}"
refused 'applies to the probes named after it' --tcp 127.0.0.1:1 --period 2s -- "${DAEMON[@]}"
refused 'no probe given' -- "${DAEMON[@]}"
refused 'no command given' --tcp 127.0.0.1:1
refused 'no command given' --tcp 127.0.0.1:1 --
refused 'status range' --expect-status 200-600 --http http://127.0.0.1/ -- "${DAEMON[@]}"
refused 'out of range' --period 1ms --tcp 127.0.0.1:1 -- "${DAEMON[@]}"
refused 'at most 16 probes' $(for i in $(seq 17); do echo --tcp 127.0.0.1:1; done) -- "${DAEMON[@]}"

# The daemon's end is ours: its exit status, its signal raised again.
timeout 5 "$PROBE" --tcp 127.0.0.1:1 -- /bin/sh -c 'exit 7' 2>/dev/null
[ $? = 7 ] || fail "exit 7 not passed through"
timeout 5 "$PROBE" --tcp 127.0.0.1:1 -- /bin/sh -c 'kill -USR2 $$' 2>/dev/null
[ $? = $((128 + 12)) ] || fail "death by SIGUSR2 not raised again"

# Signals reach the daemon, which reports each; SIGTERM ends it and us.
cat >"$TMP/trapper.sh" <<'SH'
#!/bin/sh
for s in HUP USR1 USR2 INT ABRT; do trap "echo $s >>$1" $s; done
trap "echo TERM >>$1; exit 0" TERM
echo up >>$1
while :; do sleep 0.05; done
SH
chmod +x "$TMP/trapper.sh"
"$PROBE" --tcp 127.0.0.1:1 -- "$TMP/trapper.sh" "$TMP/got" 2>"$TMP/trapper.log" &
pid=$!
pids+=("$pid")
for _ in $(seq 50); do [ -s "$TMP/got" ] && break; sleep 0.1; done
for s in HUP USR1 USR2 INT ABRT TERM; do kill -"$s" "$pid"; sleep 0.3; done
wait "$pid"
status=$?
[ "$status" = 0 ] || fail "after SIGTERM: exit $status, want 0"
[ "$(tr '\n' ' ' <"$TMP/got")" = "up HUP USR1 USR2 INT ABRT TERM " ] || fail "signals received: $(tr '\n' ' ' <"$TMP/got")"

# A daemon that goes to the background is refused, and what it left is stopped.
timeout 5 "$PROBE" --tcp 127.0.0.1:1 -- /bin/sh -c "sleep 30 & echo \$! >$TMP/bg; exit 0" 2>"$TMP/err"
status=$?
[ "$status" = 2 ] && grep -q '^<3>.*went to the background' "$TMP/err" || { fail "backgrounding: exit $status"; cat "$TMP/err"; }
sleep 0.2
kill -0 "$(cat "$TMP/bg")" 2>/dev/null && fail "the background process was left running"

# A daemon that fails leaving processes behind: its status, not a refusal
# (exit 2 would keep the manager from restarting it), what it left stopped.
timeout 5 "$PROBE" --tcp 127.0.0.1:1 -- /bin/sh -c "sleep 30 & echo \$! >$TMP/bg; exit 3" 2>"$TMP/err"
status=$?
[ "$status" = 3 ] || { fail "a failure leaving processes: exit $status, want 3"; cat "$TMP/err"; }
kill -0 "$(cat "$TMP/bg")" 2>/dev/null && fail "the processes a failed daemon left were left running"

# A start whose probes never pass fails within the grace, daemon stopped.
start=$(date +%s%N)
timeout 10 "$PROBE" --startup-grace 500ms --period 100ms --timeout 50ms --tcp 127.0.0.1:1 -- "${DAEMON[@]}" 2>"$TMP/err"
status=$?
took=$((($(date +%s%N) - start) / 1000000))
[ "$status" = 1 ] || fail "failed start: exit $status, want 1"
grep -q '^<3>start failed: tcp 127.0.0.1:1 failed [0-9]* times in a row: connect: Connection refused' "$TMP/err" ||
        { fail "failed start not explained"; cat "$TMP/err"; }
[ "$took" -lt 3000 ] || fail "failed start took ${took} ms"

# Keepalives through a long period: the probe loop sleeps 3 s between runs,
# longer than its progress limit (timeout + 1 s), parked, so pets go on.
# WATCHDOG_USEC 600 ms: a keepalive every 100 ms, about 40 in 4 s.
PORT=$((20000 + RANDOM % 20000))
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); s.settimeout(0.2)
n, ready, end = 0, False, time.monotonic() + 12
while time.monotonic() < end:
    try:
        m = s.recv(4096)
    except socket.timeout:
        continue
    if b"READY=1" in m:
        ready, end = True, time.monotonic() + 4
    n += ready and m.count(b"WATCHDOG=1")
print(n)' "$TMP/notify" >"$TMP/pets" &
listener=$!
pids+=("$listener")
sleep 0.3
NOTIFY_SOCKET=$TMP/notify WATCHDOG_USEC=600000 "$PROBE" --period 3s --timeout 100ms --tcp "127.0.0.1:$PORT" \
        -- python3 -m http.server -b 127.0.0.1 "$PORT" -d "$TMP" >/dev/null 2>"$TMP/long.log" &
pid=$!
pids+=("$pid")
wait "$listener"
kill -TERM "$pid"
wait "$pid"
pets=$(cat "$TMP/pets")
((pets >= 30)) || { fail "a 3 s period: $pets keepalives in 4 s after READY=1, want about 40"; cat "$TMP/long.log"; }

# The probe loop wedged: keepalives are withheld and the main thread, which
# would pet, looks again once per pet interval (100 ms), not in a spin.
PORT=$((20000 + RANDOM % 20000))
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); time.sleep(30)' "$TMP/notify2" &
pids+=("$!")
sleep 0.3
NOTIFY_SOCKET=$TMP/notify2 WATCHDOG_USEC=600000 "$PROBE" --wedge-file "$TMP/wedge" --period 100ms --timeout 50ms \
        --tcp "127.0.0.1:$PORT" -- python3 -m http.server -b 127.0.0.1 "$PORT" -d "$TMP" >/dev/null 2>"$TMP/wedge.log" &
pid=$!
pids+=("$pid")
for _ in $(seq 50); do grep -q 'every probe passed: ready' "$TMP/wedge.log" && break; sleep 0.1; done
touch "$TMP/wedge"
sleep 1.5   # past the loop's progress limit (50 ms + 1 s)
switches() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$pid/task/$pid/status"; }
before=$(switches)
sleep 2
woke=$(($(switches) - before))
grep -q 'fault injected: .* probe loop hangs' "$TMP/wedge.log" || fail "the probe loop did not wedge"
((woke <= 40)) || fail "wedged probe loop: the main thread woke $woke times in 2 s, want about 20"
kill -TERM "$pid"
wait "$pid"

# Each kind of probe, passing then failing: a server of our own.
PORT=$((20000 + RANDOM % 20000))
cat >"$TMP/server.py" <<'PY'
import http.server, os, socket, sys, threading
port, mode_file, sock_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        mode = open(mode_file).read().strip() if os.path.exists(mode_file) else "ok"
        code = 500 if mode == "500" else 200
        body = b"db down\n\x1b[31m" if code == 500 else b"ok\n"
        self.send_response(code); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
u = socket.socket(socket.AF_UNIX); u.bind(sock_path); u.listen(64)
threading.Thread(target=lambda: [u.accept()[0].close() for _ in iter(int, 1)], daemon=True).start()
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
PY
touch "$TMP/beat"
printf '#!/bin/sh\ntest ! -e %s\n' "$TMP/exec-fail" >"$TMP/check"
chmod +x "$TMP/check"
"$PROBE" --period 100ms --timeout 80ms --failure-threshold 2 \
        --http "http://127.0.0.1:$PORT/" --tcp "127.0.0.1:$PORT" --unix "$TMP/sock" \
        --exec "$TMP/check -q" --max-age 2s --file-age "$TMP/beat" \
        -- python3 "$TMP/server.py" "$PORT" "$TMP/mode" "$TMP/sock" 2>"$TMP/probes.log" &
pid=$!
pids+=("$pid")
for _ in $(seq 50); do grep -q 'every probe passed: ready' "$TMP/probes.log" && break; sleep 0.1; done
grep -q 'every probe passed: ready' "$TMP/probes.log" || { fail "probes never passed"; cat "$TMP/probes.log"; }
echo 500 >"$TMP/mode"
touch "$TMP/exec-fail"
sleep 0.6
grep -q "^<3>probe http http://127.0.0.1:$PORT/ failed 2 times in a row (threshold 2): HTTP 500 (expected 200-399): db down\\\\x0a\\\\x1b\[31m" "$TMP/probes.log" ||
        fail "HTTP 500 not reported, escaped"
grep -q "^<3>probe exec $TMP/check -q failed 2 times in a row (threshold 2): exited with status 1" "$TMP/probes.log" ||
        fail "command probe failure not reported"
grep -q '^<3>keepalives withheld:' "$TMP/probes.log" || fail "withholding not reported"
sleep 2
grep -q "^<3>probe file-age $TMP/beat failed 2 times .*modified .* ago (at most 2s)" "$TMP/probes.log" ||
        fail "stale file not reported"
rm "$TMP/sock"
sleep 0.5
grep -q "^<3>probe unix $TMP/sock failed 2 times .*No such file or directory" "$TMP/probes.log" ||
        fail "unix socket failure not reported"
kill -TERM "$pid"
wait "$pid"
if [ "$failures" != 0 ]; then
        echo "--- probes log"; cat "$TMP/probes.log"
        exit 1
fi
echo "sdlive-probe command line and process model: ok"
