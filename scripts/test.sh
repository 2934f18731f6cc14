#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds and runs
#   default  the build users run (Debian's flags: -O2, _FORTIFY_SOURCE, the
#            stack protector; -Werror): unit, store, frame, units, install,
#            daemon tests, then the end-to-end suite under a real systemd
#            manager, the README's demo (scripts/demo.sh) among them;
#   asan     ASan+UBSan: every test but the end-to-end suite, the
#            packages, the benchmarks and the tests labelled timing
#            (bounds measured in wall time, which the sanitizers' cost
#            would decide instead of the code); the Python binding's unit
#            tests with the runtime preloaded into the interpreter;
#   tsan     TSan: the thread tests.
# Runs across test hosts are the hosts stage's (tests/hosts, docs/hosts.md);
# the default run leaves them out to stay within 25 minutes (the short
# sample, `ctest -L e2e-hosts-short`, is 2.8 minutes of its own).
# Stages run only when named (CI names every one of them, .ci/run):
#   fuzz     every libFuzzer target (clang) within one time budget (about
#            3 minutes);
#   analysis cppcheck, gcc -fanalyzer and clang-tidy over src/, examples/ and tools/
#            (scripts/analysis.sh; clang-tidy's check set is .clang-tidy;
#            about 1.5 minutes);
#   memcheck valgrind's memcheck over the default build: the unit and store
#            tests (ctest -T memcheck), then the daemons in fault runs
#            (tests/memcheck); a read of memory never set fails it (about
#            4 minutes);
#   random-faults the seeded randomized job fault runs (jobs-random*: leader
#                 and worker faults at random points, mid-batch included), in
#                 the default build (about 3 minutes);
#   e2e-defaults  cluster failover at the shipped defaults, both stores,
#                 and with the lease in etcd, etcd's own faults included,
#                 and the randomized leader failures at scaled times
#                 (ctest labels e2e-defaults, e2e-etcd and e2e-random, about
#                 7 minutes);
#   no-platform   the build without the cluster platform
#                 (-DSDLIVE_BUILD_CLUSTER=OFF, docs/platform.md): nothing of it
#                 built, and the library, the reference daemons, the tools
#                 and the units pass their tests, the worker's end-to-end
#                 scenarios under a real manager among them;
#   packaging     the Debian packages: built, installed into a throwaway
#                 root, a consumer built against them, the cluster's
#                 failover run from them under a real manager, lintian's
#                 residue;
#   hosts         across test hosts (network namespaces, docs/hosts.md):
#                 100 seeded nemeses in 10 runs, each history checked
#                 (about 21 minutes);
#   coverage      a --coverage build runs every test but the end-to-end
#                 suite and the benchmarks; line and branch coverage of src/
#                 and each examples/ and tools/ part (scripts/coverage.sh); fails below
#                 98% of src/'s lines or 92% of its branches (about 6
#                 minutes: a build of its own and the store and job tests).
# Wall time measured on 2 cores in the last rehearsal of .ci/run (each
# stage prints its own): default 16.1 min (the end-to-end suite 7.7 of it,
# one test at a time), asan 7.5, tsan 1.4: 24.9 together, at the limit of
# 25, which is why the sample across test hosts (2.8) is run by hand and
# fuzz (2.4 at a budget of 80 s) and analysis (1.2) run only when named;
# memcheck 3.3, random-faults 2.9, e2e-defaults 6.3 (etcd's scaled run and
# its defaults run included), no-platform 2.5, packaging 1.6, coverage 8,
# hosts 16.8: CI's whole run about 71.
# Usage: scripts/test.sh [stage...]   (default: "all", the stages above in
# that order, not the named ones; "all fuzz analysis memcheck random-faults
# e2e-defaults no-platform packaging coverage hosts" is what CI runs)
# Environment: SDLIVE_FUZZ_BUDGET (seconds of fuzzing for the whole fuzz
# stage, default 80, shared evenly by the targets, at least 10 s each);
# CI=true makes an unavailable systemd manager, and any skipped test, a
# failure instead of a skip.
#
# Passed, failed and skipped tests are counted apart; the last line is
# "sdlive: N passed, N failed, N skipped", and the exit status is 0 exactly
# when N failed is 0. A stage fails when a test or a build fails, when a
# ctest selection matches no test, or when it ran none; a stage that fails
# without a failed test counts as one failure.
# To add a stage: define stage_NAME below (build with configure_and_build,
# count with run_ctest / run_check from scripts/test-lib.sh) and list NAME
# in all_stages, or in long_stages if it would push the default run past
# 25 minutes on 2 cores.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/test-lib.sh"
. "$root/scripts/distro-flags.sh"
if ! bash "$root/scripts/deps.sh"; then
  echo "sdlive: installing the packages the suite needs failed" >&2
  failed=1 status=1
  report
  exit $status
