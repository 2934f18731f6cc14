/* SPDX-License-Identifier: MIT */
/* What the store requires of PostgreSQL's replication before it grants or
 * renews a lease, against a real primary with one real streaming standby
 * (pg-standby.sh): a grant acknowledged before any standby has it could be
 * lost in a failover, and the promoted server would grant its generation
 * again and forget the job outcomes recorded meanwhile.
 *
 *   test-store-standbys PG_STANDBY_SH STATE_DIR
 *
 * The tests run in order: each changes the primary's replication settings
 * and the next starts from what the previous left. */

#include "store.h"
#include "pg_server_url.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <libpq-fe.h>

#define LEASE_USEC UINT64_C(2000000)

static char url[1024];
static const char *script, *state;

static void sleep_ms(long ms) {
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) != 0)
                ;
}

/* The conninfo of url (after "postgresql:"), with extra settings appended. */
static void conninfo(char *buf, size_t size, const char *extra) {
        snprintf(buf, size, "%s %s", url + strlen("postgresql:"), extra ? extra : "");
}

/* Runs sql as the server's superuser; fails the test on an error. */
static void admin(const char *sql) {
        char ci[1200];
        PGconn *c;
        PGresult *res;

        conninfo(ci, sizeof ci, NULL);
        c = PQconnectdb(ci);
        assert_int_equal(PQstatus(c), CONNECTION_OK);
        res = PQexec(c, sql);
        if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
                fail_msg("%s: %s", sql, PQerrorMessage(c));
        PQclear(res);
        PQfinish(c);
}

/* The first column of the first row sql returns, read as `extra`
 * (NULL: the superuser) would read it. */
static long long int_as(const char *extra, const char *sql) {
        char ci[1200];
        long long v;
        PGconn *c;
        PGresult *res;

        conninfo(ci, sizeof ci, extra);
        c = PQconnectdb(ci);
        assert_int_equal(PQstatus(c), CONNECTION_OK);
        res = PQexec(c, sql);
        assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
        v = atoll(PQgetvalue(res, 0, 0));
        PQclear(res);
        PQfinish(c);
        return v;
}

static long long admin_int(const char *sql) {
        return int_as(NULL, sql);
}

/* Polls sql (a count) until it is 1, 5 s at most; fails the test otherwise. */
static void await_one(const char *sql) {
        for (int i = 0; i < 200 && admin_int(sql) != 1; i++)
                sleep_ms(25);
        assert_int_equal(admin_int(sql), 1);
}

/* Sets synchronous_standby_names on the primary and waits until the
 * server uses it. With a standby that is down, every commit that waits
 * for one then waits until it comes back. */
static void name_absent_standby(const char *names) {
        char sql[256];

        snprintf(sql, sizeof sql, "ALTER SYSTEM SET synchronous_standby_names = '%s'", names);
        admin(sql);
        admin("SELECT pg_reload_conf()");
        snprintf(sql, sizeof sql, "SELECT (current_setting('synchronous_standby_names') = '%s')::int", names);
        await_one(sql);
}

/* The same, and waits until the standby's state there is `want`
 * ('sync' or 'async'). */
static void set_standby_names(const char *names, const char *want) {
        char sql[256];

        name_absent_standby(names);
        snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_replication WHERE sync_state = '%s'", want);
        await_one(sql);
}

static struct store *open_store(const char *extra) {
        char u[1300];
        struct store *s = NULL;

        snprintf(u, sizeof u, "postgresql:%s", url + strlen("postgresql:"));
        if (extra)
                snprintf(u + strlen(u), sizeof u - strlen(u), " %s", extra);
        if (store_open(u, &s) < 0)
                fail_msg("store_open: %s", store_errmsg(NULL));
        return s;
}

/* Acquires lease `name`: 0, or what store_lease_acquire() failed with. */
static int acquire(struct store *s, const char *name, uint64_t *gen) {
        return store_lease_acquire(s, name, "m1", LEASE_USEC, gen);
}

