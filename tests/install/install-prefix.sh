#!/bin/sh
# Installs the build into a temporary prefix (inside a throwaway DESTDIR, so
# that a file escaping the prefix cannot reach the machine) and checks that
#   - every file the install manifest lists, and every file under DESTDIR,
#     is inside the prefix;
#   - installing runs no systemctl (a stand-in first in PATH records any
#     call; no install script names it outside a comment);
#   - the units' ExecStart= name the installed daemons;
#   - each installed daemon runs (--version) without LD_LIBRARY_PATH;
#   - a consumer built against the installed tree, installed into the same
#     prefix, runs without LD_LIBRARY_PATH.
#   install-prefix.sh <build dir> <consumer source dir> <cc> [extra cflags]
set -eu

build=$1 src=$2 cc=$3 extra=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
root=$work/root
unset LD_LIBRARY_PATH NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID
status=0
fail() { echo "FAIL: $*"; status=1; }

mkdir "$work/bin"
printf '#!/bin/sh\necho "systemctl $*" >>"%s"\n' "$work/systemctl.calls" >"$work/bin/systemctl"
chmod +x "$work/bin/systemctl"
DESTDIR=$root PATH=$work/bin:$PATH cmake --install "$build" --prefix "$prefix" >"$work/install.log" ||
        { cat "$work/install.log"; exit 1; }

echo "== no systemctl at install time"
[ ! -e "$work/systemctl.calls" ] || fail "cmake --install ran: $(cat "$work/systemctl.calls")"
named=$(find "$build" -name '*.cmake' ! -path '*/CMakeFiles/*' ! -path "$build/tests/*" \
        -exec grep -l '^[^#]*systemctl' {} + || true)
[ -z "$named" ] || fail "install scripts name systemctl: $named"

echo "== every installed file inside $prefix"
manifest=$build/install_manifest.txt
[ -s "$manifest" ] || { echo "no $manifest"; exit 1; }
n=0
while IFS= read -r f || [ -n "$f" ]; do
        n=$((n + 1))
        case $f in "$prefix"/*) ;; *) fail "installed outside the prefix: $f" ;; esac
done <"$manifest"
outside=$(find "$root" \( -type f -o -type l \) ! -path "$root$prefix/*")
[ -z "$outside" ] || fail "written outside the prefix: $outside"
found=$(find "$root$prefix" \( -type f -o -type l \) | wc -l)
[ "$found" -eq "$n" ] || fail "the manifest lists $n files, the prefix holds $found"
echo "$n files, all under the prefix"

echo "== units"
units=$(grep -E '\.service$' "$manifest" || true)
[ -n "$units" ] || fail "no units installed"
for unit in $units; do
        exec=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$root$unit")
        case $exec in
        "$prefix"/bin/*) [ -x "$root$exec" ] || fail "$unit: ExecStart=$exec is not installed" ;;
        *) fail "$unit: ExecStart=$exec is not in the prefix" ;;
        esac
        echo "$(basename "$unit"): $(dirname "${unit#"$prefix"/}")/, ExecStart=$exec"
done

echo "== installed daemons, no LD_LIBRARY_PATH"
for bin in "$root$prefix"/bin/sdlive-*; do
        [ -e "$bin" ] || { fail "no daemon installed"; break; }
        if out=$("$bin" --version 2>&1); then
                echo "$out (RUNPATH $(readelf -d "$bin" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p'))"
        else
                fail "$(basename "$bin") --version: $out"
        fi
done

echo "== installed consumer, no LD_LIBRARY_PATH"
if cmake -S "$src" -B "$work/consumer" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_PREFIX_PATH="$root$prefix" -DCMAKE_C_FLAGS="$extra" \
        -DCMAKE_EXE_LINKER_FLAGS="$extra" >"$work/consumer.log" 2>&1 &&
        cmake --build "$work/consumer" >>"$work/consumer.log" 2>&1 &&
        cmake --install "$work/consumer" --prefix "$root$prefix" >>"$work/consumer.log" 2>&1 &&
        "$root$prefix/bin/consumer"; then
        :
else
        cat "$work/consumer.log"
        fail "the installed consumer did not run"
fi
exit $status
