#!/usr/bin/env bash
# Every tool the tests, scripts/test.sh and scripts/demo.sh call comes from a
# Debian package that scripts/deps.sh installs: one it lists, a direct
# dependency of one it lists, or an Essential/required package of every
# Debian system. A tool found only in this machine's PATH (/usr/local,
# ~/.pyenv, ...) or from an unlisted package fails: a fresh machine would
# not have it. Looked up in Debian's own PATH, not the caller's.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

# The tools, by the name the tests call them (keep in step when a test
# starts calling a new one).
tools=(
  cmake ctest cpack gcc g++ clang pkg-config readelf nm strip
  mandoc man lintian abidw abidiff dpkg-deb dpkg-shlibdeps dpkg-buildflags
  fakeroot file openssl gcovr cppcheck clang-tidy
  perl python3 sqlite3 runuser unshare setpriv script systemctl
  systemd-analyze mountpoint ldconfig timeout pgrep mknod mkfifo tar gzip awk
  /lib/systemd/systemd
)
# The PostgreSQL server's programs (tests/store/pg-server.sh), newest version.
for prog in initdb pg_ctl postgres createdb; do
  tools+=("$(ls -d /usr/lib/postgresql/*/bin/$prog 2>/dev/null | sort -V | tail -n 1 || true)")
  [[ -n ${tools[-1]} ]] || tools[-1]=/usr/lib/postgresql/VERSION/bin/$prog
done

listed=$(sed -n '/^packages=(/,/^)/p' "$root/scripts/deps.sh" | sed '1d;$d' | tr -s ' \n' '\n' | sed '/^$/d')
[[ -n $listed ]] || { echo "FAIL: no package list in scripts/deps.sh"; exit 1; }
# shellcheck disable=SC2086
deps=$(dpkg-query -W -f='${Depends}, ${Pre-Depends}\n' $listed 2>/dev/null |
  tr ',|' '\n\n' | sed 's/([^)]*)//; s/:any//; s/[[:space:]]//g' | sed '/^$/d')
allowed=$(printf '%s\n%s\n' "$listed" "$deps" | sort -u)

# candidates PATH: the path, its /usr-merged twin, and the same for what
# the symlink (an alternative) resolves to.
candidates() {
  local real
  real=$(readlink -f -- "$1")
  printf '%s\n' "$1" "${1#/usr}" "/usr$1" "$real" "${real#/usr}" "/usr$real" | sort -u
}

# One dpkg-query for every path (each call reads the whole file database):
# owner[path]="pkg pkg ...".
declare -A path_of owner
all=()
for tool in "${tools[@]}"; do
  path=$tool
  [[ $tool == /* ]] || path=$(command -v -- "$tool") || path=
  [[ -n $path && -e $path ]] || continue
  path_of[$tool]=$path
  mapfile -t -O "${#all[@]}" all < <(candidates "$path")
done
while IFS= read -r line; do
  pkgs=${line%%: /*} file=/${line#*: /}
  owner[$file]+=" $(sed 's/:[a-z0-9]*//g; s/,/ /g' <<<"$pkgs")"
done < <(dpkg-query -S -- "${all[@]}" 2>/dev/null)

owners() {
  local q
  for q in $(candidates "$1"); do printf "%s\n" ${owner[$q]:-}; done | sed "/^$/d" | sort -u
}

bad=0
for tool in "${tools[@]}"; do
  path=${path_of[$tool]:-}
  if [[ -z $path ]]; then
    echo "FAIL: $tool: not installed"; bad=1; continue
  fi
  pkgs=$(owners "$path")
  if [[ -z $pkgs ]]; then
    echo "FAIL: $tool ($path): no Debian package owns it"; bad=1; continue
  fi
  verdict=
  for pkg in $pkgs; do
    if grep -qxF -- "$pkg" <<<"$allowed"; then
      verdict="from $pkg (scripts/deps.sh)"
    elif [[ $(dpkg-query -W -f='${Essential} ${Priority}' -- "$pkg" 2>/dev/null) == @(yes *|* required) ]]; then
      verdict="from $pkg (Essential/required)"
    fi
    [[ -z $verdict ]] || break
  done
  if [[ -n $verdict ]]; then
    echo "ok: $tool $verdict"
  else
    echo "FAIL: $tool ($path) comes from $(paste -sd, <<<"$pkgs"), which scripts/deps.sh does not install"
    bad=1
  fi
done
exit $bad
