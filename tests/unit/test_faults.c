/* SPDX-License-Identifier: MIT */
/* Failure paths of sdlive_new() and sdlive_watchdog_fd(): socket(),
 * eventfd(), timerfd_create() and calloc() fail on demand (linked with
 * --wrap, in this test binary only). A failed call leaves the caller's
 * descriptors exactly as they were, fd 0 included, and leaks nothing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <linux/vm_sockets.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "wrap_countdown.h"

#define SEC SDLIVE_USEC_PER_SEC

/* Which call fails next: its number among the calls from now (1 = the
 * next one), 0 = none (wrap_countdown.h, which has fail_calloc's wrapper). */
static int fail_socket, fail_eventfd, fail_timerfd;

/* AF_VSOCK sockets: 0 real, 1 the kernel has no vsock, 2 no SEQPACKET.
 * The types asked for are recorded. */
static int vsock_mode, vsock_types[8];
static unsigned n_vsock_types;

int __real_socket(int domain, int type, int protocol);
int __wrap_socket(int domain, int type, int protocol);
int __wrap_socket(int domain, int type, int protocol) {
        if (fails_now(&fail_socket)) {
                errno = EMFILE;
                return -1;
        }
        if (domain == AF_VSOCK) {
                int base = type & ~(SOCK_CLOEXEC | SOCK_NONBLOCK);

                if (n_vsock_types < 8)
                        vsock_types[n_vsock_types++] = base;
                if (vsock_mode == 1) {
                        errno = EAFNOSUPPORT;
                        return -1;
                }
                if (vsock_mode == 2 && base == SOCK_SEQPACKET) {
                        errno = ESOCKTNOSUPPORT;
                        return -1;
                }
        }
        return __real_socket(domain, type, protocol);
}

int __real_eventfd(unsigned int initval, int flags);
int __wrap_eventfd(unsigned int initval, int flags);
int __wrap_eventfd(unsigned int initval, int flags) {
        if (fails_now(&fail_eventfd)) {
                errno = EMFILE;
                return -1;
        }
        return __real_eventfd(initval, flags);
}

int __real_timerfd_create(int clockid, int flags);
int __wrap_timerfd_create(int clockid, int flags);
int __wrap_timerfd_create(int clockid, int flags) {
        if (fails_now(&fail_timerfd)) {
                errno = ENFILE;
                return -1;
        }
        return __real_timerfd_create(clockid, flags);
}

/* This process's descriptors and what they point to, one per line. */
static void fd_table(char *out, size_t size) {
        DIR *dir = opendir("/proc/self/fd");
        struct dirent *e;
        size_t len = 0;
        int self;

        assert_non_null(dir);
        self = dirfd(dir);
        out[0] = '\0';
        while ((e = readdir(dir))) {
                char link[300], target[256];
                ssize_t l;

                if (e->d_name[0] == '.' || atoi(e->d_name) == self)
                        continue;
                snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
                l = readlink(link, target, sizeof(target) - 1);
                target[l < 0 ? 0 : l] = '\0';
                len += (size_t) snprintf(out + len, size - len, "%s -> %s\n", e->d_name, target);
                assert_true(len < size);
        }
        closedir(dir);
}

typedef struct fault {
        const char *what;
        int *counter;
        int nth;
        int error;
} fault;

