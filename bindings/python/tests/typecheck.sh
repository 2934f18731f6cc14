#!/usr/bin/env bash
# typecheck.sh <python> <package dir>
# The binding's type hints hold: mypy --strict, configured by the package
# dir's pyproject.toml ([tool.mypy]: what `python3 -m mypy` checks there),
# over the package and the example daemon, with every one of their files
# checked. A missing mypy fails, in one line: it is never a pass.
set -euo pipefail
python=$1 dir=$2
"$python" -c 'import mypy' 2>/dev/null ||
  { echo "FAIL: $python has no mypy: install python3-mypy (scripts/deps.sh)"; exit 1; }
cd "$dir"
files=(sdlive/*.py examples/sdlive-pydaemon)
# No cache: nothing is written into the source tree, and nothing stale read.
rc=0
out=$(env -u MYPYPATH "$python" -m mypy --config-file pyproject.toml --strict \
  --cache-dir=/dev/null "${files[@]}" 2>&1) || rc=$?
echo "$out"
((rc == 0)) || { echo "FAIL: mypy exit $rc"; exit 1; }
want="Success: no issues found in ${#files[@]} source files"
[[ $(tail -n 1 <<<"$out") == "$want" ]] ||
  { echo "FAIL: expected '$want' (every file of the package checked)"; exit 1; }
echo "PASS: ${#files[@]} files type-check with mypy --strict"
