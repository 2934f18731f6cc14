#!/usr/bin/env bash
# Units whose ExecStart= runs sdlive-probe: the linter reads the probe's
# options with sdlive-probe's own parser and
#   - finds an armed unit with good options fine (exit 0), and prints how
#     long a daemon that stops answering lives (SDL017 note, and the bound
#     in --json: period x failure threshold + timeout, the longest probe);
#   - finds an unarmed one a petter left unarmed (SDL002);
#   - gives every command line sdlive-probe refuses (it exits 2 and never
#     starts the daemon) an error quoting sdlive-probe's reason (SDL015);
#   - warns when the startup grace is not within TimeoutStartSec= (SDL016);
#   - gives a daemon after "--" that is not there an error (SDL010);
#   - finds the drop-in docs/probe.md shows, applied to a unit as an
#     operator would, fine (under --root, the tree as DESTDIR installs it).
#   probe-units.sh <sdlive-lint> <sdlive-probe> <docs/probe.md>
set -euo pipefail

lint=$1 probe=$2 page=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

# unit NAME "SDLIVE-PROBE ARGS" "MORE LINES": a unit running the built probe.
unit() {
  printf '[Service]\nType=notify\nExecStart=%s %s\nRestart=on-failure\nKillMode=mixed\n%b' \
    "$probe" "$2" "${3:-}" >"$work/$1.service"
}

# check NAME STATUS [CODE TEXT]...: lints the unit, text and JSON; the exit
# status must be STATUS, and each CODE must be reported with TEXT in its
# evidence (JSON, read by Python, not grepped), and no other error or warning.
check() {
  local name=$1 want=$2 status
  shift 2
  status=0
  "$lint" "$work/$name.service" >"$work/$name.out" 2>&1 || status=$?
  [[ $status == "$want" ]] || fail "$name: exit status $status, not $want: $(cat "$work/$name.out")"
  "$lint" --json "$work/$name.service" >"$work/$name.json" || true
  /usr/bin/python3 - "$work/$name.json" "$name" "$@" <<'EOF' || fail "$name: $(cat "$work/$name.out")"
import json, sys
path, name, want = sys.argv[1], sys.argv[2], sys.argv[3:]
unit = json.load(open(path))[0]
findings = unit["findings"]
expected = dict(zip(want[0::2], want[1::2]))
for code, text in expected.items():
    hits = [f for f in findings if f["code"] == code]
    if not hits:
        sys.exit("%s: no %s among %s" % (name, code, [f["code"] for f in findings]))
    if text not in hits[0]["evidence"]:
        sys.exit("%s: %s says %r, without %r" % (name, code, hits[0]["evidence"], text))
others = [f["code"] for f in findings if f["code"] not in expected and f["severity"] != "note"]
if others:
    sys.exit("%s: unexpected findings %s" % (name, others))
EOF
}

# field NAME EXPRESSION: a value of the unit's JSON (u).
field() { /usr/bin/python3 -c 'import json, sys; u = json.load(open(sys.argv[1]))[0]; print(eval(sys.argv[2]))' \
  "$work/$1.json" "$2"; }

# --- accepted, armed: no error, the bound ---------------------------------------
unit good "--period 2s --timeout 1s --failure-threshold 3 --http http://127.0.0.1/healthz \
--period 500ms --timeout 200ms --tcp 127.0.0.1:80 -- /bin/sleep infinity" "WatchdogSec=10s\n"
check good 0 SDL017 "within 7000 ms"
grep -q "manager kills it within 17000 ms" "$work/good.out" || fail "good: the bound with WatchdogSec=: $(cat "$work/good.out")"
[[ $(field good 'u["sdlive_probe"]["detection_bound_usec"]') == 7000000 ]] ||
  fail "good: detection bound $(field good 'u["sdlive_probe"]') (2 s x 3 + 1 s expected)"
[[ $(field good 'u["sdlive_probe"]["probes"], u["sdlive_probe"]["options"]') == "(2, 'accepted')" ]] ||
  fail "good: $(field good 'u["sdlive_probe"]')"
