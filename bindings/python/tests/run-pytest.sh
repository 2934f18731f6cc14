#!/usr/bin/env bash
# run-pytest.sh <python> <minimum passed> <test dir> [pytest args...]
# Runs the binding's pytest suite and reads its outcome: passes only when
# pytest succeeded, at least <minimum> tests passed, and none was skipped,
# xfailed or deselected (a skip is never a pass). Prints the summary.
# SDLIVE_PYTEST_SUBSET=1: a run that selects its tests (-k) may deselect.
# SDLIVE_PYTHON_PRELOAD: a sanitizer runtime, preloaded into the
# interpreter alone (sanitized builds).
set -euo pipefail
python=$1 min=$2 dir=$3
shift 3
"$python" -c 'import cffi, pytest' 2>/dev/null ||
  { echo "FAIL: $python lacks cffi or pytest (scripts/deps.sh: python3-cffi python3-pytest)"; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
preload=() capture=()
# Under a sanitizer, pytest captures sys.stdout/err only, not the
# descriptors: a report the runtime writes to fd 2 before it ends the
# interpreter then reaches the log instead of a capture file nobody reads.
[[ -z ${SDLIVE_PYTHON_PRELOAD:-} ]] || preload=(env LD_PRELOAD="$SDLIVE_PYTHON_PRELOAD") capture=(--capture=sys)
(cd "$dir" && "${preload[@]}" "$python" -m pytest -p no:cacheprovider -q -rA --color=no "${capture[@]}" "$@" .) \
  >"$log" 2>&1 || rc=$?
cat "$log"
summary=$(grep -E '^(=+ )?[0-9a-z, ]*(passed|failed|errors?|skipped|deselected|no tests ran)[0-9a-z, ]* in [0-9.]+s' "$log" | tail -n 1 || true)
[[ -n $summary ]] || { echo "FAIL: no pytest summary line (exit $rc)"; exit 1; }
passed=$(grep -oE '[0-9]+ passed' <<<"$summary" | grep -oE '[0-9]+' || true)
passed=${passed:-0}
((rc == 0)) || { echo "FAIL: pytest exit $rc: $summary"; exit 1; }
bad_words="skipped xfailed xpassed failed error"
[[ ${SDLIVE_PYTEST_SUBSET:-0} == 1 ]] || bad_words+=" deselected"
for bad in $bad_words; do
  [[ $summary != *" $bad"* ]] || { echo "FAIL: $summary ($bad tests are not passes)"; exit 1; }
done
((passed >= min)) || { echo "FAIL: only $passed tests passed, expected at least $min: $summary"; exit 1; }
echo "python: $passed tests passed (at least $min expected)"
