/* SPDX-License-Identifier: MIT */
/* The rest of the notify protocol: BARRIER=1, MAINPID=, EXIT_STATUS=,
 * BUSERROR=, NOTIFYACCESS=, raw KEY=VALUE; NOTIFY_SOCKET parsing (vsock
 * included) and what each odd environment gives. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "sdlive_internal.h"

#define SEC SDLIVE_USEC_PER_SEC
#define MSEC SDLIVE_USEC_PER_MSEC

/* The one datagram the last call sent. */
static const char *received(harness_fixture *f) {
        assert_true(harness_recv(&f->m, f->buf, sizeof(f->buf)) > 0);
        assert_int_equal(harness_drain(&f->m), 0);
        return f->buf;
}

static void test_fields(void **state) {
        harness_fixture *f = *state;

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_true(sdlive_notify_mainpid(f->d, 4242) > 0);
        assert_string_equal(received(f), "MAINPID=4242");
        assert_true(sdlive_notify_exit_status(f->d, 0) > 0);
        assert_string_equal(received(f), "EXIT_STATUS=0");
        assert_true(sdlive_notify_exit_status(f->d, 255) > 0);
        assert_string_equal(received(f), "EXIT_STATUS=255");
        assert_true(sdlive_notify_bus_error(f->d, "org.freedesktop.DBus.Error.TimedOut") > 0);
        assert_string_equal(received(f), "BUSERROR=org.freedesktop.DBus.Error.TimedOut");
        assert_true(sdlive_notify_access(f->d, SDLIVE_NOTIFY_ACCESS_NONE) > 0);
        assert_string_equal(received(f), "NOTIFYACCESS=none");
        assert_true(sdlive_notify_access(f->d, SDLIVE_NOTIFY_ACCESS_MAIN) > 0);
        assert_string_equal(received(f), "NOTIFYACCESS=main");
        assert_true(sdlive_notify_access(f->d, SDLIVE_NOTIFY_ACCESS_EXEC) > 0);
        assert_string_equal(received(f), "NOTIFYACCESS=exec");
        assert_true(sdlive_notify_access(f->d, SDLIVE_NOTIFY_ACCESS_ALL) > 0);
        assert_string_equal(received(f), "NOTIFYACCESS=all");
        assert_true(sdlive_notify_raw(f->d, "X_CUSTOM_1", "some value = with = signs") > 0);
        assert_string_equal(received(f), "X_CUSTOM_1=some value = with = signs");
        assert_true(sdlive_notify_raw(f->d, "EMPTY", "") > 0);
        assert_string_equal(received(f), "EMPTY=");
}

