#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The long stage across test hosts: 100 seeded nemeses in 10 runs of 10,
# each run a fresh set of hosts (PostgreSQL primary and replica, three
# members, two workers) with its own seed, its schedule drawn from the
# whole catalogue but latency, and its history checked; meant to finish
# within 30 minutes on 2 cores. Seeds are BASE..BASE+9, BASE from
# $SDLIVE_HOSTS_SEED or drawn; each printed, each replayable with
#   tests/hosts/run.py --bin-dir BUILD --seed N --count 10 --jobs 1000
# Replication is synchronous in every run: members refuse to lead on a
# primary that streams asynchronously (docs/store.md, "Replication"); what
# a failover loses when that is declared acceptable is measured by hand
# with run.py --async.
#
# Usage: long-stage.sh BUILD_DIR [RUNS [NEMESES_PER_RUN]]
#        exit 0 all clean, 1 not, 77 skip
set -u
BUILD=$1 RUNS=${2:-10} PER_RUN=${3:-10}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
BASE=${SDLIVE_HOSTS_SEED:-$(( (RANDOM << 15 | RANDOM) % 1000000000 + 1 ))}
OUT=$(mktemp -d /tmp/sdlive-hosts-long.XXXXXX)
echo "long stage: $RUNS runs of $PER_RUN nemeses, seeds $BASE..$((BASE + RUNS - 1)), histories of failed runs in $OUT"
start=$(date +%s)
failed=()
for i in $(seq 0 $((RUNS - 1))); do
        seed=$((BASE + i))
        "$PY" "$HERE/run.py" --bin-dir "$BUILD" --seed "$seed" --count "$PER_RUN" --jobs 1000 --settle 40 \
                --out "$OUT/$seed" >"$OUT/$seed.log" 2>&1
        rc=$?
        verdict=$(grep -m1 '^checker:' "$OUT/$seed.log")
        echo "run $((i + 1))/$RUNS seed $seed exit $rc: $verdict ($(( $(date +%s) - start )) s)"
        grep -A12 '^takeover after' "$OUT/$seed.log" | grep -v '^a leader cut'
        case $rc in
        0) rm -rf "$OUT/$seed" "$OUT/$seed.log" ;;
        77) cat "$OUT/$seed.log"; exit 77 ;;
        *) failed+=("$seed"); grep 'VIOLATION\|broke' "$OUT/$seed.log" | head -8 ;;
        esac
done
echo "long stage: ${#failed[@]} of $RUNS runs failed in $(( $(date +%s) - start )) s${failed[*]:+: seeds ${failed[*]}}"
[ ${#failed[@]} = 0 ]
