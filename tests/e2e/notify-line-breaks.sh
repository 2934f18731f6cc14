#!/usr/bin/env bash
# Where the manager (systemd 252) ends an assignment inside one notification:
# at '\n' and also at '\r', not at other control characters. This is why
# sdlive_notify_raw() refuses both in a value, and why STATUS= text has every
# control character replaced: "X_PROBE=a<CR>READY=1" must be seen as READY=1.
# Each probe is a Type=notify unit whose main process sends one message and
# exits: READY=1 seen gives an active unit (RemainAfterExit=yes), not seen a
# failed one (result "protocol").
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"

notify=$(command -v systemd-notify) || harness_fail "systemd-notify is not installed"

# probe <name> <separator as a printf escape, its backslash doubled for the
# unit file's own unescaping>: writes the unit. The whole message is made by
# one printf, so a newline inside it survives the command substitution.
probe() {
  cat >"$HARNESS_UNIT_HOME/sdlive-test-$1.service" <<UNIT
[Unit]
Description=sdlive test: notification split at $1
[Service]
Type=notify
NotifyAccess=main
RemainAfterExit=yes
TimeoutStartSec=5s
ExecStart=/bin/sh -c 'exec $notify "\$(printf "X_PROBE=a$2READY=1")"'
UNIT
}

probe cr '\\r'
probe lf '\\n'
probe tab '\\t'
harness_reload

for name in cr lf tab; do
  systemctl --user start --no-block -- "sdlive-test-$name.service"
done
settled() {
  local state
  state=$(harness_prop "sdlive-test-$1.service" ActiveState)
  [[ $state == active || $state == failed ]]
}
for name in cr lf tab; do
  harness_wait 10 "sdlive-test-$name.service settled" settled "$name"
done

state() { harness_prop "sdlive-test-$1.service" ActiveState; }
echo "line breaks: CR $(state cr), LF $(state lf), TAB $(state tab) ($(harness_prop sdlive-test-tab.service Result))"
[[ $(state lf) == active ]] || harness_fail "X_PROBE=a<LF>READY=1 was not read as READY=1"
[[ $(state cr) == active ]] || harness_fail "X_PROBE=a<CR>READY=1 was not read as READY=1"
[[ $(state tab) == failed ]] || harness_fail "X_PROBE=a<TAB>READY=1 was read as READY=1: the probe cannot tell"
for name in cr lf tab; do
  systemctl --user stop -- "sdlive-test-$name.service" 2>/dev/null || true
done
echo "PASS: the manager ends an assignment at CR as at LF (not at TAB): a raw value holds neither"
