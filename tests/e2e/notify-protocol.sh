#!/usr/bin/env bash
# BARRIER=1 and the FD store under a real manager (systemd 252):
# - a barrier returns once the manager has processed what came before it;
# - a pipe stored as "kept" (FDSTORE=1, FDNAME=kept, FDPOLL=0) comes back
#   after an automatic restart as LISTEN_FDS=1 LISTEN_FDNAMES=kept, still
#   holding its bytes;
# - FDSTOREREMOVE=1 FDNAME=kept empties the store: the next start gets none.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"

bin=$SDLIVE_BUILD_DIR/tests/e2e/sdlive-test-protocol
[[ -x $bin ]] || harness_fail "$bin is not built"
unit=sdlive-test-protocol.service
mode=$HARNESS_RUN/protocol-mode
log=$HARNESS_LOG_DIR/$unit.log

cat >"$HARNESS_UNIT_HOME/$unit" <<UNIT
[Unit]
Description=sdlive test: BARRIER=1 and the file descriptor store
StartLimitIntervalSec=0
[Service]
Type=notify
NotifyAccess=main
FileDescriptorStoreMax=4
Restart=on-failure
RestartSec=200ms
ExecStart=$bin $mode
$(harness_record_lines)
UNIT
harness_reload

start_lines() { grep -c '^<6>start: LISTEN' "$log" 2>/dev/null || true; }
at_least_starts() { (($(start_lines) >= $1)); }

# 1: the first start stores the pipe, waits on a barrier and exits 3; the
# automatic restart must get the pipe back, bytes and name included.
echo store >"$mode"
systemctl --user start --no-block -- "$unit"
harness_wait 10 "the restart after storing" at_least_starts 2
harness_wait 10 "$unit active" harness_prop_is "$unit" ActiveState active
grep -q '^<6>store: 1$' "$log" || harness_fail "FDSTORE=1 was not sent: $(grep store: "$log")"
grep -qE '^<6>barrier: 1 after [0-9]+ us$' "$log" ||
  harness_fail "the barrier did not complete: $(grep barrier: "$log")"
harness_notified "$unit" 'FDSTORE=1' || harness_fail "the manager did not log the FDSTORE=1 message"
second=$(grep '^<6>start: LISTEN' "$log" | sed -n 2p)
[[ $second == "<6>start: LISTEN_FDS=1 LISTEN_FDNAMES=kept" ]] ||
  harness_fail "after the restart: \"$second\", expected LISTEN_FDS=1 LISTEN_FDNAMES=kept"
grep -q '^<6>start: fd 3 reads "kept-by-the-manager"$' "$log" ||
  harness_fail "the stored pipe did not come back with its bytes"
echo "fdstore: a pipe stored as \"kept\" came back after the restart ($second)"
echo "barrier: $(grep '^<6>barrier:' "$log" | head -n 1 | sed 's/^<6>barrier: //')"

# 2: FDSTOREREMOVE=1 FDNAME=kept, barrier, exit 3: the next start has none.
echo remove >"$mode"
harness_wait 10 "the start after the removal" at_least_starts 3
harness_wait 10 "$unit active" harness_prop_is "$unit" ActiveState active
grep -q '^<6>remove: 1$' "$log" || harness_fail "FDSTOREREMOVE=1 was not sent"
third=$(grep '^<6>start: LISTEN' "$log" | sed -n 3p)
[[ $third == "<6>start: LISTEN_FDS=- LISTEN_FDNAMES=-" ]] ||
  harness_fail "after FDSTOREREMOVE=1: \"$third\", expected no descriptors"
systemctl --user stop -- "$unit"
harness_show "$unit"
echo "fdstore: FDSTOREREMOVE=1 FDNAME=kept emptied the store (${third#<6>start: })"
echo "PASS: BARRIER=1 completes, the FD store keeps a descriptor across a restart and drops it on removal"
