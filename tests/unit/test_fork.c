/* SPDX-License-Identifier: MIT */
/* A handle belongs to the process that created it: a forked child's copy is
 * unsupervised and unarmed, sends nothing, and cannot stop the parent. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "sdlive_internal.h"

#define SEC SDLIVE_USEC_PER_SEC

/* In the child: counts the calls that did not behave as unsupervised. */
static int child_checks(sdlive *d, harness_clock *c) {
        int bad = 0, p[2];
        uint64_t usec = 0;

#define EXPECT(call, want)                                                    \
        do {                                                                  \
                int r_ = (call);                                              \
                if (r_ != (want)) {                                           \
                        fprintf(stderr, "child: %s = %d, want %d\n", #call, r_, (want)); \
                        bad++;                                                \
                }                                                             \
        } while (0)

        if (pipe(p) < 0)
                return 100;
        EXPECT(sdlive_supervised(d), 0);
        EXPECT(sdlive_watchdog_enabled(d, &usec), 0);
        harness_clock_advance(c, 11 * SEC);
        EXPECT(sdlive_pet_watchdog(d), 0);
        harness_clock_advance(c, 11 * SEC);
        EXPECT(sdlive_pet_watchdog(d), 0);
        EXPECT(sdlive_notify_ready(d), 0);
        EXPECT(sdlive_notify_stopping(d), 0);
        EXPECT(sdlive_notify_reloading(d), 0);
        EXPECT(sdlive_notify_status(d, "child %d", 1), 0);
        EXPECT(sdlive_notify_errno(d, EIO), 0);
        EXPECT(sdlive_notify_extend_timeout(d, SEC), 0);
        EXPECT(sdlive_notify_fdstore(d, p, 1, "child", 0), 0);
        EXPECT(sdlive_notify_fdstore_remove(d, "child"), 0);
        EXPECT(sdlive_watchdog_trigger(d), 0);
        EXPECT(sdlive_notify_barrier(d, 10 * SEC), 0);
        EXPECT(sdlive_notify_mainpid(d, getpid()), 0);
        EXPECT(sdlive_notify_exit_status(d, 3), 0);
        EXPECT(sdlive_notify_bus_error(d, "a.b"), 0);
        EXPECT(sdlive_notify_access(d, SDLIVE_NOTIFY_ACCESS_ALL), 0);
        EXPECT(sdlive_notify_raw(d, "KEY", "child"), 0);
        EXPECT(sdlive_watchdog_set_timeout(d, 30 * SEC), 0);
        /* The child's own stop: its sleeps end, the parent's do not. */
        EXPECT(sdlive_request_stop(d), 0);
        EXPECT(sdlive_stopping(d), 1);
        EXPECT(sdlive_idle(d, SEC), SDLIVE_WAKE_STOP);
#undef EXPECT
        return bad;
}

static void test_forked_child_is_unsupervised(void **state) {
        harness_fixture *f = *state;
        uint64_t usec = 0;
        int status;
        pid_t pid;

        harness_env_watchdog(60 * SEC);
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        assert_true(sdlive_pet_watchdog(f->d) > 0);
        assert_int_equal(harness_drain_count(&f->m, "WATCHDOG=1", NULL), 1);

        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(child_checks(f->d, &f->c));
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        /* Nothing the child did reached the manager. */
        assert_int_equal(harness_drain(&f->m), 0);

        /* The parent still speaks for the service, and was not stopped. */
        assert_true(sdlive_supervised(f->d) > 0);
        assert_true(sdlive_watchdog_enabled(f->d, &usec) > 0);
        assert_int_equal(sdlive_stopping(f->d), 0);
        assert_int_equal(sdlive_idle(f->d, 10 * SEC), SDLIVE_WAKE_TIMEOUT);
        assert_int_equal(harness_drain_count(&f->m, "WATCHDOG=1", NULL), 1);
        assert_true(sdlive_notify_ready(f->d) > 0);
        assert_int_equal(harness_drain(&f->m), 1);
}

/* Outside systemd a child is as unsupervised as its parent. */
static void test_child_of_unsupervised_parent(void **state) {
        harness_fixture *f = *state;
        int status;
        pid_t pid;

        unsetenv("NOTIFY_SOCKET");
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(sdlive_supervised(f->d) == 0 && sdlive_notify_ready(f->d) == 0 &&
                      sdlive_pet_watchdog(f->d) == 0 ? 0 : 1);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

/* The timerfd and the wake-up eventfd are shared with a forked child. A
 * child whose copy of a stalled loop beats again, or that asks for the
 * watchdog fd, must leave the parent's timer and sleepers alone: the parent's
 * timer keeps its deadline (a timer moved to "due now" fires once, the
 * not-due pet then leaves it disarmed and the parent's loop never pets again)
 * and its wake-up eventfd stays quiet (a write the parent never drains makes
 * every sdlive_idle() spin). */
static void test_child_leaves_parent_timer_and_sleepers(void **state) {
        harness_fixture *f = *state;
        struct pollfd p[2];
        struct itimerspec its;
        sdlive_progress *loop;
        int status, tfd;
        pid_t pid;

        harness_env_watchdog(60 * SEC);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(sdlive_progress_register(f->d, "main", 1000, &loop), 0);
        tfd = sdlive_watchdog_fd(f->d);
        assert_true(tfd >= 0);
        (void) usleep(5000);
        /* The first pet is due: it finds the loop stalled and withholds. */
        assert_int_equal(sdlive_pet_watchdog(f->d), 0);
        assert_true(sdlive_progress_stalled(f->d, NULL, 0) > 0);
        (void) harness_drain(&f->m);

        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                sdlive_progress_beat(loop);
                _exit(sdlive_watchdog_fd(f->d) == tfd ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);

        p[0] = (struct pollfd) { .fd = tfd, .events = POLLIN };
        p[1] = (struct pollfd) { .fd = sdlive_schedule_wake_fd(f->d), .events = POLLIN };
        assert_int_equal(poll(p, 2, 0), 0);
        assert_int_equal(timerfd_gettime(tfd, &its), 0);
        assert_true(its.it_value.tv_sec >= 5);
        assert_int_equal(harness_drain(&f->m), 0);
}

/* Handing the service to a child (MAINPID=): under NotifyAccess=main the
 * manager then takes messages only from the child, whose copy of the handle
 * speaks for nobody. The child makes a handle of its own; WATCHDOG_PID still
 * names the parent, so that handle starts unarmed, and
 * sdlive_watchdog_set_timeout() arms it. MAINPID=1 (the manager) is refused
 * by the manager, so here too. */
static void test_mainpid_handoff(void **state) {
        harness_fixture *f = *state;
        char pid_env[24];
        int status;
        pid_t pid;

        harness_env_watchdog(60 * SEC);
        (void) snprintf(pid_env, sizeof(pid_env), "%ld", (long) getpid());
        setenv("WATCHDOG_PID", pid_env, 1);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(sdlive_notify_mainpid(f->d, 1), -EINVAL);
        assert_true(sdlive_pet_watchdog(f->d) > 0);
        (void) harness_drain(&f->m);

        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                sdlive *own = NULL;
                uint64_t usec = 0;
                int bad = 0;

                sdlive_free(f->d);
                bad += sdlive_new(&own, NULL) != 0;
                bad += sdlive_supervised(own) <= 0;
                bad += sdlive_watchdog_enabled(own, &usec) != 0;
                bad += sdlive_watchdog_set_timeout(own, 60 * SEC) <= 0;
                bad += sdlive_watchdog_enabled(own, &usec) <= 0 || usec != 60 * SEC;
                bad += sdlive_pet_interval(own) != 10 * SEC;
                bad += sdlive_notify_ready(own) <= 0;
                sdlive_free(own);
                _exit(bad);
        }
        assert_true(sdlive_notify_mainpid(f->d, pid) > 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        /* MAINPID=, then the child's WATCHDOG_USEC= and READY=1. */
        assert_int_equal(harness_drain(&f->m), 3);
}

/* The stop eventfd is shared: a stop the parent requests also ends the
 * waits of a child sleeping on its copy (the service is stopping), while
 * the child's own sdlive_stopping() stays 0. */
static void test_parent_stop_ends_child_waits(void **state) {
        harness_fixture *f = *state;
        int status;
        pid_t pid;

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int r = sdlive_idle(f->d, 30 * SEC);
                _exit(r == SDLIVE_WAKE_STOP && sdlive_stopping(f->d) == 0 ? 0 : 1);
        }
        (void) usleep(20000);
        assert_int_equal(sdlive_request_stop(f->d), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                HARNESS_TEST(test_forked_child_is_unsupervised),
                HARNESS_TEST(test_child_of_unsupervised_parent),
                HARNESS_TEST(test_child_leaves_parent_timer_and_sleepers),
                HARNESS_TEST(test_mainpid_handoff),
                HARNESS_TEST(test_parent_stop_ends_child_waits),
        };

        return cmocka_run_group_tests_name("fork", tests, NULL, NULL);
}
