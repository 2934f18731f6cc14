#!/usr/bin/env bash
# The units of this machine that nobody here wrote: every service in the
# manager's system unit directories that sets WatchdogSec= or Type=notify
# (aliases skipped: they are checked under the name they point to), checked
# statically by name, drop-ins merged. Asserted for each: it loads, its
# binary is found, and no armed unit is called a non-petter (SDL001): every
# armed one must be seen to pet. Units whose verdict is known (systemd's
# daemons, D-Bus, etcd, the user manager) must get exactly that verdict; the
# systemd package's own daemons must be there.
#
# They are not probed: probing runs the daemon's command outside its
# manager, here as root beside the host's own instances. A second journald
# would take over /run/systemd/journal, a second logind the seats, networkd
# would reconfigure the links, timesyncd the clock; hostnamed, localed and
# timedated would claim names on the system bus. The probe is proved on the
# shipped units and the corpus instead.
#   system-units.sh <sdlive-lint>
set -euo pipefail

lint=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

# name|armed|pets|codes: the verdicts known for Debian 12's units (systemd 252).
known="systemd-journald.service|True|yes|
systemd-journald@.service|True|yes|SDL007
systemd-logind.service|True|yes|
systemd-networkd.service|True|yes|
systemd-timesyncd.service|True|yes|
systemd-hostnamed.service|True|yes|SDL007
systemd-localed.service|True|yes|SDL007
systemd-timedated.service|True|yes|SDL007
systemd-rfkill.service|False|unknown|
systemd-udevd.service|True|yes|
dbus.service|False|unknown|
etcd.service|False|unknown|SDL009
user@.service|False|unknown|"
required="systemd-journald.service systemd-logind.service systemd-networkd.service systemd-hostnamed.service
systemd-localed.service systemd-timedated.service"

declare -A seen=()
for dir in /etc/systemd/system /run/systemd/system /usr/local/lib/systemd/system /lib/systemd/system /usr/lib/systemd/system; do
  for file in "$dir"/*.service; do
    [[ -f $file && ! -L $file ]] || continue
    name=$(basename "$file")
    [[ -z ${seen[$name]:-} ]] || continue
    grep -qE '^(WatchdogSec=|Type=notify)' "$file" || continue
    seen[$name]=$file
  done
done
((${#seen[@]} >= 6)) || fail "only ${#seen[@]} units with WatchdogSec= or Type=notify on this machine"
for name in $required; do
  [[ -n ${seen[$name]:-} ]] || fail "$name is not installed (the systemd package ships it)"
done

# The package of each unit file, in one dpkg query.
declare -A package_of=()
while IFS=: read -r package path; do
  package_of[${path# }]=$package
done < <(dpkg -S "${seen[@]}" 2>/dev/null || true)

armed_count=0
for name in $(printf '%s\n' "${!seen[@]}" | sort); do
  set +e
  "$lint" --json "$name" >"$work/json" 2>"$work/err"
  status=$?
  set -e
  ((status == 0 || status == 1)) || fail "$name: exit status $status: $(cat "$work/err")"
  IFS='|' read -r armed pets kind codes evidence < <(/usr/bin/python3 -c '
import json, sys
u = json.load(open(sys.argv[1]))[0]
b = u.get("binary") or {}
print("|".join([str(u.get("watchdog_usec") is not None), b.get("pets", "-"), b.get("kind", "-"),
                " ".join(sorted(f["code"] for f in u["findings"])), b.get("evidence", "")]))' "$work/json")
  [[ $codes != *SDL001* ]] || fail "$name: called armed but never pets: $(cat "$work/json")"
  [[ $codes != *SDL010* && $codes != *SDL012* ]] || fail "$name: could not be checked: $(cat "$work/json")"
  if [[ $armed == True ]]; then
    [[ $pets == yes ]] || fail "$name: armed, but the static check says pets=$pets: $(cat "$work/json")"
    armed_count=$((armed_count + 1))
  fi
  verdict="armed=$armed pets=$pets"
  line=$(grep "^$name|" <<<"$known" || true)
  if [[ -n $line ]]; then
    IFS='|' read -r _ want_armed want_pets want_codes <<<"$line"
    [[ $armed == "$want_armed" && $pets == "$want_pets" && $codes == "$want_codes" ]] ||
      fail "$name: expected armed=$want_armed pets=$want_pets codes=[$want_codes], got $verdict codes=[$codes]"
    verdict+=" (as known)"
  fi
  package=${package_of[${seen[$name]}]:-}
  printf 'system: %-30s %-8s %-30s %-8s %-12s %s\n' "$name" "${package:--}" "$verdict" "$kind" "[${codes}]" "$evidence"
done
((armed_count >= 6)) || fail "only $armed_count armed units found"
echo "PASS: ${#seen[@]} units of this machine checked ($armed_count armed, every one seen to pet); no false SDL001"
