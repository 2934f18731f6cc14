#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Every option of every daemon at and beyond its limits: a value beyond a
# limit exits 2 with one line on stderr that names the option; a value at a
# limit is accepted. Acceptance is seen without running the daemon: a stray
# operand after the options is refused only once every option parsed, so
# "unexpected argument" proves the value went through.
#
# Usage: option-limits.sh WORKER CLEANER SENTINEL ACCEPTOR WORKER_PAGE [CLUSTER]
# Without CLUSTER (a build without the cluster platform) the worker has no
# job mode: its job options, as WORKER_PAGE (sdlive-worker.8) documents
# them, must be refused as unknown, and the cluster's options are not
# checked.
set -u

declare -A BIN=([worker]=$1 [cleaner]=$2 [sentinel]=$3 [acceptor]=$4 [cluster]=${6:-})
worker_page=$5
platform=${6:+yes}
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID STATE_DIRECTORY RUNTIME_DIRECTORY \
      SDLIVE_NODE SDLIVE_WEDGE_FILE SDLIVE_HANG_EXECUTOR_FILE SDLIVE_SPIN_ELECTION_FILE SDLIVE_LEASE_STORE

TMP=$(mktemp -d /tmp/sdlive-options.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0 checked=0
NL=$'\n'
LONG_PATH=/tmp/$(printf '%0104d' 0)   # 109 bytes: beyond sun_path
MAX_PATH=/tmp/$(printf '%0102d' 0)    # 107 bytes: the longest that fits
NAME64=$(printf 'n%.0s' $(seq 64))
NAME63=$(printf 'n%.0s' $(seq 63))
PAYLOAD256=$(printf 'p%.0s' $(seq 256))

run() {
        local daemon=$1; shift
        timeout 5 "${BIN[$daemon]}" "$@" >/dev/null 2>"$TMP/err"
}

# refused DAEMON PATTERN ARG...: exit 2, one line on stderr matching PATTERN.
refused() {
        local daemon=$1 pattern=$2 status lines; shift 2
        checked=$((checked + 1))
        run "$daemon" "$@"
        status=$?
        lines=$(wc -l <"$TMP/err")
        if [ "$status" != 2 ] || [ "$lines" != 1 ] || ! grep -q -- "^<3>.*$pattern" "$TMP/err"; then
                echo "FAIL: sdlive-$daemon $(printf '%q ' "$@"): exit $status, $lines line(s), want 2 and one line matching '$pattern':"
                sed 's/^/    /' "$TMP/err"
                failures=$((failures + 1))
        fi
}

# accepted DAEMON ARG...: the value parses (the stray operand is what is refused).
accepted() {
        local daemon=$1 status; shift
        checked=$((checked + 1))
        run "$daemon" "$@" stray-operand
        status=$?
        if [ "$status" != 2 ] || ! grep -q "unexpected argument 'stray-operand'" "$TMP/err"; then
                echo "FAIL: sdlive-$daemon $(printf '%q ' "$@"): not accepted (exit $status):"
                sed 's/^/    /' "$TMP/err"
                failures=$((failures + 1))
        fi
}

# duration DAEMON OPTION MIN MAX BEYOND_MIN BEYOND_MAX [PREFIX-ARGS...]
duration() {
        local d=$1 opt=$2 min=$3 max=$4 below=$5 above=$6; shift 6
        accepted "$d" "$@" "$opt=$min"
        accepted "$d" "$@" "$opt=$max"
        [ -n "$below" ] && refused "$d" "$opt: duration '$below' out of range" "$@" "$opt=$below"
        refused "$d" "$opt: duration '$above' out of range" "$@" "$opt=$above"
        refused "$d" "$opt: duration '18446744073709551615us' out of range" "$@" "$opt=18446744073709551615us"
        refused "$d" "$opt: duration '99999999999999999999d' out of range" "$@" "$opt=99999999999999999999d"
        refused "$d" "$opt: invalid duration" "$@" "$opt=-1s"
        refused "$d" "$opt: invalid duration" "$@" "$opt=1.5s"
        refused "$d" "$opt: invalid duration" "$@" "$opt=5x"
        refused "$d" "$opt: invalid duration" "$@" "$opt="
}

# number DAEMON OPTION MIN MAX [PREFIX-ARGS...]
number() {
        local d=$1 opt=$2 min=$3 max=$4; shift 4
        accepted "$d" "$@" "$opt=$min"
        accepted "$d" "$@" "$opt=$max"
        [ "$min" -gt 0 ] && refused "$d" "$opt: $((min - 1)) out of range" "$@" "$opt=$((min - 1))"
        refused "$d" "$opt: $((max + 1)) out of range" "$@" "$opt=$((max + 1))"
        # Beyond 32 and 64 bits: never truncated into range.
        refused "$d" "$opt: $((4294967296 + min + 1)) out of range" "$@" "$opt=$((4294967296 + min + 1))"
        refused "$d" "$opt: 18446744073709551617 out of range" "$@" "$opt=18446744073709551617"
        refused "$d" "$opt: invalid number" "$@" "$opt=-1"
        refused "$d" "$opt: invalid number" "$@" "$opt=+1"
        refused "$d" "$opt: invalid number" "$@" "$opt= 1"
        refused "$d" "$opt: invalid number" "$@" "$opt=0x10"
        refused "$d" "$opt: empty number" "$@" "$opt="
}

# path DAEMON OPTION [PREFIX-ARGS...]: no control characters, not empty.
path() {
        local d=$1 opt=$2; shift 2
        refused "$d" "$opt: .* contains a control character" "$@" "$opt=/tmp/a${NL}b"
        refused "$d" "$opt: .* contains a control character" "$@" "$opt=/tmp/a"$'\t'"b"
        refused "$d" "$opt: '' empty" "$@" "$opt="
}

# unix_socket DAEMON OPTION [PREFIX-ARGS...]
unix_socket() {
        local d=$1 opt=$2; shift 2
        accepted "$d" "$@" "$opt=$MAX_PATH"
        refused "$d" "$opt: .*unix socket path too long" "$@" "$opt=$LONG_PATH"
        refused "$d" "$opt: 'relative.sock': expected " "$@" "$opt=relative.sock"
        refused "$d" "$opt: .*control character" "$@" "$opt=/tmp/a${NL}b"
        refused "$d" "$opt: .*empty address" "$@" "$opt="
}

# tcp DAEMON OPTION NUMERIC(yes/no) [PREFIX-ARGS...]
tcp() {
        local d=$1 opt=$2 numeric=$3; shift 3
        accepted "$d" "$@" "$opt=127.0.0.1:1"
        accepted "$d" "$@" "$opt=127.0.0.1:65535"
        accepted "$d" "$@" "$opt=[::1]:7000"
        refused "$d" "$opt: .*port out of range" "$@" "$opt=127.0.0.1:99999"
        refused "$d" "$opt: .*port out of range" "$@" "$opt=127.0.0.1:65536"
        refused "$d" "$opt: .*port out of range" "$@" "$opt=127.0.0.1:0"
        refused "$d" "$opt: .*port out of range" "$@" "$opt=127.0.0.1:18446744073709551617"
        refused "$d" "$opt: .*not a decimal number" "$@" "$opt=127.0.0.1:notaport"
        refused "$d" "$opt: .*not a decimal number" "$@" "$opt=127.0.0.1:-1"
        refused "$d" "$opt: .*no port" "$@" "$opt=127.0.0.1:"
        refused "$d" "$opt: .*expected HOST:PORT" "$@" "$opt=nonsense"
        refused "$d" "$opt: .*empty host" "$@" "$opt=:7000"
        refused "$d" "$opt: .*needs brackets" "$@" "$opt=::1:7000"
        refused "$d" "$opt: .*not an IPv6 address" "$@" "$opt=[1.2.3.4]:7000"
        refused "$d" "$opt: .*'\[' without '\]'" "$@" "$opt=[::1:7000"
        refused "$d" "$opt: .*control character" "$@" "$opt=127.0.0.1:7000${NL}READY=1"
        refused "$d" "$opt: .*control character" "$@" "$opt=127.0.0.1: 7000"
        if [ "$numeric" = yes ]; then
                refused "$d" "$opt: .*must be an IP address" "$@" "$opt=localhost:7000"
        else
                accepted "$d" "$@" "$opt=node-1.example.org:7000"
                refused "$d" "$opt: .*not a valid host name" "$@" "$opt=-bad-.example:7000"
                refused "$d" "$opt: .*not a valid host name" "$@" "$opt=a..b:7000"
                refused "$d" "$opt: .*host name too long" "$@" "$opt=$(printf 'a%.0s' $(seq 254)):7000"
        fi
}

text() {
        local d=$1 opt=$2 max_ok=$3 too_long=$4; shift 4
        accepted "$d" "$@" "$opt=$max_ok"
        refused "$d" "$opt: .* too long" "$@" "$opt=$too_long"
        refused "$d" "$opt: .* contains a control character" "$@" "$opt=a${NL}b"
        refused "$d" "$opt: .* contains a control character" "$@" "$opt=a"$'\x7f'"b"
        refused "$d" "$opt: '' empty" "$@" "$opt="
}

# sdlive-worker
duration worker --interval 1us 7d 0 8d
duration worker --executor-max-silence 1us 1d 0 25h
path worker --wedge-file
path worker --hang-executor-file
if [ -z "$platform" ]; then
        job_options=$(sh "$(dirname "$0")/job-mode-options.sh" "$worker_page") || exit 1
        for opt in $job_options; do
                refused worker "unknown option '$opt'" "$opt"
        done
fi
[ -n "$platform" ] && {
duration worker --coordinator-timeout 1us 1d 0 25h
duration worker --heartbeat 1us 1d 0 25h
duration worker --reconnect-max 1us 1h 0 61min
unix_socket worker --coordinator
tcp worker --coordinator no
text worker --identity "$NAME63" "$NAME64"
accepted worker $(for i in 1 2 3 4 5 6 7 8; do echo "--coordinator=/tmp/s$i"; done)
refused worker "--coordinator: at most 8" $(for i in 1 2 3 4 5 6 7 8 9; do echo "--coordinator=/tmp/s$i"; done)
}

# sdlive-cleaner
duration cleaner --max-age 0 3650d "" 3651d
duration cleaner --partial-max-age 0 3650d "" 3651d
duration cleaner --pass-interval 0 7d "" 8d
number cleaner --max-rate 0 1000000
number cleaner --populate 0 10000000
path cleaner --blob-dir
path cleaner --wedge-file

# sdlive-sentinel
duration sentinel --interval 1us 1d 0 25h

# sdlive-acceptor
unix_socket acceptor --socket

# sdlive-cluster, and the worker's job link (the cluster platform)
platform_checks() {
S=(--store sqlite:/nonexistent/cluster.db)
duration cluster --lease 3ms 1d 2999us 86400000001us
duration cluster --election-poll 1us 1h 0 3601s
duration cluster --maintenance-interval 1us 7d 0 8d
duration cluster --health-gate 0 1d "" 25h
duration cluster --worker-timeout 1us 1d 0 25h
duration cluster --worker-heartbeat 1us 1d 0 25h
number cluster --maintenance-rate 0 1000000
number cluster --seed-inventory 0 10000000
number cluster --coordinator-allow-uid 0 4294967294
number cluster --job-window 1 64
number cluster --job-run 1 2147483647
text cluster --node "$NAME63" "$NAME64"
text cluster --job-payload "${PAYLOAD256:1}" "$PAYLOAD256"
path cluster --store
path cluster --wedge-file
path cluster --spin-election-file
path cluster --coordinator-tls-cert
path cluster --coordinator-tls-key
path cluster --coordinator-tls-ca
path worker --tls-cert
path worker --tls-key
path worker --tls-ca
# The TLS handshake timeout of both ends of a job link: 100ms to 1min,
# and only with TLS to time.
duration cluster --coordinator-tls-handshake-timeout 100ms 1min 99ms 61s
duration worker --tls-handshake-timeout 100ms 1min 99ms 61s
refused cluster "--coordinator-tls-handshake-timeout: no TLS to time" --coordinator-socket /tmp/x.sock \
        --coordinator-tcp 127.0.0.1:1 --coordinator-tcp-insecure --coordinator-tls-handshake-timeout 6s
refused worker "--tls-handshake-timeout: no TLS to time" --coordinator 127.0.0.1:1 --tcp-insecure \
        --tls-handshake-timeout 6s
unix_socket cluster --coordinator-socket
tcp cluster --coordinator-tcp yes
accepted cluster $(for i in $(seq 16); do echo "--coordinator-allow-uid=$i"; done)
refused cluster "--coordinator-allow-uid: at most 16" $(for i in $(seq 17); do echo "--coordinator-allow-uid=$i"; done)
# --lease-store: etcd:URL,... with at most 8 http:// or https:// endpoints
# of at most 255 bytes; --lease then in whole seconds.
E8=$(for i in $(seq 8); do printf 'http://127.0.0.1:%d,' $((23900 + i)); done)
E8=${E8%,}
accepted cluster --lease-store "etcd:$E8"
accepted cluster --lease-store "etcd:https://127.0.0.1:2379" --lease 2s
refused cluster "--lease-store: more than 8 etcd endpoints" --lease-store "etcd:$E8,http://127.0.0.1:1"
refused cluster "--lease-store: \"http://127.0.0.1:2379\" is not etcd:URL" --lease-store "http://127.0.0.1:2379"
refused cluster "--lease-store: etcd endpoint \"ftp://x\" is not http" --lease-store "etcd:ftp://x"
refused cluster "--lease-store: etcd endpoint \"\" is not http" --lease-store "etcd:http://a:1,,http://b:2"
refused cluster "--lease-store: no etcd endpoint given" --lease-store "etcd:"
refused cluster "--lease-store: etcd endpoint longer than 255 bytes" --lease-store "etcd:http://$(printf 'a%.0s' $(seq 300)):1"
refused cluster "--lease: with the lease in etcd a whole number of seconds" "${S[@]}" --lease-store etcd:http://127.0.0.1:2379 --lease 1500ms
SDLIVE_LEASE_STORE=etcd:ftp://x refused cluster "\$SDLIVE_LEASE_STORE: etcd endpoint" "${S[@]}"
# The node name from the environment is held to the same rules (checked
# after the options, before the store is touched).
SDLIVE_NODE="a${NL}b" refused cluster "the node name: .* contains a control character" "${S[@]}"
SDLIVE_NODE="$NAME64" refused cluster "the node name: .* too long" "${S[@]}"
refused cluster "option '--lease' needs a value" --lease
}
[ -z "$platform" ] || platform_checks

# Every daemon: unknown options, missing values.
for d in worker cleaner sentinel acceptor ${platform:+cluster}; do
        refused "$d" "unknown option '--no-such-option'" --no-such-option
        refused "$d" "unexpected argument 'x${NL}y'" "x${NL}y"
done

echo "$checked checks, $failures failed${platform:- (built without the cluster platform: its options not checked)}"
[ "$failures" = 0 ]
