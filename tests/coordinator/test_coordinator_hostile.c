/* SPDX-License-Identifier: MIT */
/*
 * Hostile peers against the coordinator (label "adversarial"), with a
 * temporary SQLite store: forged RESULTs, replayed RESULTs, and floods of
 * connections that say HELLO and heartbeat. Figures are printed; the
 * bounds asserted have margins for a loaded machine.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "coordinator.h"
#include "coordinator_test.h"
#include "frame.h"

#define LEASE "cluster"
#define TIMEOUT_MS 1000
#define HEARTBEAT_MS 100
#define JOBS 2000 /* more than the flood can hold in flight */
#define SERVED 500
#define FLOOD_HELLO 300
#define FLOOD_CONNECT 1000
#define REPLAYS 5000

struct fixture {
        char dir[64];
        char db[128];
        char url[160];
        char sock[100];
        struct store *store;
        sdlive *d;
        struct store_fence fence;
        uint64_t run;
        struct coordinator *c;
};

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));
        struct coordinator_config cfg;

        assert_non_null(f);
        snprintf(f->dir, sizeof(f->dir), "/tmp/test-hostile-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->db, sizeof(f->db), "%s/store.db", f->dir);
        snprintf(f->url, sizeof(f->url), "sqlite:%s", f->db);
        snprintf(f->sock, sizeof(f->sock), "%s/coordinator.sock", f->dir);
        coordinator_test_store(f->url, LEASE, JOBS, &f->store, &f->fence, &f->run, &f->d);
        cfg = (struct coordinator_config) {
                .store_url = f->url,
                .fence = f->fence,
                .unix_path = f->sock,
                .worker_timeout_usec = TIMEOUT_MS * SDLIVE_USEC_PER_MSEC,
                .heartbeat_usec = HEARTBEAT_MS * SDLIVE_USEC_PER_MSEC,
                .window = 4,
        };
        assert_int_equal(coordinator_start(&f->c, f->d, &cfg), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;

        coordinator_test_teardown(f->c, f->store, f->d, f->dir);
        free(f);
        return 0;
}

static int connect_unix(const struct fixture *f) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->sock);
        assert_int_equal(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        return fd;
}

static void send_hello(int fd, const char *identity) {
        frame h = { .type = FRAME_HELLO, .hello = { .protocol = FRAME_PROTOCOL_VERSION, .identity = identity } };
        assert_int_equal(frame_send(fd, &h, 1000), 0);
}

static frame result_of(const frame *a) {
        frame r = { .type = FRAME_RESULT,
                    .result = { .run = a->assign.run, .job = a->assign.job, .attempt = a->assign.attempt,
                                .text = "ok" } };
        memcpy(r.result.token, a->assign.token, FRAME_TOKEN_SIZE);
        return r;
}

/* Next non-HEARTBEAT frame; the largest gap between frames received (of
 * any type) is kept in *max_gap_ms. */
static int recv_frame(int fd, frame_decoder *dec, frame *out, int timeout_ms, int64_t *last_ms,
                      int64_t *max_gap_ms) {
        int64_t deadline = now_ms() + timeout_ms;

        for (;;) {
                int left = (int) (deadline - now_ms());
                int r = frame_recv(fd, dec, out, left > 0 ? left : 0);
                if (r == 1 && last_ms) {
                        int64_t t = now_ms();
                        if (*last_ms && max_gap_ms && t - *last_ms > *max_gap_ms)
                                *max_gap_ms = t - *last_ms;
                        *last_ms = t;
                }
                if (r == 1 && out->type == FRAME_HEARTBEAT)
                        continue;
                return r;
        }
}

static void expect_assign(int fd, frame_decoder *dec, frame *a) {
        assert_int_equal(recv_frame(fd, dec, a, 3000, NULL, NULL), 1);
        assert_int_equal(a->type, FRAME_ASSIGN);
}

