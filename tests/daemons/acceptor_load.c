/* SPDX-License-Identifier: MIT */
/*
 * acceptor-load: load client for the restart tests of sdlive-acceptor (built,
 * not installed).
 *
 *   acceptor-load SOCKET [KEEPERS [PERIOD_MS [TIMEOUT_MS]]]
 *
 * KEEPERS (default 4) threads each keep one connection open and send
 * "ping SEQ.ATTEMPT" every PERIOD_MS (default 10); one more thread connects
 * in a tight loop, one request per connection. A request unanswered after
 * TIMEOUT_MS (default 250) is sent again on the same connection as the next
 * attempt. The acceptor answers in order, so when the first answer to a
 * request is that of attempt k, attempts 1..k-1 were read by a process that
 * died before answering: they count as lost. A connect() that fails counts
 * as refused (and is retried after 10 ms by keepers, 1 ms by the connector);
 * a connection that ends while a request waits counts as dropped (keepers
 * reconnect).
 *
 * Runs until SIGTERM or SIGINT. Once ready for signals, on each SIGUSR1, and
 * once more at exit, prints one line of running totals on stdout:
 *   requests= retries= lost= dropped= refused= connections= connection_dropped=
 *   max_wait_ms=
 * (requests and dropped: keepers; connections and connection_dropped: the
 * connecting thread; retries, lost, refused: both; max_wait_ms: the longest
 * a request waited for its answer, retries included, since the previous
 * line.)
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "monotonic.h"

#define KEEPERS_MAX 32

typedef struct counters {
        atomic_uint_fast64_t requests, retries, lost, dropped, refused, connections, connection_dropped,
                max_wait_ms;
} counters;

typedef struct conn {
        int fd;
        size_t used;
        char buf[512];
} conn;

typedef enum outcome { ANSWERED, TIMED_OUT, CLOSED, STOPPED } outcome;

static struct sockaddr_un target = { .sun_family = AF_UNIX };
static unsigned period_ms = 10, timeout_ms = 250;
static atomic_bool stopping;
static counters totals;

static void sleep_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* One line on stderr per drop, with the wall-clock time, to match against
 * the restarts of the test. */
static void log_drop(const char *who, uint64_t seq) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        fprintf(stderr, "acceptor-load: %lld.%06ld %s connection dropped waiting for answer %llu\n",
                (long long) ts.tv_sec, ts.tv_nsec / 1000, who, (unsigned long long) seq);
}

