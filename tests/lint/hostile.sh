#!/usr/bin/env bash
# Hostile files, made here in a temporary directory: each run has a timeout
# (a hang fails instead of stalling) and a memory bound (a file read without
# bound fails instead of growing). A FIFO as the unit file, as a drop-in, as
# the ExecStart= program or as a library found through RUNPATH; /dev/zero
# and a huge sparse file as a unit or a drop-in; invalid UTF-8 and control
# bytes in what is printed; programs execve(2) refuses. Each must end in
# time with the finding stated, never exit 0 for a program that cannot run.
#   hostile.sh <sdlive-lint> <lint-ready> <C compiler>
set -euo pipefail

lint=$1 ready=$(realpath "$2") cc=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

# The address-space bound: 256 MiB, and the resident size a 1 GiB drop-in
# may cost: 64 MiB. ASan reserves terabytes of shadow up front and keeps
# 256 MiB of freed memory in quarantine, so an ASan build (the asan stage)
# runs without the first and with 256 MiB for the second: still a quarter
# of what reading the whole drop-in would cost.
address_space_kib=262144 resident_kib=65536
if ldd "$lint" | grep -q 'libasan'; then
  address_space_kib=unlimited resident_kib=262144
fi

# lint_run <name> <args...>: sdlive-lint with a 10 s timeout and the bound
# above; leaves $work/<name>.out, .json (the same with --json) and
# .status, and prints the largest resident size in KiB to .rss.
lint_run() {
  local name=$1
  shift
  set +e
  (ulimit -v "$address_space_kib"; exec /usr/bin/time -f %M -o "$work/$name.rss" timeout 10 "$lint" "$@") \
    >"$work/$name.out" 2>"$work/$name.err"
  echo $? >"$work/$name.status"
  (ulimit -v "$address_space_kib"; exec timeout 10 "$lint" --json "$@") >"$work/$name.json" 2>>"$work/$name.err"
  echo $? >"$work/$name.json-status"
  set -e
  for s in "$(cat "$work/$name.status")" "$(cat "$work/$name.json-status")"; do
    [[ $s != 124 ]] || fail "$name: hung (killed after 10 s)"
    [[ $s == 0 || $s == 1 ]] || fail "$name: exit status $s: $(cat "$work/$name.err")"
  done
  # Valid JSON whatever the input held: strict UTF-8, then the JSON grammar.
  /usr/bin/python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' \
    "$work/$name.json" || fail "$name: --json output is not valid JSON: $(head -c 300 "$work/$name.json" | od -c | head)"
}

# expect <name> <status> <code> <text in the finding's line>
expect() {
  local name=$1 status=$2 code=$3 text=$4 line
  [[ $(cat "$work/$name.status") == "$status" ]] ||
    fail "$name: exit status $(cat "$work/$name.status"), expected $status: $(cat "$work/$name.out")"
  line=$(grep -F " $code" "$work/$name.out" || true)
  [[ -n $line ]] || fail "$name: no $code: $(cat "$work/$name.out")"
  [[ $line == *"$text"* ]] || fail "$name: $code does not say '$text': $line"
  printf 'hostile: %-26s exit %s  %s\n' "$name" "$status" "$(cut -c1-150 <<<"$line" | sed "s|$work|\$work|g")"
}

unit() { printf '[Service]\nType=notify\nExecStart=%s\n' "$2" >"$work/$1.service"; }

# --- hangs: FIFOs --------------------------------------------------------
mkfifo "$work/fifo-unit.service"
lint_run fifo-unit "$work/fifo-unit.service"
expect fifo-unit 1 SDL012 "not a regular file but a FIFO"

unit fifo-dropin "$ready"
mkdir "$work/fifo-dropin.service.d"
mkfifo "$work/fifo-dropin.service.d/10-fifo.conf"
lint_run fifo-dropin "$work/fifo-dropin.service"
expect fifo-dropin 0 "SDL014 note" "skipped, as the manager skips it: not a regular file but a FIFO"

unit fifo-link-dropin "$ready"
mkdir "$work/fifo-link-dropin.service.d"
ln -s "$work/fifo-unit.service" "$work/fifo-link-dropin.service.d/10-fifo.conf"
lint_run fifo-link-dropin "$work/fifo-link-dropin.service"
expect fifo-link-dropin 1 SDL012 "not a regular file but a FIFO"

mkfifo "$work/fifo-program"
chmod +x "$work/fifo-program"
unit fifo-program "$work/fifo-program"
lint_run fifo-program "$work/fifo-program.service"
expect fifo-program 1 SDL013 "not a regular file but a FIFO"

