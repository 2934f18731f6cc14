#!/usr/bin/env bash
# Static analysis of src/, examples/ and tools/ (the analysis stage of scripts/test.sh).
# Usage: scripts/analysis.sh BUILD_DIR TOOL
#   BUILD_DIR  configured with -DBUILD_TESTING=OFF, so its
#              compile_commands.json lists exactly the sources of src/,
#              examples/ and tools/ (the build itself is not needed);
#   TOOL       cppcheck     checks warning, performance and portability
#                           (style is not enabled: its findings are taste);
#              gcc-analyzer every file compiled with gcc -fanalyzer -Werror;
#              clang-tidy   the check set of .clang-tidy, every finding an error.
# Exit 0 when the tool reports nothing. A suppression is inline, next to the
# code, with its reason: "cppcheck-suppress ID" comments, gcc's
# "#pragma GCC diagnostic" around the line, clang-tidy's NOLINT(check).
set -uo pipefail

build=$1 tool=$2
root=$(cd "$(dirname "$0")/.." && pwd)
db=$build/compile_commands.json
jobs=$(nproc)
[[ -f $db ]] || { echo "sdlive: $db missing (configure $build first)" >&2; exit 1; }

# files: the source of every compile command, NUL-separated.
files() {
  perl -MJSON::PP -e 'local $/; print "$_->{file}\0" for @{decode_json(<STDIN>)}' <"$db"
}

case $tool in
cppcheck)
  cppcheck --version
  cppcheck --project="$db" --enable=warning,performance,portability --inline-suppr \
    --error-exitcode=1 --quiet -j"$jobs" --suppress=missingIncludeSystem \
    --template='{file}:{line}: {severity}: {message} [{id}]'
  ;;
gcc-analyzer)
  gcc --version | head -1
  # Each command as CMake wrote it, with -fanalyzer -Werror and no output.
  perl -MJSON::PP -e 'local $/;
    for (@{decode_json(<STDIN>)}) {
      (my $c = $_->{command}) =~ s/ -o \S+ -c / -fanalyzer -Werror -o \/dev\/null -c /
        or die "sdlive: unexpected compile command: $_->{command}\n";
      print "$_->{directory}\0$c\0";
    }' <"$db" | xargs -0 -n2 -P"$jobs" sh -c 'cd "$0" && eval "$1"'
  ;;
clang-tidy)
  clang-tidy --version | sed -n 1,2p
  # clang-tidy prints findings on stdout, its counts of suppressed ones on
  # stderr; it exits non-zero on a finding (WarningsAsErrors) or a failure.
  files | xargs -0 -n4 -P"$jobs" clang-tidy -p "$build" --quiet 2>"$build/clang-tidy.err"
  rc=$?
  ((rc == 0)) || grep -v 'warnings generated\|^Suppressed\|^Use -header-filter\|NOLINT' "$build/clang-tidy.err" >&2
  exit $rc
  ;;
*)
  echo "sdlive: unknown analysis tool '$tool'" >&2; exit 2 ;;
esac