fi

jobs=$(nproc)
all_stages=(default asan tsan)
long_stages=(fuzz analysis memcheck random-faults e2e-defaults no-platform packaging coverage hosts)

configure_and_build() {
  local build=$1; shift
  cmake -S "$root" -B "$build" -DSDLIVE_WERROR=ON "$@" >/dev/null &&
    cmake --build "$build" -j"$jobs" >/dev/null 2>"$build.err" ||
    { cat "$build.err" >&2; echo "sdlive: build in $build failed" >&2; return 1; }
}

# The build users run: Debian's flags (-O2, _FORTIFY_SOURCE, the stack
# protector), warnings as errors. The default stage and every long stage
# that starts daemons share it.
build_default() {
  local flags
  distro_cmake_flags flags "$root" || { echo "sdlive: dpkg-buildflags failed" >&2; return 1; }
  configure_and_build "$root/build/test-default" "${flags[@]}"
}

# The seeded randomized job fault runs (many leader and worker faults per
# run, minutes each) are the long stage random-faults, not default or asan.
random_faults='^jobs-random'

stage_default() {
  build_default || return 1
  run_ctest "$root/build/test-default" -j"$jobs" -LE 'e2e|fuzz|hosts-long|deb|memcheck' -E "$random_faults"
  run_ctest "$root/build/test-default" -L '^e2e$'
}

# In the default build only: their faults are placed by wall time (a pause
# past the lease, a takeover window), which the sanitizers' cost would move.
stage_random-faults() {
  build_default || return 1
  run_ctest "$root/build/test-default" -R "$random_faults"
}

# Across test hosts (tests/hosts, docs/hosts.md): the long stage, 100
# seeded nemeses (the short sample is not run by a stage: its ten runs
# cover it).
stage_hosts() {
  build_default || return 1
  run_ctest "$root/build/test-default" -L '^hosts-long$'
}

# The build without the cluster platform: none of its targets or tests
# exist, and everything else passes (the end-to-end scenarios of the
# worker, which is built without its job mode there).
stage_no-platform() {
  local build=$root/build/test-no-platform
  configure_and_build "$build" -DSDLIVE_BUILD_CLUSTER=OFF || return 1
  run_check no-platform-absent bash -c '
    for t in sdlive-cluster sdlive-jobs sdlive-leader-example; do
      ! find "$1" -name "$t" -type f | grep -q . || { echo "$t was built"; exit 1; }
    done
    n=$(ctest --test-dir "$1" -N -L platform | sed -n "s/^Total Tests: //p")
    [[ $n == 0 ]] || { echo "$n tests of the platform were added"; exit 1; }
    echo "no-platform: nothing of the cluster platform built or tested"' _ "$build"
  run_ctest "$build" -j"$jobs" -LE 'e2e|fuzz|hosts-long|deb|memcheck|bench' -E "$random_faults"
  run_ctest "$build" -R '^e2e\.(armed-daemons-run|wedge-kill-restart|hung-executor|stop-clean)$'
}

# The Debian packages built, installed into a throwaway root and checked by
# lintian (tests/packaging/deb.sh, about 2 minutes of a core).
stage_packaging() {
  build_default || return 1
  run_ctest "$root/build/test-default" -L '^deb$'
}

stage_e2e-defaults() {
  build_default || return 1
  run_ctest "$root/build/test-default" -L '^(e2e-defaults|e2e-etcd|e2e-random)$'
}

