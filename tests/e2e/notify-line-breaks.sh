#!/usr/bin/env bash
# Line breaks in what a daemon hands the library never reach the manager as
# assignments of their own (systemd 252):
#   1. control: the manager ends an assignment at '\n' and also at '\r' (not
#      at other control characters), so "X_PROBE=a<CR>READY=1" sent as is by
#      systemd-notify makes a unit ready. Without this the library part
#      below could not tell a clean line from a split one.
#   2. the library: sdlive-test-line-breaks sends, through
#      sdlive_notify_status(), a text whose CRs and LFs would inject
#      READY=1, STATUS=, ERRNO= and MAINPID=1, then tries the same through
#      sdlive_notify_raw(), and waits on a barrier. The manager must show
#      the whole text as one StatusText= line (control characters as
#      spaces), the unit still activating (no READY=1), StatusErrno=0, its
#      own main process; raw must have refused both values (-EINVAL) and
#      sent the clean one. Then READY=1 for real, and SIGTERM: exit 0.
# Each control probe is a Type=notify unit whose main process sends one
# message and exits: READY=1 seen gives an active unit (RemainAfterExit=yes),
# not seen a failed one (result "protocol").
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"

notify=$(command -v systemd-notify) || harness_fail "systemd-notify is not installed"
bin=$SDLIVE_BUILD_DIR/tests/e2e/sdlive-test-line-breaks
[[ -x $bin ]] || harness_fail "$bin is not built"

# --- 1: the manager splits at CR and LF ----------------------------------------
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

# --- 2: the library's unit ---------------------------------------------------------
unit=sdlive-test-line-breaks.service
go=$HARNESS_RUN/line-breaks-go
log=$HARNESS_LOG_DIR/$unit.log
cat >"$HARNESS_UNIT_HOME/$unit" <<UNIT
[Unit]
Description=sdlive test: caller strings with line breaks through the library
[Service]
Type=notify
NotifyAccess=main
TimeoutStartSec=30s
ExecStart=$bin $go
$(harness_record_lines)
UNIT
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
echo "control, systemd-notify as is: CR $(state cr), LF $(state lf), TAB $(state tab) ($(harness_prop sdlive-test-tab.service Result))"
[[ $(state lf) == active ]] || harness_fail "X_PROBE=a<LF>READY=1 was not read as READY=1: the library part cannot tell"
[[ $(state cr) == active ]] || harness_fail "X_PROBE=a<CR>READY=1 was not read as READY=1: the library part cannot tell"
[[ $(state tab) == failed ]] || harness_fail "X_PROBE=a<TAB>READY=1 was read as READY=1: the probe cannot tell"
for name in cr lf tab; do
  systemctl --user stop -- "sdlive-test-$name.service" 2>/dev/null || true
done

systemctl --user start --no-block -- "$unit"
harness_wait 10 "$unit: its messages sent and read (barrier)" grep -q '^<6>sent:' "$log"
sent=$(grep -m1 '^<6>sent:' "$log")
echo "library: ${sent#<6>}"
[[ $sent == "<6>sent: status 1 raw-cr -22 raw-lf -22 raw-plain 1 barrier 1" ]] ||
  harness_fail "expected the status and the clean raw value sent, both raw values with a line break refused (-22), the barrier passed: $sent"

# The barrier returned: the manager has processed every message before it.
active=$(harness_prop "$unit" ActiveState)
text=$(harness_prop "$unit" StatusText)
errno_seen=$(harness_prop "$unit" StatusErrno)
main_pid=$(harness_prop "$unit" MainPID)
echo "library: ActiveState=$active StatusErrno=$errno_seen MainPID=$main_pid StatusText=\"$text\""
want='first READY=1 STATUS=injected ERRNO=42  MAINPID=1 end'
[[ $active == activating ]] || harness_fail "$unit is $active before its own READY=1: a line break in the status text reached the manager as READY=1"
[[ $text == "$want" ]] || harness_fail "StatusText=\"$text\", expected the whole text as one line: \"$want\""
[[ $errno_seen == 0 ]] || harness_fail "StatusErrno=$errno_seen: ERRNO=42 was injected through the status text"
((main_pid > 1)) || harness_fail "MainPID=$main_pid: MAINPID=1 was injected through the status text"

touch -- "$go"
harness_wait 10 "$unit to become active on its own READY=1" harness_prop_is "$unit" ActiveState active
[[ $(harness_prop "$unit" StatusText) == "$want" ]] || harness_fail "StatusText changed to \"$(harness_prop "$unit" StatusText)\""
systemctl --user stop -- "$unit"
death=$(harness_deaths "$unit" | tail -n 1)
[[ $death == "success exited 0" ]] || harness_fail "$unit: stop recorded as \"$death\", expected \"success exited 0\""
echo "PASS: the manager ends an assignment at CR as at LF; through sdlive_notify_status() a text with both stays one clean STATUS= line (no READY=1, ERRNO=, STATUS= or MAINPID= injected), and sdlive_notify_raw() refuses either in a value"
