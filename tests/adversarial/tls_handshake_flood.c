/* SPDX-License-Identifier: MIT */
/*
 * tls-handshake-flood: the coordinator's TCP listener with TLS and client
 * certificates (in this process, on a SQLite store) under FLOOD_CONNECTIONS
 * connections that never send a byte, each reopened as soon as it is cut
 * off, while a worker with a valid certificate connects and serves jobs
 * (each takes it JOB_USEC; the flood runs in a child at nice 19, as on
 * the attacker's machine). Side by side in one run, printed and checked:
 * without a flood, under a flood from the worker's own address (a local
 * user on its host, a peer behind the same NAT), under a flood from one
 * other address, and under a flood spread over FLOOD_SOURCES other
 * addresses, the worker is served (its first ASSIGN) within SERVED_MAX_MS
 * of starting to connect, and its jobs flow at no less than half the rate
 * they flow without the flood.
 *
 *   tls-handshake-flood DIR
 * DIR holds ca.pem, coordinator.pem/.key (IP:127.0.0.1) and w1.pem/.key
 * (DNS:w1), as tls-handshake-flood.sh makes them. Exit status 0 when every
 * check passed, 1 otherwise, 2 bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "coordinator.h"
#include "coordinator_link.h"
#include "tls.h"

#define FLOOD_CONNECTIONS 1000
#define FLOOD_SOURCES 250
#define SERVED_MAX_MS 1000
#define MEASURE_MS 2000
/* The flood runs this long before the worker connects: every handshake
 * place it can take is taken. */
#define FLOOD_LEAD_MS 1000
#define JOB_USEC 4000
/* sdlive-worker's reconnect backoff: doubled after each failure. */
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define RUN_JOBS 100000
#define LEASE "cluster"

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool failed;
#define CHECK(cond, ...)                                  \
        do {                                              \
                if (!(cond)) {                            \
                        printf("FAIL: " __VA_ARGS__);     \
                        printf("\n");                     \
                        failed = true;                    \
                }                                         \
        } while (0)

static uint16_t port;

/* --- The flood ------------------------------------------------------- */

/* The flood runs in a child process at the lowest priority, as on the
 * attacker's own machine: what the test measures is what the flood costs
 * the coordinator, not the CPU the flooder itself burns here. */
struct flood_counts {
        _Atomic uint64_t opened, cut;
};

/* The worker's address; the other addresses are WORKER_ADDRESS + 1 onward. */
#define WORKER_ADDRESS 0x7f000001u

struct flood {
        uint32_t first;   /* the flood's addresses: first .. first + sources - 1 */
        unsigned sources;
        pid_t pid;
        struct flood_counts *counts; /* shared with the child */
        int epfd;
        int fds[FLOOD_CONNECTIONS];
};

