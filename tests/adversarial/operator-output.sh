#!/usr/bin/env bash
# What an operator's terminal receives from names someone else wrote: a
# SQLite store whose lease holder and in-flight worker were set by raw SQL
# to terminal escapes (ESC, BEL, CR), C1 codes (as code points and as raw
# bytes), a right-to-left override and invalid UTF-8, and an etcd lease key
# (a fake JSON gateway on 127.0.0.1) whose value holds the same. sdlive-jobs,
# sdlive-jobs --watch and sdlive-cluster --inspect (store and etcd) must
# print valid UTF-8 with no control character but the newline ending each
# line, the names shown escaped (\xHH, \\) exactly as expected; so must
# the shell tests' jobs-inspect.
#
#   operator-output.sh HOSTILE-NAMES SDLIVE-JOBS SDLIVE-CLUSTER JOBS-INSPECT
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

writer=$1 jobs=$2 cluster=$3 jobs_inspect=$4 leader=${5:-}
adv_begin operator-output
ADV_LOGS="*.out"

# The names as bytes (hex), and as the tools must show them: computed here
# from the bytes, independently of the C escaper.
read -r holder_hex worker_hex etcd_hex holder_shown worker_shown etcd_shown < <(/usr/bin/python3 - <<'PY'
bidi = {0x061C, 0x200E, 0x200F} | set(range(0x2028, 0x202F)) | set(range(0x2066, 0x206A))
def shown(raw):
    out, i = "", 0
    while i < len(raw):
        for n in (4, 3, 2, 1):
            try:
                ch = raw[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(ch) == 1:
                break
        else:
            n, ch = 1, None
        cp = ord(ch) if ch else None
        if ch is None or cp < 0x20 or 0x7F <= cp <= 0x9F or cp in bidi:
            out += "".join("\\x%02x" % b for b in raw[i:i + n])
        elif ch == "\\":
            out += "\\\\"
        else:
            out += ch
        i += n
    return out
holder = b"node\x1b]0;pwned\x07\x1b[2J\r\x9b31m\xc2\x9b1m\xe2\x80\xaerlo\\\xff\xc3\xa9"
worker = b"w1\x1b[31m\x07\r\n\xc2\x85\xfe\xed\xa0\x80ok"
etcd = b"node\x1b]52;c;aGk=\x07" + b"\x1b[A\r\x9b" * 40 + b"\xc2\x90\xe2\x81\xa6end"
assert len(holder) <= 63 and len(worker) <= 63 and len(etcd) <= 255
print(holder.hex(), worker.hex(), etcd.hex(), shown(holder), shown(worker), shown(etcd))
PY
)
db=$work/store.db
"$writer" "$db" "$holder_hex" "$worker_hex" || fail "could not write the hostile store"

# check NAME FILE WANTED...: FILE is valid UTF-8 without control characters
# but line-ending newlines, and holds every WANTED text; each tool that
# fails it is counted, so that all of them are judged.
failed=0
check() {
  /usr/bin/python3 - "$@" <<'PY' || failed=$((failed + 1))
import sys
name, path, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
data = open(path, "rb").read()
bidi = {0x061C, 0x200E, 0x200F} | set(range(0x2028, 0x202F)) | set(range(0x2066, 0x206A))
def fail(why):
    sys.exit("FAIL: %s: %s in %r" % (name, why, data[:300]))
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    fail("not UTF-8 (%s)" % e)
if not text.endswith("\n"):
    fail("the last line does not end")
for line in text.split("\n"):
    for ch in line:
        if ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F or ord(ch) in bidi:
            fail("U+%04X printed" % ord(ch))
for w in wanted:
    if w not in text:
        fail("%r not shown" % w)
print("%s: %d bytes, %d lines, valid UTF-8, no control character, names shown escaped" %
      (name, len(data), text.count("\n")))
PY
}

"$jobs" --store "sqlite:$db" >"$work/jobs.out" || fail "sdlive-jobs failed"
check sdlive-jobs "$work/jobs.out" "worker=$worker_shown age_ms=" "holder=$holder_shown generation=1"

"$jobs" --store "sqlite:$db" --watch --count 2 >"$work/watch.out" || fail "sdlive-jobs --watch failed"
check "sdlive-jobs --watch" "$work/watch.out" "worker $worker_shown, " "held by $holder_shown, generation 1"

"$jobs" --store "sqlite:$db" --lease "$(printf 'l\xc2\x9b\xff')" >"$work/lease-arg.out" || fail "sdlive-jobs --lease failed"
check "sdlive-jobs --lease" "$work/lease-arg.out" 'lease=l\xc2\x9b\xff held=no'

"$cluster" --store "sqlite:$db" --inspect >"$work/inspect.out" || fail "sdlive-cluster --inspect failed"
check "sdlive-cluster --inspect" "$work/inspect.out" "holder=$holder_shown generation=1"

"$jobs_inspect" "sqlite:$db" >"$work/jobs-inspect.out" || fail "jobs-inspect failed"
check jobs-inspect "$work/jobs-inspect.out" "holder=$holder_shown generation=1"

# The etcd lease key's value, from a JSON gateway of our own.
if "$cluster" --help | grep -q -- '--lease-store'; then
  /usr/bin/python3 - "$etcd_hex" "$work/port" >"$work/gateway.out" 2>&1 <<'PY' &
import base64, http.server, json, sys
value = bytes.fromhex(sys.argv[1])
answer = json.dumps({
    "header": {"revision": "9"}, "count": "1",
    "kvs": [{"key": base64.b64encode(b"sdlive/lease/cluster").decode(), "value": base64.b64encode(value).decode(),
             "create_revision": "7", "mod_revision": "7", "version": "1", "lease": "4242"}]}).encode()
class Gateway(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
server = http.server.HTTPServer(("127.0.0.1", 0), Gateway)
open(sys.argv[2] + ".tmp", "w").write(str(server.server_address[1]))
__import__("os").rename(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
PY
  pids+=($!)
  disown
  wait_for 5000 "the fake etcd gateway" test -s "$work/port"
  "$cluster" --store "sqlite:$db" --lease-store "etcd:http://127.0.0.1:$(cat "$work/port")" --inspect \
    >"$work/inspect-etcd.out" || fail "sdlive-cluster --inspect with etcd failed"
  check "sdlive-cluster --inspect (etcd)" "$work/inspect-etcd.out" "holder=$etcd_shown generation=7"
else
  echo "sdlive-cluster built without etcd: its --inspect of an etcd lease not run"
fi
# The leader example's --inspect, on the same hostile holder under its own
# lease name.
if [[ -n $leader ]]; then
  /usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE leases SET name = ? WHERE name = ?", ("leader-example", "cluster")); c.commit()' "$db" ||
    fail "could not rename the lease"
  "$leader" --store "sqlite:$db" --inspect >"$work/leader.out" || fail "sdlive-leader-example --inspect failed"
  check "sdlive-leader-example --inspect" "$work/leader.out" "holder=$holder_shown generation=1"
fi
((failed == 0)) || fail "$failed of the tools' outputs above carry what a terminal acts on"
echo "PASS: names from the store and from etcd reach stdout escaped"
