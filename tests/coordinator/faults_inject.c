/* SPDX-License-Identifier: MIT */
/* The faults a run takes, each checked to have taken effect. */
#include "faults.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* SIGSTOP the leader until the standby leads, then SIGCONT it: a write it
 * makes must be rejected by the fence. A SQLite leader paused inside a
 * write transaction keeps the store's write lock and nobody can take over
 * (under systemd its watchdog kills it; that is the kill scenario, not
 * this one), and a resumed leader may stop before making any write: then
 * the pause did not take effect; it is taken again with whoever leads. */
bool pause_leader(struct run *r) {
        for (int try = 1; try <= PAUSE_TRIES; try++) {
                uint64_t generation, next;
                int leader = wait_leader(r, &generation), other;
                struct proc *paused, *standby;
                struct log_mark locked, recovered, rejected;
                int64_t t0, took;

                if (leader < 0) {
                        fail(r, "no leader to pause");
                        return true;
                }
                other = 1 - leader;
                paused = &r->leaders[leader];
                standby = &r->leaders[other];
                if (!wait_until(r, 5000, jobs_in_flight, NULL)) {
                        if (run_complete(r))
                                return false;
                        fail(r, "no job in flight to pause %s on", paused->name);
                        return true;
                }
                locked = (struct log_mark) { standby, log_size(r, standby), STORE_LOCKED };
                recovered = (struct log_mark) { standby, locked.from, STORE_RECOVERED };
                rejected = (struct log_mark) { paused, log_size(r, paused), FENCE_REJECTED };
                kill(paused->pid, SIGSTOP);
                paused->stopped = true;
                t0 = now_ms();
                if (!wait_until(r, LEASE_MS + 2 * ELECTION_POLL_MS + 1000, has_leader, &other)) {
                        kill(paused->pid, SIGCONT);
                        paused->stopped = false;
                        /* The standby may have been in a streak of lock
                         * failures begun before the pause, whose later
                         * failures go unlogged: its end, once the leader
                         * runs again, says so. */
                        if (!logged_since(r, &locked) && !wait_until(r, 2000, logged_since, &recovered)) {
                                fail(r, "%s did not take over from the paused %s", standby->name,
                                     paused->name);
                                return true;
                        }
                        say("  %s was paused inside a write transaction (the store stayed locked): "
                            "resumed, to be paused again", paused->name);
                        continue;
                }
                took = now_ms() - t0;
                leader_index(r, &next);
                say("  %s leads now, %" PRId64 " ms after the pause (generation %" PRIu64 " -> %" PRIu64 ")",
                    standby->name, took, generation, next);
                kill(paused->pid, SIGCONT);
                paused->stopped = false;
                if (wait_until(r, 3000, logged_since, &rejected)) {
                        say("  %s resumed: its write was rejected by the fence", paused->name);
                        return true;
                }
                say("  %s resumed without a write rejected by the fence: to be paused again", paused->name);
        }
        fail(r, "the paused-leader fault did not take effect in %d tries", PAUSE_TRIES);
        return true;
}

/* SIGKILL of the leader while its writer waits inside a batch that has
 * claimed jobs and recorded RESULTs, not yet committed. */
bool kill_leader_in_batch(struct run *r) {
        uint64_t generation, next;
        struct log_mark mark;
        int leader, other, fd;

        if (run_complete(r))
                return false;
        leader = wait_leader(r, &generation);
        if (leader < 0) {
                fail(r, "no leader to kill");
                return true;
        }
        other = 1 - leader;
        mark = (struct log_mark) { &r->leaders[leader], log_size(r, &r->leaders[leader]), BATCH_PAUSED };
        fd = open(r->pause_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
                fail(r, "cannot create %s: %s", r->pause_file, strerror(errno));
                return true;
        }
        close(fd);
        if (!wait_until(r, 5000, logged_since, &mark)) {
                unlink(r->pause_file);
                if (run_complete(r))
                        return false;
                fail(r, "%s never paused inside a batch", r->leaders[leader].name);
                return true;
        }
        reap(&r->leaders[leader], SIGKILL);
        unlink(r->pause_file);
        r->leaders_killed++;
        r->batch_kills++;
        say("  %s killed inside a batch (jobs claimed and RESULTs recorded, not committed)",
            r->leaders[leader].name);
        if (!wait_until(r, 10000, has_leader, &other)) {
                fail(r, "%s never took over", r->leaders[other].name);
                return true;
        }
        leader_index(r, &next);
        say("  %s leads now (generation %" PRIu64 " -> %" PRIu64 ")", r->leaders[other].name,
            generation, next);
        spawn(r, &r->leaders[leader]);
        return true;
}

