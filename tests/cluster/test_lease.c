/* SPDX-License-Identifier: MIT */
/* The lease holder against a real SQLite store: renewal, loss on -ESTALE,
 * loss when the store stays unavailable until the deadline, release, and
 * the health gate's release of a stale main loop's lease (once, fenced),
 * and a refresher's handle opened before the acquisition. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cluster_test_util.h"
#include "harness.h"
#include "lease.h"
#include "lease_backend.h"

#define MSEC SDLIVE_USEC_PER_MSEC
#define TTL (600 * MSEC)

typedef struct fixture {
        struct temp_store t;
        struct store *s;
        struct lease_config c;
        uint64_t generation;
        struct lease_holder *h;
} fixture;

static int setup(void **state) {
        fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        temp_store_create(&f->t);
        f->s = temp_store_open(&f->t);
        f->c = (struct lease_config) {
                .store_url = f->t.url,
                .name = "cluster",
                .holder = "a",
                .ttl_usec = TTL,
        };
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;

        lease_holder_stop(f->h, false);
        store_close(f->s);
        temp_store_remove(&f->t);
        free(f);
        return 0;
}

static void acquire_and_hold(fixture *f) {
        uint64_t at = monotonic_usec();

        assert_int_equal(store_lease_acquire(f->s, f->c.name, f->c.holder, f->c.ttl_usec, &f->generation), 0);
        assert_int_equal(lease_holder_start(&f->c, f->generation, at, &f->h), 0);
}

/* Waits up to usec for the lost fd to poll readable. */
static bool lost_within(fixture *f, uint64_t usec) {
        struct pollfd p = { .fd = lease_holder_fd(f->h), .events = POLLIN };

        return poll(&p, 1, (int) (usec / 1000)) == 1 && lease_holder_lost(f->h);
}

static void refresh_keeps_the_lease(void **state) {
        fixture *f = *state;
        struct store_lease_info info;
        uint64_t other;

        acquire_and_hold(f);
        /* Five lease times: without renewals it would have expired. */
        assert_false(lost_within(f, 5 * TTL));
        assert_true(lease_holder_refreshes(f->h) >= 10);
        assert_int_equal(store_lease_read(f->s, "cluster", &info), 0);
        assert_true(info.held);
        assert_string_equal(info.holder, "a");
        assert_int_equal(info.generation, f->generation);
        assert_int_equal(store_lease_acquire(f->s, "cluster", "b", TTL, &other), -EBUSY);
}

/* Waits (1 ms steps, at most 5 s) until the holder has renewed n times;
 * returns when it saw that. */
static uint64_t renewed(fixture *f, uint64_t n) {
        uint64_t until = monotonic_usec() + 5 * SDLIVE_USEC_PER_SEC;

        while (lease_holder_refreshes(f->h) < n && monotonic_usec() < until)
                usleep(1000);
        assert_true(lease_holder_refreshes(f->h) >= n);
        return monotonic_usec();
}

static void sleep_until_usec(uint64_t until) {
        uint64_t now = monotonic_usec();

        if (until > now)
                usleep((useconds_t) (until - now));
}

/* One renewal is held 300 ms by a lock: the next one is still due one
 * refresh interval after the slow one started, as the deadline counts,
 * not after it ended (a slow store would push every renewal later, by
 * each call's length, until one fell past the deadline). */
