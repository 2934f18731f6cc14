/* SPDX-License-Identifier: MIT */
/*
 * jobs-bench: (1) jobs per second through the coordinator for trivial
 * ("noop") jobs with 1, 2 and 4 sdlive-worker processes on a unix socket,
 * SQLite store in a temporary directory; (2) reap latency of a frozen
 * (SIGSTOPped) worker against the configured timeout.
 *
 *   jobs-bench --worker BIN [--jobs N] [--dir DIR]
 *
 * DIR (default /tmp) holds the store: put it on the file system you care
 * about (tmpfs and disk differ by the cost of fsync).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sdlive.h>

#include "coordinator.h"
#include "store.h"

#define LEASE "cluster"
#define WORKERS_MAX 4

struct bench {
        const char *worker;
        const char *base;
        char dir[128], url[192], sock[192];
        struct store *store;
        struct store_fence fence;
        sdlive *d;
};

static int64_t now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void die(const char *what, const char *why) {
        fprintf(stderr, "jobs-bench: %s: %s\n", what, why);
        exit(1);
}

static void setup(struct bench *b) {
        snprintf(b->dir, sizeof(b->dir), "%s/jobs-bench-XXXXXX", b->base);
        if (!mkdtemp(b->dir))
                die("mkdtemp", strerror(errno));
        snprintf(b->url, sizeof(b->url), "sqlite:%s/store.db", b->dir);
        snprintf(b->sock, sizeof(b->sock), "%s/coordinator.sock", b->dir);
        if (store_open(b->url, &b->store) < 0)
                die("store", store_errmsg(NULL));
        b->fence = (struct store_fence) { .lease = LEASE, .holder = "bench" };
        if (store_lease_acquire(b->store, LEASE, "bench", 3600 * SDLIVE_USEC_PER_SEC, &b->fence.generation) < 0)
                die("lease", store_errmsg(b->store));
}

static void teardown(struct bench *b) {
        char cmd[192];

        store_close(b->store);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", b->dir);
        if (system(cmd) != 0)
                fprintf(stderr, "jobs-bench: could not remove %s\n", b->dir);
}

static pid_t spawn_worker(const struct bench *b, unsigned i, uint64_t timeout_ms) {
        char identity[32], sock[224], timeout[48], heartbeat[48];
        pid_t pid = fork();

        if (pid != 0)
                return pid;
        snprintf(identity, sizeof(identity), "--identity=bench-%u", i);
        snprintf(sock, sizeof(sock), "--coordinator=%s", b->sock);
        snprintf(timeout, sizeof(timeout), "--coordinator-timeout=%" PRIu64 "ms", timeout_ms);
        snprintf(heartbeat, sizeof(heartbeat), "--heartbeat=%" PRIu64 "ms", timeout_ms / 3);
        if (!freopen("/dev/null", "w", stderr))
                _exit(127);
        execl(b->worker, b->worker, sock, identity, timeout, heartbeat, "--reconnect-max=100ms",
              (char *) NULL);
        _exit(127);
}

static void stop_workers(pid_t *pids, unsigned n) {
        for (unsigned i = 0; i < n; i++) {
                kill(pids[i], SIGCONT);
                kill(pids[i], SIGTERM);
        }
        for (unsigned i = 0; i < n; i++)
                waitpid(pids[i], NULL, 0);
}

static struct coordinator *start(struct bench *b, uint64_t timeout_ms, uint32_t jobs) {
        struct coordinator_config cfg = {
                .store_url = b->url,
                .fence = b->fence,
                .unix_path = b->sock,
                .worker_timeout_usec = timeout_ms * SDLIVE_USEC_PER_MSEC,
                .heartbeat_usec = timeout_ms * SDLIVE_USEC_PER_MSEC / 3,
                .run_jobs = jobs,
        };
        struct coordinator *c;

        if (coordinator_start(&c, b->d, &cfg) < 0)
                die("coordinator", "cannot start");
        return c;
}

/* Seconds for `jobs` noop jobs through `workers` workers. */
static double throughput(struct bench *b, unsigned workers, uint32_t jobs) {
        pid_t pids[WORKERS_MAX];
        struct coordinator *c;
        struct coordinator_stats st;
        int64_t t0, t1;

        setup(b);
        c = start(b, 30000, jobs);
        t0 = now_us();
        for (unsigned i = 0; i < workers; i++)
                pids[i] = spawn_worker(b, i, 30000);
        do {
                usleep(1000);
                coordinator_stats(c, &st);
        } while (st.counted < jobs);
        t1 = now_us();
        stop_workers(pids, workers);
        coordinator_stop(c);
        teardown(b);
        return (double) (t1 - t0) / 1e6;
}