/* Injects fault f and sees it take effect. False when the run completed
 * before it could (nothing left to hit); a fault that went wrong fails the
 * run. */
bool inject(struct run *r, enum fault f, unsigned target) {
        struct proc *w = &r->workers[target % r->o->workers];
        struct held h = { .worker = w->name };
        char path[160];
        uint64_t generation, next;
        int leader, other;

        say("  fault: %s %s at %u/%u done", fault_names[f],
            f >= KILL_LEADER ? "leader" : w->name, done_count(r), r->o->jobs);
        switch (f) {
        case KILL_WORKER:
                if (!wait_holding(r, &h)) {
                        if (run_complete(r))
                                return false;
                        fail(r, "%s never held a job to lose", w->name);
                        break;
                }
                reap(w, SIGKILL);
                if (!wait_until(r, 10000, released, &h))
                        fail(r, "%s: %u jobs in flight when it died never requeued", w->name, h.n);
                sleep_ms(300); /* Restart=on-failure, RestartSec= */
                spawn(r, w);
                break;
        case STOP_WORKER:
                for (int try = 1; try <= FAULT_TRIES; try++) {
                        bool hit;

                        if (!wait_holding(r, &h)) {
                                if (run_complete(r))
                                        return false;
                                fail(r, "%s never held a job to freeze", w->name);
                                break;
                        }
                        kill(w->pid, SIGSTOP);
                        w->stopped = true;
                        hit = measure_reap(r, w, now_ms(), &h);
                        sleep_ms(500);
                        kill(w->pid, SIGCONT);
                        w->stopped = false;
                        if (hit)
                                break;
                        say("  %s held no job when frozen: resumed, to be frozen again", w->name);
                        if (try == FAULT_TRIES)
                                fail(r, "%s held no job in %d freezes", w->name, FAULT_TRIES);
                }
                break;
        case WEDGE_WORKER:
                snprintf(path, sizeof(path), "%s/wedge-%u", r->dir, target % r->o->workers);
                for (int try = 1; try <= FAULT_TRIES; try++) {
                        bool hit;

                        if (!wait_holding(r, &h)) {
                                if (run_complete(r))
                                        return false;
                                fail(r, "%s never held a job to wedge on", w->name);
                                break;
                        }
                        close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
                        hit = measure_reap(r, w, now_ms(), &h);
                        /* Standing in for the watchdog: kill, clear, restart. */
                        reap(w, SIGKILL);
                        unlink(path);
                        spawn(r, w);
                        if (hit)
                                break;
                        say("  %s held no job when wedged: restarted, to be wedged again", w->name);
                        if (try == FAULT_TRIES)
                                fail(r, "%s held no job in %d wedges", w->name, FAULT_TRIES);
                }
                break;
        case KILL_LEADER:
                if (run_complete(r))
                        return false;
                leader = wait_leader(r, &generation);
                if (leader < 0) {
                        fail(r, "no leader to kill");
                        break;
                }
                other = 1 - leader;
                reap(&r->leaders[leader], SIGKILL);
                r->leaders_killed++;
                if (!wait_until(r, 10000, has_leader, &other)) {
                        fail(r, "%s never took over", r->leaders[other].name);
                        break;
                }
                leader_index(r, &next);
                say("  %s leads now (generation %" PRIu64 " -> %" PRIu64 ")", r->leaders[other].name,
                    generation, next);
                spawn(r, &r->leaders[leader]);
                break;
        case STOP_LEADER:
                return pause_leader(r);
        case KILL_LEADER_IN_BATCH:
                return kill_leader_in_batch(r);
        default:
                break;
        }
        return true;
}