static void wait_closed(int fd) {
        frame_decoder *dec;
        frame f;
        int r;

        assert_int_equal(frame_decoder_new(&dec), 0);
        do
                r = recv_frame(fd, dec, &f, 3000, NULL, NULL);
        while (r == 1);
        frame_decoder_free(dec);
        assert_true(r == 0 || r == -ECONNRESET);
}

static void wait_stat(struct fixture *f, size_t offset, uint64_t want) {
        struct coordinator_stats st;

        for (int64_t deadline = now_ms() + 3000;; usleep(5000)) {
                coordinator_stats(f->c, &st);
                if (*(uint64_t *) ((char *) &st + offset) >= want)
                        return;
                assert_true(now_ms() < deadline);
        }
}
#define WAIT_STAT(f, field, want) wait_stat(f, offsetof(struct coordinator_stats, field), want)

static enum store_job_status status_of(struct fixture *f, uint64_t job) {
        struct store_job j;

        assert_int_equal(store_job_read(f->store, f->run, (uint32_t) job, &j), 0);
        return j.status;
}

/* Descriptors of this process open on the database file itself: one per
 * SQLite connection (ours and the coordinator's). */
static int db_fds(const struct fixture *f) {
        char link[300], target[PATH_MAX];
        struct dirent *e;
        DIR *dir = opendir("/proc/self/fd");
        int n = 0;

        assert_non_null(dir);
        while ((e = readdir(dir))) {
                ssize_t len;
                snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
                len = readlink(link, target, sizeof(target) - 1);
                if (len <= 0)
                        continue;
                target[len] = '\0';
                n += strcmp(target, f->db) == 0;
        }
        closedir(dir);
        return n;
}

static uint64_t log_entries(struct fixture *f) {
        struct store_log_summary sum;

        assert_int_equal(store_log_summary(f->store, LEASE, &sum), 0);
        return sum.entries;
}

static off_t wal_size(const struct fixture *f) {
        char wal[140];
        struct stat st;

        snprintf(wal, sizeof(wal), "%s-wal", f->db);
        return stat(wal, &st) == 0 ? st.st_size : 0;
}

/* Another peer names a job in flight on a real worker, with its run, job
 * and attempt but not its token: refused, and that peer is cut off. The
 * real worker's RESULT still counts. */
static void forged_result_refused(void **state) {
        struct fixture *f = *state;
        int real = connect_unix(f), thief = connect_unix(f);
        struct coordinator_stats st;
        frame_decoder *dec;
        frame a, forged;

        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(real, "real");
        expect_assign(real, dec, &a);
        send_hello(thief, "thief");
        forged = result_of(&a);
        memset(forged.result.token, 0, FRAME_TOKEN_SIZE);
        assert_int_equal(frame_send(thief, &forged, 1000), 0);
        wait_closed(thief);
        coordinator_stats(f->c, &st);
        assert_int_equal(st.refused, 1);
        assert_true(st.protocol_errors >= 1);
        assert_int_equal(st.counted, 0);
        assert_int_equal(status_of(f, a.assign.job), STORE_JOB_ASSIGNED);

        forged = result_of(&a);
        assert_int_equal(frame_send(real, &forged, 1000), 0);
        WAIT_STAT(f, counted, 1);
        assert_int_equal(status_of(f, a.assign.job), STORE_JOB_DONE);
        print_message("forged RESULT: refused %llu, connection cut off; the real one counted\n",
                      (unsigned long long) st.refused);
        frame_decoder_free(dec);
        close(real);
        close(thief);
}

/* Jobs of the run still assigned to `worker`. */
static unsigned assigned_to(struct fixture *f, const char *worker) {
        unsigned n = 0;

        for (uint32_t job = 0; job < JOBS; job++) {
                struct store_job j;
                assert_int_equal(store_job_read(f->store, f->run, job, &j), 0);
                n += j.status == STORE_JOB_ASSIGNED && strcmp(j.worker, worker) == 0;
        }
        return n;
}