/* Milliseconds from SIGSTOP to the coordinator reaping the worker. The
 * worker is busy with a long run when frozen, so the last frame it sent
 * (a RESULT) is at most a job's time older than the SIGSTOP. */
static double reap_latency(struct bench *b, uint64_t timeout_ms) {
        struct coordinator_stats st;
        struct coordinator *c;
        pid_t pid;
        int64_t t0;

        setup(b);
        c = start(b, timeout_ms, 1000000);
        pid = spawn_worker(b, 0, timeout_ms);
        do {
                usleep(1000);
                coordinator_stats(c, &st);
        } while (st.counted < 1000);
        kill(pid, SIGSTOP);
        t0 = now_us();
        do {
                usleep(200);
                coordinator_stats(c, &st);
        } while (st.reaped < 1);
        double ms = (double) (now_us() - t0) / 1000;
        stop_workers(&pid, 1);
        coordinator_stop(c);
        teardown(b);
        return ms;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "worker", required_argument, NULL, 'w' },
                { "jobs", required_argument, NULL, 'n' },
                { "dir", required_argument, NULL, 'd' },
                {}
        };
        struct bench b = { .base = "/tmp" };
        uint32_t jobs = 20000;
        const unsigned counts[] = { 1, 2, 4 };
        const uint64_t timeouts[] = { 300, 1000, 3000 };
        int c;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (c) {
                case 'w': b.worker = optarg; break;
                case 'n': jobs = (uint32_t) strtoul(optarg, NULL, 10); break;
                case 'd': b.base = optarg; break;
                default:
                        fprintf(stderr, "usage: jobs-bench --worker BIN [--jobs N] [--dir DIR]\n");
                        return 2;
                }
        }
        if (!b.worker || jobs == 0) {
                fprintf(stderr, "usage: jobs-bench --worker BIN [--jobs N] [--dir DIR]\n");
                return 2;
        }
        if (sdlive_new(&b.d, NULL) < 0)
                die("sdlive_new", "failed");
        signal(SIGPIPE, SIG_IGN);
        /* The coordinator logs every connection; keep the table readable. */
        if (!freopen("/dev/null", "w", stderr))
                return 1;

        printf("Throughput: %u noop jobs, unix socket, SQLite store under %s, window 4\n\n", jobs, b.base);
        printf("| workers | seconds | jobs/s |\n|---:|---:|---:|\n");
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
                double s = throughput(&b, counts[i], jobs);
                printf("| %u | %.2f | %.0f |\n", counts[i], s, jobs / s);
                fflush(stdout);
        }
        printf("\nReap latency of a SIGSTOPped worker (heartbeat = timeout / 3)\n\n");
        printf("| timeout | reaped after | over the timeout |\n|---:|---:|---:|\n");
        for (size_t i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
                double ms = reap_latency(&b, timeouts[i]);
                printf("| %" PRIu64 " ms | %.1f ms | %+.1f ms |\n", timeouts[i], ms, ms - (double) timeouts[i]);
                fflush(stdout);
        }
        sdlive_free(b.d);
        return 0;
}
