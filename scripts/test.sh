#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds and runs
#   1. the default build (-Werror): unit, store, frame, units, install,
#      daemon tests, then the end-to-end suite under a real systemd manager;
#   2. ASan+UBSan: every test but the end-to-end suite;
#   3. TSan: the thread tests;
#   4. the decoder fuzzer for a bounded time (clang/libFuzzer).
# Usage: scripts/test.sh [stage...]   (stages: default asan tsan fuzz; all by default)
# Environment: SDLIVE_FUZZ_SECONDS (default 60), CI=true makes an
# unavailable systemd manager a failure instead of a skip.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh" || exit 1

jobs=$(nproc)
stages=("$@")
((${#stages[@]})) || stages=(default asan tsan fuzz)
passed=0 failed=0 status=0

# Runs ctest in a build dir and adds its counts to the totals.
run_ctest() {
  local build=$1; shift
  local log; log=$(mktemp)
  (cd "$build" && ctest --output-on-failure "$@") 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local line; line=$(grep -E '^[0-9]+% tests passed' "$log" | tail -n1)
  if [[ $line =~ tests\ failed\ out\ of\ ([0-9]+) ]]; then
    local total=${BASH_REMATCH[1]} bad
    bad=$(sed -E 's/.* ([0-9]+) tests failed.*/\1/' <<<"$line")
    passed=$((passed + total - bad)); failed=$((failed + bad))
  fi
  rm -f "$log"
  ((rc == 0)) || status=1
}

configure_and_build() {
  local build=$1; shift
  cmake -S "$root" -B "$build" -DSDLIVE_WERROR=ON "$@" >/dev/null &&
    cmake --build "$build" -j"$jobs" >/dev/null 2>"$build.err" ||
    { cat "$build.err" >&2; echo "sdlive: build in $build failed" >&2; return 1; }
}

for stage in "${stages[@]}"; do
  echo "=== sdlive tests: $stage"
  case $stage in
    default)
      configure_and_build "$root/build/test-default" || { status=1; continue; }
      run_ctest "$root/build/test-default" -j"$jobs" -LE 'e2e|fuzz'
      run_ctest "$root/build/test-default" -L e2e
      ;;
    asan)
      configure_and_build "$root/build/test-asan" -DSDLIVE_SANITIZE=address || { status=1; continue; }
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        run_ctest "$root/build/test-asan" -j"$jobs" -LE 'e2e|fuzz|install'
      ;;
    tsan)
      configure_and_build "$root/build/test-tsan" -DSDLIVE_SANITIZE=thread || { status=1; continue; }
      TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        run_ctest "$root/build/test-tsan" -j"$jobs" -L thread
      ;;
    fuzz)
      configure_and_build "$root/build/test-fuzz" -DCMAKE_C_COMPILER=clang -DSDLIVE_BUILD_FUZZ=ON \
        -DSDLIVE_FUZZ_SECONDS="${SDLIVE_FUZZ_SECONDS:-60}" || { status=1; continue; }
      run_ctest "$root/build/test-fuzz" -L fuzz
      ;;
    *) echo "sdlive: unknown stage '$stage'" >&2; exit 2 ;;
  esac
done

echo "sdlive: $passed passed, $failed failed"
exit $status
