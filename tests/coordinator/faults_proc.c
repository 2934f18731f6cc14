/* SPDX-License-Identifier: MIT */
/* The fault runs' processes (spawned, signalled, reaped), their logs, the
 * store's view of a run, and the waits on them. */
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

int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(int ms) {
        struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000 };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

void say(const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        vprintf(format, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
}

void fail(struct run *r, const char *format, ...) {
        va_list ap;

        printf("FAIL: ");
        va_start(ap, format);
        vprintf(format, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
        r->failed = true;
}

/* 64-bit xorshift: the same seed gives the same schedule everywhere. */
uint64_t rng_state;
uint64_t rng(void) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

void add_arg(struct proc *p, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        if (vasprintf(&p->argv[p->argc++], format, ap) < 0)
                abort();
        va_end(ap);
}

void spawn(struct run *r, struct proc *p) {
        char log[160];
        pid_t pid;

        snprintf(log, sizeof(log), "%s/%s.log", r->dir, p->name);
        pid = fork();
        if (pid < 0) {
                perror("fork");
                exit(2);
        }
        if (pid == 0) {
                int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
                        _exit(127);
                setpgid(0, 0);
                execv(p->argv[0], p->argv);
                _exit(127);
        }
        p->pid = pid;
        p->stopped = false;
}

void reap(struct proc *p, int sig) {
        if (p->pid <= 0)
                return;
        if (p->stopped)
                kill(p->pid, SIGCONT);
        kill(p->pid, sig);
        if (sig == SIGKILL || sig == SIGTERM) {
                int64_t deadline = now_ms() + 3000;
                while (waitpid(p->pid, NULL, WNOHANG) == 0) {
                        if (now_ms() > deadline) {
                                kill(p->pid, SIGKILL);
                                waitpid(p->pid, NULL, 0);
                                break;
                        }
                        sleep_ms(5);
                }
                p->pid = 0;
        }
        p->stopped = false;
}

void make_leader(struct run *r, int i) {
        struct proc *p = &r->leaders[i];
        const struct options *o = r->o;

        snprintf(p->name, sizeof(p->name), "leader-%c", 'a' + i);
        add_arg(p, "%s", o->cluster);
        add_arg(p, "--store=%s", r->url);
        add_arg(p, "--node=%s", p->name);
        add_arg(p, "--lease=%dms", LEASE_MS);
        add_arg(p, "--election-poll=%dms", ELECTION_POLL_MS);
        add_arg(p, "--maintenance-interval=1h");
        add_arg(p, "--coordinator-socket=%s", r->sock[i]);
        add_arg(p, "--worker-timeout=%dms", TIMEOUT_MS);
        add_arg(p, "--worker-heartbeat=%dms", HEARTBEAT_MS);
        add_arg(p, "--job-run=%" PRIu32, o->jobs);
        add_arg(p, "--job-payload=%s", o->payload);
}

void make_worker(struct run *r, unsigned i) {
        struct proc *p = &r->workers[i];

        snprintf(p->name, sizeof(p->name), "worker-%u", i);
        add_arg(p, "%s", r->o->worker);
        add_arg(p, "--coordinator=%s", r->sock[0]);
        add_arg(p, "--coordinator=%s", r->sock[1]);
        add_arg(p, "--identity=%s", p->name);
        add_arg(p, "--coordinator-timeout=%dms", TIMEOUT_MS);
        add_arg(p, "--heartbeat=%dms", HEARTBEAT_MS);
        add_arg(p, "--reconnect-max=300ms");
        add_arg(p, "--wedge-file=%s/wedge-%u", r->dir, i);
}

int leader_index(struct run *r, uint64_t *generation) {
        struct store_lease_info info;

        if (store_lease_read(r->store, LEASE, &info) < 0 || !info.held)
                return -1;
        if (generation)
                *generation = info.generation;
        for (int i = 0; i < 2; i++)
                if (strcmp(info.holder, r->leaders[i].name) == 0)
                        return i;
        return -1;
}

bool wait_until(struct run *r, int timeout_ms, bool (*cond)(struct run *, void *), void *arg) {
        int64_t deadline = now_ms() + timeout_ms;

        while (now_ms() < deadline) {
                if (cond(r, arg))
                        return true;
                sleep_ms(5);
        }
        return false;
}

bool has_leader(struct run *r, void *arg) {
        return leader_index(r, NULL) == *(int *) arg;
}

bool run_exists(struct run *r, void *arg) {
        struct store_run info;
        uint64_t ids[2];

        /* Runs of earlier rounds on a shared store are finished: the only
         * unfinished one is this round's. */
        if (store_runs_unfinished(r->store, ids, 2) < 1)
                return false;
        r->run = ids[0];
        return store_run_read(r->store, r->run, &info) >= 0;
}

uint32_t done_count(struct run *r) {
        struct store_run info;
        return store_run_read(r->store, r->run, &info) >= 0 ? info.done_count : 0;
}

/* The run is over: a fault now finds nothing in flight to hit. */
bool run_complete(struct run *r) {
        return done_count(r) >= r->o->jobs;
}

bool reached(struct run *r, void *arg) {
        return done_count(r) >= *(uint32_t *) arg;
}


void scan_held(struct run *r, struct held *h) {
        struct store_job j;

        h->n = 0;
        for (uint32_t i = 0; i < r->o->jobs && h->n < 64; i++)
                if (store_job_read(r->store, r->run, i, &j) >= 0 && j.status == STORE_JOB_ASSIGNED &&
                    strcmp(j.worker, h->worker) == 0) {
                        h->job[h->n] = i;
                        h->attempt[h->n++] = j.attempt;
                }
}

/* True once none of the jobs held at the fault is still in flight there. */
bool released(struct run *r, void *arg) {
        struct held *h = arg;
        struct store_job j;

        for (uint32_t i = 0; i < h->n; i++)
                if (store_job_read(r->store, r->run, h->job[i], &j) < 0 ||
                    (j.status == STORE_JOB_ASSIGNED && j.attempt == h->attempt[i] &&
                     strcmp(j.worker, h->worker) == 0))
                        return false;
        return true;
}

/* Waits until worker w holds at least one job in flight, so that a fault
 * has something to hit; fills h with them. */
bool wait_holding(struct run *r, struct held *h) {
        int64_t deadline = now_ms() + 10000;

        do {
                scan_held(r, h);
                if (h->n > 0)
                        return true;
                if (run_complete(r))
                        return false;
                sleep_ms(20);
        } while (now_ms() < deadline);
        return false;
}

/* After a worker froze or wedged at t0, measures how long until the
 * coordinator reaped it (its in-flight jobs requeued). RESULTs it sent just
 * before are let through first, so only jobs it really holds are watched.
 * False when it held none: there was no reap to time. */
bool measure_reap(struct run *r, struct proc *w, int64_t t0, struct held *h) {
        int64_t took;

        sleep_ms(50);
        scan_held(r, h);
        if (h->n == 0)
                return false;
        if (!wait_until(r, 10000, released, h)) {
                fail(r, "%s: %u in-flight jobs never requeued", w->name, h->n);
                return true;
        }
        took = now_ms() - t0;
        say("  %s reaped after %" PRId64 " ms (%u jobs requeued; bound %d ms)", w->name, took, h->n,
            TIMEOUT_MS + HEARTBEAT_MS + REAP_SLACK_MS);
        if (took > TIMEOUT_MS + HEARTBEAT_MS + REAP_SLACK_MS)
                fail(r, "%s reaped after %" PRId64 " ms, beyond timeout + one poll", w->name, took);
        if (took > r->reap_max_ms)
                r->reap_max_ms = took;
        return true;
}

/* Bytes in p's log so far: where to look for what it logs next. */
off_t log_size(struct run *r, const struct proc *p) {
        char path[160];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s.log", r->dir, p->name);
        return stat(path, &st) == 0 ? st.st_size : 0;
}


/* True once p's log holds text past offset from. */
bool logged_since(struct run *r, void *arg) {
        const struct log_mark *m = arg;
        char path[160], *line = NULL;
        size_t size = 0;
        bool found = false;
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s.log", r->dir, m->p->name);
        f = fopen(path, "re");
        if (!f)
                return false;
        if (fseeko(f, m->from, SEEK_SET) == 0)
                while (!found && getline(&line, &size, f) >= 0)
                        found = strstr(line, m->text) != NULL;
        free(line);
        fclose(f);
        return found;
}

/* Waits for a leader (one may be starting after an earlier fault): its
 * index, or -1 when none came within 10 s. */
int wait_leader(struct run *r, uint64_t *generation) {
        int64_t deadline = now_ms() + 10000;
        int leader;

        while ((leader = leader_index(r, generation)) < 0 && now_ms() < deadline)
                sleep_ms(20);
        return leader;
}

/* True while some job is in flight: a leader paused now has writes to make
 * when it resumes. */
bool jobs_in_flight(struct run *r, void *arg) {
        struct store_job j;

        (void) arg;
        if (run_complete(r))
                return false;
        for (uint32_t i = 0; i < r->o->jobs; i++)
                if (store_job_read(r->store, r->run, i, &j) >= 0 && j.status == STORE_JOB_ASSIGNED)
                        return true;
        return false;
}
