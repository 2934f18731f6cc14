/* SPDX-License-Identifier: MIT */
/*
 * The lease holder on PostgreSQL (the server of tests/store/pg-server.sh)
 * while another client locks the lease row: each renewal fails with the
 * lock timeout, a slow store and not an unreachable one, so the
 * refresher retries on the connection it has instead of reconnecting
 * (TCP, start-up, the session's settings, the identity: several round
 * trips, which on a slow network came out of the lease).
 *
 *   test-cluster-lease-pg PG_SCRIPT STATE_DIR
 */
#include <errno.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "lease.h"
#include "monotonic.h"
#include "pg_server_url.h"
#include "store.h"
#include "soft_check.h"

#define MSEC UINT64_C(1000)
#define SEC UINT64_C(1000000)
#define TTL (20 * SEC)
#define REFRESH (300 * MSEC)
#define LOCK_TIMEOUT (100 * MSEC)
#define LOCKED_FOR (1500 * MSEC)
/* Round trips besides one per renewal call: the durability check a new
 * lease asks for (docs/store.md, "Replication"). */
#define EXTRA_ROUND_TRIPS_MAX 3

static void sleep_for(uint64_t usec) {
        struct timespec ts = { .tv_sec = (time_t) (usec / SEC), .tv_nsec = (long) (usec % SEC) * 1000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static void raw_exec(PGconn *c, const char *sql) {
        PGresult *res = PQexec(c, sql);
        ExecStatusType st = PQresultStatus(res);

        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
                fprintf(stderr, "raw SQL \"%s\": %s", sql, PQresultErrorMessage(res));
                exit(1);
        }
        PQclear(res);
}

/* Waits (at most 10 s) for n renewals in all. */
static void wait_renewals(const struct lease_holder *h, uint64_t n) {
        uint64_t until = monotonic_usec() + 10 * SEC;

        while (lease_holder_refreshes(h) < n && monotonic_usec() < until)
                sleep_for(5 * MSEC);
}

int main(int argc, char **argv) {
        struct store *s = NULL, *spare = NULL;
        struct lease_holder *h = NULL;
        struct lease_config c;
        uint64_t generation, at, before, trips, renewals, failures, extra;
        char url[512];
        PGconn *raw;

        if (argc != 3) {
                fprintf(stderr, "usage: %s PG_SCRIPT STATE_DIR\n", argv[0]);
                return 2;
        }
        if (pg_server_url(argv[1], argv[2], url, sizeof url) < 0) {
                fprintf(stderr, "no PostgreSQL server recorded in %s\n", argv[2]);
                return 1;
        }
        if (store_open(url, &s) < 0 || store_open(url, &spare) < 0) {
                fprintf(stderr, "store_open: %s\n", store_errmsg(NULL));
                return 1;
        }
        c = (struct lease_config) { .store_url = url, .name = "cluster", .holder = "a", .ttl_usec = TTL,
                                    .refresh_usec = REFRESH, .lock_timeout_usec = LOCK_TIMEOUT,
                                    .refresher_store = &spare };
        store_set_lock_timeout(spare, LOCK_TIMEOUT);
        before = store_round_trips(spare);
        at = monotonic_usec();
        if (store_lease_acquire(s, "cluster", "a", TTL, &generation) < 0 ||
            lease_holder_start(&c, generation, at, &h) < 0) {
                fprintf(stderr, "acquire and hold: %s\n", store_errmsg(s));
                return 1;
        }
        wait_renewals(h, 1);

        raw = PQconnectdb(url + strlen("postgresql:"));
        if (PQstatus(raw) != CONNECTION_OK) {
                fprintf(stderr, "raw connection: %s", PQerrorMessage(raw));
                return 1;
        }
        /* The lock a renewal's UPDATE needs, held for five renewal
         * intervals: every renewal meanwhile waits the lock timeout. */
        raw_exec(raw, "BEGIN");
        raw_exec(raw, "SELECT 1 FROM leases WHERE name = 'cluster' FOR NO KEY UPDATE");
        sleep_for(LOCKED_FOR);
        raw_exec(raw, "COMMIT");
        PQfinish(raw);
        wait_renewals(h, lease_holder_refreshes(h) + 2);

        renewals = lease_holder_refreshes(h);
        failures = lease_holder_failed_renewals(h);
        CHECK(!lease_holder_lost(h), "the lease was lost: %s", lease_holder_reason(h));
        h = lease_holder_stop(h, false);
        /* The refresher's handle is back, with its count. */
        CHECK(spare != NULL, "the refresher's handle did not come back");
        trips = spare ? store_round_trips(spare) - before : 0;
        extra = trips > renewals + failures ? trips - renewals - failures : 0;
        printf("lease row locked %llu ms, lock timeout %llu ms: %llu renewals, %llu failed; the refresher's "
               "handle made %llu round trips (%llu besides one per call)\n",
               (unsigned long long) (LOCKED_FOR / MSEC), (unsigned long long) (LOCK_TIMEOUT / MSEC),
               (unsigned long long) renewals, (unsigned long long) failures, (unsigned long long) trips,
               (unsigned long long) extra);
        CHECK(failures >= 4, "only %llu renewals failed behind the lock", (unsigned long long) failures);
        /* One round trip a renewal call; a reconnect after each lock
         * timeout made several more each. */
        CHECK(extra <= EXTRA_ROUND_TRIPS_MAX, "%llu round trips besides the calls: reconnected",
              (unsigned long long) extra);
        store_close(spare);
        store_close(s);
        return check_failures != 0;
}
