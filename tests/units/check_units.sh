#!/usr/bin/env bash
# check_units.sh <shipped dir> <verify dir> <daemons,...> <petting,...> <max exposure>
#
# Shipped dir: the units as `cmake --install` ships them. Verify dir: the same
# template rendered with ExecStart= in the build tree. Fails on the first
# broken rule and says which; prints each unit's exposure.
set -euo pipefail

shipped=$1 verify_dir=$2 max=$5
IFS=, read -r -a daemons <<<"$3"
IFS=, read -r -a petting <<<"$4"

fail() { printf 'units: FAIL: %s\n' "$*" >&2; failed=1; }
failed=0

unit_file() {
  if [[ -e $1/sdlive-$2@.service ]]; then echo "$1/sdlive-$2@.service"; else echo "$1/sdlive-$2.service"; fi
}

is_petting() {
  local p
  for p in "${petting[@]}"; do [[ $p == "$1" ]] && return 0; done
  return 1
}

((${#daemons[@]})) || { echo "units: FAIL: no daemons are built, nothing to check" >&2; exit 1; }
count=$(find "$shipped" -maxdepth 1 -name 'sdlive-*.service' | wc -l)
((count == ${#daemons[@]})) ||
  fail "$count units rendered in $shipped, expected ${#daemons[@]} (${daemons[*]})"

for daemon in "${daemons[@]}"; do
  unit=$(unit_file "$shipped" "$daemon")
  name=$(basename "$unit")
  [[ -f $unit ]] || { fail "$name was not rendered"; continue; }

  # The watchdog rule.
  armed=$(grep -c '^WatchdogSec=' "$unit" || true)
  if is_petting "$daemon"; then
    ((armed == 1)) || fail "$name: pets the watchdog but has $armed WatchdogSec= lines (want 1)"
  else
    ((armed == 0)) || fail "$name: never pets, yet WatchdogSec= is set: it would be killed while healthy"
    grep -q '^# No WatchdogSec=' "$unit" || fail "$name: lacks the comment saying why it is not armed"
  fi
  for key in Type=notify NotifyAccess=main Restart=on-failure DynamicUser=yes; do
    grep -qx "$key" "$unit" || fail "$name: missing $key"
  done
  for key in RestartSec TimeoutAbortSec StateDirectory RuntimeDirectory; do
    grep -q "^$key=" "$unit" || fail "$name: missing $key="
  done

  # systemd's own checks, on the copy whose ExecStart= exists.
  copy=$(unit_file "$verify_dir" "$daemon")
  if [[ ! -x $(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$copy") ]]; then
    fail "$(basename "$copy"): its executable is not built yet"
  else
    out=$(systemd-analyze verify "$copy" 2>&1) && rc=0 || rc=$?
    if ((rc != 0)) || [[ -n $out ]]; then
      fail "$name: systemd-analyze verify (exit $rc): ${out:-no output}"
    fi
  fi

  # Exposure of the shipped unit.
  out=$(systemd-analyze security --offline=true "$unit" 2>&1) || true
  exposure=$(sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p' <<<"$out")
  if [[ -z $exposure ]]; then
    fail "$name: systemd-analyze security gave no exposure: $out"
    continue
  fi
  printf 'units: %-28s exposure %s (max %s)%s\n' "$name" "$exposure" "$max" \
    "$(is_petting "$daemon" && echo ", WatchdogSec armed" || echo ", unarmed")"
  awk -v e="$exposure" -v m="$max" 'BEGIN { exit !(e <= m) }' ||
    fail "$name: exposure $exposure is over $max"
done

# Socket units, next to the service they start.
for socket in "$verify_dir"/*.socket; do
  [[ -e $socket ]] || continue
  name=$(basename "$socket")
  [[ -f $shipped/$name ]] || fail "$name was not rendered in $shipped"
  out=$(systemd-analyze verify "$socket" 2>&1) && rc=0 || rc=$?
  if ((rc != 0)) || [[ -n $out ]]; then
    fail "$name: systemd-analyze verify (exit $rc): ${out:-no output}"
  else
    echo "units: $name verified"
  fi
done

((failed == 0)) && echo "units: all ${#daemons[@]} units pass"
exit "$failed"