static void assert_refused(struct store *s, int r, const char *reason) {
        assert_int_equal(r, -EREMOTEIO);
        if (!strstr(store_errmsg(s), "refusing to lead") || !strstr(store_errmsg(s), reason))
                fail_msg("refusal without \"%s\": %s", reason, store_errmsg(s));
}

/* Nothing was granted under name. */
static void assert_not_granted(struct store *s, const char *name) {
        struct store_lease_info info;

        assert_int_equal(store_lease_read(s, name, &info), 0);
        assert_int_equal(info.generation, 0);
}

static void test_async_standby_refused(void **unused) {
        struct store *s = open_store(NULL);
        uint64_t gen = 0;

        (void) unused;
        assert_refused(s, acquire(s, "async", &gen), "asynchronously (synchronous_standby_names is empty)");
        assert_not_granted(s, "async");
        store_close(s);
}

static void test_declared_acceptable(void **unused) {
        struct store *s;
        uint64_t gen = 0;

        (void) unused;
        admin("ALTER DATABASE sdlive SET sdlive.accept_async_standbys = on");
        s = open_store(NULL); /* a database setting applies from the next connection */
        assert_int_equal(acquire(s, "declared", &gen), 0);
        assert_int_equal(gen, 1);
        store_close(s);
        admin("ALTER DATABASE sdlive RESET sdlive.accept_async_standbys");
}

static void test_sync_standby_accepted(void **unused) {
        struct store *s;
        uint64_t gen = 0;

        (void) unused;
        set_standby_names("standby1", "sync");
        s = open_store(NULL);
        assert_int_equal(acquire(s, "sync", &gen), 0);
        assert_int_equal(store_lease_refresh(s, "sync", "m1", gen, LEASE_USEC), 0);
        store_close(s);
}

/* With the standby synchronous, a session whose commits do not wait for
 * it is refused all the same. */
static void test_local_commit_refused(void **unused) {
        struct store *s = open_store("options='-c synchronous_commit=local'");
        uint64_t gen = 0;

        (void) unused;
        assert_refused(s, acquire(s, "local", &gen), "synchronous_commit is 'local'");
        assert_not_granted(s, "local");
        store_close(s);
}

/* A member's role without pg_monitor sees the standbys' rows but not their
 * states: the configuration decides, as for any role. */
static void test_states_hidden(void **unused) {
        struct store *s;
        uint64_t gen = 0;

        (void) unused;
        admin("DROP ROLE IF EXISTS sdlive_member");
        admin("CREATE ROLE sdlive_member LOGIN");
        admin("GRANT ALL ON SCHEMA public TO sdlive_member");
        admin("GRANT ALL ON ALL TABLES IN SCHEMA public TO sdlive_member");
        assert_int_equal(int_as("user=sdlive_member",
                                "SELECT count(*) FROM pg_stat_replication WHERE sync_state IS NULL"), 1);
        s = open_store("user=sdlive_member");
        assert_int_equal(acquire(s, "hidden", &gen), 0);
        store_close(s);
        set_standby_names("", "async");
        s = open_store("user=sdlive_member");
        assert_refused(s, acquire(s, "hidden-async", &gen), "asynchronously");
        store_close(s);
}

/* A standby that turns asynchronous during a term ends the term within a
 * lease: the check is cached for at most a lease, then looked up again. */
static void test_turned_async_during_term(void **unused) {
        struct store *s;
        uint64_t gen = 0;

        (void) unused;
        set_standby_names("standby1", "sync");
        s = open_store(NULL);
        assert_int_equal(acquire(s, "term", &gen), 0);
        set_standby_names("", "async");
        sleep_ms(1000);
        assert_int_equal(store_lease_refresh(s, "term", "m1", gen, LEASE_USEC), 0); /* looked up 1 s ago */
        sleep_ms(1100);
        assert_refused(s, store_lease_refresh(s, "term", "m1", gen, LEASE_USEC), "asynchronously");
        store_close(s);
}

