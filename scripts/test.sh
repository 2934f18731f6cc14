#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds and runs
#   default  the default build (-Werror): unit, store, frame, units, install,
#            daemon tests, then the end-to-end suite under a real systemd manager;
#   asan     ASan+UBSan: every test but the end-to-end suite;
#   tsan     TSan: the thread tests;
#   fuzz     the decoder fuzzer for a bounded time (clang/libFuzzer).
# Usage: scripts/test.sh [stage...]   (all of them by default, in that order)
# Environment: SDLIVE_FUZZ_SECONDS (default 60), CI=true makes an
# unavailable systemd manager a failure instead of a skip.
#
# Passed, failed and skipped tests are counted apart; the last line is
# "sdlive: N passed, N failed, N skipped". A stage fails when a test or a
# build fails, when a ctest selection matches no test, or when it ran none.
# To add a stage: define stage_NAME below (build with configure_and_build,
# count with run_ctest / run_check from scripts/test-lib.sh) and list NAME
# in all_stages.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/test-lib.sh"
bash "$root/scripts/deps.sh" || exit 1

jobs=$(nproc)
all_stages=(default asan tsan fuzz)

configure_and_build() {
  local build=$1; shift
  cmake -S "$root" -B "$build" -DSDLIVE_WERROR=ON "$@" >/dev/null &&
    cmake --build "$build" -j"$jobs" >/dev/null 2>"$build.err" ||
    { cat "$build.err" >&2; echo "sdlive: build in $build failed" >&2; return 1; }
}

stage_default() {
  configure_and_build "$root/build/test-default" || return 1
  run_ctest "$root/build/test-default" -j"$jobs" -LE 'e2e|fuzz'
  run_ctest "$root/build/test-default" -L e2e
}

stage_asan() {
  configure_and_build "$root/build/test-asan" -DSDLIVE_SANITIZE=address || return 1
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest "$root/build/test-asan" -j"$jobs" -LE 'e2e|fuzz|install'
}

stage_tsan() {
  configure_and_build "$root/build/test-tsan" -DSDLIVE_SANITIZE=thread || return 1
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    run_ctest "$root/build/test-tsan" -j"$jobs" -L thread
}

stage_fuzz() {
  configure_and_build "$root/build/test-fuzz" -DCMAKE_C_COMPILER=clang -DSDLIVE_BUILD_FUZZ=ON \
    -DSDLIVE_FUZZ_SECONDS="${SDLIVE_FUZZ_SECONDS:-60}" || return 1
  run_ctest "$root/build/test-fuzz" -L fuzz
}

stages=("$@")
((${#stages[@]})) || stages=("${all_stages[@]}")
for stage in "${stages[@]}"; do
  declare -F "stage_$stage" >/dev/null ||
    { echo "sdlive: unknown stage '$stage' (stages: ${all_stages[*]})" >&2; exit 2; }
done
for stage in "${stages[@]}"; do
  run_stage "$stage"
done

report
exit $status