/* A connection from f->first + i % sources that will never send. */
static int flood_open(struct flood *f, unsigned i) {
        struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET, .sin_port = htons(port) };
        struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.u32 = i };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -errno;
        src.sin_addr.s_addr = htonl(f->first + i % f->sources);
        dst.sin_addr.s_addr = htonl(WORKER_ADDRESS);
        if (bind(fd, (struct sockaddr *) &src, sizeof(src)) < 0 ||
            (connect(fd, (struct sockaddr *) &dst, sizeof(dst)) < 0 && errno != EINPROGRESS) ||
            epoll_ctl(f->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        f->fds[i] = fd;
        atomic_fetch_add(&f->counts->opened, 1);
        return 0;
}

static volatile sig_atomic_t flood_stopping;

static void on_term(int sig) {
        (void) sig;
        flood_stopping = 1;
}

static void flood_main(struct flood *f) {
        struct epoll_event evs[256];

        for (unsigned i = 0; i < FLOOD_CONNECTIONS; i++)
                f->fds[i] = -1;
        for (unsigned i = 0; i < FLOOD_CONNECTIONS; i++)
                (void) flood_open(f, i);
        while (!flood_stopping) {
                int n = epoll_wait(f->epfd, evs, 256, 50);
                for (int k = 0; k < n; k++) {
                        unsigned i = evs[k].data.u32;
                        char b;
                        if (f->fds[i] < 0)
                                continue;
                        /* Readable only at the end: the coordinator cut it. */
                        if (recv(f->fds[i], &b, 1, MSG_DONTWAIT) > 0)
                                continue;
                        close(f->fds[i]);
                        f->fds[i] = -1;
                        atomic_fetch_add(&f->counts->cut, 1);
                        (void) flood_open(f, i);
                }
                /* Connections that could not be opened are tried again. */
                for (unsigned i = 0; i < FLOOD_CONNECTIONS; i++)
                        if (f->fds[i] < 0)
                                (void) flood_open(f, i);
        }
        _exit(0);
}

static int flood_start(struct flood *f, uint32_t first, unsigned sources) {
        memset(f, 0, sizeof(*f));
        f->first = first;
        f->sources = sources;
        f->counts = mmap(NULL, sizeof(*f->counts), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (f->counts == MAP_FAILED)
                return -errno;
        f->pid = fork();
        if (f->pid < 0)
                return -errno;
        if (f->pid == 0) {
                signal(SIGTERM, on_term);
                (void) !nice(19);
                f->epfd = epoll_create1(EPOLL_CLOEXEC);
                if (f->epfd < 0)
                        _exit(1);
                flood_main(f);
        }
        return 0;
}

static void flood_stop(struct flood *f) {
        kill(f->pid, SIGTERM);
        (void) waitpid(f->pid, NULL, 0);
}

/* --- The certified worker ---------------------------------------------- */

struct figures {
        int64_t served_ms; /* from the first connect attempt to the first ASSIGN */
        unsigned attempts; /* connections tried until served */
        double rate;       /* jobs per second over MEASURE_MS */
};

/* Connects until served, backing off after a refusal as sdlive-worker does
 * (examples/worker/jobmode.c), then serves jobs for MEASURE_MS. */
static int worker(sdlive *d, SSL_CTX *tls, struct figures *fig) {
        char address[32];
        coordinator_link_config cfg = { .n_addresses = 1, .identity = "w1", .tls = tls,
                                        .timeout_usec = 10 * SDLIVE_USEC_PER_SEC,
                                        .heartbeat_usec = SDLIVE_USEC_PER_SEC };
        coordinator_link *l = NULL;
        coordinator_assign a;
        int64_t t0 = now_ms(), end = 0, backoff_ms = BACKOFF_MIN_MS;
        uint64_t jobs = 0;
        int r;

        snprintf(address, sizeof(address), "127.0.0.1:%u", port);
        cfg.addresses[0] = address;
        *fig = (struct figures) { .served_ms = -1 };
        r = coordinator_link_new(&l, d, &cfg);
        if (r < 0)
                return r;
        while (now_ms() - t0 < 10000) {
                if (coordinator_link_fd(l) < 0) {
                        fig->attempts++;
                        if (coordinator_link_connect(l) < 0) {
                                usleep((useconds_t) backoff_ms * 1000);
                                backoff_ms = backoff_ms * 2 < BACKOFF_MAX_MS ? backoff_ms * 2 : BACKOFF_MAX_MS;
                                continue;
                        }
                }
                r = coordinator_link_receive(l, &a);
                if (r < 0)
                        continue; /* cut off: connect again */
                if (r == 0) {
                        struct timespec ts = { 0, 200000 };
                        nanosleep(&ts, NULL);
                        if (coordinator_link_heartbeat_due(l))
                                (void) coordinator_link_heartbeat(l);
                        continue;
                }
                if (fig->served_ms < 0) {
                        fig->served_ms = now_ms() - t0;
                        end = now_ms() + MEASURE_MS;
                }
                usleep(JOB_USEC);
                if (coordinator_link_send_result(l, &a, 0, "") == 0)
                        jobs++;
                if (now_ms() >= end)
                        break;
        }
        fig->rate = end ? (double) jobs * 1000.0 / MEASURE_MS : 0;
        coordinator_link_close(l, "measured");
        coordinator_link_free(l);
        return 0;
}

static void report(const char *what, const struct figures *fig, const struct flood *f, double base_rate) {
        char label[64];

        snprintf(label, sizeof(label), "%s:", what);
        printf("%-40s served in %5lld ms after %u connection(s), %7.1f jobs/s", label,
               (long long) fig->served_ms, fig->attempts, fig->rate);
        if (f)
                printf(" (%.0f%% of the rate without a flood); flood: %llu connections opened, %llu cut off",
                       base_rate > 0 ? 100.0 * fig->rate / base_rate : 0.0,
                       (unsigned long long) atomic_load(&f->counts->opened),
                       (unsigned long long) atomic_load(&f->counts->cut));
        printf("\n");
        CHECK(fig->served_ms >= 0 && fig->served_ms <= SERVED_MAX_MS, "%s: served after %lld ms (bound %d ms)",
              what, (long long) fig->served_ms, SERVED_MAX_MS);
        if (f)
                CHECK(fig->rate >= base_rate / 2, "%s: %.1f jobs/s, less than half of %.1f", what, fig->rate,
                      base_rate);
}

/* The worker measured under a flood from sources addresses from first on,
 * which runs FLOOD_LEAD_MS before the worker connects. */
static int flooded(sdlive *d, SSL_CTX *client, uint32_t first, unsigned sources, const char *what,
                   double base_rate) {
        struct figures fig;
        struct flood f;
        int r;

        r = flood_start(&f, first, sources);
        if (r < 0)
                return r;
        usleep(FLOOD_LEAD_MS * 1000);
        r = worker(d, client, &fig);
        flood_stop(&f);
        if (r >= 0)
                report(what, &fig, &f, base_rate);
        munmap(f.counts, sizeof(*f.counts));
        return r;
}

static int tls_ctx(const char *dir, const char *name, bool server, SSL_CTX **ret) {
        char cert[512], key[512], ca[512], why[512];
        struct tls_files files = { cert, key, ca };

        snprintf(cert, sizeof(cert), "%s/%s.pem", dir, name);
        snprintf(key, sizeof(key), "%s/%s.key", dir, name);
        snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
        if (tls_context_new(&files, server, ret, why, sizeof(why)) < 0) {
                fprintf(stderr, "tls-handshake-flood: %s\n", why);
                return -EINVAL;
        }
        return 0;
}

int main(int argc, char **argv) {
        char url[600], address[32];
        struct store_fence fence = { .lease = LEASE, .holder = "leader-a" };
        struct coordinator *c = NULL;
        struct store *s = NULL;
        SSL_CTX *server = NULL, *client = NULL;
        struct figures base;
        struct rlimit rl;
        sdlive *d = NULL;
        uint64_t run;
        int r = -EADDRINUSE;

        setvbuf(stdout, NULL, _IOLBF, 0);
        signal(SIGPIPE, SIG_IGN);
        if (argc != 2) {
                fprintf(stderr, "usage: tls-handshake-flood DIR\n");
                return 2;
        }
        /* The flood's sockets and the coordinator's ends of them. */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4 * FLOOD_CONNECTIONS) {
                rl.rlim_cur = rl.rlim_max < 4 * FLOOD_CONNECTIONS ? rl.rlim_max : 4 * FLOOD_CONNECTIONS;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
        if (tls_ctx(argv[1], "coordinator", true, &server) < 0 || tls_ctx(argv[1], "w1", false, &client) < 0)
                return 1;
        snprintf(url, sizeof(url), "sqlite:%s/store.db", argv[1]);
        if (store_open(url, &s) < 0 ||
            store_lease_acquire(s, LEASE, "leader-a", 600 * SDLIVE_USEC_PER_SEC, &fence.generation) < 0 ||
            store_run_create(s, &fence, RUN_JOBS, &run) < 0 || sdlive_new(&d, NULL) < 0) {
                fprintf(stderr, "tls-handshake-flood: store: %s\n", store_errmsg(s));
                return 1;
        }
        struct coordinator_config cfg = { .store_url = url, .fence = fence, .tcp_address = address,
                                          .tls = server, .window = 16,
                                          .worker_timeout_usec = 10 * SDLIVE_USEC_PER_SEC };
        for (int i = 0; i < 20 && r == -EADDRINUSE; i++) {
                port = (uint16_t) (20000 + (getpid() * 7 + i * 131) % 40000);
                snprintf(address, sizeof(address), "127.0.0.1:%u", port);
                r = coordinator_start(&c, d, &cfg);
        }
        if (r < 0) {
                fprintf(stderr, "tls-handshake-flood: coordinator: %s\n", strerror(-r));
                return 1;
        }

        if (worker(d, client, &base) < 0)
                return 1;
        report("no flood", &base, NULL, 0);

        if (flooded(d, client, WORKER_ADDRESS, 1, "1000 silent, from the worker's address", base.rate) < 0 ||
            flooded(d, client, WORKER_ADDRESS + 1, 1, "1000 silent, from another address", base.rate) < 0 ||
            flooded(d, client, WORKER_ADDRESS + 1, FLOOD_SOURCES, "1000 silent, from 250 other addresses",
                    base.rate) < 0)
                return 1;

        c = coordinator_stop(c);
        SSL_CTX_free(server);
        SSL_CTX_free(client);
        store_close(s);
        sdlive_free(d);
        printf("%s\n", failed ? "FAIL" : "PASS");
        return failed ? 1 : 0;
}
