/* SPDX-License-Identifier: MIT */
/* The file descriptor store: FDSTORE=1 messages carry the descriptors with
 * SCM_RIGHTS, names are validated as the manager validates them, removal,
 * and no system call outside systemd. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

/* The datagram the last call sent, with its descriptors. */
static size_t received_fds(harness_fixture *f, int *fds, size_t max) {
        size_t n = 0;

        assert_true(harness_recv_fds(&f->m, f->buf, sizeof(f->buf), fds, max, &n) > 0);
        assert_int_equal(harness_drain(&f->m), 0);
        return n;
}

static bool same_file(int a, int b) {
        struct stat sa, sb;

        assert_int_equal(fstat(a, &sa), 0);
        assert_int_equal(fstat(b, &sb), 0);
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void test_store_one(void **state) {
        harness_fixture *f = *state;
        int p[2], got[4];
        char c = 0;

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(pipe(p), 0);
        assert_true(sdlive_notify_fdstore(f->d, &p[0], 1, "conn-1", 0) > 0);
        assert_int_equal(received_fds(f, got, 4), 1);
        assert_string_equal(f->buf, "FDSTORE=1\nFDNAME=conn-1");
        /* The manager holds the very same pipe... */
        assert_true(got[0] != p[0]);
        assert_true(same_file(got[0], p[0]));
        assert_int_equal(write(p[1], "x", 1), 1);
        assert_int_equal(read(got[0], &c, 1), 1);
        assert_int_equal(c, 'x');
        /* ...and the caller's descriptor is still the caller's. */
        assert_true(fcntl(p[0], F_GETFD) >= 0);
        close(got[0]);
        close(p[0]);
        close(p[1]);
}

static void test_store_many_no_poll(void **state) {
        harness_fixture *f = *state;
        int p[2], fds[3], got[8];

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(pipe(p), 0);
        fds[0] = p[0], fds[1] = p[1], fds[2] = p[0];
        assert_true(sdlive_notify_fdstore(f->d, fds, 3, "pair", SDLIVE_FDSTORE_NO_POLL) > 0);
        assert_int_equal(received_fds(f, got, 8), 3);
        assert_string_equal(f->buf, "FDSTORE=1\nFDNAME=pair\nFDPOLL=0");
        for (int i = 0; i < 3; i++) {
                assert_true(same_file(got[i], fds[i]));
                close(got[i]);
        }

        /* Without a name the manager files them as "stored". */
        assert_true(sdlive_notify_fdstore(f->d, p, 1, NULL, 0) > 0);
        assert_int_equal(received_fds(f, got, 8), 1);
        assert_string_equal(f->buf, "FDSTORE=1");
        close(got[0]);
        close(p[0]);
        close(p[1]);
}

static void test_store_max(void **state) {
        harness_fixture *f = *state;
        int fds[SDLIVE_NOTIFY_FDS_MAX + 1], got[SDLIVE_NOTIFY_FDS_MAX + 1];
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        size_t n;

        assert_true(fd >= 0);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        for (size_t i = 0; i <= SDLIVE_NOTIFY_FDS_MAX; i++)
                fds[i] = fd;
        assert_int_equal(sdlive_notify_fdstore(f->d, fds, SDLIVE_NOTIFY_FDS_MAX + 1, "all", 0),
                         -EINVAL);
        assert_int_equal(harness_drain(&f->m), 0);
        assert_true(sdlive_notify_fdstore(f->d, fds, SDLIVE_NOTIFY_FDS_MAX, "all", 0) > 0);
        n = received_fds(f, got, SDLIVE_NOTIFY_FDS_MAX + 1);
        print_message("received %zu descriptors\n", n);
        assert_int_equal(n, SDLIVE_NOTIFY_FDS_MAX);
        for (size_t i = 0; i < n; i++)
                close(got[i]);
        close(fd);
}

static void test_remove(void **state) {
        harness_fixture *f = *state;
        int got[2];

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_true(sdlive_notify_fdstore_remove(f->d, "conn-1") > 0);
        assert_int_equal(received_fds(f, got, 2), 0);
        assert_string_equal(f->buf, "FDSTOREREMOVE=1\nFDNAME=conn-1");
        assert_int_equal(sdlive_notify_fdstore_remove(f->d, NULL), -EINVAL);
        assert_int_equal(sdlive_notify_fdstore_remove(f->d, ""), -EINVAL);
        assert_int_equal(sdlive_notify_fdstore_remove(f->d, "a:b"), -EINVAL);
        assert_int_equal(harness_drain(&f->m), 0);
}

static void test_names(void **state) {
        harness_fixture *f = *state;
        char longest[SDLIVE_FDNAME_MAX + 2];
        const char *const bad[] = {
                "", "a:b", ":", "tab\there", "new\nline", "del\x7f", "caf\xc3\xa9", "\x01",
        };
        const char *const good[] = { "a", "with space", "!\"#$%&'()*+,-./;<=>?@[\\]^_`{|}~" };
        int p[2], got[2];

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(pipe(p), 0);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                print_message("bad name %zu\n", i);
                assert_int_equal(sdlive_notify_fdstore(f->d, p, 1, bad[i], 0), -EINVAL);
                assert_int_equal(sdlive_notify_fdstore_remove(f->d, bad[i]), -EINVAL);
        }
        assert_int_equal(harness_drain(&f->m), 0);

        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                char expect[128];

                assert_true(sdlive_notify_fdstore(f->d, p, 1, good[i], 0) > 0);
                assert_int_equal(received_fds(f, got, 2), 1);
                close(got[0]);
                snprintf(expect, sizeof(expect), "FDSTORE=1\nFDNAME=%s", good[i]);
                assert_string_equal(f->buf, expect);
        }

        memset(longest, 'n', sizeof(longest));
        longest[SDLIVE_FDNAME_MAX + 1] = '\0';
        assert_int_equal(sdlive_notify_fdstore(f->d, p, 1, longest, 0), -EINVAL);
        assert_int_equal(sdlive_notify_fdstore_remove(f->d, longest), -EINVAL);
        longest[SDLIVE_FDNAME_MAX] = '\0';
        assert_true(sdlive_notify_fdstore(f->d, p, 1, longest, 0) > 0);
        assert_int_equal(received_fds(f, got, 2), 1);
        close(got[0]);
        assert_int_equal(strlen(f->buf), strlen("FDSTORE=1\nFDNAME=") + SDLIVE_FDNAME_MAX);
        assert_true(sdlive_notify_fdstore_remove(f->d, longest) > 0);
        assert_int_equal(harness_drain(&f->m), 1);
        close(p[0]);
        close(p[1]);
}

