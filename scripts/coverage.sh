#!/usr/bin/env bash
# Line and branch coverage of src/ and of each part of examples/ and tools/ (the coverage
# stage of scripts/test.sh; docs/quality.md shows its table).
# Usage: scripts/coverage.sh BUILD_DIR [MIN_LINES MIN_BRANCHES]
#   BUILD_DIR  built with --coverage -fprofile-update=atomic, its tests run;
#   prints a table, one row per part (src, examples/NAME, tools/NAME), and exits 1 when
#   src/ is below MIN_LINES % of its lines or MIN_BRANCHES % of its branches
#   (default 98 and 92).
set -uo pipefail

build=$1 min_lines=${2:-98} min_branches=${3:-92}
root=$(cd "$(dirname "$0")/.." && pwd)
summary=$build/coverage.json

gcovr --version | head -1
gcovr -r "$root" --object-directory "$build" -j"$(nproc)" \
  --filter "$root/src/" --filter "$root/examples/" --filter "$root/tools/" \
  --json-summary "$summary" "$build" >/dev/null 2>"$build/gcovr.err" ||
  { cat "$build/gcovr.err" >&2; exit 1; }

# One row per part: the files of src/, of examples/lib/NAME/, of
# examples/NAME/ or of tools/NAME/, summed.
perl -MJSON::PP -e '
  my ($file, $min_l, $min_b) = @ARGV;
  open my $fh, "<", $file or die "$file: $!\n";
  my $d = decode_json(do { local $/; <$fh> });
  my %p;
  for my $f (@{$d->{files}}) {
    my ($part) = $f->{filename} =~ m{^(src|examples/lib/[^/]+|examples/[^/]+|tools/[^/]+)/} or next;
    $p{$part}{$_} += $f->{$_} for qw(line_total line_covered branch_total branch_covered);
  }
  my $pct = sub { $_[1] ? sprintf("%.1f", 100 * $_[0] / $_[1]) : "-" };
  printf "%-22s %16s %8s %18s %8s\n", "part", "lines", "%", "branches", "%";
  for my $k (sort { ($a ne "src") <=> ($b ne "src") or $a cmp $b } keys %p) {
    my $x = $p{$k};
    printf "%-22s %16s %8s %18s %8s\n", $k,
      "$x->{line_covered}/$x->{line_total}", $pct->($x->{line_covered}, $x->{line_total}),
      "$x->{branch_covered}/$x->{branch_total}", $pct->($x->{branch_covered}, $x->{branch_total});
  }
  my $s = $p{src} or die "sdlive: no coverage data for src/\n";
  my $l = 100 * $s->{line_covered} / $s->{line_total};
  my $b = 100 * $s->{branch_covered} / $s->{branch_total};
  if ($l < $min_l || $b < $min_b) {
    printf STDERR "sdlive: src/ coverage %.1f%% lines, %.1f%% branches: below %s%% / %s%%\n",
      $l, $b, $min_l, $min_b;
    exit 1;
  }
  printf "src/ goal met: %.1f%% >= %s%% of lines, %.1f%% >= %s%% of branches\n", $l, $min_l, $b, $min_b;
' "$summary" "$min_lines" "$min_branches"
