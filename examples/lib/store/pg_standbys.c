/* SPDX-License-Identifier: MIT */
/* Whether a commit the PostgreSQL server acknowledges would survive the
 * promotion of one of its standbys.
 *
 * A lease grant is a commit. When the server acknowledges it before any
 * standby has it (asynchronous replication) and fails over to a standby
 * that had not received it yet, the promoted server has never heard of
 * that generation: it grants the same number again, and it forgets the
 * job outcomes recorded meanwhile, which then run again unseen. So a
 * member leads only on a server where that cannot happen:
 *
 * - no standby streams from it (a single server); or
 * - synchronous_standby_names is set and our session's synchronous_commit
 *   waits for a standby (on, remote_write or remote_apply): a commit is
 *   acknowledged only once a synchronous standby has it, and while none
 *   is there (one catching up, one cut off) commits wait instead; or
 * - the operator declared asynchronous standbys acceptable for this
 *   database: sdlive.accept_async_standbys = on (ALTER DATABASE ... SET,
 *   or postgresql.conf), knowing what a failover to one can lose.
 *
 * Which standby is promoted is the operator's (or Patroni's) choice:
 * only a synchronous one keeps every acknowledged commit.
 *
 * The check runs on every new connection and again once per lease at
 * least (store_lease_acquire(), store_lease_refresh()), so a standby that
 * starts streaming asynchronously during a term ends the term within a
 * lease. A standby that is disconnected when we look is not seen; its
 * configuration on the server (synchronous_standby_names) is what
 * decides once it streams again. */

#include "pg.h"
#include "monotonic.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* What we read of the server's replication. */
struct pg_standbys {
        const char *names;  /* synchronous_standby_names */
        const char *commit; /* our session's synchronous_commit */
        bool accepted;      /* sdlive.accept_async_standbys is on */
        long streaming;     /* rows of pg_stat_replication: standbys connected */
};

static const char standbys_sql[] =
        "SELECT current_setting('synchronous_standby_names'),"
        " current_setting('synchronous_commit'),"
        " coalesce(current_setting('sdlive.accept_async_standbys', true), '') IN ('on', 'true', 'yes', '1'),"
        " (SELECT count(*) FROM pg_stat_replication)";

/* 0 when a commit acknowledged under st survives a failover to a
 * standby, else -EREMOTEIO with the reason in why. */
static int standbys_verdict(const struct pg_standbys *st, char *why, size_t size) {
        if (st->streaming <= 0 || st->accepted)
                return 0;
        if (!st->names[0])
                snprintf(why, size,
                         "the store streams to %ld standby(s) asynchronously (synchronous_standby_names is empty)",
                         st->streaming);
        else if (strcmp(st->commit, "off") == 0 || strcmp(st->commit, "local") == 0)
                snprintf(why, size, "synchronous_commit is '%s' for our sessions: commits do not wait for a standby",
                         st->commit);
        else
                return 0;
        return -EREMOTEIO;
}

static int read_standbys(struct store_pg *p, struct pg_standbys *st, char *names, char *commit, size_t size) {
        static const char what[] = "check the store's standbys";
        PGresult *res;
        int r;

        if (!PQsendQueryParams(p->conn, standbys_sql, 0, NULL, NULL, NULL, NULL, 0))
                return pg_fail_conn(p, -ECONNRESET, what);
        res = pg_await_result(p, what, &r);
        if (!res)
                return r;
        r = pg_check_result(p, res, what);
        if (r >= 0 && PQntuples(res) != 1)
                r = store_fail(&p->base, -EPROTO, "%s: %d rows instead of one", what, PQntuples(res));
        if (r >= 0) {
                snprintf(names, size, "%s", PQgetvalue(res, 0, 0));
                snprintf(commit, size, "%s", PQgetvalue(res, 0, 1));
                *st = (struct pg_standbys) {
                        .names = names, .commit = commit, .accepted = pg_bool_value(res, 0, 2),
                        .streaming = (long) pg_int_value(res, 0, 3),
                };
        }
        PQclear(res);
        return r;
}

int pg_check_standbys(struct store *s, uint64_t max_age_usec) {
        struct store_pg *p = to_pg(s);
        struct pg_standbys st = { .names = "", .commit = "" };
        char names[256], commit[sizeof names], why[sizeof names + 100];
        uint64_t now = monotonic_usec();
        int r;

        if (p->standbys_safe_on == p->connections && now - p->standbys_checked_at < max_age_usec)
                return 0;
        r = read_standbys(p, &st, names, commit, sizeof names);
        if (r < 0)
                return r;
        r = standbys_verdict(&st, why, sizeof why);
        if (r < 0) {
                p->standbys_safe_on = 0;
                return store_fail(s, r, "refusing to lead on this store: %s; a failover to such a standby can"
                                  " grant a generation again and forget recorded job outcomes (docs/store.md,"
                                  " \"Replication\")", why);
        }
        p->standbys_safe_on = p->connections;
        p->standbys_checked_at = now;
        return 0;
}
