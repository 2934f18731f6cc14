#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks the history of a run across test hosts (history.py says what is
in it) and measures it.

Safety, each a violation that fails the run:
- one holder per generation (members' STATUS=, the store's lease rows and
  its write log together);
- no write accepted from a deposed generation: a write of generation g
  whose store time is later than the first sight of any g' > g;
- generations never go back, across a store failover too: on the servers
  that were primaries, in store time, the generation never decreases;
- no job lost (every run finished, nothing pending or assigned after the
  settle), none counted twice (a run's done count is its done jobs), no
  recorded job forgotten (a primary's done count never decreases);
- every nemesis did something (packets dropped or held, a process
  stopped), there was a leader to target, and no member stayed silent
  past its watchdog unless it was paused or not running.

Measured (printed): takeover per nemesis (p50, max), spurious failovers,
how long a leader cut from the store kept acting against when its lease
could expire on the store's clock, and the leader's own fenced write rate
(the maintenance pass; job batches apart) during a latency nemesis against
the same time before it.

  checker.py HISTORY.jsonl      exit 0 clean, 1 violations"""

import json
import re
import sys

LEADER = re.compile(r"^leader \(generation (\d+)\)")
DEPOSING = ("partition-host", "leader-cut-store", "asymmetric", "pause-partition", "kill-mid-write")
CUTS = ("partition-host", "leader-cut-store", "asymmetric")
DROPPING = ("partition-host", "leader-cut-store", "leader-cut-workers", "standby-cut-store", "asymmetric",
            "pause-partition", "pg-failover-lagging")


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def pct(values, p):
    v = sorted(values)
    if not v:
        return None
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


class Report:
    def __init__(self):
        self.violations = []
        self.lines = []

    @property
    def ok(self):
        return not self.violations

    def bad(self, text):
        self.violations.append(text)

    def say(self, text):
        self.lines.append(text)

    def text(self):
        out = list(self.lines)
        if self.violations:
            out.append("checker: %d violation(s):" % len(self.violations))
            out += ["  VIOLATION: " + v for v in self.violations]
        else:
            out.append("checker: clean")
        return "\n".join(out)


def leader_statuses(events):
    """(t, member, generation) for every STATUS= that says it leads."""
    out = []
    for e in events:
        if e["kind"] == "status":
            m = LEADER.match(e["text"])
            if m:
                out.append((e["t"], e["src"], int(m.group(1))))
    return out


def check_holders(events, r):
    holders = {}
    for t, src, g in leader_statuses(events):
        holders.setdefault(g, {}).setdefault(src, ("status", t))
    for e in events:
        if e["kind"] == "lease" and e["holder"] != "-" and e["generation"]:
            holders.setdefault(e["generation"], {}).setdefault(e["holder"], ("lease row", e["t"]))
        elif e["kind"] == "write":
            holders.setdefault(e["generation"], {}).setdefault(e["holder"], ("write log", e["t"]))
    for g in sorted(holders):
        if len(holders[g]) > 1:
            who = ", ".join("%s (%s at %d ms)" % (h, how, t) for h, (how, t) in sorted(holders[g].items()))
            r.bad("generation %d has %d holders: %s" % (g, len(holders[g]), who))
    return holders


def check_deposed_writes(events, r):
    grant = {}
    for e in events:
        if e["kind"] == "lease" and e.get("primary") and e["generation"]:
            grant[e["generation"]] = min(grant.get(e["generation"], e["store_us"]), e["store_us"])
        elif e["kind"] == "write":
            grant[e["generation"]] = min(grant.get(e["generation"], e["at_us"]), e["at_us"])
    gens = sorted(grant)
    newer_min = {}  # g -> earliest grant of any generation above g
    best = None
    for g in reversed(gens):
        newer_min[g] = best
        best = grant[g] if best is None else min(best, grant[g])
    late = {}
    for e in events:
        if e["kind"] != "write":
            continue
        first_newer = newer_min.get(e["generation"])
        if first_newer is not None and e["at_us"] > first_newer:
            late.setdefault(e["generation"], []).append(e)
    for g, ws in sorted(late.items()):
        w = ws[0]
        r.bad("%d write(s) of generation %d accepted after a newer generation was granted: first id %d by %s"
              " (%s) %.1f ms after" % (len(ws), g, w["id"], w["holder"], w["what"],
                                       (w["at_us"] - newer_min[g]) / 1000.0))


def check_generations_monotonic(events, r):
    rows = sorted((e for e in events if e["kind"] == "lease" and e.get("primary")), key=lambda e: e["store_us"])
    top, top_row = 0, None
    seen_back = set()
    done_top, done_row = 0, None
    for e in rows:
        if e["generation"] < top and (top, e["generation"]) not in seen_back:
            seen_back.add((top, e["generation"]))
            r.bad("generation went back from %d (%s at %d ms) to %d (%s at %d ms): generations reused"
                  % (top, top_row["server"], top_row["t"], e["generation"], e["server"], e["t"]))
        if e["generation"] >= top:
            top, top_row = e["generation"], e
        if e["done_count"] < done_top:
            r.bad("recorded jobs forgotten: the done count went from %d (%s at %d ms) to %d (%s at %d ms)"
                  % (done_top, done_row["server"], done_row["t"], e["done_count"], e["server"], e["t"]))
            done_top = e["done_count"]
        if e["done_count"] >= done_top:
            done_top, done_row = e["done_count"], e


def check_jobs(events, r):
    runs = [e for e in events if e["kind"] == "run"]
    if not runs:
        r.bad("no job run in the store: the jobs were never exercised")
    for e in runs:
        if e["unfinished"]:
            # Where they stayed tells the failures apart: pending with
            # nobody claiming them, or assigned to a claim nobody holds.
            where = ("; %d pending, %d assigned" % (e["pending"], e["assigned"])) if "pending" in e else ""
            r.bad("run %d: %d of %d jobs lost (not done after the settle%s)"
                  % (e["id"], e["unfinished"], e["total"], where))
        if e["done_count"] > e["done_jobs"] or e["done_count"] > e["total"]:
            r.bad("run %d: counted twice: done count %d, done jobs %d, total %d"
                  % (e["id"], e["done_count"], e["done_jobs"], e["total"]))
        elif e["done_count"] < e["done_jobs"]:
            r.bad("run %d: %d done jobs not counted" % (e["id"], e["done_jobs"] - e["done_count"]))
        if e["jobs"] != e["total"]:
            r.bad("run %d: %d jobs in the store for a run of %d" % (e["id"], e["jobs"], e["total"]))
    return runs


def nemesis_windows(events):
    """[(start event, end event or None, next start t or None)]"""
    starts = [e for e in events if e["kind"] == "nemesis" and e["phase"] == "start"]
    ends = [e for e in events if e["kind"] == "nemesis" and e["phase"] == "end"]
    out = []
    for i, s in enumerate(starts):
        end = next((e for e in ends if e["t"] >= s["t"] and e["name"] == s["name"]), None)
        nxt = starts[i + 1]["t"] if i + 1 < len(starts) else None
        out.append((s, end, nxt))
    return out


def check_nemeses(events, r):
    for s, end, _ in nemesis_windows(events):
        if end is None:
            r.bad("nemesis %s at %d ms never healed" % (s["name"], s["t"]))
        elif s["name"] in DROPPING and not end.get("dropped"):
            r.bad("nemesis %s at %d ms dropped no packet: it did not happen" % (s["name"], s["t"]))
        elif s["name"] == "latency" and not end.get("held"):
            r.bad("nemesis latency at %d ms held no packet: it did not happen" % s["t"])
    for e in events:
        if e["kind"] == "proc" and e["what"] == "died":
            r.bad("%s exited on its own at %d ms with status %d%s" % (
                e["src"], e["t"], e["status"], " (signal %d)" % -e["status"] if e["status"] < 0 else ""))
    for e in events:
        if e["kind"] == "no-leader":
            r.bad("no leader at %d ms within 4 leases" % e["t"])


def targeted(events):
    """src -> [(start, end)] of the nemeses aimed at it ("all": everyone)."""
    out = {}
    for s, end, _ in nemesis_windows(events):
        out.setdefault(s.get("target"), []).append((s["t"], end["t"] if end else float("inf")))
    return out


def check_watchdog(events, r, watchdog_ms):
    """A gap between keepalives longer than WatchdogSec: a violation for
    a member no nemesis aimed at (latency aims at all, and counts); for
    the target of a cut, measured and printed."""
    if not watchdog_ms:
        return
    aimed = targeted(events)
    cut_gaps = []
    last = {}
    excused = {}  # src -> True while paused or not running
    for e in events:
        src = e.get("src")
        if e["kind"] == "proc":
            if e["what"] in ("killed", "exit", "died") and src in last and not excused.get(src) \
                    and e["t"] - last[src] > watchdog_ms:
                r.bad("%s sent no keepalive for its last %d ms before it ended (WatchdogSec %d ms): hung"
                      % (src, e["t"] - last[src], watchdog_ms))
            if e["what"] == "signal" and e["sig"] == 19:
                excused[src] = True
            elif e["what"] in ("killed", "exit", "start", "died") or (e["what"] == "signal" and e["sig"] in (15, 18)):
                excused[src] = e["what"] != "start" and not (e["what"] == "signal" and e["sig"] == 18)
                last.pop(src, None)
        elif e["kind"] == "pet":
            gap = e["t"] - last[src] if src in last else 0
            hit = [w for w in aimed.get(src, []) if w[0] <= e["t"] and last.get(src, 0) <= w[1]]
            if gap > watchdog_ms and not excused.get(src) and hit:
                cut_gaps.append((src, gap, e["t"]))
            elif gap > watchdog_ms and not excused.get(src):
                r.bad("%s sent no keepalive for %d ms (WatchdogSec %d ms): a manager would kill it, at %d ms"
                      % (src, e["t"] - last[src], watchdog_ms, e["t"]))
            last[src] = e["t"]
    end = max((e["t"] for e in events), default=0)
    for src, t in sorted(last.items()):
        if not excused.get(src) and end - t > watchdog_ms:
            r.bad("%s sent no keepalive for its last %d ms (WatchdogSec %d ms): hung" % (src, end - t, watchdog_ms))

    if cut_gaps:
        r.say("keepalive gaps over WatchdogSec (%d ms) of members a nemesis aimed at: %s"
              % (watchdog_ms, ", ".join("%s %d ms at %d" % g for g in cut_gaps)))


def measure_takeovers(events, r):
    statuses = leader_statuses(events)
    per = {}
    # The last nemesis's window ends with the settle: the teardown's
    # releases that follow are no failovers.
    settled = next((e["t"] for e in events if e["kind"] == "harness" and e["text"] == "settled"), None)
    for s, end, nxt in nemesis_windows(events):
        nxt = nxt if nxt is not None else settled
        g = s.get("generation", 0)
        later = [(t, src, gen) for t, src, gen in statuses if t >= s["t"] and gen > g and (nxt is None or t < nxt)]
        if s["name"] in DEPOSING or s["name"].startswith("pg-failover"):
            if later:
                per.setdefault(s["name"], []).append(later[0][0] - s["t"])
            else:
                per.setdefault(s["name"], [])
                r.say("  %s at %d ms: no takeover before the next nemesis (generation stayed %d)"
                      % (s["name"], s["t"], g))
        else:
            gens = sorted({gen for _, _, gen in later})
            if gens:
                r.bad("%s at %d ms deposed a healthy leader: %d failover(s), generation %d -> %s"
                      % (s["name"], s["t"], len(gens), g, ", ".join(map(str, gens))))
                r.say("  %s at %d ms: %d spurious failover(s), generation %d -> %s"
                      % (s["name"], s["t"], len(gens), g, ", ".join(map(str, gens))))
            per.setdefault(s["name"] + " (failovers)", []).append(len(gens))
    r.say("takeover after each nemesis (ms from its start to a newer generation's leader):")
    r.say("  %-28s %5s %8s %8s" % ("nemesis", "runs", "p50", "max"))
    for name, vals in sorted(per.items()):
        r.say("  %-28s %5d %8s %8s" % (name, len(vals), pct(vals, 50), max(vals) if vals else None))
    return per


COORDINATOR_STOPS = "coordinator: stopping: no job is handed out from now on"


def measure_cut_leader(events, r, lease_ms, t0_rt):
    r.say("a leader cut from the store: when it stopped acting vs when its lease could expire (store clock):")
    r.say("  %-18s %6s %5s %9s %9s %9s %9s %9s" % ("nemesis", "at", "gen", "status", "last-wr", "coord",
                                                  "expiry", "margin"))
    margins = []
    for s, end, nxt in nemesis_windows(events):
        if s["name"] not in CUTS:
            continue
        target, g, t0 = s["target"], s["generation"], s["t"]
        # Until the target leads again (a later term is not this one).
        horizon = next((t for t, src, gen in leader_statuses(events) if src == target and gen > g and t > t0),
                       float("inf"))
        status_stop = next((e["t"] for e in events if e["kind"] == "status" and e["src"] == target
                            and t0 <= e["t"] < horizon and not e["text"].startswith("leader (generation %d)" % g)),
                           None)
        writes = [e["t"] for e in events if e["kind"] == "log" and e["src"] == target and t0 <= e["t"] < horizon
                  and ("maintenance write" in e["text"] or "write rejected" in e["text"])]
        # The coordinator hands out no job once it says it is stopping
        # (or once its term is over, the older line, said later).
        coord = next((e["t"] for e in events if e["kind"] == "log" and e["src"] == target and t0 <= e["t"] < horizon
                      and (COORDINATOR_STOPS in e["text"] or "coordinator: term over" in e["text"])), None)
        rows = [e for e in events if e["kind"] == "lease" and e.get("primary") and e["generation"] == g
                and e["holder"] == target]
        expiry = max(e["expires_us"] for e in rows) / 1000.0 - t0_rt if rows else None
        acted = [x for x in (status_stop, writes[-1] if writes else None, coord) if x is not None]
        stop = max(acted) if acted else None
        if status_stop is None:  # never said otherwise: it acted until the history ends
            stop = max(e["t"] for e in events if e["kind"] != "write" and e["kind"] != "run")
        margin = None if expiry is None or stop is None else int(expiry - stop)
        if margin is not None:
            margins.append(margin)
            if margin < 0:
                r.bad("%s at %d ms: leader %s (generation %d) acted until %d ms after the cut, %d ms after"
                      " its lease could expire on the store's clock" % (s["name"], t0, target, g, stop - t0,
                                                                        -margin))

        def rel(x):
            return "-" if x is None else "%d" % (x - t0)
        r.say("  %-18s %6d %5d %9s %9s %9s %9s %9s" % (s["name"], t0, g, rel(status_stop),
                                                       rel(writes[-1] if writes else None), rel(coord),
                                                       rel(expiry), "-" if margin is None else margin))
    if margins:
        r.say("  margin (expiry - last act, ms): min %d, p50 %d; negative = acted after its lease could expire"
              % (min(margins), pct(margins, 50)))
    return margins


def is_job_batch(write):
    """A job batch's write-log row ("jobs: n recorded, ..."), as against
    one of the leader's own fenced writes (the maintenance pass's)."""
    return write.get("what", "").startswith("jobs:")


def rate(stamps, a, b):
    return sum(1 for w in stamps if a <= w < b) / ((b - a) / 1e6) if b > a else 0


def measure_write_rate(events, r):
    """The leader's own fenced writes (the maintenance pass, the same work
    before and during) must keep at least half their rate under a latency
    nemesis. Job batches are counted apart and only printed: how many come
    depends on how many jobs are left, which a run's quiet part may have
    finished, and on the workers' own round trips."""
    own = sorted(e["at_us"] for e in events if e["kind"] == "write" and not is_job_batch(e))
    batches = sorted(e["at_us"] for e in events if e["kind"] == "write" and is_job_batch(e))
    t0_rt = next((e["t0_rt"] for e in events if e["kind"] == "meta"), 0)
    out = []
    for s, end, _ in nemesis_windows(events):
        if s["name"] != "latency" or end is None:
            continue
        a, b = (s["t"] + t0_rt) * 1000, (end["t"] + t0_rt) * 1000
        span = b - a
        # Before: as long a quiet stretch as the latency's, or what the
        # run had of one since the leader's first write.
        quiet = min(span, a - own[0]) if own and own[0] < a else 0
        during, before = rate(own, a, b), rate(own, a - quiet, a)
        out.append((before, during))
        if during < before / 2:
            r.bad("latency at %d ms: fenced writes fell to %.1f/s from %.1f/s (under half)" % (s["t"], during, before))
        r.say("latency at %d ms for %.0f s: fenced writes %.1f/s before, %.1f/s during (%.0f %%); "
              "job batches %.1f/s before, %.1f/s during"
              % (s["t"], span / 1e6, before, during, 100.0 * during / before if before else 0,
                 rate(batches, a - quiet, a), rate(batches, a, b)))
    return out


