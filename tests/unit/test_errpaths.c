/* SPDX-License-Identifier: MIT */
/* Error paths the other unit tests cannot reach with a working kernel:
 * pipe2(), sigaction(), ppoll(), poll(), connect(), getsockopt(), send(),
 * vsnprintf(), snprintf() and calloc() fail or answer on demand (linked with
 * --wrap, in this test binary only). Each case checks the error the caller
 * sees and that the handle still works afterwards. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "sdlive_internal.h"
#include "wrap_countdown.h"

#define SEC SDLIVE_USEC_PER_SEC

/* Countdowns (wrap_countdown.h, which has fail_calloc's wrapper). */
static int fail_pipe2, fail_sigaction, fail_ppoll, fail_vsnprintf, fail_snprintf;
/* The errno a failing ppoll() sets (EINTR once, then the real call). */
static int ppoll_errno;
/* Drained when ppoll() fails: the manager reads the queued BARRIER=1 (and
 * so closes its descriptor) while the caller is interrupted. */
static harness_manager *drain_on_fail;

int __real_pipe2(int fds[2], int flags);
int __wrap_pipe2(int fds[2], int flags);
int __wrap_pipe2(int fds[2], int flags) {
        if (fails_now(&fail_pipe2)) {
                errno = EMFILE;
                return -1;
        }
        return __real_pipe2(fds, flags);
}

int __real_sigaction(int sig, const struct sigaction *sa, struct sigaction *old);
int __wrap_sigaction(int sig, const struct sigaction *sa, struct sigaction *old);
int __wrap_sigaction(int sig, const struct sigaction *sa, struct sigaction *old) {
        if (fails_now(&fail_sigaction)) {
                errno = EINVAL;
                return -1;
        }
        return __real_sigaction(sig, sa, old);
}

int __real_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask);
int __wrap_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask);
int __wrap_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask) {
        if (fails_now(&fail_ppoll)) {
                if (drain_on_fail)
                        harness_drain(drain_on_fail);
                errno = ppoll_errno;
                return -1;
        }
        return __real_ppoll(fds, n, ts, mask);
}

int __real_vsnprintf(char *s, size_t size, const char *format, va_list ap);
int __wrap_vsnprintf(char *s, size_t size, const char *format, va_list ap);
int __wrap_vsnprintf(char *s, size_t size, const char *format, va_list ap) {
        if (fails_now(&fail_vsnprintf)) {
                errno = EOVERFLOW;
                return -1;
        }
        return __real_vsnprintf(s, size, format, ap);
}

int __wrap_snprintf(char *s, size_t size, const char *format, ...);
int __wrap_snprintf(char *s, size_t size, const char *format, ...) {
        va_list ap;
        int r;

        if (fails_now(&fail_snprintf)) {
                errno = EOVERFLOW;
                return -1;
        }
        va_start(ap, format);
        r = __real_vsnprintf(s, size, format, ap);
        va_end(ap);
        return r;
}

/* The same two under _FORTIFY_SOURCE (the default build, as Debian's), where
 * the library's calls are to their checking variants. */
int __real___vsnprintf_chk(char *s, size_t size, int flag, size_t slen, const char *format, va_list ap);
int __wrap___vsnprintf_chk(char *s, size_t size, int flag, size_t slen, const char *format, va_list ap);
int __wrap___vsnprintf_chk(char *s, size_t size, int flag, size_t slen, const char *format, va_list ap) {
        if (fails_now(&fail_vsnprintf)) {
                errno = EOVERFLOW;
                return -1;
        }
        return __real___vsnprintf_chk(s, size, flag, slen, format, ap);
}

int __wrap___snprintf_chk(char *s, size_t size, int flag, size_t slen, const char *format, ...);
int __wrap___snprintf_chk(char *s, size_t size, int flag, size_t slen, const char *format, ...) {
        va_list ap;
        int r;

        if (fails_now(&fail_snprintf)) {
                errno = EOVERFLOW;
                return -1;
        }
        va_start(ap, format);
        r = __real___vsnprintf_chk(s, size, flag, slen, format, ap);
        va_end(ap);
        return r;
}

