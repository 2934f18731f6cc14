# shellcheck shell=bash
# The probes of cluster-failover-etcd.sh (sourced by it once its variables
# are set: lease_url, db): the leader key straight from etcd's JSON gateway,
# the SQLite store's write log and token mark.

# The leader key straight from etcd (etcd-faults.sh, which the test sources).
holder() { etcd_holder; }
generation() { etcd_generation; }
holder_is() { [[ $(holder) == "$1" ]]; }

# The write log and the token mark, read straight from the SQLite store.
wlog() {
  /usr/bin/python3 - "$db" "$@" <<'EOF'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=5)
what = sys.argv[2]
if what == "mark":
    row = db.execute("SELECT token FROM lease_tokens WHERE lease = 'cluster'").fetchone()
    print(row[0] if row else 0)
elif what == "late":  # entries of token A after the first entry of token B
    a, b = int(sys.argv[3]), int(sys.argv[4])
    first = db.execute("SELECT min(id) FROM write_log WHERE generation = ?", (b,)).fetchone()[0]
    print(db.execute("SELECT count(*) FROM write_log WHERE generation = ? AND id > ?",
                     (a, first if first is not None else 1 << 62)).fetchone()[0])
elif what == "count":
    print(db.execute("SELECT count(*) FROM write_log WHERE generation = ?", (int(sys.argv[3]),)).fetchone()[0])
elif what == "claims":  # one line per term: token, entries, claims, first entry's what
    terms = {}
    for gen, w in db.execute("SELECT generation, what FROM write_log WHERE lease = 'cluster' ORDER BY id"):
        t = terms.setdefault(gen, [0, 0, w])
        t[0] += 1
        t[1] += w == sys.argv[3]
    for gen in sorted(terms):
        print(gen, terms[gen][0], terms[gen][1], terms[gen][2], sep="\t")
EOF
}
mark_is() { [[ $(wlog mark) == "$1" ]]; }