/* A worker whose RESULT lacks its token is cut off in the very batch that
 * refills its window: the job it named and the job just claimed for it go
 * back to pending with the rest of its window, none left assigned to a
 * connection that is gone. */
static void refused_result_strands_nothing(void **state) {
        struct fixture *f = *state;
        int fd = connect_unix(f);
        frame_decoder *dec;
        frame a[4], bad;
        unsigned left = 0;

        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(fd, "clumsy");
        for (int i = 0; i < 4; i++)
                expect_assign(fd, dec, &a[i]);
        bad = result_of(&a[0]);
        bad.result.token[0] ^= 0xff;
        assert_int_equal(frame_send(fd, &bad, 1000), 0);
        wait_closed(fd);
        for (int64_t deadline = now_ms() + 3000; (left = assigned_to(f, "clumsy")) > 0; usleep(20 * 1000))
                if (now_ms() > deadline)
                        break;
        print_message("RESULT without its token: worker cut off, %u job(s) left assigned to it\n", left);
        assert_int_equal(left, 0);
        assert_int_equal(status_of(f, a[0].assign.job), STORE_JOB_PENDING);
        frame_decoder_free(dec);
        close(fd);
}

/* REPLAYS copies of a counted RESULT: none writes (no write-log row, no
 * WAL growth) and the peer is cut off. */
static void replayed_result_writes_nothing(void **state) {
        struct fixture *f = *state;
        int fd = connect_unix(f);
        struct coordinator_stats st;
        uint64_t entries;
        frame_decoder *dec;
        frame a, r;
        off_t wal;
        int sent = 0;

        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(fd, "replayer");
        expect_assign(fd, dec, &a);
        r = result_of(&a);
        assert_int_equal(frame_send(fd, &r, 1000), 0);
        WAIT_STAT(f, counted, 1);
        /* The window refills; wait until the claims it made are in. */
        for (int i = 0; i < 4; i++)
                expect_assign(fd, dec, &a);
        usleep(100 * 1000);
        entries = log_entries(f);
        wal = wal_size(f);
        for (; sent < REPLAYS; sent++)
                if (frame_send(fd, &r, 1000) < 0)
                        break;
        wait_closed(fd);
        coordinator_stats(f->c, &st);
        print_message("replays: %d sent before the cut-off, %llu seen as duplicates; write-log rows "
                      "%llu -> %llu, WAL %lld -> %lld bytes\n",
                      sent, (unsigned long long) st.duplicates, (unsigned long long) entries,
                      (unsigned long long) log_entries(f), (long long) wal, (long long) wal_size(f));
        assert_int_equal(st.counted, 1);
        assert_true(st.duplicates >= 1);
        assert_true(st.duplicates <= 4 * COORDINATOR_WINDOW_MAX + 1);
        assert_true(st.protocol_errors >= 1);
        /* Only the requeue of the jobs in flight when it was cut off. */
        assert_true(log_entries(f) <= entries + 1);
        assert_true(wal_size(f) <= wal + 16 * (4096 + 24));
        frame_decoder_free(dec);
        close(fd);
}

/* FLOOD_HELLO connections say HELLO and heartbeat; a real worker connected
 * among them is served at full speed, its heartbeats from the coordinator
 * stay on schedule, and the coordinator holds one store connection. Then
 * FLOOD_CONNECT connections arrive at once and go away: the store
 * connections stay at one, and a new worker is served. */
