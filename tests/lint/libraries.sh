#!/usr/bin/env bash
# Keepalives that live in a daemon's shared libraries. The test builds small
# libraries and daemons of its own into a tree (--root), as a package would
# install them, and the static check must follow DT_NEEDED the way the
# loader does:
#   - petsd: its keepalives are in libpets.so, found through RUNPATH
#     ($ORIGIN/../lib/petsd); pets=yes, no finding, and the probe sees them;
#   - petsd-rpath: the same through DT_RPATH;
#   - petsd-ldconf: libpets.so in /opt/pets/lib, listed by an ld.so.conf.d
#     file that /etc/ld.so.conf includes;
#   - petsd-chain: the daemon needs libfront.so, which needs libpets.so
#     through its own RUNPATH ($ORIGIN);
#   - notifyd: imports sd_notify, no keepalive anywhere: armed, it is
#     "inconclusive, probe it" (SDL009 note, exit 0), not "never pets";
#   - idled: its library neither notifies nor pets: armed is SDL001.
#   libraries.sh <sdlive-lint> <C compiler>
set -euo pipefail

lint=$1 cc=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
root=$work/root
mkdir -p "$root/usr/sbin" "$root/usr/lib/petsd" "$root/usr/lib/rpath" "$root/opt/pets/lib" "$root/opt/chain/lib" \
  "$root/etc/ld.so.conf.d" "$root/lib/systemd/system" "$work/src"

cat >"$work/src/pets.c" <<'EOF'
#include <stdint.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>
void pets_run(void);
void pets_run(void) {
        uint64_t usec = 0;

        sd_notify(0, "READY=1");
        if (sd_watchdog_enabled(0, &usec) <= 0)
                usec = 3000000;
        for (;;) {
                sd_notify(0, "WATCHDOG=1");
                usleep((useconds_t) (usec / 3));
        }
}
EOF
cat >"$work/src/front.c" <<'EOF'
void pets_run(void);
void front_run(void);
void front_run(void) { pets_run(); }
EOF
cat >"$work/src/idle.c" <<'EOF'
#include <unistd.h>
void idle_run(void);
void idle_run(void) { for (;;) pause(); }
EOF
printf 'void pets_run(void);\nint main(void) { pets_run(); }\n' >"$work/src/petsd.c"
printf 'void front_run(void);\nint main(void) { front_run(); }\n' >"$work/src/chain.c"
printf 'void idle_run(void);\nint main(void) { idle_run(); }\n' >"$work/src/idled.c"
printf '#include <systemd/sd-daemon.h>\n#include <unistd.h>\nint main(void) { sd_notify(0, "READY=1"); for (;;) pause(); }\n' \
  >"$work/src/notifyd.c"

build_lib() { "$cc" -shared -fPIC -o "$1" "$2" "${@:3}"; }
build_lib "$root/usr/lib/petsd/libpets.so" "$work/src/pets.c" -lsystemd
cp "$root/usr/lib/petsd/libpets.so" "$root/usr/lib/rpath/libpets.so"
cp "$root/usr/lib/petsd/libpets.so" "$root/opt/pets/lib/libpets.so"
cp "$root/usr/lib/petsd/libpets.so" "$root/opt/chain/lib/libpets.so"
build_lib "$root/opt/chain/lib/libfront.so" "$work/src/front.c" -L"$root/opt/chain/lib" -lpets \
  -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
build_lib "$root/usr/lib/petsd/libidle.so" "$work/src/idle.c"
L=$root/usr/lib/petsd
"$cc" -o "$root/usr/sbin/petsd" "$work/src/petsd.c" -L"$L" -lpets -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib/petsd'
"$cc" -o "$root/usr/sbin/petsd-rpath" "$work/src/petsd.c" -L"$L" -lpets -Wl,--disable-new-dtags,-rpath,/usr/lib/rpath
"$cc" -o "$root/usr/sbin/petsd-ldconf" "$work/src/petsd.c" -L"$L" -lpets
"$cc" -o "$root/usr/sbin/petsd-chain" "$work/src/chain.c" -L"$root/opt/chain/lib" -lfront \
  -Wl,--enable-new-dtags,-rpath,/opt/chain/lib