static void test_new_failures_leave_fds_alone(void **state) {
        harness_fixture *f = *state;
        const fault faults[] = {
                { "calloc", &fail_calloc, 1, -ENOMEM },
                { "socket", &fail_socket, 1, -EMFILE },
                { "stop eventfd", &fail_eventfd, 1, -EMFILE },
                { "wake eventfd", &fail_eventfd, 2, -EMFILE },
        };
        char before[8192], after[8192];
        int opened = -1;

        /* The descriptor a half-initialised handle would close first. */
        if (fcntl(0, F_GETFD) < 0) {
                opened = open("/dev/null", O_RDONLY);
                assert_int_equal(opened, 0);
        }
        harness_env_watchdog(60 * SEC);
        for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
                sdlive *d = (sdlive *) &d;

                print_message("%s fails\n", faults[i].what);
                fd_table(before, sizeof(before));
                *faults[i].counter = faults[i].nth;
                assert_int_equal(sdlive_new(&d, NULL), faults[i].error);
                *faults[i].counter = 0;
                assert_ptr_equal(d, (sdlive *) &d); /* *ret untouched */
                fd_table(after, sizeof(after));
                assert_string_equal(before, after);
        }
        /* The other refusals, signal ownership included. */
        {
                sdlive_options o = SDLIVE_OPTIONS_INIT;
                sdlive *owner = NULL, *d = NULL;

                o.pet_interval_usec = 60 * SEC;
                fd_table(before, sizeof(before));
                assert_int_equal(sdlive_new(&d, &o), -ERANGE);
                o = (sdlive_options) SDLIVE_OPTIONS_INIT;
                o.flags = SDLIVE_HANDLE_SIGNALS;
                assert_int_equal(sdlive_new(&owner, &o), 0);
                fd_table(before, sizeof(before));
                assert_int_equal(sdlive_new(&d, &o), -EBUSY);
                fd_table(after, sizeof(after));
                assert_string_equal(before, after);
                sdlive_free(owner);
        }
        /* Nothing failing: the same handle works. */
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_true(sdlive_pet_watchdog(f->d) > 0);
        if (opened == 0)
                close(0);
}

static void test_timerfd_failure(void **state) {
        harness_fixture *f = *state;
        char base[8192], before[8192], after[8192];
        int fd;

        harness_env_watchdog(60 * SEC);
        fd_table(base, sizeof(base));
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        fd_table(before, sizeof(before));
        fail_timerfd = 1;
        assert_int_equal(sdlive_watchdog_fd(f->d), -ENFILE);
        fail_timerfd = 0;
        fd_table(after, sizeof(after));
        assert_string_equal(before, after);
        /* Pets go on, and a later call gets the descriptor. */
        assert_true(sdlive_pet_watchdog(f->d) > 0);
        fd = sdlive_watchdog_fd(f->d);
        assert_true(fd >= 0);
        assert_int_equal(sdlive_watchdog_fd(f->d), fd);
        f->d = sdlive_free(f->d);
        fd_table(after, sizeof(after));
        assert_string_equal(base, after);
}

/* NOTIFY_SOCKET=vsock:...: no socket at sdlive_new(); a kernel without
 * vsock gives -EAFNOSUPPORT per message; a transport without SOCK_SEQPACKET
 * falls back to SOCK_STREAM. */
static void test_vsock_fallback(void **state) {
        harness_fixture *f = *state;
        int r;

        setenv("NOTIFY_SOCKET", "vsock:3:9", 1);
        n_vsock_types = 0;
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(n_vsock_types, 0);
        assert_true(sdlive_supervised(f->d) > 0);

        vsock_mode = 1;
        assert_int_equal(sdlive_notify_ready(f->d), -EAFNOSUPPORT);
        assert_int_equal(n_vsock_types, 1);
        assert_int_equal(vsock_types[0], SOCK_SEQPACKET);

        vsock_mode = 2;
        n_vsock_types = 0;
        r = sdlive_notify_ready(f->d);
        print_message("without SOCK_SEQPACKET: %d (%s)\n", r, strerror(-r));
        assert_true(r < 0);
        assert_int_equal(n_vsock_types, 2);
        assert_int_equal(vsock_types[0], SOCK_SEQPACKET);
        assert_int_equal(vsock_types[1], SOCK_STREAM);
        vsock_mode = 0;
}

/* A prefix that fixes the socket type ("vsock-seqpacket:") gets that type
 * only: no fallback. */
static void test_vsock_fixed_type(void **state) {
        harness_fixture *f = *state;
        int r;

        setenv("NOTIFY_SOCKET", "vsock-seqpacket:3:9", 1);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_true(sdlive_supervised(f->d) > 0);

        vsock_mode = 2;
        n_vsock_types = 0;
        r = sdlive_notify_ready(f->d);
        vsock_mode = 0;
        assert_int_equal(r, -ESOCKTNOSUPPORT);
        assert_int_equal(n_vsock_types, 1);
        assert_int_equal(vsock_types[0], SOCK_SEQPACKET);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                HARNESS_TEST(test_new_failures_leave_fds_alone),
                HARNESS_TEST(test_timerfd_failure),
                HARNESS_TEST(test_vsock_fallback),
                HARNESS_TEST(test_vsock_fixed_type),
        };

        return cmocka_run_group_tests_name("faults", tests, NULL, NULL);
}