static void slow_renewal_keeps_the_schedule(void **state) {
        fixture *f = *state;
        uint64_t first, slow, next;
        sqlite3 *db;

        f->c.ttl_usec = 1500 * MSEC;
        f->c.refresh_usec = 500 * MSEC;
        f->c.lock_timeout_usec = 900 * MSEC;
        acquire_and_hold(f);
        assert_int_equal(sqlite3_open(f->t.path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_busy_timeout(db, 1000), SQLITE_OK);
        first = renewed(f, 1);
        /* The second renewal starts about 500 ms after the first: lock
         * the store from 400 ms to 800 ms. */
        sleep_until_usec(first + 400 * MSEC);
        assert_int_equal(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
        sleep_until_usec(first + 800 * MSEC);
        assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        slow = renewed(f, 2);
        next = renewed(f, 3);
        print_message("renewals done at +%llu ms (held by the lock), then +%llu ms\n",
                      (unsigned long long) ((slow - first) / MSEC), (unsigned long long) ((next - first) / MSEC));
        /* The lock did hold the second renewal... */
        assert_true(slow - first >= 750 * MSEC);
        /* ...and the third came about 1000 ms after the first (two
         * intervals from its start), not 500 ms after the slow one. */
        assert_true(next - slow < 400 * MSEC);
        assert_false(lease_holder_lost(f->h));
}

/* How long one renewal may take, from the moment it is due, before the
 * deadline for acting ends the term: ttl - margin - refresh interval. A
 * renewal on a 400 ms round trip with the synchronous replica's and a TCP
 * retransmission took more than the 1.6 s that ttl / 3 left of a 3 s
 * lease; the default interval leaves at least 70 % of the lease. And the
 * refresher does renew that often. */
static void a_slow_renewal_may_take_most_of_the_lease(void **state) {
        fixture *f = *state;
        static const uint64_t ttls[] = { 3 * SDLIVE_USEC_PER_SEC, 15 * SDLIVE_USEC_PER_SEC };
        struct lease_config c = f->c;

        for (size_t i = 0; i < sizeof(ttls) / sizeof(ttls[0]); i++) {
                uint64_t interval, bound;

                c.ttl_usec = ttls[i];
                interval = lease_refresh_interval(&c);
                bound = ttls[i] - lease_act_margin(ttls[i]) - interval;
                print_message("lease %llu ms: renewal every %llu ms, one may take %llu ms; lock timeout %llu ms\n",
                              (unsigned long long) (ttls[i] / MSEC), (unsigned long long) (interval / MSEC),
                              (unsigned long long) (bound / MSEC),
                              (unsigned long long) (lease_refresher_lock_timeout(&c) / MSEC));
                assert_true(bound >= ttls[i] / 10 * 7);
                /* The lock timeout stays a twelfth of the lease. */
                assert_int_equal(lease_refresher_lock_timeout(&c), ttls[i] / 12);
        }
        /* Two lease times at the default interval: at least 10 renewals
         * (every third of the lease made 6). */
        acquire_and_hold(f);
        assert_false(lost_within(f, 2 * TTL));
        print_message("%llu renewals in %llu ms\n", (unsigned long long) lease_holder_refreshes(f->h),
                      (unsigned long long) (2 * TTL / MSEC));
        assert_true(lease_holder_refreshes(f->h) >= 10);
}

/* The term ends while the refresher is inside a slow call (a lock holds
 * it 1.5 s): stopping waits for it, and pets meanwhile, so a main loop
 * that ends its term on a slow store is not taken for a stale one. */
static void stopping_pets_while_the_refresher_finishes_its_call(void **state) {
        fixture *f = *state;
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        uint64_t stopping, took;
        sqlite3 *db;
        sdlive *d;

        harness_env_clear();
        o.pet_interval_usec = 20 * MSEC;
        assert_int_equal(sdlive_new(&d, &o), 0);
        f->c.d = d;
        f->c.ttl_usec = 10 * SDLIVE_USEC_PER_SEC;
        f->c.refresh_usec = 100 * MSEC;
        f->c.lock_timeout_usec = 1500 * MSEC;
        acquire_and_hold(f);
        renewed(f, 1);
        assert_int_equal(sqlite3_open(f->t.path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_busy_timeout(db, 1000), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
        sdlive_pet_watchdog(d);
        usleep(300 * 1000); /* the refresher is inside its next call by now */
        stopping = monotonic_usec();
        f->h = lease_holder_stop(f->h, false);
        took = monotonic_usec() - stopping;
        assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        assert_stop_petted(d, took, 800 * MSEC, "the refresher's call");
        sdlive_free(d);
}

/* The lease is released behind the holder's back and taken by "b": the
 * next refresh gets -ESTALE and the loss is signalled on the fd. */
static void stale_refresh_signals_loss(void **state) {
        fixture *f = *state;
        uint64_t other;

        acquire_and_hold(f);
        assert_int_equal(store_lease_release(f->s, "cluster", "a", f->generation), 0);
        assert_int_equal(store_lease_acquire(f->s, "cluster", "b", TTL, &other), 0);
        assert_true(other > f->generation);
        assert_true(lost_within(f, TTL));
        assert_non_null(strstr(lease_holder_reason(f->h), "no longer ours"));
        /* b still holds it: nothing a's refresher did disturbed it. */
        assert_int_equal(store_lease_refresh(f->s, "cluster", "b", other, TTL), 0);
}

/* Another connection holds the database's write lock: every refresh times
 * out (store unavailable). The holder gives up at its deadline — not
 * before, and before the store's own expiry would let a standby in. */
static void unavailable_store_until_expiry_signals_loss(void **state) {
        fixture *f = *state;
        struct store_lease_info info;
        uint64_t locked_at, lost_at;
        sqlite3 *db;

        acquire_and_hold(f);
        assert_false(lost_within(f, TTL));
        assert_int_equal(sqlite3_open(f->t.path, &db), SQLITE_OK);
        /* The refresher may be mid-refresh: wait for it, then lock it out. */
        assert_int_equal(sqlite3_busy_timeout(db, 1000), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
        locked_at = monotonic_usec();

        assert_true(lost_within(f, 2 * TTL));
        lost_at = monotonic_usec();
        assert_true(lost_at - locked_at <= TTL + 100 * MSEC);
        assert_non_null(strstr(lease_holder_reason(f->h), "unreachable"));

        assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        /* The holder stopped first; the store's lease runs out after it. */
        assert_int_equal(store_lease_read(f->s, "cluster", &info), 0);
        if (info.held)
                assert_true(info.remaining_usec < TTL);
}

static void release_lets_another_acquire_at_once(void **state) {
        fixture *f = *state;
        uint64_t other;

        acquire_and_hold(f);
        assert_int_equal(store_lease_acquire(f->s, "cluster", "b", TTL, &other), -EBUSY);
        f->h = lease_holder_stop(f->h, true);
        assert_int_equal(store_lease_acquire(f->s, "cluster", "b", TTL, &other), 0);
        assert_true(other > f->generation);
}

/* A lease acquired "earlier" than its ttl is due before any refresh. */
static void late_refresher_gives_up_at_deadline(void **state) {
        fixture *f = *state;

        assert_int_equal(store_lease_acquire(f->s, "cluster", "a", TTL, &f->generation), 0);
        assert_int_equal(lease_holder_start(&f->c, f->generation, monotonic_usec() - TTL, &f->h), 0);
        assert_true(lost_within(f, 100 * MSEC));
        assert_non_null(strstr(lease_holder_reason(f->h), "expired"));
}

/* The main loop stops petting: the gate closes and the refresher releases
 * the lease at once (long before it would expire), exactly once; the stale
 * loop's writes are rejected by the fence; when the loop pets again
 * nothing is renewed or released any more, and b's lease stays b's. */
static void closed_gate_releases_once(void **state) {
        fixture *f = *state;
        struct store_fence fence = { .lease = "cluster", .holder = "a" };
        struct store_lease_info info;
        uint64_t started, ms, b, refreshes;
        sdlive *d = test_handle_petting(20 * MSEC, NULL);

        f->c.ttl_usec = 10 * TTL;               /* 6 s: the gate must beat it */
        f->c.health_stale_usec = 150 * MSEC;
        f->c.d = d;
        sdlive_pet_watchdog(d);
        started = monotonic_usec();
        acquire_and_hold(f);
        fence.generation = f->generation;

        assert_true(lost_within(f, 2 * SDLIVE_USEC_PER_SEC));
        ms = (monotonic_usec() - started) / MSEC;
        print_message("main loop stale -> lease released after %llu ms (stale 150 ms + 2 checks + pet)\n",
                      (unsigned long long) ms);
        assert_true(ms <= 150 + 2 * 150 / 4 + 20 + 250);
        assert_non_null(strstr(lease_holder_reason(f->h), "health gate"));
        for (int i = 0; i < 100 && lease_holder_state(f->h) != LEASE_LOST; i++)
                test_sleep_usec(10 * MSEC);
        assert_int_equal(lease_holder_state(f->h), LEASE_LOST);
        assert_int_equal(lease_holder_gate_releases(f->h), 1);
        assert_int_equal(store_lease_read(f->s, "cluster", &info), 0);
        assert_false(info.held);

        /* The stale loop wakes up and writes: fenced off. */
        assert_int_equal(store_blob_mark_deleted(f->s, &fence, 1), -ESTALE);
        assert_int_equal(store_lease_acquire(f->s, "cluster", "b", TTL, &b), 0);

        /* The loop recovers: nothing renews or releases any more. */
        refreshes = lease_holder_refreshes(f->h);
        for (int i = 0; i < 20; i++) {
                sdlive_pet_watchdog(d);
                test_sleep_usec(20 * MSEC);
        }
        assert_int_equal(lease_holder_refreshes(f->h), refreshes);
        assert_int_equal(lease_holder_gate_releases(f->h), 1);
        f->h = lease_holder_stop(f->h, true);
        assert_int_equal(store_lease_read(f->s, "cluster", &info), 0);
        assert_true(info.held);
        assert_string_equal(info.holder, "b");
        assert_int_equal(info.generation, b);
        sdlive_free(d);
}

/* A handle opened before the acquisition (lease_config.refresher_store) is
 * the refresher's: it connects nowhere itself (here its URL could not be
 * opened at all), renews through that handle, and puts it back when the
 * term ends, for the next one. */
static void refresher_takes_the_handle_opened_before(void **state) {
        fixture *f = *state;
        struct store *spare = temp_store_open(&f->t), *opened = spare;
        uint64_t at = monotonic_usec();

        f->c.refresher_store = &spare;
        f->c.store_url = "sqlite:/nonexistent-directory/store.db";
        assert_int_equal(store_lease_acquire(f->s, f->c.name, f->c.holder, f->c.ttl_usec, &f->generation), 0);
        assert_int_equal(lease_holder_start(&f->c, f->generation, at, &f->h), 0);
        assert_null(spare);
        assert_false(lost_within(f, 3 * TTL));
        assert_true(lease_holder_refreshes(f->h) >= 5);
        f->h = lease_holder_stop(f->h, true);
        assert_ptr_equal(spare, opened);
        /* Given back usable, the lease released through it. */
        assert_int_equal(store_lease_acquire(spare, "cluster", "b", TTL, &at), 0);
        assert_true(at > f->generation);
        store_close(spare);
}

static void bad_arguments(void **state) {
        fixture *f = *state;
        struct lease_config c = f->c;
        struct lease_holder *h = NULL;

        assert_int_equal(lease_holder_start(&c, 0, monotonic_usec(), &h), -EINVAL);
        c.ttl_usec = 0;
        assert_int_equal(lease_holder_start(&c, 1, monotonic_usec(), &h), -EINVAL);
        c = f->c;
        c.store_url = "nonsense:";
        assert_true(lease_holder_start(&c, 1, monotonic_usec(), &h) < 0);
        assert_null(h);
        assert_null(lease_holder_stop(NULL, true));
}

/* The store's backend for the refresher is written whole over what an
 * uninitialised struct holds, and left as it was when it cannot open. */
static void store_backend_open_fills_the_whole_backend(void **state) {
        fixture *f = *state;
        struct lease_backend b, before;
        struct lease_config c = f->c;

        memset(&b, 0xa5, sizeof(b));
        memcpy(&before, &b, sizeof(b));
        c.store_url = "nonsense:";
        assert_true(lease_store_backend_open(&c, 1, &b) < 0);
        assert_memory_equal(&b, &before, sizeof(b));

        assert_int_equal(lease_store_backend_open(&f->c, 1, &b), 0);
        assert_true(b.ctx != NULL && b.ctx != before.ctx);
        assert_true(b.renew != NULL && b.renew != before.renew);
        assert_true(b.release != NULL && b.release != before.release);
        assert_true(b.errmsg != NULL && b.errmsg != before.errmsg);
        assert_true(b.reconnect != NULL && b.reconnect != before.reconnect);
        assert_true(b.close != NULL && b.close != before.close);
        assert_int_equal(*(const unsigned char *) &b.release_when_lost, 0);
        b.close(b.ctx);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(refresh_keeps_the_lease, setup, teardown),
                cmocka_unit_test_setup_teardown(stale_refresh_signals_loss, setup, teardown),
                cmocka_unit_test_setup_teardown(slow_renewal_keeps_the_schedule, setup, teardown),
                cmocka_unit_test_setup_teardown(a_slow_renewal_may_take_most_of_the_lease, setup, teardown),
                cmocka_unit_test_setup_teardown(stopping_pets_while_the_refresher_finishes_its_call, setup, teardown),
                cmocka_unit_test_setup_teardown(unavailable_store_until_expiry_signals_loss, setup, teardown),
                cmocka_unit_test_setup_teardown(release_lets_another_acquire_at_once, setup, teardown),
                cmocka_unit_test_setup_teardown(late_refresher_gives_up_at_deadline, setup, teardown),
                cmocka_unit_test_setup_teardown(closed_gate_releases_once, setup, teardown),
                cmocka_unit_test_setup_teardown(refresher_takes_the_handle_opened_before, setup, teardown),
                cmocka_unit_test_setup_teardown(bad_arguments, setup, teardown),
                cmocka_unit_test_setup_teardown(store_backend_open_fills_the_whole_backend, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