static void test_bad_arguments(void **state) {
        harness_fixture *f = *state;
        int p[2], fds[2];

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(pipe(p), 0);
        fds[0] = p[0], fds[1] = -1;
        assert_int_equal(sdlive_notify_fdstore(f->d, NULL, 1, "x", 0), -EINVAL);
        assert_int_equal(sdlive_notify_fdstore(f->d, p, 0, "x", 0), -EINVAL);
        assert_int_equal(sdlive_notify_fdstore(f->d, fds, 2, "x", 0), -EINVAL);
        assert_int_equal(sdlive_notify_fdstore(f->d, p, 1, "x", 1u << 7), -EINVAL);
        assert_int_equal(harness_drain(&f->m), 0);

        /* A descriptor that is not open is the kernel's verdict. */
        close(p[1]);
        assert_int_equal(sdlive_notify_fdstore(f->d, &p[1], 1, "x", 0), -EBADF);
        assert_int_equal(harness_drain(&f->m), 0);
        close(p[0]);
}

/* Outside systemd (and for a NULL handle) nothing is sent and no system call
 * runs: a closed descriptor, which sendmsg() would refuse with -EBADF,
 * gives 0. Arguments are still checked. */
static void test_unsupervised(void **state) {
        harness_fixture *f = *state;
        int closed, sockets;
        sdlive *d = NULL;

        closed = open("/dev/null", O_RDONLY | O_CLOEXEC);
        assert_true(closed >= 0);
        close(closed);
        unsetenv("NOTIFY_SOCKET");
        sockets = harness_count_sockets();
        assert_int_equal(sdlive_new(&d, NULL), 0);
        assert_int_equal(harness_count_sockets(), sockets);
        assert_int_equal(sdlive_notify_fdstore(d, &closed, 1, "x", 0), 0);
        assert_int_equal(sdlive_notify_fdstore(d, &closed, 1, NULL, SDLIVE_FDSTORE_NO_POLL), 0);
        assert_int_equal(sdlive_notify_fdstore_remove(d, "x"), 0);
        assert_int_equal(sdlive_notify_fdstore(d, &closed, 1, "a:b", 0), -EINVAL);
        assert_int_equal(sdlive_notify_fdstore(NULL, &closed, 1, "x", 0), 0);
        assert_int_equal(sdlive_notify_fdstore_remove(NULL, "x"), 0);
        assert_int_equal(sdlive_notify_fdstore_remove(NULL, ""), -EINVAL);
        assert_int_equal(harness_count_sockets(), sockets);
        sdlive_free(d);
        assert_int_equal(harness_drain(&f->m), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                HARNESS_TEST(test_store_one),
                HARNESS_TEST(test_store_many_no_poll),
                HARNESS_TEST(test_store_max),
                HARNESS_TEST(test_remove),
                HARNESS_TEST(test_names),
                HARNESS_TEST(test_bad_arguments),
                HARNESS_TEST(test_unsupervised),
        };

        return cmocka_run_group_tests_name("fdstore", tests, NULL, NULL);
}
