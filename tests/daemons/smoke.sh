#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Smoke tests of the reference daemons, run outside systemd (the end-to-end
# suite under a real manager lives in tests/e2e).
#
# Usage: smoke.sh CASE WORKER CLEANER SENTINEL ACCEPTOR ACCEPTOR_PING
# CASE is one of: cli missing-dir cleaner-once cleaner-populate cleaner-pacing
#                 acceptor sigterm worker-unsupervised worker-wedge worker-hang
set -u

CASE=$1 WORKER=$2 CLEANER=$3 SENTINEL=$4 ACCEPTOR=$5 PING=$6
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID STATE_DIRECTORY RUNTIME_DIRECTORY \
      SDLIVE_WEDGE_FILE SDLIVE_HANG_EXECUTOR_FILE

TMP=$(mktemp -d /tmp/sdlive-smoke.XXXXXX)
PIDS=()
cleanup() {
        for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
        rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# expect_status WANT CMD... : runs CMD, checks its exit status.
expect_status() {
        local want=$1; shift
        "$@" >"$TMP/out" 2>"$TMP/err"
        local got=$?
        [ "$got" = "$want" ] || { cat "$TMP/err" >&2; fail "'$*' exited $got, expected $want"; }
}

# wait_log FILE PATTERN [SECONDS]: waits until FILE has a line matching PATTERN.
wait_log() {
        local deadline=$(( $(now_ms) + ${3:-5} * 1000 ))
        until grep -q -- "$2" "$1" 2>/dev/null; do
                [ "$(now_ms)" -lt "$deadline" ] || { cat "$1" >&2; fail "no '$2' in $1"; }
                sleep 0.05
        done
}

# start LOG CMD...: starts CMD in the background with stderr to LOG; sets PID.
start() {
        local log=$1; shift
        "$@" >/dev/null 2>"$log" &
        PID=$!
        PIDS+=("$PID")
}

# stop_within_1s PID LOG: SIGTERM, then exit status 0 within one second.
stop_within_1s() {
        local pid=$1 log=$2 t0 status
        t0=$(now_ms)
        kill -TERM "$pid"
        for _ in $(seq 100); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.01
        done
        kill -0 "$pid" 2>/dev/null && { cat "$log" >&2; fail "pid $pid still running 1 s after SIGTERM"; }
        wait "$pid"
        status=$?
        [ "$status" = 0 ] || { cat "$log" >&2; fail "exit status $status after SIGTERM"; }
        echo "stopped in $(( $(now_ms) - t0 )) ms"
}

case_cli() {
        local d
        for d in "$WORKER" "$CLEANER" "$SENTINEL" "$ACCEPTOR"; do
                expect_status 0 "$d" --help
                grep -q '^Usage: ' "$TMP/out" || fail "$d --help: no usage on stdout"
                # -h and -V are described in the column of the first option.
                local columns
                columns=$(awk '/^  --/ && !first { match($0, /[^ ]  +[^ ]/); first = RSTART + RLENGTH - 1 }
                               /^  -[hV], --/ { print first, index($0, "show") }' "$TMP/out" | sort -u)
                [ "$(echo "$columns" | wc -l)" = 1 ] && [ "${columns% *}" = "${columns#* }" ] ||
                        fail "$d --help: -h/-V described at (option column, -h/-V column) '$columns'"
                expect_status 0 "$d" --version
                grep -q '(sdlive [0-9]' "$TMP/out" || fail "$d --version: no version"
                expect_status 2 "$d" --no-such-option
                grep -q "unknown option '--no-such-option'" "$TMP/err" || fail "$d: unclear error"
                grep -q '^<3>' "$TMP/err" || fail "$d: error without <3> priority prefix"
                expect_status 2 "$d" stray-argument
        done
        expect_status 2 "$WORKER" --interval 5x
        grep -q "invalid duration '5x'" "$TMP/err" || fail "worker: unclear duration error"
        expect_status 2 "$WORKER" --interval
        expect_status 2 "$WORKER" --interval 0
        expect_status 2 "$WORKER" --executor-max-silence -1s
        expect_status 2 "$SENTINEL" --interval 1.5s
        expect_status 2 "$CLEANER" --blob-dir "$TMP" --max-age 7days
        expect_status 2 "$CLEANER" --blob-dir "$TMP" --partial-max-age ''
        expect_status 2 "$CLEANER" --blob-dir "$TMP" --pass-interval 99999999999999999999d
        expect_status 2 "$CLEANER" --blob-dir "$TMP" --max-rate ten
        expect_status 2 "$CLEANER" --blob-dir "$TMP" --populate -5
}

case_missing_dir() {
        expect_status 1 "$CLEANER" --blob-dir "$TMP/missing" --once
        grep -q "blob directory $TMP/missing: No such file or directory" "$TMP/err" || fail "cleaner: unclear error"
        touch "$TMP/file"
        expect_status 1 "$CLEANER" --blob-dir "$TMP/file" --once
        expect_status 1 "$ACCEPTOR" --socket "$TMP/missing/acceptor.sock"
        grep -q "socket directory $TMP/missing" "$TMP/err" || fail "acceptor: unclear error"
        # No directory at all is a usage error; $STATE_DIRECTORY supplies the default.
        expect_status 2 "$CLEANER" --once
        expect_status 2 "$ACCEPTOR"
        mkdir "$TMP/state"
        STATE_DIRECTORY="$TMP/state" expect_status 0 "$CLEANER" --once
        [ -d "$TMP/state/blobs" ] || fail "cleaner did not create \$STATE_DIRECTORY/blobs"
}

case_cleaner_once() {
        local b=$TMP/blobs
        mkdir -p "$b/ab/cd/ef" "$b/empty/deeper/deepest" "$b/kept" "$b/emptied"
        # Expired: blobs older than 7d, partials older than 1h.
        touch -d '8 days ago' "$b/old" "$b/ab/cd/ef/old" "$b/emptied/old" "$b/old.partial"
        touch -d '2 hours ago' "$b/ab/stale.partial" "$b/ab/cd/ef/young-blob" "$b/kept/.partial"
        # Kept: fresh blobs and partials, a symlink, a fifo.
        touch "$b/new" "$b/ab/new.partial" "$b/kept/x"
        touch -d '6 days ago' "$b/ab/cd/six-days"
        touch -d '50 minutes ago' "$b/ab/cd/young.partial"
        ln -s /nonexistent "$b/kept/link"
        mkfifo "$b/kept/fifo"
        expect_status 0 "$CLEANER" --blob-dir "$b" --once
        grep -q 'deleted 3 blobs, 2 partials, 4 directories, 0 errors' "$TMP/err" ||
                { cat "$TMP/err" >&2; fail "unexpected pass summary"; }
        (cd "$b" && find . | sort) >"$TMP/left"
        cat >"$TMP/want" <<'LIST'
.
./ab
./ab/cd
./ab/cd/ef
./ab/cd/ef/young-blob
./ab/cd/six-days
./ab/cd/young.partial
./ab/new.partial
./kept
./kept/.partial
./kept/fifo
./kept/link
./kept/x
./new
LIST
        diff -u "$TMP/want" "$TMP/left" || fail "wrong entries left"
        # A second pass finds nothing more to do.
        expect_status 0 "$CLEANER" --blob-dir "$b" --once
        grep -q 'deleted 0 blobs, 0 partials, 0 directories' "$TMP/err" || fail "second pass deleted"
}

case_cleaner_populate() {
        mkdir "$TMP/blobs"
        expect_status 0 "$CLEANER" --blob-dir "$TMP/blobs" --populate 3000
        [ "$(find "$TMP/blobs" -type f | wc -l)" = 3000 ] || fail "populate did not create 3000 files"
        expect_status 0 "$CLEANER" --blob-dir "$TMP/blobs" --once
        grep -q 'scanned 3014 entries, deleted 0 blobs' "$TMP/err" || { cat "$TMP/err" >&2; fail "fresh blobs deleted"; }
        expect_status 0 "$CLEANER" --blob-dir "$TMP/blobs" --once --max-age 0
        grep -q 'deleted 3000 blobs, 0 partials, 14 directories' "$TMP/err" || { cat "$TMP/err" >&2; fail "wrong summary"; }
        [ -d "$TMP/blobs" ] && [ -z "$(ls -A "$TMP/blobs")" ] || fail "root removed or not emptied"
}

case_cleaner_pacing() {
        local t0 took
        mkdir "$TMP/blobs"
        expect_status 0 "$CLEANER" --blob-dir "$TMP/blobs" --populate 40
        t0=$(now_ms)
        expect_status 0 "$CLEANER" --blob-dir "$TMP/blobs" --once --max-rate 30
        took=$(( $(now_ms) - t0 ))
        # 43 entries at 30/s: the last one is due after 1.4 s.
        [ "$took" -ge 1300 ] && [ "$took" -lt 4000 ] || fail "paced pass took $took ms"
        echo "paced pass: $took ms"
        # SIGTERM in the middle of a paced pass.
        start "$TMP/log" "$CLEANER" --blob-dir "$TMP/blobs" --max-rate 10
        sleep 1
        stop_within_1s "$PID" "$TMP/log"
}

case_acceptor() {
        local sock=$TMP/acceptor.sock
        start "$TMP/log" "$ACCEPTOR" --socket "$sock"
        wait_log "$TMP/log" "listening on $sock"
        [ "$("$PING" "$sock")" = pong ] || fail "no pong"
        [ "$("$PING" "$sock" hello)" = "error: unknown request" ] || fail "unknown request not refused"
        expect_status 1 "$ACCEPTOR" --socket "$sock"
        grep -q "another process is listening" "$TMP/err" || fail "second acceptor: unclear error"
        stop_within_1s "$PID" "$TMP/log"
        [ ! -e "$sock" ] || fail "socket left behind"
        # A stale socket (no listener) is replaced.
        start "$TMP/log2" "$ACCEPTOR" --socket "$sock"
        wait_log "$TMP/log2" "listening on"
        kill -KILL "$PID"; wait "$PID" 2>/dev/null
        start "$TMP/log3" "$ACCEPTOR" --socket "$sock"
        wait_log "$TMP/log3" "listening on"
        grep -q "removed stale socket" "$TMP/log3" || fail "stale socket not reported"
        [ "$("$PING" "$sock")" = pong ] || fail "no pong after restart"
        stop_within_1s "$PID" "$TMP/log3"
}

case_sigterm() {
        mkdir "$TMP/blobs"
        start "$TMP/w" "$WORKER" --interval 10s
        wait_log "$TMP/w" "job 1 done"
        stop_within_1s "$PID" "$TMP/w"
        start "$TMP/c" "$CLEANER" --blob-dir "$TMP/blobs" --pass-interval 1h
        wait_log "$TMP/c" "pass 1 done"
        stop_within_1s "$PID" "$TMP/c"
        start "$TMP/s" "$SENTINEL" --interval 10s
        wait_log "$TMP/s" "sentinel up"
        stop_within_1s "$PID" "$TMP/s"
        start "$TMP/a" "$ACCEPTOR" --socket "$TMP/a.sock"
        wait_log "$TMP/a" "listening on"
        stop_within_1s "$PID" "$TMP/a"
}

case_worker_unsupervised() {
        start "$TMP/w" "$WORKER" --interval 100ms
        wait_log "$TMP/w" "job 5 done" 3
        grep -q "not supervised by systemd" "$TMP/w" || fail "no supervision notice"
        stop_within_1s "$PID" "$TMP/w"
}

case_worker_wedge() {
        start "$TMP/w" "$WORKER" --interval 100ms --wedge-file "$TMP/wedge"
        wait_log "$TMP/w" "job 2 done"
        touch "$TMP/wedge"
        wait_log "$TMP/w" "^<4>fault injected: $TMP/wedge found, worker main loop hangs"
        local jobs
        jobs=$(grep -c "done in" "$TMP/w")
        sleep 0.5
        [ "$(grep -c "done in" "$TMP/w")" = "$jobs" ] || fail "main loop still dispatching jobs"
        [ "$(ls /proc/"$PID"/task | wc -l)" -ge 3 ] || fail "the other threads did not survive the wedge"
        # A wedged main loop does not answer SIGTERM: that is the point.
        kill -TERM "$PID"; sleep 0.3
        kill -0 "$PID" 2>/dev/null || fail "wedged worker exited on SIGTERM"
}

case_worker_hang() {
        touch "$TMP/hang"
        SDLIVE_HANG_EXECUTOR_FILE="$TMP/hang" start "$TMP/w" "$WORKER" --interval 100ms
        wait_log "$TMP/w" "^<4>fault injected: $TMP/hang found, job executor hangs"
        wait_log "$TMP/w" "^<4>executor busy for"
        stop_within_1s "$PID" "$TMP/w"
        grep -q "executor is hung in a job" "$TMP/w" || fail "hung executor not reported at exit"
}

case "$CASE" in
cli|missing-dir|cleaner-once|cleaner-populate|cleaner-pacing|acceptor|sigterm|worker-unsupervised|worker-wedge|worker-hang)
        "case_${CASE//-/_}" ;;
*)
        fail "unknown case '$CASE'" ;;
esac
echo "PASS: $CASE"
