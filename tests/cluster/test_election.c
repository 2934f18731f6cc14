/* SPDX-License-Identifier: MIT */
/* The election loop on the injected clock against a real SQLite store: it
 * wins a free lease, waits on a held one without ever looking stalled, and
 * the spin fault (idling, petting, but no attempts) is seen as a stall;
 * the lease refresher's handle is opened before the winning attempt; a
 * won lease's first deadline counts from the statement that dated it; a
 * streak of store failures is logged where it begins and where it ends. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cluster_test_util.h"
#include "election.h"
#include "harness.h"

#define MSEC SDLIVE_USEC_PER_MSEC
#define POLL (500 * MSEC)
#define TTL (3 * SDLIVE_USEC_PER_SEC)

typedef struct fixture {
        harness_clock c;
        sdlive *d;
        sdlive_progress *p;
        struct election_store es;
        char spin_file[128];
        /* what the watcher thread saw */
        uint64_t watch_until;     /* fake time at which it stops the loop */
        uint64_t stalled_at;      /* fake time of the first stall, 0 none */
        char stalled_name[32];
} fixture;

static int setup(void **state) {
        fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        f->d = test_handle_petting(100 * MSEC, &f->c);
        assert_int_equal(sdlive_progress_register(f->d, "election", 3 * POLL, &f->p), 0);
        election_store_create(&f->es, f->d, TTL, POLL);
        snprintf(f->spin_file, sizeof(f->spin_file), "%s/spin", f->es.t.dir);
        f->es.e.progress = f->p;
        f->es.e.spin_file = f->spin_file;
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;

        sdlive_progress_unregister(f->p);
        sdlive_free(f->d);
        unlink(f->spin_file);
        election_store_remove(&f->es);
        free(f);
        return 0;
}

/* Watches the loop from outside: records the first stall, stops the loop
 * at the first stall or once the fake time reaches watch_until. */
static void *watcher(void *userdata) {
        fixture *f = userdata;
        uint64_t deadline = monotonic_usec() + 10 * SDLIVE_USEC_PER_SEC;

        while (monotonic_usec() < deadline) {
                if (sdlive_progress_stalled(f->d, f->stalled_name, sizeof(f->stalled_name)) > 0) {
                        f->stalled_at = harness_clock_get(&f->c);
                        break;
                }
                if (harness_clock_get(&f->c) >= f->watch_until)
                        break;
                sched_yield();
        }
        sdlive_request_stop(f->d);
        return NULL;
}

/* Runs the election with the watcher; returns election_run()'s result. */
static int run_watched(fixture *f, uint64_t fake_span) {
        struct election_result won;
        pthread_t thread;
        int r;

        f->watch_until = harness_clock_get(&f->c) + fake_span;
        assert_int_equal(pthread_create(&thread, NULL, watcher, f), 0);
        r = election_run(&f->es.e, &won);
        pthread_join(thread, NULL);
        return r;
}

static void free_lease_is_won(void **state) {
        fixture *f = *state;
        struct election_result won;
        struct store_lease_info info;

        assert_int_equal(election_run(&f->es.e, &won), 1);
        assert_true(won.generation > 0);
        assert_int_equal(store_lease_read(f->es.other, "cluster", &info), 0);
        assert_true(info.held);
        assert_string_equal(info.holder, "a");
        assert_int_equal(info.generation, won.generation);
}

/* A won store lease writes every field of the result, whatever the caller's
 * memory held before: the etcd fields are 0, so the leader never takes the
 * store's lease for an etcd one. */
static void won_store_lease_fills_the_whole_result(void **state) {
        fixture *f = *state;
        struct election_result won;
        uint64_t before = monotonic_usec();

        memset(&won, 0xa5, sizeof(won));
        assert_int_equal(election_run(&f->es.e, &won), 1);
        assert_true(won.generation > 0 && won.generation < 1000);
        assert_true(won.acquired_at_usec >= before && won.acquired_at_usec <= monotonic_usec());
        assert_int_equal(won.etcd_lease, 0);
        assert_int_equal(won.act_until_usec, 0);
}

/* The refresher's handle is open before the winning attempt (the won
 * lease's first term never waits for a connect), in the lease's store. */
static void refresher_handle_is_open_when_the_lease_is_won(void **state) {
        fixture *f = *state;
        struct election_result won;
        struct store *spare = NULL;

        f->es.e.refresher_store = &spare;
        f->es.e.refresher_lock_timeout_usec = 100 * MSEC;
        assert_int_equal(election_run(&f->es.e, &won), 1);
        assert_non_null(spare);
        assert_string_equal(store_identity(spare), store_identity(f->es.s));
        /* Usable at once: the won lease renews through it. */
        assert_int_equal(store_lease_refresh(spare, "cluster", "a", won.generation, TTL), 0);
        store_close(spare);
}

struct unlocker {
        sqlite3 *db;
        uint64_t unlocked_at; /* monotonic, just before the lock goes */
};

