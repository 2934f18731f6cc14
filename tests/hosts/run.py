#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""One seeded nemesis run across test hosts: PostgreSQL primary and
streaming replica, three cluster members and two workers, each on a
network namespace of its own; a schedule of nemeses drawn from the seed;
the history written to OUT/history.jsonl and checked by checker.py.

  run.py --bin-dir DIR [--seed N] [--duration S] [--nemeses a,b,...]
         [--async] [--shipped-defaults] [--latency-run S] [--out DIR] [--keep]

Exit 0: the checker found the history clean; 1: it did not (or the run
broke); 77: this machine cannot make namespaces (not root, no ip netns).
Under CI=true a skip is a failure (exit 1)."""

import argparse
import glob
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checker  # noqa: E402
import hostnet  # noqa: E402
import nemesis  # noqa: E402
import pgstore  # noqa: E402
import procs  # noqa: E402
from history import History  # noqa: E402

MEMBERS = (("m1", 21), ("m2", 22), ("m3", 23))
WORKERS = (("w1", 31), ("w2", 32))
STATUS_LEADER = re.compile(r"^leader \(generation (\d+)\)")


class Config:
    lease_ms = 3000
    poll_ms = 500
    watchdog_ms = 10000  # the shipped WatchdogSec: above the longest store call (lock timeout + 4 s)
    maintenance_rate = 40
    garbage_per_second = 60  # with --latency-run: above maintenance_rate, so the pass never runs out of work
    seed_inventory = 20000
    jobs = 2000
    job_usec = 20000
    delay_ms = 200
    jitter_ms = 50
    loss_pct = 5
    sync = True
    latency_on = "all"
    cut_s = 0  # leader-cut-store: 0 = drawn from the seed
    gap_leases = (0.5, 1.5)  # quiet between nemeses after the recovery, in leases
    shipped_defaults = False  # the daemons' own lease, poll and peer timeouts instead
    # Scaled peer timeouts (worker and coordinator): a second reaps a cut
    # worker quickly. A latency run uses a lease instead: with 400 ms round
    # trips and 5 % loss, one retransmission alone outlasts a second.
    peer_timeout_ms = 1000

    def use_shipped_defaults(self):
        """The times a user gets without options: lease 15 s, election
        poll 2 s, the coordinator's and the worker's own peer timeouts
        (the watchdog is the shipped WatchdogSec already)."""
        self.shipped_defaults = True
        self.lease_ms, self.poll_ms = 15000, 2000


def skip(why):
    print("SKIP: %s" % why)
    if os.environ.get("CI") == "true":
        print("FAIL: a skip under CI=true is a failure")
        sys.exit(1)
    sys.exit(77)


class Run:
    def __init__(self, args, cfg):
        self.args, self.cfg = args, cfg
        self.bin_dir = os.path.abspath(args.bin_dir)
        self.root = tempfile.mkdtemp(prefix="sdlive-hosts-%d." % os.getpid())
        os.chmod(self.root, 0o755)
        self.out = os.path.abspath(args.out or os.path.join(self.root, "out"))
        os.makedirs(self.out, exist_ok=True)
        self.history = History(os.path.join(self.out, "history.jsonl"))
        self.net = None
        self.procs = {}
        self.watchers = []
        self.members_order = [m for m, _ in MEMBERS]
        self.workers_order = [w for w, _ in WORKERS]

    def bin(self, name):
        if name == "netdelay":
            return os.path.join(self.bin_dir, "tests", "hosts", "netdelay")
        sub = {"sdlive-cluster": "cluster", "sdlive-worker": "worker"}[name]
        return os.path.join(self.bin_dir, "examples", sub, name)

    def sleep(self, seconds):
        time.sleep(max(0.0, seconds))

    def current_leader(self, timeout=None):
        """The member whose last STATUS= says it leads, with the highest
        generation; waits up to timeout (default 4 leases) for one."""
        deadline = time.monotonic() + (timeout if timeout is not None else 4 * self.cfg.lease_ms / 1000)
        while True:
            best = (None, 0)
            for m in self.members_order:
                p = self.procs[m]
                st = p.notify.last_status if p.notify and p.alive() else None
                mo = STATUS_LEADER.match(st or "")
                if mo and int(mo.group(1)) > best[1]:
                    best = (m, int(mo.group(1)))
            if best[0] or time.monotonic() > deadline:
                if not best[0]:
                    self.history.add("no-leader", seconds=timeout)
                return best
            time.sleep(0.05)

    def wait_status(self, member, pattern, timeout):
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while time.monotonic() < deadline:
            st = self.procs[member].notify.last_status or ""
            if rx.search(st):
                return True
            time.sleep(0.02)
        return False

    # --- setup ----------------------------------------------------------
    def setup(self):
        removed = hostnet.clean_leftovers()
        for d in glob.glob(os.path.join(tempfile.gettempdir(), "sdlive-hosts-*.*")):
            m = re.match(r"sdlive-hosts-(\d+)\.", os.path.basename(d))
            if m and int(m.group(1)) != os.getpid() and not os.path.exists("/proc/" + m.group(1)):
                shutil.rmtree(d, ignore_errors=True)
        if removed:
            self.history.note("removed leftovers of a killed run: %s" % " ".join(removed))
        self.net = hostnet.Net()
        self.net.add_host("pg1", 10)
        self.net.add_host("pg2", 11)
        for name, octet in MEMBERS + WORKERS:
            self.net.add_host(name, octet)
        self.history.note("hosts: %s" % " ".join("%s=%s" % kv for kv in self.net.hosts.items()))
        self.primary = pgstore.Server(self.net, "pg1", self.root)
        self.replica = pgstore.Server(self.net, "pg2", self.root)
        self.primary.init_primary(self.cfg.sync)
        self.replica.init_replica(self.primary, self.cfg.sync)
        self.primary.wait_streaming()
        if self.cfg.sync:
            self.primary.set_sync(True)
        else:
            # Members refuse to lead on a primary that streams only
            # asynchronously (docs/store.md, "Replication") unless the
            # database declares it acceptable: declared here, so that an
            # asynchronous run measures what a failover then loses.
            self.primary.psql("ALTER DATABASE sdlive SET sdlive.accept_async_standbys = on")
        self.store_url = pgstore.store_url([self.primary, self.replica])
        self.history.note("store %s (%s replication)" % (self.store_url, "synchronous" if self.cfg.sync
                                                        else "asynchronous"))
        self.pki = procs.make_pki(self.root, {m: self.net.hosts[m] for m in self.members_order},
                                  self.workers_order)
        for m in self.members_order:
            # m3 runs on a monotonic clock a day ahead of everyone's.
            self.procs[m] = procs.member(self, m, self.cfg, 86400 if m == "m3" else 0)
        for w in self.workers_order:
            self.procs[w] = procs.worker(self, w, self.cfg)
        self.procs["m1"].start()
        if not self.current_leader(timeout=60)[0]:
            raise RuntimeError("no first leader within 60 s")
        for s in (self.primary, self.replica):
            w = procs.LeaseWatcher(self, s)
            w.start()
            self.watchers.append(w)
        for m in self.members_order[1:] + self.workers_order:
            self.procs[m].start()
        if self.args.latency_run:
            w = procs.GarbageFeeder(self, self.primary, self.cfg.garbage_per_second)
            w.start()
            self.watchers.append(w)

    def rebuild_replica(self):
        old = self.replica
        old.stop()
        shutil.rmtree(old.data, ignore_errors=True)
        old.init_replica(self.primary, self.cfg.sync)
        w = procs.LeaseWatcher(self, old)
        w.start()
        self.watchers.append(w)

    # --- the end --------------------------------------------------------
    def settle(self):
        """Heal everything, resume everything, and give the jobs time to
        finish: a run that never completes has lost jobs."""
        for h in list(self.net.hosts):
            self.net.heal(h)
        for p in self.procs.values():
            if p.alive():
                os.kill(p.p.pid, signal.SIGCONT)
        deadline = time.monotonic() + self.args.settle
        while time.monotonic() < deadline:
            out = self.primary.psql("SELECT count(*) FROM runs WHERE done_count < total").strip()
            if out == "0":
                break
            time.sleep(0.5)
        self.history.note("settled")

    def dump_store(self):
        p = self.primary
        for line in p.psql("SELECT id, holder, generation, at, what FROM write_log ORDER BY id").splitlines():
            f = line.split("\t")
            self.history.add("write", id=int(f[0]), holder=f[1], generation=int(f[2]), at_us=int(f[3]),
                             what=f[4])
        q = ("SELECT r.id, r.total, r.done_count, count(*) FILTER (WHERE j.status = 'done'),"
             " count(*) FILTER (WHERE j.status <> 'done'), count(j.job),"
             " count(*) FILTER (WHERE j.executions > 1),"
             " count(*) FILTER (WHERE j.status = 'pending'), count(*) FILTER (WHERE j.status = 'assigned')"
             " FROM runs r LEFT JOIN jobs j ON j.run = r.id GROUP BY r.id ORDER BY r.id")
        for line in p.psql(q).splitlines():
            f = [int(x) for x in line.split("\t")]
            self.history.add("run", id=f[0], total=f[1], done_count=f[2], done_jobs=f[3], unfinished=f[4],
                             jobs=f[5], rerun=f[6], pending=f[7], assigned=f[8])

    def teardown(self):
        for name in self.workers_order + self.members_order:
            if name in self.procs:
                self.procs[name].stop()
        for w in self.watchers:
            w.stop()
        if self.net:
            self.net.destroy()


def schedule(run, rng, names, duration, count):
    """Nemeses one after another for `duration` seconds, or exactly
    `count` of them."""
    ns = nemesis.Nemeses(run)
    end = time.monotonic() + duration
    done = 0
    while (done < count) if count else (time.monotonic() < end - 2 * run.cfg.lease_ms / 1000):
        done += 1
        run.sleep(rng.uniform(*run.cfg.gap_leases) * run.cfg.lease_ms / 1000)
        name = rng.choice(names)
        if not run.current_leader()[0]:
            run.history.note("no leader: nemesis %s not started" % name)
            continue
        nemesis.CATALOG[name](ns, rng, run.cfg)
        # Recovery: a leader again before the next nemesis.
        run.current_leader()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", required=True, help="the build directory")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--duration", type=float, default=150, help="seconds of nemeses")
    ap.add_argument("--count", type=int, default=0, help="exactly N nemeses (instead of --duration)")
    ap.add_argument("--jobs", type=int, default=Config.jobs, help="jobs in the run the first leader creates")
    ap.add_argument("--nemeses", default=",".join(n for n in nemesis.CATALOG if n != "latency"))
    ap.add_argument("--async", dest="async_", action="store_true",
                    help="asynchronous replication, declared acceptable to the members")
    ap.add_argument("--latency-run", type=float, default=0,
                    help="instead of a schedule: S seconds quiet, then S seconds of latency and loss")
    ap.add_argument("--latency-quiet", type=float, default=None,
                    help="with --latency-run: how long the quiet part lasts (default as long as the latency)")
    ap.add_argument("--cut-seconds", type=float, default=0,
                    help="how long leader-cut-store lasts (default: 2 to 3 leases, seeded)")
    ap.add_argument("--latency-on", choices=("all", "members"), default="all",
                    help="whose outgoing packets the latency nemesis holds (default all hosts)")
    ap.add_argument("--sigpipe-default", action="store_true",
                    help="start the daemons with SIGPIPE's default action (a shell's), not ignored (systemd's)")
    ap.add_argument("--shipped-defaults", action="store_true",
                    help="the daemons' shipped times (lease 15 s, poll 2 s, their peer timeouts), not scaled ones")
    ap.add_argument("--settle", type=float, default=60)
    ap.add_argument("--out", default=None)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    why = hostnet.available()
    if why:
        skip(why)
    cfg = Config()
    cfg.sync = not args.async_
    cfg.cut_s = args.cut_seconds
    cfg.jobs = args.jobs
    cfg.latency_on = args.latency_on
    if args.latency_run:
        cfg.peer_timeout_ms = cfg.lease_ms
    if args.shipped_defaults:
        cfg.use_shipped_defaults()
    if args.seed is None and os.environ.get("SDLIVE_HOSTS_SEED"):
        args.seed = int(os.environ["SDLIVE_HOSTS_SEED"])
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2 ** 31)
    names = [n for n in args.nemeses.split(",") if n]
    for n in names:
        if n not in nemesis.CATALOG:
            ap.error("unknown nemesis %s (known: %s)" % (n, ", ".join(nemesis.CATALOG)))
    run = Run(args, cfg)
    run.history.add("meta", seed=seed, lease_ms=cfg.lease_ms, poll_ms=cfg.poll_ms, watchdog_ms=cfg.watchdog_ms,
                    sync=cfg.sync, nemeses=names, duration=args.duration, t0_rt=int(run.history.rt0 * 1000))
    run.history.note("seed %d (replay: --seed %d)" % (seed, seed))
    rng = random.Random(seed)
    status = 1

    def terminated(sig, frame):
        raise SystemExit("terminated by signal %d" % sig)
    signal.signal(signal.SIGTERM, terminated)
    try:
        run.setup()
        if args.latency_run:
            run.sleep(args.latency_run if args.latency_quiet is None else args.latency_quiet)
            nemesis.Nemeses(run).latency(rng, cfg, seconds=args.latency_run)
            run.sleep(2)
        else:
            schedule(run, rng, names, args.duration, args.count)
        run.settle()
        run.dump_store()
    except (Exception, SystemExit) as e:  # the run broke: say where, keep the history
        run.history.note("run broke: %r" % e)
        import traceback
        traceback.print_exc()
        status = 2
    finally:
        run.teardown()
        run.history.close()
    report = checker.check(checker.load(run.history.path))
    print(report.text())
    print("seed %d; history %s" % (seed, run.history.path))
    if status == 2 or not report.ok:
        status = 1
    else:
        status = 0
    if not args.keep and (status == 0 or args.out):
        shutil.rmtree(run.root, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
