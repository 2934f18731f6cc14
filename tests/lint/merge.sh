#!/usr/bin/env bash
# The drop-in merge held against systemd's own. For each tree made here, the
# unit is loaded by systemd 252's own code without a manager running
# (systemd-analyze verify --root=TREE at debug level dumps the loaded unit:
# its fragment, each drop-in in the order applied, Type=, NotifyAccess=,
# WatchdogSec=, Restart= and the ExecStart= command), and sdlive-lint --json
# --root=TREE must list the same files in the same order and read the same
# values. The trees cover prefix drop-ins (foo-.service.d, foo-bar-.service.d),
# the top-level service.d, same-named drop-ins across /etc, /run and
# /usr/lib, templates and instances, aliases (named by the real name and by
# the alias), a drop-in masked by /dev/null, a byte-order mark and a line
# without '='. Then the security case: under --root an absolute alias
# symlink is followed inside the tree, never on the host.
#   merge.sh <sdlive-lint>
set -euo pipefail

lint=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
command -v systemd-analyze >/dev/null || fail "systemd-analyze is not installed: nothing to hold the merge against"

# file <tree> <path inside> <content>: writes a file, making its directory.
file() { mkdir -p "$(dirname "$1$2")"; printf '%b' "$3" >"$1$2"; }

# compare <tree> <unit>: systemd's view and the linter's must agree.
compare() {
  local tree=$1 unit=$2
  SYSTEMD_LOG_LEVEL=debug timeout 60 systemd-analyze verify --root="$tree" "$unit" >"$work/systemd.out" 2>&1 || true
  grep -q 'Fragment Path:' "$work/systemd.out" || fail "$unit: systemd-analyze did not load it: $(tail -n 5 "$work/systemd.out")"
  set +e
  timeout 10 "$lint" --json --root "$tree" "$unit" >"$work/lint.json" 2>"$work/lint.err"
  status=$?
  set -e
  ((status == 0 || status == 1)) || fail "$unit: sdlive-lint exit status $status: $(cat "$work/lint.err")"
  /usr/bin/python3 - "$work/systemd.out" "$work/lint.json" "$unit" <<'EOF'
import json, re, sys

dump = open(sys.argv[1], encoding="utf-8", errors="replace").read()
u = json.load(open(sys.argv[2]))[0]
unit = sys.argv[3]

def field(name):
    m = re.search(r"^\s+" + re.escape(name) + r": (.*)$", dump, re.M)
    return m.group(1) if m else None

def usec(span):
    if span in (None, "0", "infinity"):
        return None
    total = 0
    for value, suffix in re.findall(r"([\d.]+)(us|ms|s|min|h|d)", span):
        total += float(value) * {"us": 1, "ms": 1e3, "s": 1e6, "min": 60e6, "h": 3600e6, "d": 86400e6}[suffix]
    return int(total)

want = {
    "files": [field("Fragment Path")] + re.findall(r"^\s+DropIn Path: (.*)$", dump, re.M),
    "type": field("Type"),
    "notify_access": field("NotifyAccess"),
    "watchdog_usec": usec(field("WatchdogSec")),
    "restart": field("Restart"),
    "exec": (field("Command Line") or "").split(" ")[0],
}
got = {key: u.get(key) for key in want}
got["exec"] = (u.get("exec_start") or "").lstrip("@-:+!").split(" ")[0]
bad = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
if bad:
    sys.exit(f"{unit}: sdlive-lint (got) and systemd (want) differ: {bad}")
print(f"merge: {unit:<26} {len(want['files']) - 1} drop-in(s), WatchdogSec={want['watchdog_usec']}, "
      f"NotifyAccess={want['notify_access']}, ExecStart={want['exec']}: as systemd merges it")
EOF
}

svc='[Service]\nType=notify\nExecStart=/usr/bin/daemon\n'

# Prefix drop-ins and service.d, with same-named files across directories.
t=$work/prefix
file "$t" /lib/systemd/system/foo-bar-baz.service "$svc"
file "$t" /lib/systemd/system/foo-.service.d/10-arm.conf '[Service]\nWatchdogSec=5s\n'
file "$t" /run/systemd/system/foo-bar-.service.d/20-restart.conf '[Service]\nRestart=on-failure\n'
file "$t" /usr/lib/systemd/system/service.d/30-all.conf '[Service]\nWatchdogSec=7s\n'
file "$t" /usr/lib/systemd/system/service.d/40-same.conf '[Service]\nWatchdogSec=41s\n'
file "$t" /etc/systemd/system/foo-.service.d/40-same.conf '[Service]\nWatchdogSec=42s\n'
file "$t" /run/systemd/system/foo-bar-baz.service.d/40-same.conf '[Service]\nWatchdogSec=43s\n'
file "$t" /etc/systemd/system/service.d/50-top.conf '[Service]\nNotifyAccess=all\n'
file "$t" /run/systemd/system/foo-bar-baz.service.d/50-top.conf '[Service]\nNotifyAccess=exec\n'
compare "$t" foo-bar-baz.service
file "$t" /etc/systemd/system/foo-bar-.service.d/60-disarm.conf '[Service]\nWatchdogSec=0\n'
compare "$t" foo-bar-baz.service
file "$t" /lib/systemd/system/foo-other.service "$svc"
compare "$t" foo-other.service

