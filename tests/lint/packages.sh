#!/usr/bin/env bash
# Real units and binaries out of Debian packages, extracted (dpkg -x, never
# installed) into one tree, checked by name
# under --root, static only. For every service unit of the tree (a template
# as "@lint"): the run ends in time with valid JSON; the merged files are
# the ones systemd-analyze verify --root loads, in its order; SDL010 is
# reported exactly when the ExecStart= program is not in the tree; no armed
# unit is called a non-petter. Units whose verdict is known must get it.
# The packages come from the apt cache, or are fetched once with
# apt-get download into the download directory.
#   packages.sh <sdlive-lint> <apt archive directory> <download directory>
set -euo pipefail

lint=$1 archives=$2 downloads=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

packages="systemd libsystemd-shared udev systemd-timesyncd etcd-server haproxy lttng-tools mariadb-server memcached munge nftables
postgresql-common rdma-core redis-server rsync"
# unit|armed|pets|codes: verdicts known for these packages of Debian 12.
known="systemd-udevd.service|True|yes|
systemd-timesyncd.service|True|yes|
systemd-journald.service|True|yes|
systemd-logind.service|True|yes|
etcd.service|False|unknown|SDL009
haproxy.service|False|unknown|
memcached.service|False|unknown|SDL009
lttng-sessiond.service|False|no|
nftables.service|False|no|"

# deb_of <package>: the newest .deb of it in the cache or the downloads.
deb_of() {
  { find "$archives" "$downloads" -maxdepth 1 -name "${1}_*.deb" 2>/dev/null || true; } | sort | tail -n 1
}
mkdir -p "$downloads"
missing=$(for package in $packages; do [[ -n $(deb_of "$package") ]] || echo "$package"; done)
if [[ -n $missing ]]; then
  # shellcheck disable=SC2086 # package names are words
  (cd "$downloads" && { apt-get download -qq $missing || { apt-get update -qq && apt-get download -qq $missing; }; }) ||
    fail "cannot fetch the packages of the corpus: $(echo $missing)"
fi

root=$work/root
mkdir -p "$root"
found=0
for package in $packages; do
  deb=$(deb_of "$package")
  [[ -n $deb ]] || continue
  dpkg -x "$deb" "$root"
  found=$((found + 1))
done
((found >= 10)) || fail "only $found of the packages are in $archives: the corpus needs at least 10 ($packages)"

units=$(for dir in "$root/lib/systemd/system" "$root/usr/lib/systemd/system"; do
  [[ ! -d $dir ]] || find "$dir" -maxdepth 1 -name '*.service' \( -type f -o -type l \) -printf '%f\n'
done | sort -u)
checked=0 armed_count=0 compared=0
for file in $units; do
  name=${file/@.service/@lint.service}
  set +e
  timeout 20 "$lint" --json --root "$root" "$name" >"$work/lint.json" 2>"$work/lint.err"
  status=$?
  set -e
  ((status == 0 || status == 1)) || fail "$name: exit status $status: $(cat "$work/lint.err")"
  SYSTEMD_LOG_LEVEL=debug timeout 60 systemd-analyze verify --root="$root" "$name" >"$work/systemd.out" 2>&1 || true
  verdict=$(/usr/bin/python3 - "$work/lint.json" "$work/systemd.out" "$root" "$name" <<'EOF'
import json, os, re, sys

u = json.load(open(sys.argv[1], encoding="utf-8"))[0]
dump = open(sys.argv[2], encoding="utf-8", errors="replace").read()
root, name = sys.argv[3], sys.argv[4]
codes = sorted(f["code"] for f in u["findings"])
if "SDL012" in codes:
    if "masked" in u["findings"][0]["evidence"]:
        print("masked")
        sys.exit(0)
    if "no ExecStart=" in u["findings"][0]["evidence"]:
        if "-> ExecStart:" in dump:
            sys.exit(f"{name}: no ExecStart= found, but systemd has one")
        print("no-exec")
        sys.exit(0)
    sys.exit(f"{name}: cannot be read: {u['findings']}")
fragment = re.search(r"^\s+Fragment Path: (.*)$", dump, re.M)
compared = 0
if fragment:  # systemd loaded it: the same files, in the same order
    want = [fragment.group(1)] + re.findall(r"^\s+DropIn Path: (.*)$", dump, re.M)
    if u["files"] != want:
        sys.exit(f"{name}: files {u['files']}, systemd loads {want}")
    compared = 1
def exists_in_root(path):
    """Follows symlinks inside root, as the manager under --root would."""
    for _ in range(40):
        if not os.path.islink(path):
            return os.path.exists(path)
        target = os.readlink(path)
        path = root + target if target.startswith("/") else os.path.join(os.path.dirname(path), target)
    return False

b = u.get("binary") or {}
path = b.get("path", "")
missing = not exists_in_root(path)
if ("SDL010" in codes) != missing:
    sys.exit(f"{name}: SDL010 is {'SDL010' in codes} but {path} {'is missing' if missing else 'is there'}")
armed = u.get("watchdog_usec") is not None
if armed and "SDL001" in codes:
    sys.exit(f"{name}: armed and called a non-petter: {b.get('evidence')}")
print("|".join([str(armed), b.get("pets", "-"), " ".join(codes), str(compared), b.get("kind", "-"),
                (b.get("evidence") or "")[:90]]))
EOF
) 2>&1 || fail "$(tail -n 1 <<<"$verdict")"
  if [[ $verdict == masked ]]; then
    printf 'packages: %-32s masked (a link to /dev/null): SDL012, as systemd does not load it either\n' "$name"
    continue
  elif [[ $verdict == no-exec ]]; then
    printf 'packages: %-32s no ExecStart= (systemd has none either): SDL012, nothing to judge\n' "$name"
    continue
  fi
  IFS='|' read -r armed pets codes was_compared kind evidence <<<"$verdict"
  compared=$((compared + was_compared))
  [[ $armed == True ]] && armed_count=$((armed_count + 1))
  line=$(grep "^$name|" <<<"$known" || true)
  mark=""
  if [[ -n $line ]]; then
    IFS='|' read -r _ want_armed want_pets want_codes <<<"$line"
    [[ $armed == "$want_armed" && $pets == "$want_pets" && $codes == "$want_codes" ]] ||
      fail "$name: expected armed=$want_armed pets=$want_pets codes=[$want_codes], got armed=$armed pets=$pets codes=[$codes]"
    mark=" (as known)"
  fi
  printf 'packages: %-32s armed=%-5s pets=%-7s %-8s [%s]%s %s\n' "$name" "$armed" "$pets" "$kind" "$codes" "$mark" "$evidence"
  checked=$((checked + 1))
done
for line in $known; do
  grep -q "^${line%%|*}$" <<<"${units//@.service/@lint.service}" || fail "${line%%|*} is not in the extracted packages"
done
((compared >= checked / 2)) || fail "systemd-analyze loaded only $compared of $checked units"
echo "PASS: $checked units of $found Debian packages ($armed_count armed), $compared merges as systemd's; no false SDL001"