/* With no standby streaming the primary is a single server: nothing to
 * fail over to, whatever the settings. */
static void test_single_server(void **unused) {
        char cmd[1024];
        struct store *s;
        uint64_t gen = 0;

        (void) unused;
        snprintf(cmd, sizeof cmd, "'%s' standby-down '%s'", script, state);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(admin_int("SELECT count(*) FROM pg_stat_replication"), 0);
        s = open_store(NULL);
        assert_int_equal(acquire(s, "single", &gen), 0);
        store_close(s);
}

/* A renewal grants nothing a failover could hand out twice: it commits on
 * the primary without waiting for the synchronous standby, so a standby
 * that lags or is gone never ends a healthy term. */
static void test_renewal_waits_for_no_standby(void **unused) {
        struct store *s;
        uint64_t gen = 0;

        (void) unused;
        name_absent_standby("");
        s = open_store(NULL);
        assert_int_equal(acquire(s, "renewed", &gen), 0);
        name_absent_standby("standby1");
        assert_int_equal(store_set_lock_timeout(s, 200000), 0);
        if (store_lease_refresh(s, "renewed", "m1", gen, LEASE_USEC) != 0)
                fail_msg("a renewal waited for the absent synchronous standby: %s", store_errmsg(s));
        store_close(s);
}

/* Sessions of ours the server keeps waiting for the synchronous standby. */
static long long waiting_for_standby(void) {
        return admin_int("SELECT count(*) FROM pg_stat_activity"
                         " WHERE application_name = 'sdlive' AND wait_event = 'SyncRep'");
}

/* A commit the client gave up on while it waited for the synchronous
 * standby stays unseen: the server goes on waiting, and nobody reads a
 * grant the standby does not have, which a failover to it would forget
 * and grant again. (Cancelling that wait would make it visible on the
 * primary alone.) Once a standby may confirm it, it lands. */
static void test_abandoned_commit_stays_unseen(void **unused) {
        struct store *s;
        uint64_t gen = 0;

        (void) unused;
        name_absent_standby("standby1");
        s = open_store(NULL);
        assert_int_equal(store_set_lock_timeout(s, 100000), 0);
        assert_true(acquire(s, "abandoned", &gen) < 0); /* its commit waits for standby1 */
        store_close(s);
        sleep_ms(500);
        assert_int_equal(waiting_for_standby(), 1);
        assert_int_equal(admin_int("SELECT count(*) FROM leases WHERE name = 'abandoned'"), 0);
        name_absent_standby("");
        for (int i = 0; i < 120 && waiting_for_standby() != 0; i++)
                sleep_ms(25);
        assert_int_equal(waiting_for_standby(), 0);
        assert_int_equal(admin_int("SELECT count(*) FROM leases WHERE name = 'abandoned'"), 1);
}

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* A batch of one claim of up to want jobs for worker: what
 * store_jobs_batch() returned; the claim's count in *got and the jobs put
 * back by the batch in *put_back. */
static int claim(struct store *s, const struct store_fence *f, const char *worker, unsigned want, unsigned *got,
                 unsigned *put_back) {
        struct store_claim out[8];
        struct store_claim_request c = { .worker = worker, .out = out, .want = want };
        struct store_job_batch b = { .claims = &c, .n_claims = 1 };
        int r;

        assert_true(want <= 8);
        r = store_jobs_batch(s, f, &b);
        *got = c.got;
        *put_back = b.put_back;
        return r;
}

/* Jobs of run in the given status, as the server's superuser sees them. */
static long long jobs_in(uint64_t run, const char *status) {
        char sql[160];

        snprintf(sql, sizeof sql, "SELECT count(*) FROM jobs WHERE run = %llu AND status = '%s'",
                 (unsigned long long) run, status);
        return admin_int(sql);
}