[[ $(field good 'u["sdlive_probe"]["daemon"]') == /*/sleep ]] || fail "good: daemon $(field good 'u["sdlive_probe"]')"

# --- not armed: the probe pets for nothing ---------------------------------------
unit unarmed "--http http://127.0.0.1/ -- /bin/sleep infinity"
check unarmed 1 SDL002 "sdlive_pet_watchdog"

# --- what sdlive-probe refuses, each with its reason -----------------------------
refused() {
  local name=$1 args=$2 reason=$3
  unit "refused-$name" "$args" "WatchdogSec=10s\n"
  check "refused-$name" 1 SDL015 "$reason"
  grep -q "(see --help)" "$work/refused-$name.out" && fail "refused-$name: the help pointer was kept"
  return 0
}
refused timeout "--period 1s --timeout 2s --http http://127.0.0.1/ -- /bin/sleep 1" "the timeout is longer than the period"
refused threshold "--failure-threshold 0 --http http://127.0.0.1/ -- /bin/sleep 1" "failure-threshold"
refused url "--http ftp://127.0.0.1/ -- /bin/sleep 1" "is not an http:// or https:// URL"
refused host "--tcp localhost:80 -- /bin/sleep 1" "localhost:80"
refused no-probe "-- /bin/sleep 1" "no probe given"
refused no-command "--http http://127.0.0.1/" "no command given"
refused trailing-setting "--http http://127.0.0.1/ --period 2s -- /bin/sleep 1" "applies to the probes named after it"
refused help "--help" "print its help"

# --- the startup grace against TimeoutStartSec= ----------------------------------
unit grace "--startup-grace 60s --http http://127.0.0.1/ -- /bin/sleep 1" "WatchdogSec=10s\nTimeoutStartSec=45s\n"
check grace 1 SDL016 "--startup-grace is 60000 ms, TimeoutStartSec= 45000 ms"
unit grace-default "--startup-grace 2min --http http://127.0.0.1/ -- /bin/sleep 1" "WatchdogSec=10s\n"
check grace-default 1 SDL016 "TimeoutStartSec= 90000 ms"
unit grace-within "--startup-grace 30s --http http://127.0.0.1/ -- /bin/sleep 1" "WatchdogSec=10s\nTimeoutStartSec=45s\n"
check grace-within 0
unit grace-infinity "--startup-grace 1h --http http://127.0.0.1/ -- /bin/sleep 1" "WatchdogSec=10s\nTimeoutStartSec=infinity\n"
check grace-infinity 0

# --- the daemon after "--" -------------------------------------------------------
unit no-daemon "--http http://127.0.0.1/ -- /nonexistent/daemon --foreground" "WatchdogSec=10s\n"
check no-daemon 1 SDL010 "the daemon sdlive-probe runs: /nonexistent/daemon"

# --- the drop-in of docs/probe.md, on a unit of a daemon that does not pet ------
dropin=$(awk '/^## Wrapping a unit/ { on = 1 } on && /^```ini/ { block = 1; next } block && /^```/ { exit } block' "$page")
[[ $dropin == *"ExecStart=/usr/bin/sdlive-probe"* ]] || fail "no drop-in with ExecStart=/usr/bin/sdlive-probe in $page"
root=$work/root
mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/lib/systemd/system" "$root/etc/systemd/system/nginx.service.d"
cp "$probe" "$root/usr/bin/sdlive-probe"
cp /bin/sleep "$root/usr/sbin/nginx"
printf '[Unit]\nDescription=a daemon that does not pet\n[Service]\nType=forking\nPIDFile=/run/nginx.pid\nExecStart=/usr/sbin/nginx\n' \
  >"$root/lib/systemd/system/nginx.service"
printf '%s\n' "$dropin" >"$root/etc/systemd/system/nginx.service.d/50-sdlive-probe.conf"
status=0
"$lint" --root "$root" nginx.service >"$work/dropin.out" 2>&1 || status=$?
((status == 0)) || fail "the drop-in of $page: exit $status: $(cat "$work/dropin.out")"
grep -q "SDL017 note: .* within 7000 ms .* within 17000 ms" "$work/dropin.out" ||
  fail "the drop-in of $page: not the bound its comment gives (2 s x 3 + 1 s + 10 s): $(cat "$work/dropin.out")"

echo "PASS: sdlive-probe units: the bound, unarmed, 8 refusals, the grace 4 ways, a missing daemon, the docs' drop-in"
