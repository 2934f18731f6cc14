#!/usr/bin/env bash
# scripts/test.sh counts what it claims: runs its counting (scripts/test-lib.sh)
# against a throw-away ctest project whose tests pass, fail, skip, are
# disabled or cannot start, and checks passed, failed and skipped apart, and
# which stages fail. A failed stage shows in the failed count; under CI=true
# a skip fails its stage.
set -uo pipefail
unset CI

root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/test-lib.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(tally NONE)
enable_testing()
add_test(NAME pass COMMAND sh -c "exit 0")
# A failing test whose output quotes another ctest summary: it must not count.
add_test(NAME fail COMMAND sh -c "printf '%s\n' '1/9 Test #1: x ....   Passed' \
  '100% tests passed, 0 tests failed out of 9' 'The following tests did not run:' \
  '	  1 - x (Skipped)'; exit 1")
add_test(NAME skip COMMAND sh -c "exit 77")
add_test(NAME disabled COMMAND sh -c "exit 0")
add_test(NAME missing COMMAND ${CMAKE_CURRENT_BINARY_DIR}/no-such-program)
set_tests_properties(skip PROPERTIES SKIP_RETURN_CODE 77 LABELS skiponly)
set_tests_properties(disabled PROPERTIES DISABLED TRUE)
set_tests_properties(pass PROPERTIES LABELS good)
CMAKE
cmake -S "$work" -B "$work/build" >/dev/null || { echo "FAIL: cannot configure the test project"; exit 1; }

bad=0
# expect STAGE PASSED FAILED SKIPPED ok|fails
expect() {
  local name=$1 p=$2 f=$3 s=$4 verdict=$5
  passed=0 failed=0 skipped=0 status=0 failed_stages=()
  run_stage "$name" >"$work/$name.log" 2>&1
  local got="$passed $failed $skipped $([[ $status == 0 ]] && echo ok || echo fails)"
  if [[ $got == "$p $f $s $verdict" ]]; then
    echo "ok: $name: $got"
  else
    echo "FAIL: $name: expected '$p $f $s $verdict', got '$got'"; sed 's/^/    /' "$work/$name.log"
    bad=1
  fi
}

stage_mixed() { run_ctest "$work/build" -j2; }
stage_only_skips() { run_ctest "$work/build" -L skiponly; }
stage_no_match() { run_ctest "$work/build" -L no-such-label; }
stage_no_match_after_pass() { run_ctest "$work/build" -L good; run_ctest "$work/build" -L no-such-label; }
stage_good() { run_ctest "$work/build" -L good; }
stage_good_and_skip() { run_ctest "$work/build" -L 'good|skiponly'; }
stage_checks() { run_check yes true; run_check skips sh -c 'exit 77'; }
stage_check_fails() { run_check yes true; run_check no sh -c 'exit 3'; }
stage_build_fails() { return 1; }

expect mixed 1 2 2 fails
expect only_skips 0 1 1 fails
expect no_match 0 1 0 fails
expect no_match_after_pass 1 1 0 fails
expect good 1 0 0 ok
expect good_and_skip 1 0 1 ok
expect checks 1 0 1 ok
expect check_fails 1 1 0 fails
expect build_fails 0 1 0 fails

# CI=true: a skipped test or check fails its stage, and so the count.
export CI=true
expect good 1 0 0 ok
expect good_and_skip 1 1 1 fails
expect checks 1 1 1 fails
unset CI

# The fuzz stage's budget is shared by its targets, at least 10 s each.
for case in 120:6:20 120:1:120 30:6:10 7:1:10; do
  IFS=: read -r budget n want <<<"$case"
  got=$(fuzz_seconds_per_target "$budget" "$n" 2>/dev/null)
  if [[ $got == "$want" ]]; then
    echo "ok: fuzz budget $budget s over $n targets: $got s each"
  else
    echo "FAIL: fuzz budget $budget s over $n targets: '$got' s each, expected $want"; bad=1
  fi
done
for case in 120:0 x:6 120:; do
  if fuzz_seconds_per_target "${case%%:*}" "${case#*:}" >/dev/null 2>&1; then
    echo "FAIL: fuzz budget '$case' accepted"; bad=1
  else
    echo "ok: fuzz budget '$case' refused"
  fi
done

# The last line of the report is the totals, alone on its line.
passed=3 failed=1 skipped=2 failed_stages=(x)
last=$(report | tail -n1)
if [[ $last == "sdlive: 3 passed, 1 failed, 2 skipped" ]]; then
  echo "ok: report: $last"
else
  echo "FAIL: report's last line: '$last'"; bad=1
fi
exit $bad
