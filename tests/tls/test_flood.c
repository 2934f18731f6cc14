/* SPDX-License-Identifier: MIT */
/*
 * A peer that never stops sending cannot hold a connection loop: the
 * coordinator still stops promptly while a worker floods it with
 * HEARTBEATs faster than they can be read (the loop handles a bounded
 * number of frames per wake-up, then looks at its stop fd).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "coordinator.h"
#include "frame.h"

#define LEASE "cluster"
/* Frames per send(): far more than the reader handles per system call. */
#define BATCH 1000
#define STOP_BOUND_MS 500
/* Bytes queued on the worker's side (more than the default buffers). */
#define QUEUE_BYTES (16 * 1024 * 1024)

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct flooder {
        int fd;
        _Atomic uint64_t sent;
};

static void *flood(void *userdata) {
        struct flooder *w = userdata;
        frame h = { .type = FRAME_HELLO, .hello = { .protocol = FRAME_PROTOCOL_VERSION, .identity = "flood" } };
        frame b = { .type = FRAME_HEARTBEAT };
        static uint8_t buf[BATCH * 64];
        size_t len = 0;
        int n;

        if (frame_send(w->fd, &h, 1000) < 0)
                return NULL;
        for (int i = 0; i < BATCH; i++) {
                n = frame_encode(&b, buf + len, sizeof(buf) - len);
                if (n < 0)
                        return NULL;
                len += (size_t) n;
        }
        for (;;) {
                for (size_t off = 0; off < len;) {
                        ssize_t r = send(w->fd, buf + off, len - off, MSG_NOSIGNAL);
                        if (r <= 0)
                                return NULL; /* the coordinator closed: done */
                        off += (size_t) r;
                }
                atomic_fetch_add(&w->sent, BATCH);
        }
}

static void stop_is_prompt_under_a_flood(void **state) {
        char dir[] = "/tmp/test-flood-XXXXXX", url[128], cmd[160];
        struct store_fence fence = { .lease = LEASE, .holder = "leader-a" };
        struct coordinator *c = NULL;
        struct store *s = NULL;
        struct flooder w = { 0 };
        pthread_t thread;
        sdlive *d = NULL;
        uint64_t run;
        int sv[2];

        assert_non_null(mkdtemp(dir));
        snprintf(url, sizeof(url), "sqlite:%s/store.db", dir);
        assert_int_equal(store_open(url, &s), 0);
        assert_int_equal(store_lease_acquire(s, LEASE, "leader-a", 60 * SDLIVE_USEC_PER_SEC, &fence.generation), 0);
        assert_int_equal(store_run_create(s, &fence, 4, &run), 0);
        assert_int_equal(sdlive_new(&d, NULL), 0);
        struct coordinator_config cfg = { .store_url = url, .fence = fence, .window = 1 };
        assert_int_equal(coordinator_start(&c, d, &cfg), 0);

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        /* A deep queue, filled before the coordinator reads at all: a loop
         * that reads until nothing is left would take seconds to get out. */
        int size = QUEUE_BYTES;
        if (setsockopt(sv[1], SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
                (void) setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
        w.fd = sv[1];
        assert_int_equal(pthread_create(&thread, NULL, flood, &w), 0);
        /* Queued until the buffer is full: the count stops growing. */
        for (uint64_t last = UINT64_MAX; last != atomic_load(&w.sent);) {
                last = atomic_load(&w.sent);
                usleep(50 * 1000);
        }
        assert_int_equal(coordinator_adopt(c, sv[0], "flood"), 0);
        usleep(50 * 1000);

        int64_t t0 = now_ms();
        c = coordinator_stop(c);
        int64_t took = now_ms() - t0;
        shutdown(sv[1], SHUT_RDWR);
        pthread_join(thread, NULL);
        printf("coordinator stopped in %lld ms under a flood (%llu HEARTBEATs sent)\n", (long long) took,
               (unsigned long long) atomic_load(&w.sent));
        assert_true(atomic_load(&w.sent) >= BATCH);
        assert_true(took < STOP_BOUND_MS);

        close(sv[1]);
        store_close(s);
        sdlive_free(d);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(stop_is_prompt_under_a_flood),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