"$cc" -o "$root/usr/sbin/notifyd" "$work/src/notifyd.c" -lsystemd
"$cc" -o "$root/usr/sbin/idled" "$work/src/idled.c" -L"$L" -lidle -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib/petsd'
printf 'include /etc/ld.so.conf.d/*.conf\n' >"$root/etc/ld.so.conf"
printf '# the pets library\n/opt/pets/lib\n' >"$root/etc/ld.so.conf.d/pets.conf"
readelf -d "$root/usr/sbin/petsd" | grep -q 'RUNPATH.*\$ORIGIN/../lib/petsd' || fail "petsd has no RUNPATH"
readelf -d "$root/usr/sbin/petsd-rpath" | grep -q '(RPATH).*/usr/lib/rpath' || fail "petsd-rpath has no RPATH"
for daemon in petsd petsd-rpath petsd-ldconf petsd-chain notifyd idled; do
  printf '[Service]\nType=notify\nExecStart=/usr/sbin/%s\nWatchdogSec=2s\nRestart=on-failure\n' "$daemon" \
    >"$root/lib/systemd/system/$daemon.service"
done

# check <daemon> <pets> <codes> <exit status> <evidence text> [probe seconds]
check() {
  local daemon=$1 want_pets=$2 want_codes=$3 want_status=$4 text=$5 probe=${6:-} status
  set +e
  timeout 30 "$lint" --json --root "$root" ${probe:+--probe "$probe"} "$daemon.service" >"$work/$daemon.json"
  status=$?
  set -e
  IFS='|' read -r pets codes evidence keepalives < <(/usr/bin/python3 -c '
import json, sys
u = json.load(open(sys.argv[1]))[0]
print("|".join([u["binary"]["pets"], " ".join(sorted(f["code"] for f in u["findings"])),
                u["binary"]["evidence"], str((u.get("probe") or {}).get("keepalives", "-"))]))' "$work/$daemon.json")
  [[ $pets == "$want_pets" && $codes == "$want_codes" && $status == "$want_status" ]] ||
    fail "$daemon: expected pets=$want_pets codes=[$want_codes] exit $want_status, got pets=$pets codes=[$codes] exit $status: $(cat "$work/$daemon.json")"
  [[ $evidence == *"$text"* ]] || fail "$daemon: the evidence does not say '$text': $evidence"
  if [[ -n $probe ]]; then
    ((keepalives >= 3)) || fail "$daemon: $keepalives keepalives in a ${probe} s probe: $(cat "$work/$daemon.json")"
  fi
  printf 'libraries: %-13s pets=%-7s [%s] exit %s%s  %s\n' "$daemon" "$pets" "$codes" "$status" \
    "${probe:+, probe: $keepalives keepalives}" "${evidence//$root/}"
}

check petsd yes "" 0 "its library libpets.so (/usr/sbin/../lib/petsd/libpets.so) imports sd_notify sd_watchdog_enabled"
check petsd yes "" 0 "libpets.so" 3
check petsd-rpath yes "" 0 "its library libpets.so (/usr/lib/rpath/libpets.so)"
check petsd-ldconf yes "" 0 "its library libpets.so (/opt/pets/lib/libpets.so)"
check petsd-chain yes "" 0 "its library libpets.so (/opt/chain/lib/libpets.so)"
check notifyd unknown SDL009 0 "can notify (through sd_notify), but no keepalive is seen"
check idled no SDL001 1 "it cannot notify"
echo "PASS: keepalives found in libraries through RUNPATH, RPATH, ld.so.conf and a library's own RUNPATH; sd_notify alone is inconclusive"