static void *unlock_later(void *userdata) {
        struct unlocker *u = userdata;

        test_sleep_usec(300 * MSEC);
        u->unlocked_at = monotonic_usec();
        assert_int_equal(sqlite3_exec(u->db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
        return NULL;
}

/* The winning call waits 300 ms for another client's write lock before
 * its acquiring statement can run (as on a slow network it waits for the
 * identity read and the durability check): the term's first deadline
 * counts from after that wait, just before the statement that dated the
 * lease, not from before the call. */
static void won_lease_counts_from_the_statement_that_dated_it(void **state) {
        fixture *f = *state;
        struct election_result won = { 0 };
        struct unlocker u = { 0 };
        uint64_t called, returned;
        pthread_t thread;

        f->es.s = temp_store_open(&f->es.t);
        assert_int_equal(store_set_lock_timeout(f->es.s, 2 * SDLIVE_USEC_PER_SEC), 0);
        assert_int_equal(sqlite3_open(f->es.t.path, &u.db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(u.db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
        called = monotonic_usec();
        assert_int_equal(pthread_create(&thread, NULL, unlock_later, &u), 0);
        assert_int_equal(election_run(&f->es.e, &won), 1);
        returned = monotonic_usec();
        pthread_join(thread, NULL);
        sqlite3_close(u.db);
        print_message("the call began %llu ms before the lock went; the lease counts from %lld ms after it "
                      "(the call returned %llu ms after it)\n",
                      (unsigned long long) ((u.unlocked_at - called) / MSEC),
                      (long long) ((int64_t) won.acquired_at_usec - (int64_t) u.unlocked_at) / (long long) MSEC,
                      (unsigned long long) ((returned - u.unlocked_at) / MSEC));
        /* The wait did happen inside the call... */
        assert_true(u.unlocked_at - called >= 250 * MSEC);
        /* ...and came not out of the lease: counted from after it, and
         * no later than the call's end (the statement's dating). */
        assert_true(won.acquired_at_usec >= u.unlocked_at);
        assert_true(won.acquired_at_usec <= returned);
}

/* Runs the election with stderr, where the daemon's log goes, captured
 * into log (at most size - 1 bytes, NUL-terminated). */
static int run_logged(fixture *f, struct election_result *won, char *log, size_t size) {
        char path[] = "/tmp/sdlive-election-log.XXXXXX";
        int fd = mkstemp(path), saved = dup(STDERR_FILENO), r;
        ssize_t n;

        assert_true(fd >= 0 && saved >= 0);
        unlink(path);
        fflush(stderr);
        assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
        r = election_run(&f->es.e, won);
        fflush(stderr);
        assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
        close(saved);
        n = pread(fd, log, size - 1, 0);
        close(fd);
        log[n > 0 ? n : 0] = '\0';
        return r;
}

/* A standby whose attempts fail on a store another client keeps locked
 * says so once, and says when the store answers again, also when that
 * answer is the lease won: the operator, and the fault runs that read the
 * log, see where the streak of failures ended. */
static void a_streak_of_failures_ends_in_the_log_when_the_lease_is_won(void **state) {
        fixture *f = *state;
        struct election_result won = { 0 };
        struct unlocker u = { 0 };
        const char *unavailable, *again, *rest;
        char log[8192];
        pthread_t thread;

        f->es.s = temp_store_open(&f->es.t);
        assert_int_equal(store_set_lock_timeout(f->es.s, 20 * MSEC), 0);
        assert_int_equal(sqlite3_open(f->es.t.path, &u.db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(u.db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
        assert_int_equal(pthread_create(&thread, NULL, unlock_later, &u), 0);
        assert_int_equal(run_logged(f, &won, log, sizeof(log)), 1);
        pthread_join(thread, NULL);
        sqlite3_close(u.db);
        print_message("%s", log);
        unavailable = strstr(log, "store unavailable");
        assert_non_null(unavailable);
        rest = unavailable + strlen("store unavailable");
        assert_null(strstr(rest, "store unavailable")); /* said once */
        again = strstr(rest, "store reachable again");
        assert_non_null(again);
        assert_true(won.generation > 0);
}

static void waiting_on_a_held_lease_is_progress(void **state) {
        fixture *f = *state;
        uint64_t generation;

        assert_int_equal(store_lease_acquire(f->es.other, "cluster", "b", 3600 * SDLIVE_USEC_PER_SEC,
                                             &generation), 0);
        assert_int_equal(run_watched(f, 40 * POLL), 0);
        assert_int_equal(f->stalled_at, 0);
        assert_true(harness_clock_get(&f->c) >= f->watch_until);
}

static void spinning_election_loop_is_a_stall(void **state) {
        fixture *f = *state;
        struct store_lease_info info;
        uint64_t started;
        FILE *spin = fopen(f->spin_file, "w");

        assert_non_null(spin);
        fclose(spin);
        sdlive_progress_beat(f->p);
        started = harness_clock_get(&f->c);

        assert_int_equal(run_watched(f, 40 * POLL), 0);
        assert_true(f->stalled_at > 0);
        assert_string_equal(f->stalled_name, "election");
        /* Never before its limit (the watcher may notice late: the fake
         * time runs as fast as the loop spins). */
        assert_true(f->stalled_at - started > 3 * POLL);
        /* The lease was free all along, and never taken. */
        assert_int_equal(store_lease_read(f->es.other, "cluster", &info), 0);
        assert_false(info.held);
}

static void uncreatable_store_fails_the_election(void **state) {
        fixture *f = *state;
        struct election_result won;

        f->es.e.store_url = "sqlite:/nonexistent-dir/for/sure/cluster.db";
        /* Cannot be created: a fatal store error, reported, not retried as
         * "held by another". */
        assert_true(election_run(&f->es.e, &won) < 0);
        assert_null(f->es.s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(free_lease_is_won, setup, teardown),
                cmocka_unit_test_setup_teardown(won_store_lease_fills_the_whole_result, setup, teardown),
                cmocka_unit_test_setup_teardown(refresher_handle_is_open_when_the_lease_is_won, setup, teardown),
                cmocka_unit_test_setup_teardown(won_lease_counts_from_the_statement_that_dated_it, setup, teardown),
                cmocka_unit_test_setup_teardown(a_streak_of_failures_ends_in_the_log_when_the_lease_is_won, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(waiting_on_a_held_lease_is_progress, setup, teardown),
                cmocka_unit_test_setup_teardown(spinning_election_loop_is_a_stall, setup, teardown),
                cmocka_unit_test_setup_teardown(uncreatable_store_fails_the_election, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
