#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The checker on made-up histories: a clean one passes, and each planted
anomaly (two holders of one generation, a write accepted after its
generation was deposed, generations reused after a failover, a lost job,
a doubly counted job, a forgotten job, a nemesis that did nothing, a
healthy member silent past its watchdog) is reported, by name."""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checker  # noqa: E402

T0_RT = 1_800_000_000_000  # ms since the epoch at t = 0


def ev(t, kind, **f):
    e = {"t": t, "rt": T0_RT + t, "kind": kind}
    e.update(f)
    return e


def status(t, src, text):
    return ev(t, "status", src=src, text=text)


def lease(t, gen, holder, server="pg1", primary=True, done=0, lease_ms=3000):
    us = (T0_RT + t) * 1000
    return ev(t, "lease", server=server, store_us=us, primary=primary, holder=holder, generation=gen,
              expires_us=us + lease_ms * 1000, done_count=done, done_jobs=done)


def write(i, t, gen, holder):
    return ev(90_000, "write", id=i, holder=holder, generation=gen, at_us=(T0_RT + t) * 1000, what="blob")


def clean_history():
    """m1 leads generation 1; the nemesis cuts it from the store at 10 s; m2
    leads generation 2 from 12.5 s; every job done once."""
    h = [ev(0, "meta", seed=7, lease_ms=3000, poll_ms=500, watchdog_ms=2000, sync=True, nemeses=["x"],
            duration=60, t0_rt=T0_RT)]
    h += [status(1000, "m1", "leader (generation 1)"), status(1100, "m2", "standby: lease held by m1")]
    h += [lease(t, 1, "m1", done=t // 1000) for t in range(1000, 10_000, 500)]
    h += [ev(10_000, "nemesis", name="leader-cut-store", phase="start", target="m1", generation=1, seconds=6)]
    h += [status(11_000, "m1", "standby: store unavailable"), status(12_500, "m2", "leader (generation 2)")]
    h += [lease(t, 2, "m2", done=10 + t // 1000) for t in range(12_500, 30_000, 500)]
    h += [ev(16_000, "nemesis", name="leader-cut-store", phase="end", target="m1", dropped=40)]
    for src in ("m1", "m2", "m3"):
        h += [ev(t, "pet", src=src) for t in range(0, 30_000, 333)]
        h.append(ev(30_100, "proc", src=src, what="exit", status=0))
    h += [write(i, 1000 + 10 * i, 1, "m1") for i in range(1, 500)]
    h += [write(1000 + i, 12_600 + 10 * i, 2, "m2") for i in range(1, 500)]
    h.append(ev(90_000, "run", id=1, total=100, done_count=100, done_jobs=100, unfinished=0, jobs=100, rerun=2))
    return sorted(h, key=lambda e: e["t"])


class CheckerTest(unittest.TestCase):
    def verdict(self, h):
        return checker.check(sorted(h, key=lambda e: e["t"]))

    def assertViolation(self, h, needle):
        r = self.verdict(h)
        self.assertFalse(r.ok, "the checker passed a history with: " + needle)
        self.assertTrue(any(needle in v for v in r.violations), "no '%s' in %s" % (needle, r.violations))

    def test_clean_history_passes_and_measures(self):
        r = self.verdict(clean_history())
        self.assertTrue(r.ok, r.text())
        text = r.text()
        self.assertIn("leader-cut-store                 1     2500     2500", text)
        # m1 said it led until 11 s; its lease could expire at 9.5 s + 3 s.
        self.assertIn("margin (expiry - last act, ms): min 1500", text)

    def test_cut_leader_acting_after_its_lease_expired(self):
        h = [status(14_000, "m1", "standby: store unavailable") if e["kind"] == "status" and e["t"] == 11_000
             else e for e in clean_history()]
        self.assertViolation(h, "leader m1 (generation 1) acted until 4000 ms after the cut, 1500 ms after its lease")

    def test_coordinator_handing_out_jobs_after_its_lease_expired(self):
        h = clean_history() + [ev(13_000, "log", src="m1", text="<6>" + checker.COORDINATOR_STOPS),
                               ev(15_000, "log", src="m1", text="<6>coordinator: term over: 9 jobs assigned")]
        self.assertViolation(h, "leader m1 (generation 1) acted until 3000 ms after the cut, 500 ms after its lease")

    def test_coordinator_stopping_in_time_ends_its_acting(self):
        # Handing out stopped at 10.5 s; joining its threads took until 15 s.
        h = clean_history() + [ev(10_500, "log", src="m1", text="<6>" + checker.COORDINATOR_STOPS),
                               ev(15_000, "log", src="m1", text="<6>coordinator: term over: 9 jobs assigned")]
        r = self.verdict(h)
        self.assertTrue(r.ok, r.text())
        self.assertIn("margin (expiry - last act, ms): min 1500", r.text())

    def test_two_holders_of_one_generation(self):
        h = clean_history() + [status(20_000, "m3", "leader (generation 2)")]
        self.assertViolation(h, "generation 2 has 2 holders")

    def test_write_after_deposition(self):
        h = clean_history() + [write(5000, 13_000, 1, "m1")]
        self.assertViolation(h, "write(s) of generation 1 accepted after a newer generation was granted")

    def test_generations_reused_after_failover(self):
        h = clean_history() + [lease(31_000, 1, "m1", server="pg2", done=40),
                               lease(32_000, 2, "m2", server="pg2", done=40)]
        self.assertViolation(h, "generation went back from 2")

    def test_a_replica_behind_is_not_a_reuse(self):
        h = clean_history() + [lease(31_000, 1, "m1", server="pg2", primary=False, done=3)]
        self.assertTrue(self.verdict(h).ok)

    def test_lost_job(self):
        h = [e for e in clean_history() if e["kind"] != "run"]
        h.append(ev(90_000, "run", id=1, total=100, done_count=99, done_jobs=99, unfinished=1, jobs=100, rerun=0))
        self.assertViolation(h, "1 of 100 jobs lost")

    def test_lost_jobs_say_where_they_stayed(self):
        h = [e for e in clean_history() if e["kind"] != "run"]
        h.append(ev(90_000, "run", id=1, total=100, done_count=97, done_jobs=97, unfinished=3, jobs=100, rerun=0,
                    pending=2, assigned=1))
        self.assertViolation(h, "3 of 100 jobs lost (not done after the settle; 2 pending, 1 assigned)")

    def test_job_counted_twice(self):
        h = [e for e in clean_history() if e["kind"] != "run"]
        h.append(ev(90_000, "run", id=1, total=100, done_count=101, done_jobs=100, unfinished=0, jobs=100, rerun=1))
        self.assertViolation(h, "counted twice")

    def test_recorded_job_forgotten(self):
        h = clean_history() + [lease(30_500, 2, "m2", server="pg2", done=5)]
        self.assertViolation(h, "recorded jobs forgotten")

    def test_no_jobs_at_all(self):
        h = [e for e in clean_history() if e["kind"] != "run"]
        self.assertViolation(h, "no job run in the store")

    def test_nemesis_that_did_nothing(self):
        h = [dict(e, dropped=0) if e["kind"] == "nemesis" and e["phase"] == "end" else e for e in clean_history()]
        self.assertViolation(h, "dropped no packet")

    def test_healthy_member_silent_past_watchdog(self):
        h = [e for e in clean_history() if not (e["kind"] == "pet" and e["src"] == "m3" and 5000 < e["t"] < 8000)]
        self.assertViolation(h, "m3 sent no keepalive")

    def test_member_hung_until_the_end(self):
        h = [e for e in clean_history() if not (e["kind"] == "pet" and e["src"] == "m3" and e["t"] > 15_000)]
        self.assertViolation(h, "m3 sent no keepalive for its last 15")

    def test_member_died_on_its_own(self):
        h = clean_history() + [ev(20_000, "proc", src="m2", what="died", status=-11)]
        self.assertViolation(h, "m2 exited on its own at 20000 ms with status -11 (signal 11)")

    def test_failover_under_a_nemesis_that_deposes_nobody(self):
        h = clean_history() + [ev(20_000, "nemesis", name="standby-cut-store", phase="start", target="m3",
                                  generation=2, seconds=5),
                               status(22_000, "m1", "leader (generation 3)"),
                               ev(25_000, "nemesis", name="standby-cut-store", phase="end", target="m3", dropped=9)]
        self.assertViolation(h, "standby-cut-store at 20000 ms deposed a healthy leader")

    def test_teardown_release_after_the_last_nemesis_is_no_failover(self):
        h = clean_history() + [ev(20_000, "nemesis", name="standby-cut-store", phase="start", target="m3",
                                  generation=2, seconds=5),
                               ev(25_000, "nemesis", name="standby-cut-store", phase="end", target="m3", dropped=9),
                               ev(28_000, "harness", text="settled"),
                               status(29_000, "m3", "leader (generation 3)")]
        self.assertTrue(self.verdict(h).ok, self.verdict(h).text())

    def test_latency_that_starves_the_leader(self):
        h = clean_history() + [ev(20_000, "nemesis", name="latency", phase="start", target="all", generation=2),
                               ev(25_000, "nemesis", name="latency", phase="end", target="all", held=500)]
        # Writes before 20 s, none during.
        h = [e for e in h if not (e["kind"] == "write" and T0_RT * 1000 + 20_000_000 <= e["at_us"])]
        h += [write(3000 + i, 15_000 + 10 * i, 2, "m2") for i in range(500)]
        self.assertViolation(h, "fenced writes fell to 0.0/s")

    def test_latency_after_the_jobs_ran_out(self):
        """Job batches that ended before the latency do not count against
        it: the leader's own writes kept their rate."""
        h = clean_history() + [ev(20_000, "nemesis", name="latency", phase="start", target="all", generation=2),
                               ev(25_000, "nemesis", name="latency", phase="end", target="all", held=500)]
        h = [e for e in h if not (e["kind"] == "write" and T0_RT * 1000 + 15_000_000 <= e["at_us"])]
        h += [write(3000 + i, 15_000 + 10 * i, 2, "m2") for i in range(1000)]  # 100/s throughout
        h += [dict(write(5000 + i, 15_000 + 2 * i, 2, "m2"), what="jobs: 8 recorded, 0 requeued, 8 claimed")
              for i in range(2500)]  # 500/s, all before the latency
        r = self.verdict(h)
        self.assertTrue(r.ok, r.text())
        self.assertIn("fenced writes 100.0/s before, 100.0/s during (100 %); "
                      "job batches 500.0/s before, 0.0/s during", r.text())

    def test_cut_member_silence_is_measured_not_failed(self):
        h = [e for e in clean_history() if not (e["kind"] == "pet" and e["src"] == "m1" and 11_000 < e["t"] < 14_000)]
        r = self.verdict(h)
        self.assertTrue(r.ok, r.text())
        self.assertIn("keepalive gaps over WatchdogSec", r.text())


if __name__ == "__main__":
    unittest.main(verbosity=2)