/*
 * The vsock notify path: connect() answers immediately, or EINPROGRESS and
 * then poll() and getsockopt(SO_ERROR) answer; send() sends all, part or
 * nothing. Only AF_VSOCK sockets are faked: socket() is real (a vsock socket
 * of this kernel, or an AF_UNIX stand-in where there is no vsock).
 */
enum { CONNECT_REAL, CONNECT_NOW, CONNECT_LATER };
static int connect_mode, poll_result, poll_error, sockopt_result, sockopt_error;
static ssize_t send_result; /* >= 0: bytes reported sent; < 0: -errno */

int __real_socket(int domain, int type, int protocol);
int __wrap_socket(int domain, int type, int protocol);
int __wrap_socket(int domain, int type, int protocol) {
        int fd = __real_socket(domain, type, protocol);

        if (fd < 0 && domain == AF_VSOCK && connect_mode != CONNECT_REAL)
                fd = __real_socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        return fd;
}

int __real_connect(int fd, const struct sockaddr *sa, socklen_t len);
int __wrap_connect(int fd, const struct sockaddr *sa, socklen_t len);
int __wrap_connect(int fd, const struct sockaddr *sa, socklen_t len) {
        if (sa->sa_family != AF_VSOCK || connect_mode == CONNECT_REAL)
                return __real_connect(fd, sa, len);
        if (connect_mode == CONNECT_NOW)
                return 0;
        errno = EINPROGRESS;
        return -1;
}

int __real_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout) {
        if (connect_mode != CONNECT_LATER)
                return __real_poll(fds, n, timeout);
        if (poll_result < 0)
                errno = poll_error;
        return poll_result;
}

int __real_getsockopt(int fd, int level, int name, void *value, socklen_t *len);
int __wrap_getsockopt(int fd, int level, int name, void *value, socklen_t *len);
int __wrap_getsockopt(int fd, int level, int name, void *value, socklen_t *len) {
        if (connect_mode != CONNECT_LATER || level != SOL_SOCKET || name != SO_ERROR)
                return __real_getsockopt(fd, level, name, value, len);
        if (sockopt_result < 0) {
                errno = EBADF;
                return -1;
        }
        *(int *) value = sockopt_error;
        return 0;
}

ssize_t __real_send(int fd, const void *buf, size_t len, int flags);
ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags);
ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags) {
        if (connect_mode == CONNECT_REAL)
                return __real_send(fd, buf, len, flags);
        if (send_result < 0) {
                errno = (int) -send_result;
                return -1;
        }
        return send_result;
}

static void test_vsock_connect_and_send(void **state) {
        harness_fixture *f = *state;
        const struct {
                const char *what;
                int mode, poll_result, poll_error, sockopt_result, sockopt_error;
                ssize_t send_result;
                int expected;
        } cases[] = {
                { "connected at once, all sent", CONNECT_NOW, 0, 0, 0, 0, 9, 1 },
                { "connected at once, part sent", CONNECT_NOW, 0, 0, 0, 0, 3, -EIO },
                { "connected at once, send fails", CONNECT_NOW, 0, 0, 0, 0, -ENOBUFS, -ENOBUFS },
                { "connect times out", CONNECT_LATER, 0, 0, 0, 0, 9, -ETIMEDOUT },
                { "poll fails", CONNECT_LATER, -1, ENOMEM, 0, 0, 9, -ENOMEM },
                { "SO_ERROR unreadable", CONNECT_LATER, 1, 0, -1, 0, 9, -EBADF },
                { "connect refused", CONNECT_LATER, 1, 0, 0, ECONNREFUSED, 9, -ECONNREFUSED },
                { "connected later, all sent", CONNECT_LATER, 1, 0, 0, 0, 9, 1 },
        };

        setenv("NOTIFY_SOCKET", "vsock:2:9", 1);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                print_message("%s\n", cases[i].what);
                connect_mode = cases[i].mode;
                poll_result = cases[i].poll_result;
                poll_error = cases[i].poll_error;
                sockopt_result = cases[i].sockopt_result;
                sockopt_error = cases[i].sockopt_error;
                send_result = cases[i].send_result;
                /* "X_KEY=abc" is 9 bytes: send() reporting 9 sent it all. */
                assert_int_equal(sdlive_notify_raw(f->d, "X_KEY", "abc"), cases[i].expected);
        }
        connect_mode = CONNECT_REAL;
        /* SCM_RIGHTS exists only on AF_UNIX: a barrier needs one. */
        assert_int_equal(sdlive_notify_barrier(f->d, SEC), -EOPNOTSUPP);
}