static void test_field_validation(void **state) {
        static const char *const bad_bus[] = {
                "", "NoDots", ".a.b", "a..b", "a.b.", "a.1b", "a.b-c", "a.b c", "a.b\nREADY=1",
                "a.\xc3\xa9",
        };
        static const char *const bad_keys[] = {
                "", "lower", "A-B", "A B", "1ABC", "A=B", "A\nB", "\xc3\xa9",
        };
        harness_fixture *f = *state;
        char big[SDLIVE_NOTIFY_MAX + 2];

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(sdlive_notify_mainpid(f->d, 0), -EINVAL);
        assert_int_equal(sdlive_notify_mainpid(f->d, -1), -EINVAL);
        assert_int_equal(sdlive_notify_exit_status(f->d, -1), -EINVAL);
        assert_int_equal(sdlive_notify_exit_status(f->d, 256), -EINVAL);
        assert_int_equal(sdlive_notify_access(f->d, -1), -EINVAL);
        assert_int_equal(sdlive_notify_access(f->d, 4), -EINVAL);
        assert_int_equal(sdlive_notify_bus_error(f->d, NULL), -EINVAL);
        for (size_t i = 0; i < sizeof(bad_bus) / sizeof(bad_bus[0]); i++)
                assert_int_equal(sdlive_notify_bus_error(f->d, bad_bus[i]), -EINVAL);
        memset(big, 'a', SDLIVE_BUS_ERROR_MAX + 1);
        big[1] = '.';
        big[SDLIVE_BUS_ERROR_MAX + 1] = '\0';
        assert_int_equal(sdlive_notify_bus_error(f->d, big), -EINVAL);
        big[SDLIVE_BUS_ERROR_MAX] = '\0';
        assert_true(sdlive_notify_bus_error(f->d, big) > 0);
        assert_int_equal(harness_drain(&f->m), 1);

        for (size_t i = 0; i < sizeof(bad_keys) / sizeof(bad_keys[0]); i++)
                assert_int_equal(sdlive_notify_raw(f->d, bad_keys[i], "1"), -EINVAL);
        assert_int_equal(sdlive_notify_raw(f->d, NULL, "1"), -EINVAL);
        assert_int_equal(sdlive_notify_raw(f->d, "KEY", NULL), -EINVAL);
        /* A newline in the value would start a second assignment. */
        assert_int_equal(sdlive_notify_raw(f->d, "KEY", "x\nREADY=1"), -EINVAL);
        assert_int_equal(sdlive_notify_raw(f->d, "KEY", "\n"), -EINVAL);
        /* The manager splits a message on carriage returns too. */
        assert_int_equal(sdlive_notify_raw(f->d, "KEY", "x\rREADY=1"), -EINVAL);
        assert_int_equal(sdlive_notify_raw(f->d, "KEY", "\r"), -EINVAL);
        /* Fields with a call of their own go through it (test_notify_raw.c):
         * WATCHDOG_USEC= moves the manager's timer, so only
         * sdlive_watchdog_set_timeout(), which moves the pet interval too. */
        assert_int_equal(sdlive_notify_raw(f->d, "WATCHDOG_USEC", "1000000"), -EPERM);
        assert_int_equal(sdlive_notify_raw(f->d, "FDSTORE", "1"), -EPERM);
        assert_int_equal(sdlive_notify_raw(f->d, "BARRIER", "1"), -EPERM);
        /* Size: "K=" + value fills the datagram exactly, one more is too big. */
        memset(big, 'v', sizeof(big));
        big[SDLIVE_NOTIFY_MAX - 2] = '\0';
        assert_true(sdlive_notify_raw(f->d, "K", big) > 0);
        assert_int_equal(strlen(received(f)), SDLIVE_NOTIFY_MAX);
        big[SDLIVE_NOTIFY_MAX - 2] = 'v';
        big[SDLIVE_NOTIFY_MAX - 1] = '\0';
        assert_int_equal(sdlive_notify_raw(f->d, "K", big), -E2BIG);
        assert_int_equal(harness_drain(&f->m), 0);

        /* Outside systemd: arguments still checked, nothing sent. */
        unsetenv("NOTIFY_SOCKET");
        f->d = sdlive_free(f->d);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(sdlive_notify_mainpid(f->d, 2), 0);
        assert_int_equal(sdlive_notify_exit_status(f->d, 3), 0);
        assert_int_equal(sdlive_notify_bus_error(f->d, "a.b"), 0);
        assert_int_equal(sdlive_notify_access(f->d, SDLIVE_NOTIFY_ACCESS_ALL), 0);
        assert_int_equal(sdlive_notify_raw(f->d, "KEY", "v"), 0);
        assert_int_equal(sdlive_notify_raw(f->d, "KEY", "v\n"), -EINVAL);
        assert_int_equal(sdlive_notify_barrier(f->d, SEC), 0);
        assert_int_equal(harness_drain(&f->m), 0);
}

/* A manager that takes the barrier's descriptor and closes it. */
typedef struct barrier_manager {
        harness_manager *m;
        int delay_ms;
        char msg[64];
        size_t n_fds;
} barrier_manager;

static void *barrier_manager_thread(void *arg) {
        barrier_manager *bm = arg;
        char buf[256];
        int fds[4];
        struct pollfd p = { .fd = bm->m->fd, .events = POLLIN };

        if (poll(&p, 1, 5000) != 1)
                return (void *) 1;
        usleep((useconds_t) bm->delay_ms * 1000);
        if (harness_recv_fds(bm->m, buf, sizeof(buf), fds, 4, &bm->n_fds) < 0)
                return (void *) 1;
        snprintf(bm->msg, sizeof(bm->msg), "%.63s", buf);
        for (size_t i = 0; i < bm->n_fds; i++)
                close(fds[i]);
        return NULL;
}

static void test_barrier(void **state) {
        harness_fixture *f = *state;
        barrier_manager bm = { .m = &f->m, .delay_ms = 50 };
        uint64_t t0, took;
        pthread_t t;
        void *ret;

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(pthread_create(&t, NULL, barrier_manager_thread, &bm), 0);
        t0 = harness_now_ns();
        assert_int_equal(sdlive_notify_barrier(f->d, 5 * SEC), 1);
        took = (harness_now_ns() - t0) / 1000;
        pthread_join(t, &ret);
        assert_null(ret);
        print_message("barrier returned %" PRIu64 " us after the call (manager read it after 50 ms)\n",
                      took);
        assert_string_equal(bm.msg, "BARRIER=1");
        assert_int_equal(bm.n_fds, 1);
        assert_true(took >= 50 * MSEC);
}