# Templates and instances, with their prefixes.
t=$work/template
file "$t" /usr/lib/systemd/system/web-front@.service "$svc"
file "$t" /usr/lib/systemd/system/web-front@.service.d/10-t.conf '[Service]\nWatchdogSec=11s\n'
file "$t" /etc/systemd/system/web-front@blue.service.d/20-i.conf '[Service]\nRestart=always\n'
file "$t" /etc/systemd/system/web-@.service.d/30-p.conf '[Service]\nWatchdogSec=13s\n'
file "$t" /etc/systemd/system/web-.service.d/40-p.conf '[Service]\nNotifyAccess=all\n'
file "$t" /run/systemd/system/web-@blue.service.d/50-pi.conf '[Service]\nWatchdogSec=15s\n'
compare "$t" web-front@blue.service
compare "$t" web-front@green.service

# Aliases: drop-ins of the alias apply when the unit is named by its real
# name, and the real name's when named by the alias; absolute and relative.
t=$work/alias
file "$t" /lib/systemd/system/real.service "$svc"
mkdir -p "$t/etc/systemd/system"
ln -s /lib/systemd/system/real.service "$t/etc/systemd/system/nick.service"
ln -s ../../../lib/systemd/system/real.service "$t/etc/systemd/system/other.service"
file "$t" /etc/systemd/system/nick.service.d/10-arm.conf '[Service]\nWatchdogSec=3s\n'
file "$t" /run/systemd/system/other.service.d/20-restart.conf '[Service]\nRestart=on-abnormal\n'
file "$t" /lib/systemd/system/real.service.d/30-real.conf '[Service]\nNotifyAccess=exec\n'
compare "$t" real.service
compare "$t" nick.service
file "$t" /lib/systemd/system/tmpl@.service "$svc"
ln -s tmpl@.service "$t/lib/systemd/system/tnick@.service"
file "$t" /etc/systemd/system/tnick@one.service.d/10-arm.conf '[Service]\nWatchdogSec=6s\n'
compare "$t" tmpl@one.service

# A drop-in masked by /dev/null, a byte-order mark, a line without '='.
t=$work/parse
file "$t" /lib/systemd/system/p.service '\xef\xbb\xbf[Service]\nType=notify\nExecStart=/usr/bin/daemon\nnot an assignment\nRestart=always\n'
file "$t" /lib/systemd/system/p.service.d/10-arm.conf '[Service]\nWatchdogSec=9s\n'
mkdir -p "$t/etc/systemd/system/p.service.d"
ln -s /dev/null "$t/etc/systemd/system/p.service.d/10-arm.conf"
file "$t" /run/systemd/system/p.service.d/20-bom.conf '\xef\xbb\xbf[Service]\nWatchdogSec=8s\n'
compare "$t" p.service
grep -q '"SDL014"' "$work/lint.json" || fail "p.service: the line without '=' is not noted (SDL014): $(cat "$work/lint.json")"

# Security: under --root an absolute alias is resolved inside the tree. The
# host's journald unit must not be read for a tree that has none.
t=$work/escape
host_unit=/lib/systemd/system/systemd-journald.service
[[ -f $host_unit ]] || fail "$host_unit is not on the host: the escape case needs a host unit to point at"
mkdir -p "$t/etc/systemd/system"
ln -s "$host_unit" "$t/etc/systemd/system/escape.service"
set +e
timeout 10 "$lint" --json --root "$t" escape.service >"$work/escape.json"
set -e
! grep -q "\"$host_unit\"" "$work/escape.json" || fail "escape.service: the host's $host_unit was read: $(cat "$work/escape.json")"
grep -q '"SDL012"' "$work/escape.json" || fail "escape.service: expected SDL012 (the link dangles inside the tree): $(cat "$work/escape.json")"
file "$t" "$host_unit" '[Service]\nType=notify\nExecStart=/usr/bin/tree-daemon\n'
timeout 10 "$lint" --json --root "$t" escape.service >"$work/escape.json" || true
grep -q "\"$t$host_unit\"" "$work/escape.json" || fail "escape.service: the tree's own $host_unit was not read: $(cat "$work/escape.json")"
echo "merge: escape.service              an absolute alias under --root read inside the tree, never the host's"
echo "PASS: the linter merges drop-ins, aliases and templates as systemd 252 does, and stays inside --root"