static void test_barrier_failures(void **state) {
        harness_fixture *f = *state;
        uint64_t start;

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        fail_pipe2 = 1;
        assert_int_equal(sdlive_notify_barrier(f->d, SEC), -EMFILE);
        fail_pipe2 = 0;
        assert_int_equal(harness_drain(&f->m), 0);

        /* The manager never reads: the pipe is never closed. */
        start = harness_now_ns();
        assert_int_equal(sdlive_notify_barrier(f->d, 50 * 1000), -ETIMEDOUT);
        print_message("timed out after %.1f ms\n", (double) (harness_now_ns() - start) / 1e6);
        assert_int_equal(harness_drain(&f->m), 1);

        /* A signal interrupts the wait: it goes on for the time left. */
        fail_ppoll = 1;
        ppoll_errno = EINTR;
        assert_int_equal(sdlive_notify_barrier(f->d, 50 * 1000), -ETIMEDOUT);
        assert_int_equal(fail_ppoll, 0);
        /* An infinite wait interrupted goes on without a bound, until the
         * manager (here, during the interruption) has read the barrier. */
        fail_ppoll = 1;
        drain_on_fail = &f->m;
        assert_int_equal(sdlive_notify_barrier(f->d, UINT64_MAX), 1);
        drain_on_fail = NULL;
        /* Or the wait fails. */
        fail_ppoll = 1;
        ppoll_errno = ENOMEM;
        assert_int_equal(sdlive_notify_barrier(f->d, SEC), -ENOMEM);
        assert_int_equal(harness_drain(&f->m), 1);
}

static void test_signal_install_failures(void **state) {
        harness_fixture *f = *state;
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        struct sigaction now;

        o.flags = SDLIVE_HANDLE_SIGNALS;
        for (int nth = 1; nth <= 2; nth++) {
                print_message("sigaction call %d fails\n", nth);
                fail_sigaction = nth;
                assert_int_equal(sdlive_new(&f->d, &o), -EINVAL);
                fail_sigaction = 0;
                /* Nothing left installed, and the ownership is free again. */
                assert_int_equal(sigaction(SIGTERM, NULL, &now), 0);
                assert_ptr_equal(now.sa_handler, SIG_DFL);
                assert_int_equal(sigaction(SIGINT, NULL, &now), 0);
                assert_ptr_equal(now.sa_handler, SIG_DFL);
        }
        assert_int_equal(sdlive_new(&f->d, &o), 0);
}

static void test_idle_wait_failures(void **state) {
        harness_fixture *f = *state;
        int pipefd[2];

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        fail_ppoll = 1;
        ppoll_errno = ENOMEM;
        assert_int_equal(sdlive_idle(f->d, SEC), -ENOMEM);
        /* A descriptor closed under the wait is reported, not waited on. */
        assert_int_equal(pipe(pipefd), 0);
        close(pipefd[0]);
        close(pipefd[1]);
        assert_int_equal(sdlive_wait_fd(f->d, pipefd[0], POLLIN, SEC), -EBADF);
}

static void test_allocation_and_format_failures(void **state) {
        harness_fixture *f = *state;
        int (*status)(sdlive *, const char *, ...) = sdlive_notify_status;
        sdlive_peer *peer = (sdlive_peer *) &peer;
        int fds[SDLIVE_NOTIFY_FDS_MAX + 1] = { 0 };

        assert_int_equal(sdlive_new(&f->d, NULL), 0);

        fail_calloc = 1;
        assert_int_equal(sdlive_peer_new(f->d, SEC, 0, &peer), -ENOMEM);
        assert_ptr_equal(peer, (sdlive_peer *) &peer);

        assert_int_equal(status(f->d, NULL), -EINVAL);
        fail_vsnprintf = 1;
        assert_int_equal(sdlive_notify_status(f->d, "%s", "x"), -EINVAL);
        fail_snprintf = 1;
        assert_int_equal(sdlive_notify_raw(f->d, "X_KEY", "x"), -E2BIG);
        assert_int_equal(harness_drain(&f->m), 0);

        assert_int_equal(sdlive_notify_errno(f->d, 0), -EINVAL);
        assert_int_equal(sdlive_notify_send_fds(f->d, "FDSTORE=1", 9, fds, SDLIVE_NOTIFY_FDS_MAX + 1),
                         -EINVAL);
        assert_int_equal(harness_drain(&f->m), 0);
        /* The handle still speaks. */
        assert_int_equal(sdlive_notify_status(f->d, "ok %d", 1), 1);
        assert_int_equal(harness_drain(&f->m), 1);
}