/* Nobody reads: the descriptor stays queued, open, and the call times out. */
static void test_barrier_timeout(void **state) {
        harness_fixture *f = *state;
        uint64_t t0, took;
        int fds[2];
        size_t n = 0;

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        t0 = harness_now_ns();
        assert_int_equal(sdlive_notify_barrier(f->d, 100 * MSEC), -ETIMEDOUT);
        took = (harness_now_ns() - t0) / 1000;
        print_message("timed out after %" PRIu64 " us (timeout 100 ms)\n", took);
        assert_true(took >= 100 * MSEC && took < 2 * SEC);
        assert_true(harness_recv_fds(&f->m, f->buf, sizeof(f->buf), fds, 2, &n) > 0);
        assert_string_equal(f->buf, "BARRIER=1");
        assert_int_equal(n, 1);
        close(fds[0]);
        /* A manager that is gone: the send fails, no wait. */
        harness_manager_close(&f->m);
        assert_int_equal(sdlive_notify_barrier(f->d, 5 * SEC), -ENOENT);
}

static void test_parse_address(void **state) {
        static const struct {
                const char *env;
                int r;
                uint32_t cid, port;
                int type;
        } cases[] = {
                { NULL, 0, 0, 0, 0 },
                { "", 0, 0, 0, 0 },
                { "vsock:2:1234", 1, 2, 1234, 0 },
                { "vsock:0:0", 1, 0, 0, 0 },
                { "vsock:4294967294:4294967294", 1, UINT32_MAX - 1, UINT32_MAX - 1, 0 },
                /* As libsystemd: the special CIDs by name, the prefixes that
                 * fix the socket type. */
                { "vsock:host:5", 1, VMADDR_CID_HOST, 5, 0 },
                { "vsock:hypervisor:5", 1, VMADDR_CID_HYPERVISOR, 5, 0 },
                { "vsock:local:5", 1, VMADDR_CID_LOCAL, 5, 0 },
                { "vsock-stream:2:7", 1, 2, 7, SOCK_STREAM },
                { "vsock-seqpacket:host:7", 1, VMADDR_CID_HOST, 7, SOCK_SEQPACKET },
                { "vsock-dgram:3:7", 1, 3, 7, SOCK_DGRAM },
                /* No peer: CID any (empty or 2^32 - 1), port any. */
                { "vsock::1", -EINVAL, 0, 0, 0 },
                { "vsock:4294967295:1", -EINVAL, 0, 0, 0 },
                { "vsock:1:4294967295", -EINVAL, 0, 0, 0 },
                { "vsock-stream::1", -EINVAL, 0, 0, 0 },
                { "vsock:4294967296:1", -EINVAL, 0, 0, 0 },
                { "vsock:1:4294967296", -EINVAL, 0, 0, 0 },
                { "vsock:", -EINVAL, 0, 0, 0 },
                { "vsock:1:", -EINVAL, 0, 0, 0 },
                { "vsock:1:2:3", -EINVAL, 0, 0, 0 },
                { "vsock:-1:2", -EINVAL, 0, 0, 0 },
                { "vsock:+1:2", -EINVAL, 0, 0, 0 },
                { "vsock: 1:2", -EINVAL, 0, 0, 0 },
                { "vsock:0x1:2", -EINVAL, 0, 0, 0 },
                { "vsock:Host:2", -EINVAL, 0, 0, 0 },
                { "vsock:hostx:2", -EINVAL, 0, 0, 0 },
                { "vsock-raw:1:2", -EAFNOSUPPORT, 0, 0, 0 },
                { "VSOCK:1:2", -EAFNOSUPPORT, 0, 0, 0 },
                { "relative", -EAFNOSUPPORT, 0, 0, 0 },
                { "./notify", -EAFNOSUPPORT, 0, 0, 0 },
                { "/", -EINVAL, 0, 0, 0 },
                { "@", -EINVAL, 0, 0, 0 },
                { "/run/notify", 1, 0, 0, 0 },
                { "@abstract", 1, 0, 0, 0 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                sdlive_notify_address a;
                int r;

                memset(&a, 0xa5, sizeof(a)); /* every field must be written over it */
                r = sdlive_notify_parse_address(cases[i].env, &a);
                print_message("\"%s\" -> %d\n", cases[i].env ? cases[i].env : "(unset)", r);
                assert_int_equal(r, cases[i].r);
                if (r > 0 && strncmp(cases[i].env, "vsock", 5) == 0) {
                        assert_int_equal(a.vm.svm_family, AF_VSOCK);
                        assert_int_equal(a.vm.svm_cid, cases[i].cid);
                        assert_int_equal(a.vm.svm_port, cases[i].port);
                        assert_int_equal(a.len, sizeof(a.vm));
                        assert_int_equal(a.vsock_type, cases[i].type);
                } else if (r > 0) {
                        size_t n = strlen(cases[i].env);

                        assert_int_equal(a.un.sun_family, AF_UNIX);
                        assert_int_equal(a.len, offsetof(struct sockaddr_un, sun_path) + n +
                                                        (cases[i].env[0] == '/' ? 1 : 0));
                        assert_memory_equal(a.un.sun_path + 1, cases[i].env + 1, n - 1);
                        assert_int_equal(a.un.sun_path[0], cases[i].env[0] == '/' ? '/' : '\0');
                        assert_int_equal(a.un.sun_path[n], '\0');
                        assert_int_equal(a.vsock_type, 0);
                } else {
                        assert_int_equal(a.sa.sa_family, AF_UNSPEC);
                        assert_int_equal(a.len, 0);
                        assert_int_equal(a.vsock_type, 0);
                }
        }
}

/* What each odd environment gives, as the header and docs/api.md say. */
static void test_odd_environment(void **state) {
        harness_fixture *f = *state;
        char path[128];
        uint64_t usec = 0;
        sdlive *d = NULL;
        int r;

        /* A path where nothing listens: supervised, sends fail -ENOENT. */
        snprintf(path, sizeof(path), "%s/nobody-here", f->m.dir);
        setenv("NOTIFY_SOCKET", path, 1);
        assert_int_equal(sdlive_new(&d, NULL), 0);
        assert_true(sdlive_supervised(d) > 0);
        assert_int_equal(sdlive_notify_ready(d), -ENOENT);
        d = sdlive_free(d);

        /* A relative path: not supervised, -EAFNOSUPPORT says why. */
        setenv("NOTIFY_SOCKET", "run/notify", 1);
        assert_int_equal(sdlive_new(&d, NULL), 0);
        assert_int_equal(sdlive_supervised(d), -EAFNOSUPPORT);
        assert_int_equal(sdlive_notify_ready(d), 0);
        d = sdlive_free(d);

        /* Empty: as unset. */
        setenv("NOTIFY_SOCKET", "", 1);
        assert_int_equal(sdlive_new(&d, NULL), 0);
        assert_int_equal(sdlive_supervised(d), 0);
        assert_int_equal(sdlive_notify_ready(d), 0);
        d = sdlive_free(d);

        /* WATCHDOG_USEC=infinity: supervised but unarmed, -ERANGE. */
        setenv("NOTIFY_SOCKET", f->m.socket_env, 1);
        setenv("WATCHDOG_USEC", "infinity", 1);
        assert_int_equal(sdlive_new(&d, NULL), 0);
        assert_true(sdlive_supervised(d) > 0);
        assert_int_equal(sdlive_watchdog_enabled(d, &usec), -ERANGE);
        assert_int_equal(sdlive_pet_interval(d), 0);
        assert_int_equal(sdlive_pet_watchdog(d), 0);
        d = sdlive_free(d);
        assert_int_equal(harness_drain(&f->m), 0);

        /* vsock: supervised; where the host has no manager (or the kernel
         * no vsock) a send fails with a clear -errno, quickly. */
        unsetenv("WATCHDOG_USEC");
        setenv("NOTIFY_SOCKET", "vsock:2:1", 1);
        assert_int_equal(sdlive_new(&d, NULL), 0);
        assert_true(sdlive_supervised(d) > 0);
        {
                uint64_t t0 = harness_now_ns();
                int fd = 0;

                r = sdlive_notify_ready(d);
                print_message("READY=1 over vsock:2:1: %d (%s) in %.1f ms\n", r, strerror(-r),
                              (double) (harness_now_ns() - t0) / 1e6);
                assert_true(r < 0);
                assert_true(harness_now_ns() - t0 < 2000000000ull);
                assert_int_equal(sdlive_notify_fdstore(d, &fd, 1, "x", 0), -EOPNOTSUPP);
                assert_int_equal(sdlive_notify_barrier(d, SEC), -EOPNOTSUPP);
        }
        sdlive_free(d);
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                HARNESS_TEST(test_fields),
                HARNESS_TEST(test_field_validation),
                HARNESS_TEST(test_barrier_timeout),
                HARNESS_TEST(test_parse_address),
                HARNESS_TEST(test_odd_environment),
        };
        const struct CMUnitTest thread_tests[] = {
                HARNESS_TEST(test_barrier),
        };

        if (argc > 1 && strcmp(argv[1], "thread") == 0)
                return cmocka_run_group_tests_name("protocol threads", thread_tests, NULL, NULL);
        return cmocka_run_group_tests_name("protocol", tests, NULL, NULL);
}