static void add(atomic_uint_fast64_t *counter, uint64_t n) {
        atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

static void note_wait(uint64_t ms) {
        uint64_t seen = atomic_load_explicit(&totals.max_wait_ms, memory_order_relaxed);

        while (ms > seen && !atomic_compare_exchange_weak(&totals.max_wait_ms, &seen, ms))
                ;
}

/* One connect() attempt. */
static bool conn_open(conn *c) {
        struct timeval tv = { .tv_sec = 1 };

        c->used = 0;
        c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (c->fd < 0)
                return false;
        /* Bounds a connect() stuck on a full backlog. */
        setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        if (connect(c->fd, (const struct sockaddr *) &target, sizeof(target)) == 0)
                return true;
        close(c->fd);
        c->fd = -1;
        return false;
}

static void conn_close(conn *c) {
        close(c->fd);
        c->fd = -1;
}

static bool conn_send(conn *c, uint64_t seq, unsigned attempt) {
        char line[64];
        int len = snprintf(line, sizeof(line), "ping %llu.%u\n", (unsigned long long) seq, attempt);

        return send(c->fd, line, (size_t) len, MSG_NOSIGNAL) == len;
}

/* Waits for the answer to request seq until deadline; *attempt is the
 * attempt answered. Answers to earlier requests are late duplicates. */
static outcome conn_await(conn *c, uint64_t seq, uint64_t deadline, unsigned *attempt) {
        for (;;) {
                char *newline;
                while ((newline = memchr(c->buf, '\n', c->used))) {
                        unsigned long long got_seq;
                        unsigned got_attempt;
                        *newline = '\0';
                        bool ours = sscanf(c->buf, "pong %llu.%u", &got_seq, &got_attempt) == 2 &&
                                    got_seq == seq;
                        c->used -= (size_t) (newline + 1 - c->buf);
                        memmove(c->buf, newline + 1, c->used);
                        if (ours) {
                                *attempt = got_attempt;
                                return ANSWERED;
                        }
                }
                if (c->used == sizeof(c->buf))
                        return CLOSED; /* nonsense from the server */
                if (atomic_load(&stopping))
                        return STOPPED;
                uint64_t now = monotonic_ms();
                if (now >= deadline)
                        return TIMED_OUT;
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                uint64_t wait = deadline - now < 100 ? deadline - now : 100;
                if (poll(&p, 1, (int) wait) < 0 && errno != EINTR)
                        return CLOSED;
                if (!p.revents)
                        continue;
                ssize_t n = recv(c->fd, c->buf + c->used, sizeof(c->buf) - c->used, MSG_DONTWAIT);
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                        return CLOSED;
                if (n > 0)
                        c->used += (size_t) n;
        }
}

/* Sends request seq until it is answered; retries after the timeout. */
static outcome request(conn *c, uint64_t seq) {
        uint64_t sent = monotonic_ms();

        for (unsigned attempt = 1;; attempt++) {
                unsigned answered;
                if (attempt > 1)
                        add(&totals.retries, 1);
                if (!conn_send(c, seq, attempt))
                        return CLOSED;
                outcome o = conn_await(c, seq, monotonic_ms() + timeout_ms, &answered);
                if (o == TIMED_OUT)
                        continue;
                if (o == ANSWERED) {
                        add(&totals.lost, answered - 1);
                        note_wait(monotonic_ms() - sent);
                }
                return o;
        }
}

static bool connect_retrying(conn *c, unsigned pause_ms) {
        while (!atomic_load(&stopping)) {
                if (conn_open(c))
                        return true;
                add(&totals.refused, 1);
                sleep_ms(pause_ms);
        }
        return false;
}

static void *keeper(void *arg) {
        conn c = { .fd = -1 };
        uint64_t seq = 0;

        (void) arg;
        if (!connect_retrying(&c, 10))
                return NULL;
        while (!atomic_load(&stopping)) {
                uint64_t next = monotonic_ms() + period_ms;
                outcome o = request(&c, ++seq);
                if (o == ANSWERED)
                        add(&totals.requests, 1);
                else if (o == CLOSED) {
                        add(&totals.dropped, 1);
                        log_drop("keeper", seq);
                        conn_close(&c);
                        if (!connect_retrying(&c, 10))
                                return NULL;
                }
                uint64_t now = monotonic_ms();
                if (now < next)
                        sleep_ms((unsigned) (next - now));
        }
        conn_close(&c);
        return NULL;
}

static void *connector(void *arg) {
        conn c = { .fd = -1 };
        uint64_t seq = 0;

        (void) arg;
        while (connect_retrying(&c, 1)) {
                outcome o = request(&c, ++seq);
                if (o == ANSWERED)
                        add(&totals.connections, 1);
                else if (o == CLOSED) {
                        add(&totals.connection_dropped, 1);
                        log_drop("connecting loop", seq);
                }
                conn_close(&c);
        }
        return NULL;
}

static void print_totals(void) {
#define V(f) (unsigned long long) atomic_load(&totals.f)
        printf("requests=%llu retries=%llu lost=%llu dropped=%llu refused=%llu connections=%llu "
               "connection_dropped=%llu max_wait_ms=%llu\n",
               V(requests), V(retries), V(lost), V(dropped), V(refused), V(connections),
               V(connection_dropped), (unsigned long long) atomic_exchange(&totals.max_wait_ms, 0));
#undef V
        fflush(stdout);
}

static unsigned parse_arg(const char *arg, unsigned min, unsigned max) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(arg, &end, 10);

        if (errno || end == arg || *end || v < min || v > max) {
                fprintf(stderr, "acceptor-load: bad number %s (%u..%u)\n", arg, min, max);
                exit(2);
        }
        return (unsigned) v;
}

int main(int argc, char **argv) {
        pthread_t threads[KEEPERS_MAX + 1];
        unsigned keepers = 4;
        sigset_t mask;
        int sig;

        if (argc < 2 || argc > 5 || strlen(argv[1]) >= sizeof(target.sun_path)) {
                fprintf(stderr, "usage: acceptor-load SOCKET [KEEPERS [PERIOD_MS [TIMEOUT_MS]]]\n");
                return 2;
        }
        strcpy(target.sun_path, argv[1]);
        if (argc > 2)
                keepers = parse_arg(argv[2], 0, KEEPERS_MAX);
        if (argc > 3)
                period_ms = parse_arg(argv[3], 1, 60000);
        if (argc > 4)
                timeout_ms = parse_arg(argv[4], 1, 60000);

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGUSR1);
        pthread_sigmask(SIG_BLOCK, &mask, NULL);
        print_totals();
        for (unsigned i = 0; i <= keepers; i++)
                if (pthread_create(&threads[i], NULL, i < keepers ? keeper : connector, NULL) != 0) {
                        fprintf(stderr, "acceptor-load: cannot start threads\n");
                        return 1;
                }
        while (sigwait(&mask, &sig) == 0 && sig == SIGUSR1)
                print_totals();
        atomic_store(&stopping, true);
        for (unsigned i = 0; i <= keepers; i++)
                pthread_join(threads[i], NULL);
        print_totals();
        return 0;
}