def check(events):
    r = Report()
    meta = next((e for e in events if e["kind"] == "meta"), {})
    r.say("seed %s, lease %s ms, poll %s ms, %s replication" % (meta.get("seed"), meta.get("lease_ms"),
                                                                 meta.get("poll_ms"),
                                                                 "synchronous" if meta.get("sync") else "asynchronous"))
    check_holders(events, r)
    check_deposed_writes(events, r)
    check_generations_monotonic(events, r)
    runs = check_jobs(events, r)
    check_nemeses(events, r)
    check_watchdog(events, r, meta.get("watchdog_ms"))
    gens = sorted({g for _, _, g in leader_statuses(events)})
    r.say("generations led: %s; fenced writes in the final store: %d; jobs: %s"
          % (", ".join(map(str, gens)) or "none", sum(1 for e in events if e["kind"] == "write"),
             "; ".join("run %d %d/%d done, %d rerun" % (e["id"], e["done_count"], e["total"], e["rerun"])
                       for e in runs) or "none"))
    measure_takeovers(events, r)
    measure_cut_leader(events, r, meta.get("lease_ms"), meta.get("t0_rt", 0))
    measure_write_rate(events, r)
    return r


def main(argv):
    if len(argv) != 2:
        print("usage: checker.py HISTORY.jsonl", file=sys.stderr)
        return 2
    report = check(load(argv[1]))
    print(report.text())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