# Reads of memory that was never set, and invalid accesses, under
# valgrind's memcheck in the build users run (ASan does not see the first):
# the library's, the store's, the cluster's and the coordinator's unit tests
# (labels unit and store) through ctest -T memcheck, then the daemons
# themselves in fault runs (tests/memcheck). Left out: the tests whose
# bounds are wall time (label timing, the real-clock hammer of the
# watchdog, the maintenance pass's pacing), and the allocation failures of
# test-errpaths, injected by wrapping malloc, which valgrind replaces.
memcheck_options='--error-exitcode=1 --track-origins=yes --leak-check=no --num-callers=30'
memcheck_left_out='^(unit-watchdog-threads|unit-errpaths|cluster-unit-maintenance)$'
stage_memcheck() {
  local build=$root/build/test-default log
  build_default || return 1
  rm -f -- "$build"/Testing/Temporary/MemoryChecker.*.log
  run_ctest "$build" -T memcheck -j"$jobs" -L '^(unit|store)$' -LE 'timing|python|bench|e2e' \
    -E "$memcheck_left_out" --overwrite "MemoryCheckCommandOptions=$memcheck_options"
  # ctest keeps memcheck's own report apart from the test's output.
  for log in "$build"/Testing/Temporary/MemoryChecker.*.log; do
    grep -q 'ERROR SUMMARY: [1-9]' "$log" 2>/dev/null && { echo "--- $log"; cat -- "$log"; }
  done
  run_ctest "$build" -L '^memcheck$'
}

stage_asan() {
  configure_and_build "$root/build/test-asan" -DSDLIVE_SANITIZE=address || return 1
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest "$root/build/test-asan" -j"$jobs" -LE 'e2e|fuzz|install|timing|bench|hosts-long|deb|python|memcheck' -E "$random_faults"
  # The Python binding over the sanitized library (its runtime preloaded
  # into the interpreter): the misuse cases, objects that outlive their
  # Supervisor and close() against threads, each in an interpreter of its own.
  run_ctest "$root/build/test-asan" -R '^python-unit(-threads)?$'
}

stage_tsan() {
  configure_and_build "$root/build/test-tsan" -DSDLIVE_SANITIZE=thread || return 1
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    run_ctest "$root/build/test-tsan" -j"$jobs" -L thread
}

# Configured twice: the first pass tells how many targets share the budget.
stage_fuzz() {
  local build=$root/build/test-fuzz targets seconds
  configure_and_build "$build" -DCMAKE_C_COMPILER=clang -DSDLIVE_BUILD_FUZZ=ON || return 1
  targets=$(cd "$build" && ctest -N -L '^fuzz$' -FA '.*' | sed -n 's/^Total Tests: //p')
  seconds=$(fuzz_seconds_per_target "${SDLIVE_FUZZ_BUDGET:-80}" "${targets:-0}") || return 1
  echo "sdlive: fuzz: $targets targets x $seconds s"
  configure_and_build "$build" -DSDLIVE_FUZZ_SECONDS="$seconds" || return 1
  run_ctest "$build" -L '^fuzz$'
}

stage_analysis() {
  local build=$root/build/test-analysis
  # Configured only: its compile_commands.json lists src/, examples/ and tools/.
  cmake -S "$root" -B "$build" -DSDLIVE_WERROR=ON -DBUILD_TESTING=OFF >/dev/null ||
    { echo "sdlive: configuring $build failed" >&2; return 1; }
  run_check cppcheck "$root/scripts/analysis.sh" "$build" cppcheck
  run_check gcc-analyzer "$root/scripts/analysis.sh" "$build" gcc-analyzer
  run_check clang-tidy "$root/scripts/analysis.sh" "$build" clang-tidy
}

# Counters from earlier runs are removed first: they would add up. The
# benchmarks are left out: their bounds do not hold with counters in the
# hot path.
stage_coverage() {
  local build=$root/build/test-coverage
  configure_and_build "$build" "-DCMAKE_C_FLAGS=--coverage -fprofile-update=atomic" \
    -DCMAKE_EXE_LINKER_FLAGS=--coverage -DCMAKE_SHARED_LINKER_FLAGS=--coverage || return 1
  find "$build" -name '*.gcda' -delete
  # The random fault runs are left to their own stage: three minutes of
  # the job path the other job tests cover already.
  run_ctest "$build" -j"$jobs" -LE 'e2e|fuzz|bench|hosts-long|deb|memcheck' -E "$random_faults"
  run_check coverage "$root/scripts/coverage.sh" "$build"
}

stages=()
for stage in "${@:-all}"; do
  if [[ $stage == all ]]; then stages+=("${all_stages[@]}"); else stages+=("$stage"); fi
done
for stage in "${stages[@]}"; do
  declare -F "stage_$stage" >/dev/null ||
    { echo "sdlive: unknown stage '$stage' (stages: all = ${all_stages[*]}; long: ${long_stages[*]})" >&2; exit 2; }
done
for stage in "${stages[@]}"; do
  run_stage "$stage"
done

report
exit $status