static void flood_costs_no_store_connections(void **state) {
        struct fixture *f = *state;
        struct rlimit rl;
        int *flood, real, n_flood = 0, before = db_fds(f), during = 0, after;
        int64_t last = 0, max_gap = 0, start;
        frame_decoder *dec;
        frame a, r, hb = { .type = FRAME_HEARTBEAT };

        assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
        if (rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
        assert_true(rl.rlim_cur >= 3 * FLOOD_CONNECT);
        flood = calloc(FLOOD_CONNECT, sizeof(int));
        assert_non_null(flood);
        assert_int_equal(frame_decoder_new(&dec), 0);

        real = connect_unix(f);
        send_hello(real, "real");
        for (; n_flood < FLOOD_HELLO; n_flood++) {
                flood[n_flood] = connect_unix(f);
                /* Beyond COORDINATOR_CONNECTIONS_MAX the listener closes them. */
                (void) frame_send(flood[n_flood], &(frame) { .type = FRAME_HELLO,
                                                             .hello = { .protocol = FRAME_PROTOCOL_VERSION,
                                                                        .identity = "flood" } }, 0);
        }
        start = now_ms();
        for (int done = 0; done < SERVED;) {
                assert_int_equal(recv_frame(real, dec, &a, 3000, &last, &max_gap), 1);
                assert_int_equal(a.type, FRAME_ASSIGN);
                r = result_of(&a);
                assert_int_equal(frame_send(real, &r, 1000), 0);
                done++;
                if (done % 50 == 0) {
                        for (int i = 0; i < n_flood; i++)
                                (void) frame_send(flood[i], &hb, 0);
                        int n = db_fds(f);
                        during = n > during ? n : during;
                }
        }
        /* Idle but for heartbeats: their gaps. */
        for (int64_t until = now_ms() + 5 * HEARTBEAT_MS; now_ms() < until;) {
                int rr = recv_frame(real, dec, &a, 50, &last, &max_gap);
                assert_true(rr == 1 || rr == -ETIMEDOUT || rr == -EAGAIN);
                if (rr == 1 && a.type == FRAME_ASSIGN) {
                        r = result_of(&a);
                        assert_int_equal(frame_send(real, &r, 1000), 0);
                }
        }
        print_message("%d peers flooding: %d jobs served to the real worker in %lld ms; "
                      "database descriptors before %d, during %d (this test holds 1); largest gap "
                      "between the coordinator's frames to the real worker %lld ms (heartbeat %d ms)\n",
                      n_flood, SERVED, (long long) (now_ms() - start), before, during,
                      (long long) max_gap, HEARTBEAT_MS);
        assert_int_equal(before, 2);
        assert_true(during <= 2);
        assert_true(max_gap <= HEARTBEAT_MS + 400);

        for (int i = 0; i < n_flood; i++)
                close(flood[i]);
        for (n_flood = 0; n_flood < FLOOD_CONNECT; n_flood++) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                assert_true(fd >= 0);
                snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->sock);
                if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                        close(fd); /* backlog full: the flood is refused by the kernel */
                        flood[n_flood] = -1;
                        continue;
                }
                flood[n_flood] = fd;
                (void) frame_send(fd, &(frame) { .type = FRAME_HELLO,
                                                 .hello = { .protocol = FRAME_PROTOCOL_VERSION,
                                                            .identity = "flood" } }, 0);
        }
        usleep(500 * 1000);
        during = db_fds(f);
        for (int i = 0; i < FLOOD_CONNECT; i++)
                if (flood[i] >= 0)
                        close(flood[i]);
        close(real);
        usleep(300 * 1000);
        after = db_fds(f);
        print_message("%d-connection flood: database descriptors during %d, after %d\n", FLOOD_CONNECT,
                      during, after);
        assert_true(during <= 2);
        assert_true(after <= 2);

        /* Still serving. */
        frame_decoder_free(dec);
        assert_int_equal(frame_decoder_new(&dec), 0);
        real = connect_unix(f);
        send_hello(real, "after-flood");
        expect_assign(real, dec, &a);
        r = result_of(&a);
        assert_int_equal(frame_send(real, &r, 1000), 0);
        WAIT_STAT(f, counted, SERVED + 1);
        frame_decoder_free(dec);
        close(real);
        free(flood);
}

int main(void) {
        const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
                T(forged_result_refused),
                T(refused_result_strands_nothing),
                T(replayed_result_writes_nothing),
                T(flood_costs_no_store_connections),
#undef T
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