/* A job batch whose COMMIT went unanswered, and which the server commits
 * once the standby may confirm it, leaves its jobs assigned under tokens
 * no worker was given. The handle keeps those claims and a later batch
 * puts them back, but only once the server says their transaction ended:
 * while it still waits for the standby, its rows are invisible and a
 * put-back would find nothing. */
static void test_unanswered_claims_put_back(void **unused) {
        static _Atomic uint64_t act_until;
        struct store_fence f = { .lease = "claims", .holder = "m1", .act_until_usec = &act_until };
        unsigned got = 0, put_back = 0;
        struct store *s;
        uint64_t run = 0;

        (void) unused;
        atomic_store(&act_until, now_usec() + 60 * UINT64_C(1000000));
        name_absent_standby("");
        s = open_store(NULL);
        assert_int_equal(store_lease_acquire(s, "claims", "m1", 60 * UINT64_C(1000000), &f.generation), 0);
        assert_int_equal(store_run_begin(s, &f, 2, &run), 0);
        assert_int_equal(store_run_fill(s, &f, run, 2), 2);

        /* The commit waits for standby1; the client gives up at its deadline. */
        name_absent_standby("standby1");
        atomic_store(&act_until, now_usec() + 400000);
        assert_true(claim(s, &f, "w1", 2, &got, &put_back) < 0);
        assert_int_equal(store_jobs_unsettled(s), 2);
        assert_int_equal(waiting_for_standby(), 1);

        /* Still waiting: nothing to put back yet, and nothing forgotten;
         * then again once a later transaction (a renewal, committed on the
         * primary alone) has ended, which the server's own status of that
         * transaction must tell apart. */
        atomic_store(&act_until, now_usec() + 60 * UINT64_C(1000000));
        for (int round = 0; round < 2; round++) {
                if (round == 1)
                        assert_int_equal(store_lease_refresh(s, "claims", "m1", f.generation,
                                                             60 * UINT64_C(1000000)), 0);
                assert_int_equal(claim(s, &f, "w2", 2, &got, &put_back), 0);
                assert_int_equal(got, 0);
                assert_int_equal(put_back, 0);
                if (store_jobs_unsettled(s) != 2)
                        fail_msg("round %d: the claims were forgotten while their commit still waited", round);
        }

        /* The standby may confirm it: it commits, stranding both jobs. */
        name_absent_standby("");
        for (int i = 0; i < 120 && waiting_for_standby() != 0; i++)
                sleep_ms(25);
        assert_int_equal(waiting_for_standby(), 0);
        assert_int_equal(jobs_in(run, "assigned"), 2);

        /* The next batch puts them back and claims them again. */
        if (claim(s, &f, "w2", 2, &got, &put_back) != 0)
                fail_msg("claim: %s", store_errmsg(s));
        if (got != 2)
                fail_msg("claimed %u of the 2 jobs an unanswered commit left assigned (%u put back)", got,
                         put_back);
        assert_int_equal(put_back, 2);
        assert_int_equal(store_jobs_unsettled(s), 0);
        assert_int_equal(jobs_in(run, "assigned"), 2);
        store_close(s);
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_async_standby_refused),
                cmocka_unit_test(test_declared_acceptable),
                cmocka_unit_test(test_sync_standby_accepted),
                cmocka_unit_test(test_local_commit_refused),
                cmocka_unit_test(test_states_hidden),
                cmocka_unit_test(test_turned_async_during_term),
                cmocka_unit_test(test_single_server),
                cmocka_unit_test(test_renewal_waits_for_no_standby),
                cmocka_unit_test(test_abandoned_commit_stays_unseen),
                cmocka_unit_test(test_unanswered_claims_put_back),
        };

        if (argc != 3) {
                fprintf(stderr, "usage: %s PG_STANDBY_SH STATE_DIR\n", argv[0]);
                return 2;
        }
        script = argv[1];
        state = argv[2];
        if (pg_server_url(script, state, url, sizeof url) < 0) {
                fprintf(stderr, "%s: no server: run \"%s start %s\" first\n", argv[0], script, state);
                return 1;
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
