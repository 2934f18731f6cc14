#!/usr/bin/env bash
# The shipped units against their daemons: installed with DESTDIR, checked
# by name under --root (static, then probed for 2 s with a 1 s watchdog).
# The seed's classification must come out: the petting daemons armed and
# petting (keepalives in the probe, no finding), the others neither armed
# nor petting (no keepalive, no finding). Then the negative control: a
# drop-in that arms a daemon that never pets gets SDL001.
#   shipped-units.sh <sdlive-lint> <build dir> "<daemons>" "<petting daemons>"
set -euo pipefail

lint=$1 build=$2
read -r -a daemons <<<"$3"
petting=" $4 "
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

root=$work/root
DESTDIR=$root cmake --install "$build" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
unit_dir=$(sed -n 's/^SDLIVE_SYSTEMD_UNIT_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
case $unit_dir in
  /etc/systemd/system | /run/systemd/system | /usr/local/lib/systemd/system | /lib/systemd/system | /usr/lib/systemd/system) ;;
  *) fail "the units install to $unit_dir, which is not a directory the manager (and sdlive-lint) reads" ;;
esac

unit_of() { [[ -e $root$unit_dir/sdlive-$1.service ]] && echo "sdlive-$1.service" || echo "sdlive-$1@lint.service"; }

# field <json> <python expression over u (the unit object)>
field() { /usr/bin/python3 -c 'import json, sys; u = json.load(open(sys.argv[1]))[0]; print(eval(sys.argv[2]))' "$1" "$2"; }

for daemon in "${daemons[@]}"; do
  unit=$(unit_of "$daemon")
  { "$lint" --json --root "$root" "$unit" >"$work/$daemon.static" && echo 0 || echo $?; } >"$work/$daemon.static-status" &
  { "$lint" --json --root "$root" --probe 2 --watchdog-usec 1000000 "$unit" >"$work/$daemon.probe" && echo 0 ||
    echo $?; } >"$work/$daemon.probe-status" &
done
wait

for daemon in "${daemons[@]}"; do
  unit=$(unit_of "$daemon")
  for run in static probe; do
    j=$work/$daemon.$run
    [[ $(cat "$j-status") == 0 ]] || fail "$unit ($run): exit status $(cat "$j-status"): $(cat "$j")"
    [[ $(field "$j" 'len(u["findings"])') == 0 ]] || fail "$unit ($run): findings: $(cat "$j")"
  done
  armed=$(field "$work/$daemon.static" 'u["watchdog_usec"] is not None')
  pets=$(field "$work/$daemon.static" 'u["binary"]["pets"]')
  keepalives=$(field "$work/$daemon.probe" 'u["probe"]["keepalives"]')
  ready=$(field "$work/$daemon.probe" 'u["probe"]["ready"]')
  gap=$(field "$work/$daemon.probe" 'u["probe"]["max_gap_ms"]')
  [[ $ready == True ]] || fail "$unit: no READY=1 in the probe: $(cat "$work/$daemon.probe")"
  if [[ $petting == *" $daemon "* ]]; then
    [[ $armed == True && $pets == yes ]] || fail "$unit: expected armed and petting, got armed=$armed pets=$pets"
    ((keepalives >= 4 && gap <= 500)) ||
      fail "$unit: $keepalives keepalives in 2 s, largest gap $gap ms (expected >= 4, <= 500 ms with a 1 s watchdog)"
  else
    [[ $armed == False && $pets == no ]] || fail "$unit: expected neither armed nor petting, got armed=$armed pets=$pets"
    ((keepalives == 0)) || fail "$unit: $keepalives keepalives from a daemon that should never pet"
  fi
  printf 'shipped: %-26s armed=%-5s pets=%-3s probe: READY=1, %2d keepalives, largest gap %4d ms  (%s)\n' \
    "$unit" "$armed" "$pets" "$keepalives" "$gap" "$(field "$work/$daemon.static" 'u["binary"]["evidence"]')"
done

# Negative control: arm each daemon that never pets with a drop-in.
for daemon in "${daemons[@]}"; do
  [[ $petting == *" $daemon "* ]] && continue
  unit=$(unit_of "$daemon")
  mkdir -p "$root/etc/systemd/system/$unit.d"
  printf '[Service]\nWatchdogSec=1s\n' >"$root/etc/systemd/system/$unit.d/90-arm.conf"
  for args in "" "--probe 1.5"; do
    # shellcheck disable=SC2086 # args are words
    "$lint" --json --root "$root" $args "$unit" >"$work/armed" && fail "$unit armed: exit status 0" || true
    codes=$(field "$work/armed" '" ".join(f["code"] for f in u["findings"])')
    [[ $codes == SDL001 ]] || fail "$unit armed (${args:-static}): expected SDL001, got [$codes]"
  done
  echo "shipped: $unit with WatchdogSec=1s in a drop-in: SDL001 (static and probed)"
done
echo "PASS: ${#daemons[@]} shipped units: the petting daemons armed and petting, the others neither; arming a non-petter is SDL001"
