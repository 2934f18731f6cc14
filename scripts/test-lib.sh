# Counting for scripts/test.sh (sourced, not run). A stage is a shell function
# stage_NAME; run_stage NAME runs it and folds its counts into the totals.
# Inside a stage, run_ctest and run_check are what count: a skip (ctest's
# SKIP_RETURN_CODE, exit 77 of a check) is counted as skipped, never as passed.
# Under CI=true a skip also fails its stage: CI has root, a manager and every
# package, so a test that cannot run there is broken.
#
# A failed stage always shows in the failed count: a stage that fails
# without a failed test (a build that fails, a selection that matches
# nothing, a skip under CI=true) counts as one failure itself, so the last
# line says "0 failed" exactly when the exit status is 0.
#
# Totals:  passed failed skipped   (what the last line reports)
#          status                  (0 while every stage passed)
#          failed_stages           (names, for the report)

passed=0 failed=0 skipped=0 status=0
failed_stages=()
stage_passed=0 stage_failed=0 stage_skipped=0 stage_ok=1

# ctest_tally LOG: prints "PASSED FAILED SKIPPED" from a ctest log, or nothing
# (and returns 1) when the log holds no summary, i.e. no test ran or ctest
# stopped early. Only ctest's own summary counts: the last "N% tests passed"
# line (a failing test's output, printed before it, may quote another one)
# and the "did not run" list after it, whose Skipped and Disabled entries are
# skips. ctest counts a skipped test among the passed ones; it is subtracted.
ctest_tally() {
  awk '
    /^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+$/ {
      summary = 1; failed = $4; total = $NF; skips = 0; disabled = 0; list = 0; next
    }
    !summary { next }
    /^The following tests did not run:$/ { list = 1; next }
    /^The following tests FAILED:$/ || /^[^ \t]/ || /^$/ { list = 0 }
    list && / \(Skipped\)$/ { skips++ }
    list && / \(Disabled\)$/ { disabled++ }
    END {
      if (!summary) exit 1
      print total - failed - skips, failed, skips + disabled
    }' "$1"
}

# ctest_skipped_names LOG: the tests of the last "did not run" list, one a line.
ctest_skipped_names() {
  awk '
    /^[0-9]+% tests passed, / { n = 0; list = 0; next }
    /^The following tests did not run:$/ { list = 1; next }
    /^[^ \t]/ || /^$/ { list = 0 }
    list { sub(/^[ \t]+[0-9]+ - /, ""); names[n++] = $0 }
    END { for (i = 0; i < n; i++) print names[i] }' "$1"
}

# skip_seen NAMES: reports skipped tests; under CI=true they fail the stage.
skip_seen() {
  echo "sdlive: skipped (not passed): $1"
  if [[ ${CI:-} == true ]]; then
    echo "sdlive: CI=true: a skipped test fails the stage" >&2
    stage_ok=0
  fi
}

# run_ctest BUILD_DIR [ctest args...]: runs ctest there, shows its output and
# counts its tests. Fails the stage when a test fails, ctest fails, or the
# selection matched no test (`-L LABEL` naming nothing).
run_ctest() {
  local build=$1; shift
  local log; log=$(mktemp)
  (cd "$build" && ctest --output-on-failure --no-tests=error "$@") 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]} counts p f s
  if counts=$(ctest_tally "$log"); then
    read -r p f s <<<"$counts"
    stage_passed=$((stage_passed + p)); stage_failed=$((stage_failed + f))
    stage_skipped=$((stage_skipped + s))
    ((s == 0)) || skip_seen "$(ctest_skipped_names "$log" | paste -sd, -)"
    ((p + f + s > 0)) || { echo "sdlive: ctest $* in $build ran no test" >&2; stage_ok=0; }
  else
    echo "sdlive: ctest $* in $build matched or ran no test" >&2
    stage_ok=0
  fi
  rm -f "$log"
  ((rc == 0)) || stage_ok=0
}

# run_check NAME COMMAND...: one check that is not a ctest test (an analyser,
# a packaging step): exit 0 passes, 77 skips, anything else fails.
run_check() {
  local name=$1; shift
  "$@"
  local rc=$?
  case $rc in
    0) stage_passed=$((stage_passed + 1)) ;;
    77) stage_skipped=$((stage_skipped + 1)); skip_seen "$name" ;;
    *) stage_failed=$((stage_failed + 1)); stage_ok=0; echo "sdlive: $name failed (exit $rc)" >&2 ;;
  esac
}

# run_stage NAME: runs stage_NAME. The stage fails when the function returns
# non-zero (a build failed), when anything it ran failed, or when it ran no
# test at all (everything skipped or nothing selected).
run_stage() {
  local name=$1 started=$SECONDS
  stage_passed=0 stage_failed=0 stage_skipped=0 stage_ok=1
  echo "=== sdlive tests: $name"
  "stage_$name" || stage_ok=0
  if ((stage_passed + stage_failed == 0)); then
    echo "sdlive: stage $name ran no test" >&2
    stage_ok=0
  fi
  ((stage_ok || stage_failed > 0)) || stage_failed=1
  passed=$((passed + stage_passed)); failed=$((failed + stage_failed))
  skipped=$((skipped + stage_skipped))
  echo "=== sdlive tests: $name: $stage_passed passed, $stage_failed failed, $stage_skipped skipped" \
       "in $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s"
  if ((!stage_ok)); then
    status=1
    failed_stages+=("$name")
  fi
}

# fuzz_seconds_per_target BUDGET TARGETS: seconds each fuzz target runs so
# that all of them together take BUDGET seconds, at least 10 each (a budget
# too small for the targets is stretched, never silently cut to nothing).
# Fails when there is no target or the figures are not whole numbers.
fuzz_seconds_per_target() {
  [[ $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ ]] && (($2 > 0)) ||
    { echo "sdlive: fuzz: budget '$1' over '$2' targets" >&2; return 1; }
  local each=$((10#$1 / 10#$2))
  echo $((each < 10 ? 10 : each))
}

# report: the closing lines; the last one is the totals, alone on its line.
report() {
  ((${#failed_stages[@]} == 0)) || echo "sdlive: failed stages: ${failed_stages[*]}"
  echo "sdlive: $passed passed, $failed failed, $skipped skipped"
}
