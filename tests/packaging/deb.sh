#!/bin/sh
# Builds the Debian packages (scripts/debs.sh) in a temporary build tree and
# checks them:
#   - libsdlive0, libsdlive-dev, sdlive-daemons and python3-sdlive, with
#     their Depends:
#     (shlibdeps for the binaries, libsdlive0's shlibs file for the daemons),
#     each package with binaries depending on exactly the packages that own
#     the libraries its binaries load (NEEDED): nothing missing, nothing typed;
#   - every file a /usr install writes is in exactly one package;
#   - installed with dpkg into a throwaway root (dpkg --root --unpack: the
#     machine's own package database is not touched), the packaged daemons
#     run, the packaged units' ExecStart= name them, and a consumer builds
#     against that root through pkg-config and find_package(sdlive) and runs;
#   - the cluster's failover under a real systemd manager, with the packaged
#     programs and the packaged sdlive-cluster@.service as shipped
#     (tests/e2e/cluster-failover.sh over that root);
#   - lintian reports nothing beyond the residue listed in lintian-residue.
#   deb.sh <source dir> <consumer source dir> <cc>
set -eu

src=$1 consumer=$2 cc=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset LD_LIBRARY_PATH NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID
status=0
fail() { echo "FAIL: $*"; status=1; }
field() { dpkg-deb -f "$work/build/$1"_*.deb "$2"; }

echo "== build"
start=$(date +%s)
bash "$src/scripts/debs.sh" "$work/build" >"$work/debs.log" 2>&1 ||
        { cat "$work/debs.log"; exit 1; }
echo "packages built in $(($(date +%s) - start)) s:"
for p in libsdlive0 libsdlive-dev sdlive-daemons python3-sdlive; do
        ls "$work/build/$p"_*.deb >/dev/null 2>&1 || { fail "no $p package"; continue; }
        echo "  $(basename "$work/build/$p"_*.deb): Depends: $(field "$p" Depends)"
done
[ $status -eq 0 ] || exit 1
upstream=$(field libsdlive0 Version)
upstream=${upstream%-*}

echo "== Depends and shlibs"
field libsdlive0 Depends | grep -q 'libc6 (>= ' || fail "libsdlive0 does not depend on libc6"
field libsdlive-dev Depends | grep -qx "libsdlive0 (= $(field libsdlive0 Version))" ||
        fail "libsdlive-dev does not depend on its libsdlive0"
deps=$(field sdlive-daemons Depends)
echo "$deps" | grep -q "libsdlive0 (>= $upstream)" ||
        fail "sdlive-daemons: no libsdlive0 (>= $upstream) from the shlibs file"
echo "$deps" | grep -q 'libc6 (>= ' || fail "sdlive-daemons: no libc6 from shlibdeps"
dpkg-deb -e "$work/build"/libsdlive0_*.deb "$work/control"
grep -qx "libsdlive 0 libsdlive0 (>= $upstream)" "$work/control/shlibs" ||
        fail "libsdlive0's shlibs: $(cat "$work/control/shlibs" 2>&1)"
grep -qx 'activate-noawait ldconfig' "$work/control/triggers" || fail "libsdlive0 has no ldconfig trigger"
# python3-sdlive holds no binary (cffi loads the library at run time).
[ "$(field python3-sdlive Architecture)" = all ] || fail "python3-sdlive is not Architecture: all"
deps=$(field python3-sdlive Depends)
for want in "libsdlive0 (>= $upstream)" python3-cffi "python3:any"; do
        echo "$deps" | grep -qF "$want" || fail "python3-sdlive: Depends: $deps lacks $want"
done

# owner SONAME: the package that holds the library, libsdlive0 for ours.
owner() {
        case $1 in libsdlive.so.*) echo libsdlive0; return ;; esac
        path=$(ldconfig -p | awk -v s="$1" '$1 == s { print $NF; exit }')
        [ -n "$path" ] || return 0
        for q in "$path" "/usr$path" "${path#/usr}" "$(readlink -f "$path")"; do
                dpkg-query -S "$q" 2>/dev/null | sed -n '1s/:.*//p'
        done | head -n 1
}
for p in libsdlive0 sdlive-daemons; do
        mkdir -p "$work/x/$p"
        dpkg-deb -x "$work/build/$p"_*.deb "$work/x/$p"
        needed=$(find "$work/x/$p" -type f -exec sh -c \
                'readelf -h "$1" >/dev/null 2>&1 && readelf -d "$1" | sed -n "s/.*(NEEDED).*\[\(.*\)\]/\1/p"' _ {} \; | sort -u)
        want=$(for so in $needed; do
                o=$(owner "$so"); echo "${o:-(no package owns $so)}"
        done | sort -u)
        have=$(field "$p" Depends | tr ',' '\n' | sed 's/^ *//; s/[ (].*//' | sort -u)
        if [ "$want" = "$have" ]; then
                echo "$p: Depends: names exactly the owners of $(echo $needed | wc -w) NEEDED libraries: $(echo $have)"
        else
                fail "$p: Depends: $(echo $have), but its binaries load libraries of: $(echo $want)"
        fi
done

