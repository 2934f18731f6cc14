/* SPDX-License-Identifier: MIT */
/*
 * The worker's job-executor thread (examples/worker/executor.c): a batch
 * of jobs runs in order, the results that finish before the main loop
 * looks share one wake-up, a new batch waits until every result was
 * taken, and the jobs of a batch not started yet can be dropped; a
 * job parsed from its payload, and its result, are written whole.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "executor.h"
#include "job.h"

/* The ids of the jobs run, in the order they ran. */
static _Atomic unsigned n_ran;
static uint64_t ran[EXECUTOR_BATCH_MAX];
/* A job with seed 1 waits for this. */
static _Atomic bool released;
static _Atomic bool holding;

static void record(const job *j, job_result *result) {
        if (j->seed == 1) {
                atomic_store(&holding, true);
                while (!atomic_load(&released))
                        usleep(1000);
        }
        ran[atomic_load(&n_ran)] = j->id;
        result->id = j->id;
        result->value = j->id * 10;
        atomic_fetch_add(&n_ran, 1);
}

struct fixture {
        sdlive *d;
        fault_switch hang;
        executor *e;
};

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        atomic_store(&n_ran, 0);
        atomic_store(&released, false);
        atomic_store(&holding, false);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        fault_switch_init(&f->hang, "job executor", NULL, "SDLIVE_TEST_NO_SUCH_VARIABLE");
        assert_int_equal(executor_start(&f->e, f->d, record, 0, &f->hang), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;

        atomic_store(&released, true);
        assert_int_equal(executor_stop(f->e, 1000 * SDLIVE_USEC_PER_MSEC), 0);
        sdlive_free(f->d);
        free(f);
        return 0;
}

/* Waits until n jobs ran and the thread is between jobs or idle. */
static void wait_ran(struct fixture *f, unsigned n) {
        for (int i = 0; i < 2000 && (atomic_load(&n_ran) < n || executor_busy_usec(f->e)); i++)
                usleep(1000);
        assert_int_equal(atomic_load(&n_ran), n);
}

static void batch_runs_in_order_with_one_wakeup(void **state) {
        struct fixture *f = *state;
        job jobs[8];
        job_result results[EXECUTOR_BATCH_MAX];
        eventfd_t wakeups = 0;

        for (unsigned i = 0; i < 8; i++)
                jobs[i] = (job) { .id = 100 + i, .seed = 2 };
        assert_int_equal(executor_submit_batch(f->e, jobs, 0), -EINVAL);
        assert_int_equal(executor_submit_batch(f->e, jobs, EXECUTOR_BATCH_MAX + 1), -EINVAL);
        assert_int_equal(executor_submit_batch(f->e, jobs, 8), 0);
        wait_ran(f, 8);
        usleep(20000); /* a signal still on its way has arrived */
        assert_int_equal(eventfd_read(executor_result_fd(f->e), &wakeups), 0);
        assert_int_equal(wakeups, 1);
        /* Not collected yet: the executor takes no new batch. */
        assert_int_equal(executor_submit_batch(f->e, jobs, 1), -EBUSY);
        assert_int_equal(executor_take_results(f->e, results, 3), 3);
        assert_int_equal(executor_take_results(f->e, results + 3, EXECUTOR_BATCH_MAX), 5);
        for (unsigned i = 0; i < 8; i++) {
                assert_int_equal(ran[i], 100 + i);
                assert_int_equal(results[i].id, 100 + i);
                assert_int_equal(results[i].value, (100 + i) * 10);
        }
        assert_int_equal(executor_take_results(f->e, results, EXECUTOR_BATCH_MAX), 0);
        assert_int_equal(executor_submit_batch(f->e, jobs, 1), 0);
        wait_ran(f, 9);
}

static void jobs_not_started_are_dropped(void **state) {
        struct fixture *f = *state;
        job jobs[3] = { { .id = 1, .seed = 1 }, { .id = 2, .seed = 2 }, { .id = 3, .seed = 2 } };
        job_result results[EXECUTOR_BATCH_MAX];

        assert_int_equal(executor_submit_batch(f->e, jobs, 3), 0);
        for (int i = 0; i < 2000 && !atomic_load(&holding); i++)
                usleep(1000);
        assert_true(atomic_load(&holding));
        /* Job 1 runs: it stays, 2 and 3 go. */
        assert_int_equal(executor_cancel_rest(f->e), 1);
        atomic_store(&released, true);
        wait_ran(f, 1);
        usleep(20000);
        assert_int_equal(atomic_load(&n_ran), 1);
        assert_int_equal(executor_take_results(f->e, results, EXECUTOR_BATCH_MAX), 1);
        assert_int_equal(results[0].id, 1);
        assert_int_equal(executor_submit_batch(f->e, jobs + 1, 1), 0);
        wait_ran(f, 2);
        assert_int_equal(ran[1], 2);
}

/* Every field is written over what an uninitialised struct holds; a
 * payload refused leaves the job as it was. */
static void payload_and_result_are_written_whole(void **state) {
        static const struct {
                const char *payload;
                enum job_kind kind;
                uint64_t spin_usec;
        } cases[] = {
                { "noop", JOB_NOOP, 0 },
                { "checksum", JOB_CHECKSUM, 0 },
                { "spin 2500", JOB_SPIN, 2500 },
        };
        job j, before;
        job_result r;

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                memset(&j, 0xa5, sizeof(j));
                assert_int_equal(job_from_payload(cases[i].payload, &j), 0);
                assert_int_equal(j.kind, cases[i].kind);
                assert_int_equal(j.spin_usec, cases[i].spin_usec);
                assert_int_equal(j.id, 0);
                assert_int_equal(j.seed, 0);
        }
        memset(&j, 0xa5, sizeof(j));
        memcpy(&before, &j, sizeof(j));
        assert_int_equal(job_from_payload("spin", &j), -EINVAL);
        assert_memory_equal(&j, &before, sizeof(j));

        j = (job) { .id = 7, .kind = JOB_NOOP };
        memset(&r, 0xa5, sizeof(r));
        job_run(&j, &r);
        assert_int_equal(r.id, 7);
        assert_int_equal(r.value, 0);
        assert_int_equal(r.outcome, 0);
        j = (job) { .id = 8, .seed = 3, .kind = JOB_CHECKSUM };
        memset(&r, 0xa5, sizeof(r));
        job_run(&j, &r);
        assert_int_equal(r.id, 8);
        assert_int_not_equal(r.value, UINT64_C(0xa5a5a5a5a5a5a5a5));
        assert_int_equal(r.outcome, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(batch_runs_in_order_with_one_wakeup, setup, teardown),
                cmocka_unit_test_setup_teardown(jobs_not_started_are_dropped, setup, teardown),
                cmocka_unit_test(payload_and_result_are_written_whole),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