# A daemon linking a library of its own through RUNPATH, the library a FIFO.
mkdir -p "$work/app/lib"
printf 'int hostile_lib(void) { return 0; }\n' >"$work/lib.c"
printf 'int hostile_lib(void);\nint main(void) { return hostile_lib(); }\n' >"$work/app.c"
"$cc" -shared -fPIC -o "$work/app/lib/libhostile.so" "$work/lib.c"
"$cc" -o "$work/app/daemon" "$work/app.c" -L"$work/app/lib" -lhostile -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib'
rm "$work/app/lib/libhostile.so"
mkfifo "$work/app/lib/libhostile.so"
printf '[Service]\nExecStart=%s\nWatchdogSec=10s\nRestart=on-failure\n' "$work/app/daemon" >"$work/fifo-library.service"
lint_run fifo-library "$work/fifo-library.service"
[[ $(cat "$work/fifo-library.status") != 124 ]] || fail "fifo-library: hung"
printf 'hostile: %-26s exit %s  %s\n' fifo-library "$(cat "$work/fifo-library.status")" "ended (a FIFO as libhostile.so)"

# --- memory: /dev/zero and a huge sparse file ------------------------------
ln -s /dev/zero "$work/zero-unit.service"
lint_run zero-unit "$work/zero-unit.service"
expect zero-unit 1 SDL012 "not a regular file but a character device"

unit zero-dropin "$ready"
mkdir "$work/zero-dropin.service.d"
ln -s /dev/zero "$work/zero-dropin.service.d/10-zero.conf"
lint_run zero-dropin "$work/zero-dropin.service"
expect zero-dropin 1 SDL012 "not a regular file but a character device"

unit huge-dropin "$ready"
mkdir "$work/huge-dropin.service.d"
truncate -s 1G "$work/huge-dropin.service.d/10-huge.conf"
lint_run huge-dropin "$work/huge-dropin.service"
expect huge-dropin 1 SDL012 "larger than 4194304 bytes"
rss=$(tail -n 1 "$work/huge-dropin.rss")
((rss < resident_kib)) || fail "huge-dropin: $rss KiB resident reading a 1 GiB drop-in"
echo "hostile: huge-dropin                 read at most 4 MiB of 1 GiB: $rss KiB resident"

# --- printed text: invalid UTF-8 and control bytes --------------------------
printf '[Service]\nExecStart=/nonexistent/\xff\xfe-\xc3\x28-\xed\xa0\x80-\x1b[31mred\x07\n' >"$work/bad-utf8.service"
lint_run bad-utf8 "$work/bad-utf8.service"
expect bad-utf8 1 SDL010 '\xff\xfe-\xc3(-\xed\xa0\x80-\x1b[31mred\x07'
! grep -q $'\x1b' "$work/bad-utf8.out" || fail "bad-utf8: an ESC byte reached the text output"
grep -q '\\ufffd\|�' "$work/bad-utf8.json" || fail "bad-utf8: no U+FFFD in the JSON: $(cat "$work/bad-utf8.json")"

# --- programs execve(2) refuses: each an error ---------------------------------
: >"$work/empty"
head -c 2000 "$ready" >"$work/truncated"
{ printf '\x7fELF'; head -c 4096 /dev/urandom; } >"$work/magic-noise"
# The ELF magic, then nothing libelf reads as ELF, every time (the noise
# above only sometimes is): what libelf allocated for it must be freed
# (LeakSanitizer ends the asan stage's run with status 134 otherwise).
{ printf '\x7fELF'; head -c 4096 /dev/zero; } >"$work/magic-zeros"
/usr/bin/python3 - "$ready" "$work/absurd-phnum" <<'EOF'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[56:58] = (0xffff).to_bytes(2, "little")   # e_phnum of an ELF64 header
open(sys.argv[2], "wb").write(data)
EOF
/usr/bin/python3 - "$ready" "$work/absurd-shnum" <<'EOF'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[60:62] = (0xfff0).to_bytes(2, "little")   # e_shnum of an ELF64 header
open(sys.argv[2], "wb").write(data)
EOF
printf 'not a program\n' >"$work/text"
cp "$ready" "$work/not-executable"
chmod +x "$work/empty" "$work/truncated" "$work/magic-noise" "$work/magic-zeros" "$work/absurd-phnum" "$work/absurd-shnum" "$work/text"
chmod -x "$work/not-executable"
mkdir "$work/directory"
for case in "empty:an empty file" "truncated:truncated" "magic-noise:ELF" "magic-zeros:no ELF file libelf can read" \
  "absurd-phnum:program headers" \
  "absurd-shnum:section table" "text:neither an ELF file nor a #! script" "not-executable:not executable" \
  "/dev/null:not a regular file but a character device" "directory:not a regular file but a directory"; do
  program=${case%%:*} text=${case#*:}
  [[ $program == /* ]] || program=$work/$program
  name=unrunnable-$(basename "$program")
  unit "$name" "$program"
  lint_run "$name" "$work/$name.service"
  expect "$name" 1 "SDL013 error" "$text"
  # and the probe does not run it
  lint_run "$name-probe" --probe 1 "$work/$name.service"
  expect "$name-probe" 1 "SDL013 error" "$text"
done

echo "PASS: FIFOs, /dev/zero, a 1 GiB drop-in, invalid UTF-8 and 10 unrunnable programs: each ends in time with its finding"
