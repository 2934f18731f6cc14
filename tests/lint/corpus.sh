#!/usr/bin/env bash
# The wrong-unit corpus: every unit in corpus/ states the finding codes it
# must get ("# expect: SDL003", "clean" for none that count) and, if it is
# probed, for how long ("# probe: SECONDS"). Each is checked twice, as text
# (exit status, one line per finding) and as JSON (the exact set of codes);
# then the drop-in merge: a unit looked up by name under --root, whose
# drop-ins reset ExecStart= and mask each other by file name.
#   corpus.sh <sdlive-lint> <lint-notifier> <lint-ready> <corpus dir> <script>
set -euo pipefail

lint=$1 notifier=$2 ready=$3 corpus=$4 script=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

# codes_of <json file>: the codes of the one unit in it, sorted, one line.
codes_of() {
  /usr/bin/python3 -c '
import json, sys
units = json.load(open(sys.argv[1]))
assert len(units) == 1, units
print(" ".join(sorted(f["code"] for f in units[0]["findings"])))' "$1"
}

# counted <codes...>: 1 when any code is an error or warning (not a note).
counted() {
  local c
  for c in "$@"; do
    [[ $c == SDL009 || $c == SDL011 || $c == SDL014 ]] || { echo 1; return; }
  done
  echo 0
}

# run <unit> <args...>: text and JSON runs side by side, in the background
# (a probe mostly waits), each leaving .out/.json, .status and .err files.
run() {
  local unit=$1
  shift
  { "$lint" "$@" "$unit" >"$unit.out" 2>"$unit.err" && echo 0 >"$unit.status" || echo $? >"$unit.status"; } &
  { "$lint" --json "$@" "$unit" >"$unit.json" 2>"$unit.json-err" && echo 0 >"$unit.json-status" ||
    echo $? >"$unit.json-status"; } &
}