/* Refusals and malformed text on public calls: each answer checked. */
static void test_refusals_and_malformed_text(void **state) {
        harness_fixture *f = *state;
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        static char invalid[SDLIVE_NOTIFY_MAX + 16];
        char msg[HARNESS_DGRAM_MAX];
        uint64_t usec = 0;

        o.pet_interval_usec = 10 * SEC;
        harness_env_watchdog(60 * SEC);
        assert_int_equal(sdlive_new(&f->d, &o), 0);
        assert_int_equal(sdlive_supervised(NULL), 0);
        assert_int_equal(sdlive_watchdog_enabled(f->d, NULL), 1);
        assert_int_equal(sdlive_watchdog_enabled(f->d, &usec), 1);
        assert_int_equal(usec, 60 * SEC);
        /* A timeout at or below the pet interval the caller fixed. */
        assert_int_equal(sdlive_watchdog_set_timeout(f->d, 10 * SEC), -ERANGE);
        assert_int_equal(sdlive_notify_extend_timeout(f->d, 0), -EINVAL);
        assert_int_equal(sdlive_wait_fd(f->d, -1, POLLIN, SEC), -EINVAL);
        assert_int_equal(harness_drain(&f->m), 0);

        /* D-Bus error names: digits, '_' and capitals inside an element. */
        assert_int_equal(sdlive_notify_bus_error(f->d, "org.Ex_1.Fail2"), 1);
        assert_int_equal(sdlive_notify_bus_error(f->d, "org.ex-1.Fail"), -EINVAL);
        assert_int_equal(harness_drain(&f->m), 1);

        /* Invalid UTF-8 becomes '?': a bad continuation byte, overlong
         * 3- and 4-byte forms, a value past U+10FFFF. */
        assert_int_equal(sdlive_notify_status(f->d, "a\xe2\x28\xa1" "b\xe0\x80\x80" "c\xf0\x80\x80\x80"
                                                    "d\xf4\x90\x80\x80" "e"), 1);
        assert_true(harness_recv(&f->m, msg, sizeof(msg)) > 0);
        assert_string_equal(msg, "STATUS=a?(?b???c????d????e");
        /* A line of invalid bytes is cut where the message is full. */
        memset(invalid, 0xff, sizeof(invalid) - 1);
        assert_int_equal(sdlive_notify_status(f->d, "%s", invalid), 1);
        assert_int_equal(harness_recv(&f->m, msg, sizeof(msg)), SDLIVE_NOTIFY_MAX);
        assert_int_equal(strspn(msg + 7, "?"), SDLIVE_NOTIFY_MAX - 7);

        /* The manager's socket is gone: the send's error reaches the caller. */
        f->d = sdlive_free(f->d);
        setenv("NOTIFY_SOCKET", "/nonexistent/sdlive-notify", 1);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_true(sdlive_watchdog_set_timeout(f->d, 30 * SEC) < 0);
}

/* The clock hook ignores a NULL handle (dereferencing it would crash). */
static void test_clock_null_handle(void **state) {
        sdlive_clock_override(NULL, &harness_fake_clock_ops, NULL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                HARNESS_TEST(test_vsock_connect_and_send),
                HARNESS_TEST(test_barrier_failures),
                HARNESS_TEST(test_signal_install_failures),
                HARNESS_TEST(test_idle_wait_failures),
                HARNESS_TEST(test_allocation_and_format_failures),
                HARNESS_TEST(test_refusals_and_malformed_text),
                cmocka_unit_test(test_clock_null_handle),
        };

        return cmocka_run_group_tests_name("errpaths", tests, NULL, NULL);
}
