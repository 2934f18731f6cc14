#!/usr/bin/env bash
# tests/e2e/harness.sh keeps the fraction of a duration: "5.5" seconds is
# 5 500 000 microseconds, and a watch or a wait of 0.6 s lasts 0.6 s, not 0.
# Runs the helpers alone: no manager is started.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../e2e/harness.sh
source "$root/tests/e2e/harness.sh"
set +e
bad=0

for pair in 5.5:5500000 10:10000000 0.25:250000 .5:500000 3.:3000000 1.0000019:1000001 0:0; do
  harness_seconds_us "${pair%%:*}" us
  if [[ $us == "${pair#*:}" ]]; then
    echo "ok: ${pair%%:*} s = $us us"
  else
    echo "FAIL: ${pair%%:*} s read as $us us, expected ${pair#*:}"; bad=1
  fi
done
for junk in "" 1,5 5s -1 1.2.3; do
  if (harness_seconds_us "$junk" us) 2>/dev/null; then
    echo "FAIL: \"$junk\" accepted as a duration"; bad=1
  else
    echo "ok: \"$junk\" refused"
  fi
done

# elapsed_ms <command...>: how long the command took (it may fail).
elapsed_ms() {
  local t0; t0=$(harness_now_us)
  "$@" >/dev/null 2>&1
  echo $(($(harness_now_us) - t0)) | awk '{ printf "%d", $1 / 1000 }'
}

# A wait that never succeeds fails at its deadline, fraction included.
ms=$(elapsed_ms bash -c "source '$root/tests/e2e/harness.sh'; harness_wait 0.6 never false")
if ((ms >= 600 && ms < 2000)); then
  echo "ok: harness_wait 0.6 gave up after $ms ms"
else
  echo "FAIL: harness_wait 0.6 gave up after $ms ms, expected 600 ms to 2 s"; bad=1
fi

# A watch lasts its whole period (every check passing).
harness_expect_healthy() { :; }
ms=$(elapsed_ms harness_watch_healthy 0.6 0 some.service)
if ((ms >= 600 && ms < 2000)); then
  echo "ok: harness_watch_healthy 0.6 watched for $ms ms"
else
  echo "FAIL: harness_watch_healthy 0.6 watched for $ms ms, expected 600 ms to 2 s"; bad=1
fi
exit $bad
