# SPDX-License-Identifier: MIT
"""The nemeses: each breaks something for a while and then heals it, logs
"start" and "end" with what it did, and proves it happened (packets the
rules dropped, packets netdelay held, a process that was stopped or
killed, a server that was promoted). A nemesis that changed nothing is
recorded as such and fails the checker.

Every choice (which nemesis, its target, how long) comes from the run's
seeded random generator, so `--seed N` replays the schedule."""

import os
import re
import signal
import subprocess
import time


STORE_HOSTS = ("pg1", "pg2")


def dropped_packets(net, host):
    total = 0
    for chain in ("HOSTS-IN", "HOSTS-OUT"):
        out = net.exec_(net.ns(host), "iptables", "-L", chain, "-v", "-n", "-x", check=False)
        for line in out.splitlines():
            f = line.split()
            if len(f) > 3 and f[0].isdigit() and f[2] == "DROP":
                total += int(f[0])
    return total


class Nemeses:
    def __init__(self, run):
        self.run = run
        self.net = run.net
        self.h = run.history

    # --- helpers ----------------------------------------------------------
    def leader(self):
        return self.run.current_leader()

    def others(self, host):
        return [m for m in self.run.members_order if m != host]

    def hold(self, seconds):
        self.run.sleep(seconds)

    def start(self, name, **what):
        self.h.add("nemesis", name=name, phase="start", **what)
        self.h.note("nemesis %s: %s" % (name, " ".join("%s=%s" % kv for kv in sorted(what.items()))))

    def end(self, name, **what):
        self.h.add("nemesis", name=name, phase="end", **what)
        self.h.note("nemesis %s healed: %s" % (name, " ".join("%s=%s" % kv for kv in sorted(what.items()))))

    def heal_counted(self, hosts):
        n = sum(dropped_packets(self.net, h) for h in hosts)
        for h in hosts:
            self.net.heal(h)
        return n

    # --- the nemeses --------------------------------------------------------
    def partition_host(self, rng, cfg):
        target, gen = self.leader()
        d = rng.uniform(1.5, 3.0) * cfg.lease_ms / 1000
        self.start("partition-host", target=target, generation=gen, seconds=round(d, 2))
        self.net.isolate(target)
        self.hold(d)
        self.end("partition-host", target=target, dropped=self.heal_counted([target]))

    def leader_cut_store(self, rng, cfg):
        target, gen = self.leader()
        d = cfg.cut_s or rng.uniform(2.0, 3.0) * cfg.lease_ms / 1000
        self.start("leader-cut-store", target=target, generation=gen, seconds=round(d, 2))
        for pg in STORE_HOSTS:
            self.net.cut(target, pg)
        self.hold(d)
        self.end("leader-cut-store", target=target, dropped=self.heal_counted([target]))

    def leader_cut_workers(self, rng, cfg):
        target, gen = self.leader()
        d = rng.uniform(1.5, 3.0) * cfg.lease_ms / 1000
        self.start("leader-cut-workers", target=target, generation=gen, seconds=round(d, 2))
        for w in self.run.workers_order:
            self.net.cut(target, w)
        self.hold(d)
        self.end("leader-cut-workers", target=target, dropped=self.heal_counted([target]))

    def standby_cut_store(self, rng, cfg):
        leader, gen = self.leader()
        target = rng.choice(self.others(leader))
        d = rng.uniform(1.5, 3.0) * cfg.lease_ms / 1000
        self.start("standby-cut-store", target=target, generation=gen, seconds=round(d, 2))
        for pg in STORE_HOSTS:
            self.net.cut(target, pg)
        self.hold(d)
        self.end("standby-cut-store", target=target, dropped=self.heal_counted([target]))

    def asymmetric(self, rng, cfg):
        """Packets from the leader to the store are dropped, or those from
        the store to the leader: one way only."""
        target, gen = self.leader()
        way = rng.choice(["leader-to-store", "store-to-leader"])
        d = rng.uniform(2.0, 3.0) * cfg.lease_ms / 1000
        self.start("asymmetric", target=target, generation=gen, way=way, seconds=round(d, 2))
        for pg in STORE_HOSTS:
            self.net.drop(target, pg, "out" if way == "leader-to-store" else "in")
        self.hold(d)
        self.end("asymmetric", target=target, dropped=self.heal_counted([target]))

    def pause_partition(self, rng, cfg):
        """The leader paused, partitioned while paused, past its lease;
        healed, then resumed: what it does next must be fenced."""
        target, gen = self.leader()
        proc = self.run.procs[target]
        d = rng.uniform(1.5, 2.5) * cfg.lease_ms / 1000
        self.start("pause-partition", target=target, generation=gen, seconds=round(d, 2))
        proc.signal(signal.SIGSTOP)
        self.hold(0.2)
        self.net.isolate(target)
        self.hold(d)
        dropped = self.heal_counted([target])
        proc.signal(signal.SIGCONT)
        self.end("pause-partition", target=target, dropped=dropped, paused=1)

    def kill_mid_write(self, rng, cfg):
        """SIGKILL the leader while it writes (its maintenance pass runs
        throughout); the host stays up, the member is started again."""
        target, gen = self.leader()
        self.start("kill-mid-write", target=target, generation=gen)
        # Wait for a write in flight: a maintenance status newer than now.
        self.run.wait_status(target, r"^leader \(generation %d\): maintenance" % gen, 5)
        self.run.procs[target].kill()
        self.hold(rng.uniform(1.0, 2.0) * cfg.lease_ms / 1000)
        self.run.procs[target].start()
        self.end("kill-mid-write", target=target, killed=1)

    def latency(self, rng, cfg, seconds=None):
        """delay ± jitter and loss on the outgoing packets of every host
        (--latency-on all) or of the members only (members)."""
        d = seconds if seconds is not None else rng.uniform(2.0, 4.0) * cfg.lease_ms / 1000
        leader, gen = self.leader()
        seed = rng.randrange(1, 2 ** 32)
        self.start("latency", target="all", on=cfg.latency_on, generation=gen, seconds=round(d, 2), delay_ms=cfg.delay_ms,
                   jitter_ms=cfg.jitter_ms, loss_pct=cfg.loss_pct, seed=seed)
        procs = []
        hosts = [h for h in self.net.hosts if cfg.latency_on == "all" or h in self.run.members_order]
        for i, host in enumerate(hosts):
            out = open(os.path.join(self.run.root, "netdelay-%s.log" % host), "a")
            p = subprocess.Popen(self.net.cmd(host, self.run.bin("netdelay"), "--queue", "7",
                                              "--delay-ms", str(cfg.delay_ms), "--jitter-ms",
                                              str(cfg.jitter_ms), "--loss", str(cfg.loss_pct),
                                              "--seed", str(seed + i)),
                                 stdout=out, stderr=subprocess.STDOUT)
            procs.append((host, p, out))
        time.sleep(0.3)
        for host in hosts:
            self.net.queue(host, 7)
        self.hold(d)
        for host in hosts:
            self.net.heal(host)
        held = 0
        for host, p, out in procs:
            p.send_signal(signal.SIGTERM)
            p.wait(10)
            out.close()
            with open(out.name) as f:
                m = re.findall(r"packets (\d+) dropped", f.read())
            held += int(m[-1]) if m else 0
        self.end("latency", target="all", held=held)

    def pg_failover(self, rng, cfg):
        """The primary killed, the replica promoted; the old primary's host
        then becomes the new replica (a fresh base backup)."""
        leader, gen = self.leader()
        old, new = self.run.primary, self.run.replica
        self.start("pg-failover", target=old.host, generation=gen, sync=int(cfg.sync))
        old.kill()
        self.hold(rng.uniform(0.2, 1.0))
        new.promote()
        self.run.primary, self.run.replica = new, old
        self.h.note("promoted %s" % new.host)
        self.run.rebuild_replica()
        self.end("pg-failover", target=old.host, promoted=new.host)

    def pg_failover_lagging(self, rng, cfg):
        """The replica cut from the primary for a while (asynchronous: it
        falls behind; synchronous: the primary's commits wait), then the
        primary killed and the lagging replica promoted."""
        leader, gen = self.leader()
        old, new = self.run.primary, self.run.replica
        d = rng.uniform(1.0, 2.0) * cfg.lease_ms / 1000
        self.start("pg-failover-lagging", target=old.host, generation=gen, sync=int(cfg.sync), seconds=round(d, 2))
        self.net.cut(new.host, old.host)
        self.hold(d)
        dropped = dropped_packets(self.net, new.host)
        old.kill()
        self.net.heal(new.host)
        new.promote()
        self.run.primary, self.run.replica = new, old
        self.h.note("promoted %s after %.1f s cut from %s" % (new.host, d, old.host))
        self.run.rebuild_replica()
        self.end("pg-failover-lagging", target=old.host, promoted=new.host, dropped=dropped)

    def clock_step(self, rng, cfg):
        """A standby restarted with its monotonic and boot clocks stepped
        (a time namespace: offset from everyone else's), forward or back."""
        leader, gen = self.leader()
        target = rng.choice(self.others(leader))
        offset = rng.choice([-1, 1]) * rng.randrange(600, 86400)
        proc = self.run.procs[target]
        base = 2 * 86400  # never below zero when stepped back
        self.start("clock-step", target=target, generation=gen, offset_s=offset)
        proc.stop()
        proc.time_offset_s = base + offset
        proc.start()
        self.hold(cfg.lease_ms / 1000)
        self.end("clock-step", target=target, stepped=1)


CATALOG = {
    "partition-host": Nemeses.partition_host,
    "leader-cut-store": Nemeses.leader_cut_store,
    "leader-cut-workers": Nemeses.leader_cut_workers,
    "standby-cut-store": Nemeses.standby_cut_store,
    "asymmetric": Nemeses.asymmetric,
    "pause-partition": Nemeses.pause_partition,
    "kill-mid-write": Nemeses.kill_mid_write,
    "latency": Nemeses.latency,
    "pg-failover": Nemeses.pg_failover,
    "pg-failover-lagging": Nemeses.pg_failover_lagging,
    "clock-step": Nemeses.clock_step,
}
