#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The long stage across test hosts: 100 seeded nemesis runs, each a fresh
# set of hosts (PostgreSQL primary and replica, three members, two
# workers) with every nemesis in its schedule, checked one by one; within
# 30 minutes on 2 cores (about 16 s per run: 10 s setup, 5 s of nemeses
# at the scaled lease, the settle). Seeds are BASE..BASE+99, BASE from
# $SDLIVE_HOSTS_SEED or drawn; each printed, each replayable with
#   tests/hosts/run.py --bin-dir BUILD --seed N --duration 5
# Every fifth run replicates asynchronously (what that loses is measured,
# see docs/hosts.md): its seed is marked "async".
#
# Usage: long-stage.sh BUILD_DIR [RUNS]      exit 0 all clean, 1 not, 77 skip
set -u
BUILD=$1 RUNS=${2:-100}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
BASE=${SDLIVE_HOSTS_SEED:-$(( (RANDOM << 15 | RANDOM) % 1000000000 + 1 ))}
OUT=$(mktemp -d /tmp/sdlive-hosts-long.XXXXXX)
echo "long stage: $RUNS runs, seeds $BASE..$((BASE + RUNS - 1)), histories of failed runs in $OUT"
start=$(date +%s)
failed=() skipped=0
for i in $(seq 0 $((RUNS - 1))); do
        seed=$((BASE + i))
        mode=()
        if [ $((i % 5)) = 4 ]; then mode=(--async); fi
        "$PY" "$HERE/run.py" --bin-dir "$BUILD" --seed "$seed" --duration 5 --settle 20 "${mode[@]}" \
                --out "$OUT/$seed" >"$OUT/$seed.log" 2>&1
        rc=$?
        verdict=$(grep -m1 '^checker:' "$OUT/$seed.log")
        echo "run $((i + 1))/$RUNS seed $seed ${mode[*]:+async }exit $rc: $verdict ($(( $(date +%s) - start )) s)"
        case $rc in
        0) rm -rf "$OUT/$seed" "$OUT/$seed.log" ;;
        77) skipped=$((skipped + 1)); cat "$OUT/$seed.log"; break ;;
        *) failed+=("$seed${mode[*]:+ async}"); grep 'VIOLATION\|broke' "$OUT/$seed.log" | head -5 ;;
        esac
done
if [ "$skipped" -gt 0 ]; then exit 77; fi
echo "long stage: ${#failed[@]} of $RUNS runs failed in $(( $(date +%s) - start )) s${failed[*]:+: seeds ${failed[*]}}"
[ ${#failed[@]} = 0 ]