for src in "$corpus"/*.service; do
  unit=$work/$(basename "$src")
  sed -e "s|@NOTIFIER@|$notifier|g" -e "s|@READY@|$ready|g" -e "s|@SCRIPT@|$script|g" "$src" >"$unit"
  probe=$(sed -n 's/^# probe: //p' "$src")
  if [[ -n $probe ]]; then run "$unit" --probe "$probe"; else run "$unit"; fi
done
wait

checked=0
for src in "$corpus"/*.service; do
  name=$(basename "$src")
  unit=$work/$name
  expect=$(sed -n 's/^# expect: //p' "$src")
  [[ -n $expect ]] || fail "$name: no '# expect:' line"
  read -r -a want <<<"${expect//clean/}"
  want_sorted=$(printf '%s\n' "${want[@]}" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//')
  want_status=$(counted "${want[@]}")
  status=$(cat "$unit.status") json_status=$(cat "$unit.json-status")
  got=$(codes_of "$unit.json") || fail "$name: --json output does not parse: $(cat "$unit.json")"
  [[ $got == "$want_sorted" ]] ||
    fail "$name: expected codes [$want_sorted], got [$got]: $(cat "$unit.out")"
  [[ $status == "$want_status" && $json_status == "$want_status" ]] ||
    fail "$name: exit status $status (--json: $json_status), expected $want_status"
  for code in "${want[@]}"; do
    grep -q "^$name: $code " "$unit.out" || fail "$name: no text line for $code: $(cat "$unit.out")"
    if [[ $(counted "$code") == 0 ]]; then
      grep -q "^$name: $code note: " "$unit.out" || fail "$name: $code is not called a note: $(cat "$unit.out")"
    fi
  done
  if [[ -z $want_sorted ]]; then
    grep -q "^$name: ok: " "$unit.out" || fail "$name: no 'ok' line: $(cat "$unit.out")"
  fi
  [[ ! -s $unit.err && ! -s $unit.json-err ]] || fail "$name: wrote to stderr: $(cat "$unit.err" "$unit.json-err")"
  printf 'corpus: %-34s %-14s exit %s  %s\n' "$name" "${want_sorted:-clean}" "$status" \
    "$(grep -v ': ok: ' "$unit.out" | head -n 1 | cut -c1-110)"
  checked=$((checked + 1))
done
((checked >= 20)) || fail "only $checked corpus units checked"

# The probe runs what the manager would run (systemd-analyze verify shows
# the same argv and environment for this unit): %I unescaped and %i raw in
# ExecStart=, specifiers expanded in Environment=, ${NAME} replaced, "$$"
# passed as "$". The notifier reports its argument and $GREETING in STATUS=.
expand_unit="$work/lint-expand@a-b\\x2dc.service"
printf '[Service]\nType=notify\nWatchdogSec=2s\nRestart=on-failure\nEnvironment="GREETING=hi %%I %%p" PRICE=5\nExecStart=%s --status "%%I|%%i|$$HOME|cost $${PRICE}|${PRICE}" --status-env GREETING\n' \
  "$notifier" >"$expand_unit"
"$lint" --json --probe 1 "$expand_unit" >"$work/expand.json" || fail "lint-expand: exit status $?: $(cat "$work/expand.json")"
got=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[0]["probe"]["status"])' "$work/expand.json")
want='a/b-c|a-b\x2dc|$HOME|cost ${PRICE}|5|hi a/b-c lint-expand'
[[ $got == "$want" ]] || fail "lint-expand: the command got [$got], the manager would pass [$want]"
echo "corpus: lint-expand@a-b\\x2dc.service         clean          STATUS=$got"

# Drop-ins merged as the manager merges them: /lib's 50-exec.conf resets
# ExecStart= to a binary that never pets (SDL001), but /etc's file of the
# same name masks it and runs the petter; 60-restart.conf (in /run) then
# turns restarts off (SDL007). Without the /etc file: SDL001 and SDL007.
root=$work/root
mkdir -p "$root/lib/systemd/system/lint-merge.service.d" "$root/etc/systemd/system/lint-merge.service.d" \
  "$root/run/systemd/system/lint-merge.service.d" "$root/usr/bin"
cp "$notifier" "$root/usr/bin/lint-notifier"
cp "$ready" "$root/usr/bin/lint-ready"
cp /bin/sleep "$root/usr/bin/lint-sleep"
printf '[Service]\nType=notify\nExecStart=/usr/bin/lint-notifier\nWatchdogSec=2s\nRestart=on-failure\n' \
  >"$root/lib/systemd/system/lint-merge.service"
printf '[Service]\nExecStart=\nExecStart=lint-sleep 3600\n' >"$root/lib/systemd/system/lint-merge.service.d/50-exec.conf"
printf '[Service]\nExecStart=\nExecStart=/usr/bin/lint-notifier\n' >"$root/etc/systemd/system/lint-merge.service.d/50-exec.conf"
printf '[Service]\nRestart=no\n' >"$root/run/systemd/system/lint-merge.service.d/60-restart.conf"

merged() {
  local want=$1 got
  set +e
  "$lint" --json --root "$root" lint-merge.service >"$work/json"
  set -e
  got=$(codes_of "$work/json")
  [[ $got == "$want" ]] || fail "lint-merge.service: expected [$want], got [$got]: $(cat "$work/json")"
}
merged "SDL007"
/usr/bin/python3 -c '
import json, sys
files = json.load(open(sys.argv[1]))[0]["files"]
root = sys.argv[2]
want = [root + "/lib/systemd/system/lint-merge.service",
        root + "/etc/systemd/system/lint-merge.service.d/50-exec.conf",
        root + "/run/systemd/system/lint-merge.service.d/60-restart.conf"]
assert files == want, files' "$work/json" "$root" || fail "lint-merge.service: files not merged in order: $(cat "$work/json")"
echo "corpus: lint-merge.service                 SDL007         /etc's 50-exec.conf masks /lib's, 60-restart.conf applied after"
rm "$root/etc/systemd/system/lint-merge.service.d/50-exec.conf"
merged "SDL001 SDL007"
echo "corpus: lint-merge.service (no /etc file)  SDL001 SDL007  /lib's 50-exec.conf resets ExecStart= to lint-sleep"
# Bad usage: exit status 2, nothing on stdout.
for args in "" "--probe" "--probe 0" "--probe 0.1 x.service" "--probe 3601 x.service" "--probe 1x x.service" "--watchdog-usec 5 x.service" "--root relative x.service" \
  "--no-such-option x.service"; do
  set +e
  # shellcheck disable=SC2086 # args are words
  "$lint" $args >"$work/usage.out" 2>"$work/usage.err"
  status=$?
  set -e
  [[ $status == 2 && ! -s $work/usage.out && -s $work/usage.err ]] ||
    fail "sdlive-lint $args: exit status $status (expected 2), stdout: $(cat "$work/usage.out")"
done
echo "corpus: bad usage (9 cases)                 exit 2, a message on stderr"
echo "PASS: $checked corpus units flagged with exactly their codes, fixed versions clean; drop-ins merged"
