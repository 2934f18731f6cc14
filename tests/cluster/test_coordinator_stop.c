/* SPDX-License-Identifier: MIT */
/* The end of a leader's term on a slow store: the coordinator's stop
 * waits for its writer's store call in progress (a lock another client
 * holds keeps it 1.5 s) and pets the caller's watchdog meanwhile, so a
 * main loop ending its term is not taken for a stale one. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cluster_test_util.h"
#include "coordinator.h"

#define MSEC SDLIVE_USEC_PER_MSEC

static void stopping_pets_while_the_writer_finishes_its_call(void **state) {
        struct coordinator_config cfg;
        struct coordinator *c = NULL;
        struct temp_store t;
        struct store *s;
        uint64_t stopping, took;
        sqlite3 *db;
        sdlive *d;

        (void) state;
        temp_store_create(&t);
        s = temp_store_open(&t);
        d = test_handle_petting(20 * MSEC, NULL);
        cfg = (struct coordinator_config) {
                .store_url = t.url,
                .fence = { .lease = "cluster", .holder = "a" },
                .lock_timeout_usec = 1500 * MSEC,
                .caller_wait_usec = 100 * MSEC,
        };
        assert_int_equal(store_lease_acquire(s, "cluster", "a", 60 * SDLIVE_USEC_PER_SEC, &cfg.fence.generation), 0);
        /* Another client's write lock: the writer's start-up (requeuing
         * what an earlier term left in flight) waits on it. */
        assert_int_equal(sqlite3_open(t.path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
        /* Not done within the caller's wait: it goes on in the background. */
        assert_int_equal(coordinator_start(&c, d, &cfg), 0);
        sdlive_pet_watchdog(d);
        test_sleep_usec(100 * MSEC);
        stopping = monotonic_usec();
        c = coordinator_stop_final(c, NULL);
        took = monotonic_usec() - stopping;
        assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        /* Up to the store's lock timeout. */
        assert_stop_petted(d, took, 500 * MSEC, "the writer's call");
        sdlive_free(d);
        store_close(s);
        temp_store_remove(&t);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(stopping_pets_while_the_writer_finishes_its_call),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