echo "== every installed file in exactly one package"
DESTDIR=$work/stage cmake --install "$work/build" >/dev/null
(cd "$work/stage" && find . ! -type d | sort) >"$work/installed"
for deb in "$work/build"/*.deb; do dpkg-deb --fsys-tarfile "$deb" | tar -t; done |
        grep -v '/$' | sort >"$work/packaged"
dups=$(uniq -d "$work/packaged")
[ -z "$dups" ] || fail "in more than one package: $dups"
if ! diff -u "$work/installed" "$work/packaged" >"$work/diff"; then
        fail "packages and install differ (- installed only, + packaged only):"
        cat "$work/diff"
fi
echo "$(wc -l <"$work/packaged") files"

echo "== dpkg --root into a throwaway root"
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
: >"$root/var/lib/dpkg/status"
dpkg --root="$root" --force-depends --unpack "$work/build"/*.deb >"$work/dpkg.log" 2>&1 ||
        { cat "$work/dpkg.log"; fail "dpkg --unpack failed"; }
for p in libsdlive0 libsdlive-dev sdlive-daemons python3-sdlive; do
        dpkg-query --root="$root" -W -f='${Package} ${Version} ${Status}\n' "$p" || fail "$p not in the root's dpkg database"
done
libdir=$(dirname "$(find "$root/usr/lib" -name 'libsdlive.so.0' | head -n 1)")
# The packaged Python module, for the packaged Python daemon.
PYTHONPATH=$root/usr/lib/python3/dist-packages
export PYTHONPATH
for bin in "$root"/usr/bin/sdlive-*; do
        if head -c 2 "$bin" | grep -q '#!'; then
                [ "$(head -n 1 "$bin")" = "#!/usr/bin/python3" ] || fail "$bin: not run by /usr/bin/python3"
        else
                [ -z "$(readelf -d "$bin" | grep -E 'RUNPATH|RPATH')" ] || fail "$bin has a RUNPATH"
        fi
        LD_LIBRARY_PATH=$libdir "$bin" --version || fail "$bin --version"
done
out=$(LD_LIBRARY_PATH=$libdir /usr/bin/python3 -c \
        'import sdlive, sys; print(sdlive.__file__.startswith(sys.argv[1]), sdlive.library_version)' \
        "$root/usr/lib/python3/dist-packages") || fail "the packaged module does not import"
[ "$out" = "True $upstream" ] || fail "the packaged module: $out (want: True $upstream)"
unset PYTHONPATH
units=0
for unit in "$root"/lib/systemd/system/sdlive-*.service; do
        [ -e "$unit" ] || break
        units=$((units + 1))
        exec=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")
        case $exec in
        /usr/bin/sdlive-*) [ -x "$root$exec" ] || fail "$(basename "$unit"): ExecStart=$exec is not in the packages" ;;
        *) fail "$(basename "$unit"): ExecStart=$exec is not a packaged daemon" ;;
        esac
done
[ "$units" -gt 0 ] || fail "no unit in /lib/systemd/system of the packages"
echo "$units units, each ExecStart= a packaged daemon"
PKG_CONFIG_PATH=$libdir/pkgconfig
export PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs sdlive)
# shellcheck disable=SC2086 # flags are words
"$cc" -std=c99 -Wall -Wextra -Werror -o "$work/consumer-pc" "$consumer/consumer.c" $flags &&
        LD_LIBRARY_PATH=$libdir "$work/consumer-pc" || fail "pkg-config consumer"
cmake -S "$consumer" -B "$work/consumer" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_PREFIX_PATH="$root/usr" >"$work/consumer.log" 2>&1 &&
        cmake --build "$work/consumer" >>"$work/consumer.log" 2>&1 &&
        "$work/consumer/consumer" || { cat "$work/consumer.log"; fail "find_package consumer"; }

echo "== the cluster's failover from the packages, under a real systemd manager"
start=$(date +%s)
if SDLIVE_BUILD_DIR=$work/build SDLIVE_E2E_PACKAGE_ROOT=$root SDLIVE_E2E_LOG_DIR=$work/e2e \
        bash "$src/tests/e2e/cluster-failover.sh" sqlite >"$work/e2e.log" 2>&1; then
        grep -E '^ *[0-9]\. |^PASS' "$work/e2e.log"
        echo "(the failover took $(($(date +%s) - start)) s)"
else
        cat "$work/e2e.log"
        fail "the cluster's failover with the packaged daemon and unit"
fi

echo "== lintian"
start=$(date +%s)
lintian --no-cfg --display-info --display-experimental --pedantic \
        "$work/build"/*.deb 2>/dev/null | grep -E '^[A-Z]: ' | tee "$work/lintian" || true
echo "(lintian took $(($(date +%s) - start)) s)"
grep -v '^#' "$here/lintian-residue" | grep -v '^$' >"$work/allowed"
while read -r sev pkg tag rest; do
        pkg=${pkg%:}
        grep -qx "$tag $pkg" "$work/allowed" || fail "lintian: $sev $pkg $tag $rest (not in lintian-residue)"
done <"$work/lintian"
while read -r tag pkg; do
        grep -q "^[A-Z]: $pkg: $tag\b" "$work/lintian" ||
                echo "note: $tag on $pkg is no longer reported: drop it from lintian-residue and the docs"
done <"$work/allowed"
exit $status
