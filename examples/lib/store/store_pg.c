/* SPDX-License-Identifier: MIT */
/*
 * PostgreSQL backend: hosts share one database. Same tables and semantics
 * as the SQLite backend; the differences are how time and concurrency work.
 *
 * - Lease times come from the database clock (clock_timestamp(), the time
 *   the statement runs, not now(), the time the transaction began), so the
 *   hosts' own clocks never enter a lease decision. A step of the database
 *   host's clock moves every lease at once; run NTP with slewing there.
 * - Isolation is READ COMMITTED plus row locks, chosen per statement:
 *   acquire is one upsert whose WHERE is re-checked on the locked row; a
 *   fenced write takes FOR SHARE on the lease row and keeps it until commit,
 *   so an acquisition (which must update that row) waits until every write
 *   of the previous generation has committed or rolled back. Job rows are
 *   locked FOR UPDATE while an outcome is recorded.
 * - A release announces itself with pg_notify() on the channel
 *   sdlive_lease_released, in the releasing statement: delivered on commit
 *   to every session that LISTENs, on any host, and only if the release
 *   changed the row. A listener's connection is its main one; notifications
 *   that arrive during other queries wait in libpq until consumed.
 * - Every query runs with a client-side deadline (lock timeout + 4 s): a
 *   server that stops answering cannot hang the caller. A lost or timed-out
 *   connection fails that call with an "unavailable" error; the next call
 *   connects again (store_reconnect() does it on demand).
 */

#include "store-backend.h"

#include <errno.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "monotonic.h"

#define SCHEMA_VERSION "1"
#define MAX_PARAMS 8
#define RELEASED_CHANNEL "sdlive_lease_released"
/* Notifications consumed per store_lease_notified() call; more stay queued. */
#define NOTIFIES_MAX 1024
/* Our statements take their own time far below this; the rest is slack
 * for a busy server. */
#define QUERY_SLACK_USEC UINT64_C(4000000)

/* Microseconds since the epoch on the database clock. */
#define NOW_USEC "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint"

struct store_pg {
        struct store base; /* first: struct store * converts to this */
        PGconn *conn;
        unsigned job_prepared; /* bit i: job statement i is prepared on conn */
        char *conninfo;
        uint64_t lock_timeout_usec;
        uint64_t connections;      /* connections made so far */
        uint64_t listening_on;     /* the connection LISTENing (its number), 0: none */
        bool readonly;
        bool opened;                      /* once: never create the schema again */
        char store_id[STORE_ID_MAX + 1];  /* of the schema connected to now */
        char bound_id[STORE_ID_MAX + 1];  /* of the incarnation we are bound to */
};

static struct store_pg *to_pg(struct store *s) {
        return (struct store_pg *) s;
}

static void disconnect(struct store_pg *p) {
        p->job_prepared = 0;
        PQfinish(p->conn);
        p->conn = NULL;
}

/* libpq's messages span lines ("...failed: ...\n\tIs the server running
 * ...?\n"); ours are one line. */
static void trim(char *msg) {
        char *out = msg;
        bool space = false;

        for (const char *in = msg; *in; in++) {
                if (*in == '\n' || *in == '\t' || *in == ' ') {
                        space = true;
                        continue;
                }
                if (space && out != msg)
                        *out++ = ' ';
                space = false;
                *out++ = *in;
        }
        *out = '\0';
}

static int fail_conn(struct store_pg *p, int r, const char *what) {
        int ret = store_fail(&p->base, r, "%s: %s", what,
                             p->conn ? PQerrorMessage(p->conn) : "not connected");
        trim(p->base.errmsg);
        return ret;
}

/* A connection attempt failed: tell "not there" from "refused us". */
static int errno_from_connect_failure(const char *msg) {
        if (strstr(msg, "timeout expired") || strstr(msg, "timed out"))
                return -ETIMEDOUT;
        if (strstr(msg, "starting up") || strstr(msg, "shutting down") ||
            strstr(msg, "in recovery mode") || strstr(msg, "too many clients"))
                return -EAGAIN;
        if (strstr(msg, "invalid connection option") || strstr(msg, "missing \"=\"") ||
            strstr(msg, "invalid URI") || strstr(msg, "invalid integer value"))
                return -EINVAL;
        if (strstr(msg, "authentication failed") || strstr(msg, "pg_hba.conf") ||
            strstr(msg, "password"))
                return -EACCES;
        if (strstr(msg, "does not exist"))
                return -ENOENT;
        /* Connection refused, no socket file, host unreachable, DNS ... */
        return -ECONNREFUSED;
}

static int errno_from_sqlstate(const char *state) {
        if (!state)
                return -ECONNRESET; /* client-side failure: the connection */
        if (strncmp(state, "08", 2) == 0 || strcmp(state, "57P01") == 0 ||
            strcmp(state, "57P02") == 0 || strcmp(state, "57P03") == 0 ||
            strcmp(state, "25P03") == 0)
                return -ECONNRESET;
        if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0)
                return -EAGAIN;
        if (strcmp(state, "55P03") == 0 || strcmp(state, "57014") == 0)
                return -ETIMEDOUT;
        if (strcmp(state, "53100") == 0)
                return -ENOSPC;
        if (strncmp(state, "53", 2) == 0 || strncmp(state, "58", 2) == 0)
                return -EIO;
        if (strcmp(state, "25006") == 0)
                return -EROFS;
        if (strcmp(state, "23505") == 0)
                return -EEXIST;
        if (strncmp(state, "23", 2) == 0 || strncmp(state, "22", 2) == 0)
                return -EINVAL;
        return -EPROTO;
}

/* Waits for the complete answer to the query just sent, under a deadline.
 * Returns the last result (the first failed one, if any) or NULL with *err
 * set; on timeout or a broken connection the connection is dropped. */
static PGresult *await_result(struct store_pg *p, const char *what, int *err) {
        uint64_t deadline = monotonic_usec() + p->lock_timeout_usec + QUERY_SLACK_USEC;
        PGresult *keep = NULL, *res;

        for (;;) {
                while (PQisBusy(p->conn)) {
                        uint64_t now = monotonic_usec();
                        struct pollfd pfd = { .fd = PQsocket(p->conn), .events = POLLIN };

                        if (now >= deadline) {
                                PQclear(keep);
                                *err = store_fail(&p->base, -ETIMEDOUT, "%s: no answer from the store within %llu ms",
                                                  what, (unsigned long long) ((p->lock_timeout_usec + QUERY_SLACK_USEC) / 1000));
                                disconnect(p);
                                return NULL;
                        }
                        if (poll(&pfd, 1, (int) ((deadline - now + 999) / 1000)) < 0 && errno != EINTR) {
                                PQclear(keep);
                                *err = store_fail(&p->base, -errno, "%s: poll: %m", what);
                                disconnect(p);
                                return NULL;
                        }
                        if (!PQconsumeInput(p->conn)) {
                                PQclear(keep);
                                *err = fail_conn(p, -ECONNRESET, what);
                                disconnect(p);
                                return NULL;
                        }
                }
                res = PQgetResult(p->conn);
                if (!res)
                        break;
                if (keep && PQresultStatus(keep) == PGRES_FATAL_ERROR)
                        PQclear(res); /* keep the first error */
                else {
                        PQclear(keep);
                        keep = res;
                }
        }
        if (!keep)
                *err = fail_conn(p, -ECONNRESET, what);
        return keep;
}

/* Checks a result; on failure records the reason and returns < 0. */
static int check_result(struct store_pg *p, PGresult *res, const char *what) {
        ExecStatusType st = PQresultStatus(res);
        int r;

        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
                return 0;
        r = errno_from_sqlstate(PQresultErrorField(res, PG_DIAG_SQLSTATE));
        if (PQstatus(p->conn) == CONNECTION_BAD)
                r = -ECONNRESET;
        store_fail(&p->base, r, "%s: %s", what, PQresultErrorMessage(res));
        trim(p->base.errmsg);
        if (PQstatus(p->conn) == CONNECTION_BAD)
                disconnect(p);
        return r;
}

/* Runs sql with parameters $1, $2 ... from varargs, one per character of
 * types: 'i' int64_t, 't' const char * (NULL sends NULL). On success *ret
 * holds the result for the caller to PQclear(). */
static int query_v(struct store_pg *p, PGresult **ret, const char *what, const char *sql,
                   const char *types, va_list ap) {
        char numbers[MAX_PARAMS][24];
        const char *values[MAX_PARAMS];
        PGresult *res;
        int n, r = 0;

        if (!p->conn)
                return store_fail(&p->base, -ENOTCONN, "%s: not connected to the store", what);
        for (n = 0; types[n]; n++) {
                if (types[n] == 'i') {
                        snprintf(numbers[n], sizeof numbers[n], "%lld", (long long) va_arg(ap, int64_t));
                        values[n] = numbers[n];
                } else
                        values[n] = va_arg(ap, const char *);
        }
        if (!PQsendQueryParams(p->conn, sql, n, NULL, values, NULL, NULL, 0)) {
                r = fail_conn(p, -ECONNRESET, what);
                if (PQstatus(p->conn) == CONNECTION_BAD)
                        disconnect(p);
                return r;
        }
        res = await_result(p, what, &r);
        if (!res)
                return r;
        r = check_result(p, res, what);
        if (r < 0) {
                PQclear(res);
                return r;
        }
        *ret = res;
        return 0;
}

static int query(struct store_pg *p, PGresult **ret, const char *what, const char *sql, const char *types, ...) {
        va_list ap;
        int r;

        va_start(ap, types);
        r = query_v(p, ret, what, sql, types, ap);
        va_end(ap);
        return r;
}

/* Runs a statement and returns the rows it returned or changed. */
static int exec(struct store_pg *p, const char *what, const char *sql, const char *types, ...) {
        PGresult *res;
        va_list ap;
        int r;

        va_start(ap, types);
        r = query_v(p, &res, what, sql, types, ap);
        va_end(ap);
        if (r < 0)
                return r;
        r = PQresultStatus(res) == PGRES_TUPLES_OK ? PQntuples(res) : atoi(PQcmdTuples(res));
        PQclear(res);
        return r;
}

/* Runs a script of several statements (simple query protocol). */
static int exec_script(struct store_pg *p, const char *what, const char *sql) {
        PGresult *res;
        int r = 0;

        if (!PQsendQuery(p->conn, sql)) {
                r = fail_conn(p, -ECONNRESET, what);
                disconnect(p);
                return r;
        }
        res = await_result(p, what, &r);
        if (!res)
                return r;
        r = check_result(p, res, what);
        PQclear(res);
        return r;
}

static int64_t int_value(const PGresult *res, int row, int col) {
        return strtoll(PQgetvalue(res, row, col), NULL, 10);
}

static bool bool_value(const PGresult *res, int row, int col) {
        return PQgetvalue(res, row, col)[0] == 't';
}

static int tx_begin(struct store_pg *p) {
        return exec(p, "begin transaction", "BEGIN", "");
}

static int tx_commit(struct store_pg *p) {
        int r = exec(p, "commit", "COMMIT", "");
        return r < 0 ? r : 0;
}

/* Ends a failed transaction (if the connection survived) and passes r through. */
static int tx_abort(struct store_pg *p, int r) {
        char keep[sizeof p->base.errmsg];

        if (p->conn && PQtransactionStatus(p->conn) != PQTRANS_IDLE) {
                memcpy(keep, p->base.errmsg, sizeof keep);
                if (exec(p, "rollback", "ROLLBACK", "") < 0)
                        disconnect(p);
                memcpy(p->base.errmsg, keep, sizeof keep);
        }
        return r;
}

static int fence_begin(struct store_pg *p, const struct store_fence *f) {
        int r = tx_begin(p);

        if (r < 0)
                return r;
        r = exec(p, "check lease",
                 "SELECT 1 FROM leases WHERE name = $1 AND holder = $2 AND generation = $3"
                 " AND expires > clock_timestamp()"
                 " AND EXISTS (SELECT 1 FROM store_meta WHERE key = 'store_id' AND value = $4) FOR SHARE",
                 "ttit", f->lease, f->holder, (int64_t) f->generation,
                 f->store_id ? f->store_id : p->bound_id);
        if (r == 0)
                r = store_fail(&p->base, -ESTALE, "lease %s is no longer held by %s as generation %llu"
                               " of store %s", f->lease, f->holder, (unsigned long long) f->generation,
                               f->store_id ? f->store_id : p->bound_id);
        return r < 0 ? tx_abort(p, r) : 0;
}

static int fence_commit(struct store_pg *p, const struct store_fence *f, const char *what) {
        int r = exec(p, "log write",
                     "INSERT INTO write_log (lease, holder, generation, at, what)"
                     " VALUES ($1, $2, $3, " NOW_USEC ", $4)",
                     "ttit", f->lease, f->holder, (int64_t) f->generation, what);
        return r < 0 ? tx_abort(p, r) : tx_commit(p);
}

static int fenced_exec(struct store_pg *p, const struct store_fence *f, const char *what,
                       const char *sql, const char *types, ...) {
        PGresult *res = NULL;
        va_list ap;
        int r, changed;

        r = fence_begin(p, f);
        if (r < 0)
                return r;
        va_start(ap, types);
        r = query_v(p, &res, what, sql, types, ap);
        va_end(ap);
        if (r < 0)
                return tx_abort(p, r);
        changed = atoi(PQcmdTuples(res));
        PQclear(res);
        r = fence_commit(p, f, what);
        return r < 0 ? r : changed;
}

static const char schema_sql[] =
        "BEGIN;"
        /* Concurrent CREATE ... IF NOT EXISTS can still collide: serialize. */
        "SELECT pg_advisory_xact_lock(7153200512);"
        "CREATE TABLE IF NOT EXISTS store_meta (key text PRIMARY KEY, value text NOT NULL);"
        "INSERT INTO store_meta VALUES ('schema', '" SCHEMA_VERSION "') ON CONFLICT DO NOTHING;"
        /* %s: a new identity, hex digits only. */
        "INSERT INTO store_meta VALUES ('store_id', '%s') ON CONFLICT DO NOTHING;"
        "CREATE TABLE IF NOT EXISTS leases (name text PRIMARY KEY, holder text NOT NULL,"
        "  generation bigint NOT NULL, expires timestamptz NOT NULL);"
        "CREATE TABLE IF NOT EXISTS write_log (id bigserial PRIMARY KEY, lease text NOT NULL,"
        "  holder text NOT NULL, generation bigint NOT NULL, at bigint NOT NULL, what text NOT NULL);"
        "CREATE TABLE IF NOT EXISTS blobs (id bigint PRIMARY KEY, refcount bigint NOT NULL DEFAULT 0,"
        "  deleted boolean NOT NULL DEFAULT false);"
        "CREATE TABLE IF NOT EXISTS artifacts (name text NOT NULL, version bigint NOT NULL,"
        "  created bigint NOT NULL, PRIMARY KEY (name, version));"
        "CREATE INDEX IF NOT EXISTS artifacts_newest ON artifacts (name, version DESC);"
        "CREATE TABLE IF NOT EXISTS nodes (name text PRIMARY KEY, last_checkin bigint NOT NULL,"
        "  missing boolean NOT NULL DEFAULT false);"
        "CREATE TABLE IF NOT EXISTS runs (id bigserial PRIMARY KEY, total integer NOT NULL,"
        "  done_count integer NOT NULL DEFAULT 0, created bigint NOT NULL);"
        "CREATE TABLE IF NOT EXISTS jobs (run bigint NOT NULL REFERENCES runs (id),"
        "  job integer NOT NULL,"
        "  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'assigned', 'done')),"
        "  attempt integer NOT NULL DEFAULT 0, worker text, outcome bigint,"
        "  executions integer NOT NULL DEFAULT 0, token bytea, claimed bigint, PRIMARY KEY (run, job));"
        /* A store made before assignment tokens (and claim times) existed
         * gains the columns. */
        "ALTER TABLE jobs ADD COLUMN IF NOT EXISTS token bytea;"
        "ALTER TABLE jobs ADD COLUMN IF NOT EXISTS claimed bigint;"
        "CREATE INDEX IF NOT EXISTS jobs_pending ON jobs (run, job) WHERE status = 'pending';"
        "CREATE INDEX IF NOT EXISTS jobs_in_flight ON jobs (worker) WHERE status = 'assigned';"
        "COMMIT;";

/* Reads the schema version (must be ours) and the identity of the store
 * the connection reaches now. For a handle that had a schema, tables that
 * are gone fail with `gone`: -EIO ("unavailable": it never creates them
 * again) when connecting, -ESTALE when checking the incarnation. */
static int read_meta(struct store_pg *p, int gone) {
        char version[16] = "";
        PGresult *res;
        int r;

        r = query(p, &res, "read store identity",
                  "SELECT key, value FROM store_meta WHERE key IN ('schema', 'store_id')", "");
        if (r < 0) {
                if (p->opened && r == -EPROTO) {
                        char why[sizeof p->base.errmsg];

                        memcpy(why, p->base.errmsg, sizeof why);
                        r = store_fail(&p->base, gone, "the store's tables are gone (%.200s); a running"
                                       " member never creates them again", why);
                }
                return r;
        }
        p->store_id[0] = '\0';
        for (int i = 0; i < PQntuples(res); i++) {
                if (strcmp(PQgetvalue(res, i, 0), "schema") == 0)
                        snprintf(version, sizeof version, "%s", PQgetvalue(res, i, 1));
                else
                        snprintf(p->store_id, sizeof p->store_id, "%s", PQgetvalue(res, i, 1));
        }
        PQclear(res);
        if (strcmp(version, SCHEMA_VERSION) != 0)
                return store_fail(&p->base, -EPROTONOSUPPORT,
                                  "store schema version \"%s\", this program knows " SCHEMA_VERSION, version);
        return 0;
}

static int create_schema(struct store_pg *p) {
        char id[STORE_ID_MAX + 1], sql[sizeof schema_sql + STORE_ID_MAX];
        int r;

        r = store_new_identity(id);
        if (r < 0)
                return store_fail(&p->base, r, "cannot draw a store identity: %s", strerror(-r));
        snprintf(sql, sizeof sql, schema_sql, id);
        r = exec_script(p, "create schema", sql);
        return r < 0 ? tx_abort(p, r) : 0;
}

/* The lock timeout bounds both sides of a lock: how long we wait for one,
 * and how long the server lets a session of ours sit idle inside a
 * transaction. A session whose process was stopped mid-transaction (a
 * paused leader holding FOR SHARE on the lease row) is ended after that
 * long, its locks released, so a standby's acquisition is never held up
 * longer than it would wait for a lock anyway. */
static int apply_lock_timeout(struct store_pg *p) {
        char ms[24];
        int r;

        snprintf(ms, sizeof ms, "%llu", (unsigned long long) (p->lock_timeout_usec / 1000));
        r = exec(p, "set lock timeout",
                 "SELECT set_config('lock_timeout', $1, false),"
                 " set_config('idle_in_transaction_session_timeout', $1, false)",
                 "t", ms);
        return r < 0 ? r : 0;
}

static void ignore_notice(void *userdata, const char *message) {
}

static int connect_db(struct store_pg *p) {
        /* Defaults first: anything the caller's conninfo says overrides them. */
        static const char *const keys[] = {
                "connect_timeout", "keepalives_idle", "keepalives_interval", "keepalives_count",
                "application_name", "dbname", NULL,
        };
        const char *values[] = { "5", "5", "2", "3", "sdlive", p->conninfo, NULL };
        int r;

        disconnect(p);
        p->conn = PQconnectdbParams(keys, values, 1);
        if (!p->conn)
                return store_fail(&p->base, -ENOMEM, "cannot allocate a connection");
        if (PQstatus(p->conn) != CONNECTION_OK) {
                r = fail_conn(p, errno_from_connect_failure(PQerrorMessage(p->conn)),
                              "cannot connect to the store");
                disconnect(p);
                return r;
        }
        p->connections++;
        PQsetNoticeProcessor(p->conn, ignore_notice, NULL);
        r = exec_script(p, "configure session",
                        "SET client_min_messages = warning");
        if (r >= 0 && p->readonly)
                r = exec_script(p, "configure session", "SET default_transaction_read_only = on");
        if (r >= 0)
                r = apply_lock_timeout(p);
        if (r >= 0 && !p->readonly && !p->opened)
                r = create_schema(p);
        if (r >= 0)
                r = read_meta(p, -EIO);
        if (r < 0) {
                disconnect(p);
                return r;
        }
        if (!p->opened)
                memcpy(p->bound_id, p->store_id, sizeof p->bound_id);
        p->opened = true;
        return 0;
}

/* Called first by every operation: reconnects after a lost connection. */
static int need_conn(struct store_pg *p) {
        if (p->conn && PQstatus(p->conn) == CONNECTION_OK)
                return 0;
        return connect_db(p);
}

static const struct store_backend pg_backend;

int store_pg_open(const char *conninfo, bool readonly, struct store **ret, char *errbuf, size_t errlen) {
        struct store_pg *p;
        int r;

        p = calloc(1, sizeof *p);
        if (!p)
                return -ENOMEM;
        p->base.backend = &pg_backend;
        p->lock_timeout_usec = 1000000;
        p->readonly = readonly;
        p->conninfo = strdup(conninfo);
        if (!p->conninfo) {
                free(p);
                return -ENOMEM;
        }
        r = connect_db(p);
        if (r < 0) {
                snprintf(errbuf, errlen, "%s", p->base.errmsg);
                free(p->conninfo);
                free(p);
                return r;
        }
        *ret = &p->base;
        return 0;
}

static void pg_close(struct store *s) {
        struct store_pg *p = to_pg(s);

        disconnect(p);
        free(p->conninfo);
        free(p);
}

static int pg_reconnect(struct store *s) {
        return connect_db(to_pg(s));
}

/* -ESTALE when the schema reached now is another incarnation (a database
 * or schema dropped and created again) than the one we are bound to. */
static int pg_same_store(struct store *s) {
        struct store_pg *p = to_pg(s);
        int r;

        if ((r = need_conn(p)) < 0 || (r = read_meta(p, -ESTALE)) < 0)
                return r;
        if (strcmp(p->store_id, p->bound_id) != 0)
                return store_fail(s, -ESTALE, "the store is another store (identity %s, not %s)",
                                  p->store_id[0] ? p->store_id : "none", p->bound_id[0] ? p->bound_id : "none");
        return 0;
}

static int pg_follow_store(struct store *s) {
        struct store_pg *p = to_pg(s);
        int r;

        if ((r = need_conn(p)) < 0 || (r = read_meta(p, -EIO)) < 0)
                return r;
        memcpy(p->bound_id, p->store_id, sizeof p->bound_id);
        return 0;
}

static const char *pg_identity(const struct store *s) {
        return ((const struct store_pg *) s)->bound_id;
}

static int pg_set_lock_timeout(struct store *s, uint64_t usec) {
        struct store_pg *p = to_pg(s);

        p->lock_timeout_usec = usec;
        /* Without a live connection, connect_db() applies it later. */
        if (!p->conn || PQstatus(p->conn) != CONNECTION_OK)
                return 0;
        return apply_lock_timeout(p);
}

/* ------------------------------------------------------------------ */
/* Lease                                                               */
/* ------------------------------------------------------------------ */

static int pg_lease_read(struct store *s, const char *name, struct store_lease_info *ret);

static int pg_lease_acquire(struct store *s, const char *name, const char *holder,
                            uint64_t ttl_usec, uint64_t *ret_generation) {
        struct store_pg *p = to_pg(s);
        struct store_lease_info info = { 0 };
        PGresult *res;
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        /* One statement: on conflict the row is locked and the WHERE is
         * evaluated against its latest committed version, so of two racing
         * acquirers the second sees the first's fresh expiry and gets none. */
        r = query(p, &res, "acquire lease",
                  "INSERT INTO leases (name, holder, generation, expires)"
                  " VALUES ($1, $2, 1, clock_timestamp() + $3 * interval '1 microsecond')"
                  " ON CONFLICT (name) DO UPDATE SET holder = excluded.holder,"
                  "  generation = leases.generation + 1, expires = excluded.expires"
                  "  WHERE leases.expires <= clock_timestamp()"
                  " RETURNING generation",
                  "tti", name, holder, (int64_t) ttl_usec);
        if (r < 0)
                return r;
        if (PQntuples(res) == 1) {
                *ret_generation = (uint64_t) int_value(res, 0, 0);
                PQclear(res);
                return 0;
        }
        PQclear(res);
        r = pg_lease_read(s, name, &info);
        if (r < 0)
                return r;
        return store_fail(s, -EBUSY, "lease %s is held by %s (generation %llu) for %llu ms more",
                          name, info.holder, (unsigned long long) info.generation,
                          (unsigned long long) (info.remaining_usec / 1000));
}

static int pg_lease_refresh(struct store *s, const char *name, const char *holder,
                            uint64_t generation, uint64_t ttl_usec) {
        struct store_pg *p = to_pg(s);
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        r = exec(p, "refresh lease",
                 "UPDATE leases SET expires = clock_timestamp() + $4 * interval '1 microsecond'"
                 " WHERE name = $1 AND holder = $2 AND generation = $3 AND expires > clock_timestamp()",
                 "ttii", name, holder, (int64_t) generation, (int64_t) ttl_usec);
        if (r == 0)
                return store_fail(s, -ESTALE, "lease %s is no longer held by %s as generation %llu",
                                  name, holder, (unsigned long long) generation);
        return r < 0 ? r : 0;
}

static int pg_lease_release(struct store *s, const char *name, const char *holder, uint64_t generation) {
        struct store_pg *p = to_pg(s);
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        r = exec(p, "release lease",
                 "WITH released AS (UPDATE leases SET holder = '', expires = clock_timestamp()"
                 "  WHERE name = $1 AND holder = $2 AND generation = $3 RETURNING name)"
                 " SELECT pg_notify('" RELEASED_CHANNEL "', name) FROM released",
                 "tti", name, holder, (int64_t) generation);
        if (r == 0)
                return store_fail(s, -ESTALE, "lease %s is not held by %s as generation %llu",
                                  name, holder, (unsigned long long) generation);
        return r < 0 ? r : 0;
}

static int pg_lease_read(struct store *s, const char *name, struct store_lease_info *ret) {
        struct store_pg *p = to_pg(s);
        PGresult *res;
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        r = query(p, &res, "read lease",
                  "SELECT holder, generation, expires > clock_timestamp(),"
                  " CASE WHEN expires > clock_timestamp()"
                  "  THEN (extract(epoch FROM expires - clock_timestamp()) * 1000000)::bigint ELSE 0 END"
                  " FROM leases WHERE name = $1",
                  "t", name);
        if (r < 0)
                return r;
        if (PQntuples(res) == 1) {
                store_copy_name(ret->holder, PQgetvalue(res, 0, 0));
                ret->generation = (uint64_t) int_value(res, 0, 1);
                ret->held = bool_value(res, 0, 2);
                ret->remaining_usec = ret->held ? (uint64_t) int_value(res, 0, 3) : 0;
        }
        PQclear(res);
        return 0;
}

static int pg_lease_listen(struct store *s, int *ret_fd) {
        struct store_pg *p = to_pg(s);
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        if (p->listening_on != p->connections) {
                r = exec(p, "listen for releases", "LISTEN " RELEASED_CHANNEL, "");
                if (r < 0)
                        return r;
                p->listening_on = p->connections;
        }
        *ret_fd = PQsocket(p->conn);
        return 0;
}

static int pg_lease_notified(struct store *s) {
        struct store_pg *p = to_pg(s);
        PGnotify *n;
        int found = 0;

        if (!p->conn || p->listening_on != p->connections)
                return store_fail(s, -ENOTCONN, "not listening for releases");
        if (!PQconsumeInput(p->conn)) {
                int r = fail_conn(p, -ECONNRESET, "read release announcements");

                disconnect(p);
                return r;
        }
        for (int i = 0; i < NOTIFIES_MAX && (n = PQnotifies(p->conn)); i++) {
                found = 1;
                PQfreemem(n);
        }
        return found;
}

static int pg_lease_unlisten(struct store *s) {
        struct store_pg *p = to_pg(s);
        PGnotify *n;
        int r;

        if (!p->conn || p->listening_on != p->connections)
                return 0;
        r = exec(p, "stop listening for releases", "UNLISTEN " RELEASED_CHANNEL, "");
        if (r < 0)
                return r;
        p->listening_on = 0;
        while ((n = PQnotifies(p->conn)))
                PQfreemem(n);
        return 0;
}

static int pg_log_summary(struct store *s, const char *lease, struct store_log_summary *ret) {
        struct store_pg *p = to_pg(s);
        PGresult *res;
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        r = query(p, &res, "summarize write log", STORE_LOG_SUMMARY_SQL("$1"), "t", lease);
        if (r < 0)
                return r;
        ret->entries = (uint64_t) int_value(res, 0, 0);
        ret->generations = (uint64_t) int_value(res, 0, 1);
        ret->overlaps = (uint64_t) int_value(res, 0, 2);
        PQclear(res);
        return 0;
}

/* ------------------------------------------------------------------ */
/* Inventory                                                           */
/* ------------------------------------------------------------------ */

static int pg_seed_inventory(struct store *s, uint64_t blobs, uint64_t artifacts, uint64_t nodes) {
        struct store_pg *p = to_pg(s);
        int r;

        if ((r = need_conn(p)) < 0 || (r = tx_begin(p)) < 0)
                return r;
        r = exec(p, "seed blobs",
                 "INSERT INTO blobs (id, refcount, deleted)"
                 " SELECT i, CASE WHEN i % 3 = 0 THEN 0 ELSE 1 END, false FROM generate_series(1, $1::bigint) i"
                 " ON CONFLICT DO NOTHING",
                 "i", (int64_t) blobs);
        if (r >= 0)
                r = exec(p, "seed artifacts",
                         "INSERT INTO artifacts (name, version, created)"
                         " SELECT format('artifact-%s', lpad((i / 10)::text, 5, '0')), i % 10 + 1,"
                         "  " NOW_USEC " - (10 - i % 10) * 1000000"
                         " FROM generate_series(0, $1::bigint - 1) i ON CONFLICT DO NOTHING",
                         "i", (int64_t) artifacts);
        if (r >= 0)
                r = exec(p, "seed nodes",
                         "INSERT INTO nodes (name, last_checkin, missing)"
                         " SELECT format('node-%s', lpad(i::text, 5, '0')),"
                         "  " NOW_USEC " - CASE WHEN i % 4 = 0 THEN 3600000000 ELSE 0 END, false"
                         " FROM generate_series(0, $1::bigint - 1) i ON CONFLICT DO NOTHING",
                         "i", (int64_t) nodes);
        return r < 0 ? tx_abort(p, r) : tx_commit(p);
}

static int pg_blobs_list(struct store *s, int64_t after_id, struct store_blob *out, size_t max) {
        struct store_pg *p = to_pg(s);
        PGresult *res;
        int r, i, n;

        if ((r = need_conn(p)) < 0)
                return r;
        r = query(p, &res, "list blobs",
                  "SELECT id, refcount, deleted FROM blobs WHERE id > $1 ORDER BY id LIMIT $2",
                  "ii", after_id, (int64_t) max);
        if (r < 0)
                return r;
        n = PQntuples(res);
        for (i = 0; i < n; i++) {
                out[i].id = int_value(res, i, 0);
                out[i].refcount = int_value(res, i, 1);
                out[i].deleted = bool_value(res, i, 2);
        }
        PQclear(res);
        return n;
}

static int pg_artifacts_list(struct store *s, const struct store_artifact *after,
                             struct store_artifact *out, size_t max) {
        struct store_pg *p = to_pg(s);
        PGresult *res;
        int r, i, n;

        if ((r = need_conn(p)) < 0)
                return r;
        r = query(p, &res, "list artifacts",
                  "SELECT name, version, created FROM artifacts"
                  " WHERE $1::text IS NULL OR name > $1 OR (name = $1 AND version < $2)"
                  " ORDER BY name, version DESC LIMIT $3",
                  "tii", after ? after->name : NULL, after ? after->version : INT64_C(0), (int64_t) max);
        if (r < 0)
                return r;
        n = PQntuples(res);
        for (i = 0; i < n; i++) {
                store_copy_name(out[i].name, PQgetvalue(res, i, 0));
                out[i].version = int_value(res, i, 1);
                out[i].created_usec = int_value(res, i, 2);
        }
        PQclear(res);
        return n;
}

static int pg_nodes_list(struct store *s, const char *after_name, struct store_node *out, size_t max) {
        struct store_pg *p = to_pg(s);
        PGresult *res;
        int r, i, n;

        if ((r = need_conn(p)) < 0)
                return r;
        r = query(p, &res, "list nodes",
                  "SELECT name, last_checkin, " NOW_USEC " - last_checkin, missing FROM nodes"
                  " WHERE name > $1 ORDER BY name LIMIT $2",
                  "ti", after_name, (int64_t) max);
        if (r < 0)
                return r;
        n = PQntuples(res);
        for (i = 0; i < n; i++) {
                store_copy_name(out[i].name, PQgetvalue(res, i, 0));
                out[i].last_checkin_usec = int_value(res, i, 1);
                out[i].since_checkin_usec = int_value(res, i, 2);
                out[i].missing = bool_value(res, i, 3);
        }
        PQclear(res);
        return n;
}

static int pg_blob_mark_deleted(struct store *s, const struct store_fence *f, int64_t id) {
        struct store_pg *p = to_pg(s);
        char what[96];
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        snprintf(what, sizeof what, "mark blob %lld deleted", (long long) id);
        return fenced_exec(p, f, what,
                           "UPDATE blobs SET deleted = true WHERE id = $1 AND refcount = 0 AND NOT deleted",
                           "i", id);
}

static int pg_artifact_prune(struct store *s, const struct store_fence *f, const char *name, int64_t version) {
        struct store_pg *p = to_pg(s);
        char what[128];
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        snprintf(what, sizeof what, "prune artifact %s version %lld", name, (long long) version);
        return fenced_exec(p, f, what, "DELETE FROM artifacts WHERE name = $1 AND version = $2",
                           "ti", name, version);
}

static int pg_node_mark_missing(struct store *s, const struct store_fence *f, const char *name) {
        struct store_pg *p = to_pg(s);
        char what[128];
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        snprintf(what, sizeof what, "mark node %s missing", name);
        return fenced_exec(p, f, what, "UPDATE nodes SET missing = true WHERE name = $1 AND NOT missing",
                           "t", name);
}

static int pg_node_checkin(struct store *s, const char *name) {
        struct store_pg *p = to_pg(s);
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        r = exec(p, "node check-in",
                 "INSERT INTO nodes (name, last_checkin, missing) VALUES ($1, " NOW_USEC ", false)"
                 " ON CONFLICT (name) DO UPDATE SET last_checkin = excluded.last_checkin, missing = false",
                 "t", name);
        return r < 0 ? r : 0;
}

/* ------------------------------------------------------------------ */
/* Jobs                                                                */
/* ------------------------------------------------------------------ */

#define JOB_COLUMNS "run, job, status, attempt, coalesce(worker, ''), coalesce(outcome, 0), executions"

static void job_from_row(const PGresult *res, int row, struct store_job *j) {
        const char *status = PQgetvalue(res, row, 2);

        j->run = (uint64_t) int_value(res, row, 0);
        j->job = (uint32_t) int_value(res, row, 1);
        j->status = strcmp(status, "done") == 0 ? STORE_JOB_DONE :
                    strcmp(status, "assigned") == 0 ? STORE_JOB_ASSIGNED : STORE_JOB_PENDING;
        j->attempt = (uint32_t) int_value(res, row, 3);
        store_copy_name(j->worker, PQgetvalue(res, row, 4));
        j->outcome = int_value(res, row, 5);
        j->executions = (uint32_t) int_value(res, row, 6);
}

/* Statements of the batched job path, prepared once per connection and
 * sent as one pipeline per batch (docs/store.md, "The batched job path").
 * Arrays travel as text literals ("{1,2,3}"), tokens as hex. */
enum { JQ_FENCE, JQ_RECORD, JQ_REQUEUE, JQ_CLAIM, JQ_LOG, JQ_N };

static const char *const job_sql[JQ_N] = {
        /* Fails (division by zero) unless the lease is ours: the rest of
         * the pipeline is then skipped. */
        [JQ_FENCE] = "SELECT 1 / (SELECT count(*) FROM (SELECT 1 FROM leases WHERE name = $1 AND holder = $2"
                     " AND generation = $3 AND expires > clock_timestamp()"
                     " AND EXISTS (SELECT 1 FROM store_meta WHERE key = 'store_id' AND value = $4)"
                     " FOR SHARE) l)::integer",
        /* Locks the jobs named (in key order: two batches never deadlock),
         * completes each first RESULT of the current attempt with its token
         * on a job not done, and returns what every RESULT found. */
        [JQ_RECORD] = "WITH r AS (SELECT * FROM unnest($1::bigint[], $2::integer[], $3::integer[], $4::text[],"
                      "  $5::bigint[]) WITH ORDINALITY AS r (run, job, attempt, token, outcome, i)),"
                      " j AS (SELECT jobs.run, jobs.job, jobs.status, jobs.attempt, jobs.token FROM jobs"
                      "  WHERE (jobs.run, jobs.job) IN (SELECT run, job FROM r)"
                      "  ORDER BY jobs.run, jobs.job FOR UPDATE),"
                      " c AS (SELECT DISTINCT ON (r.run, r.job) r.run, r.job, r.outcome FROM r"
                      "  JOIN j ON j.run = r.run AND j.job = r.job WHERE j.attempt = r.attempt"
                      "  AND j.token = decode(r.token, 'hex') AND j.status <> 'done' ORDER BY r.run, r.job, r.i),"
                      " u AS (UPDATE jobs SET status = 'done', outcome = c.outcome,"
                      "  executions = jobs.executions + 1 FROM c WHERE jobs.run = c.run AND jobs.job = c.job"
                      "  RETURNING jobs.run),"
                      " x AS (UPDATE runs SET done_count = done_count + n.n"
                      "  FROM (SELECT run, count(*) AS n FROM u GROUP BY run) n WHERE runs.id = n.run)"
                      " SELECT r.i, j.status, j.attempt, coalesce(j.token = decode(r.token, 'hex'), false)"
                      " FROM r LEFT JOIN j ON j.run = r.run AND j.job = r.job",
        [JQ_REQUEUE] = "UPDATE jobs j SET status = 'pending'"
                       " FROM unnest($1::bigint[], $2::integer[], $3::integer[]) AS x (run, job, attempt)"
                       " WHERE j.run = x.run AND j.job = x.job AND j.attempt = x.attempt"
                       " AND j.status = 'assigned' RETURNING j.run, j.job",
        /* SKIP LOCKED: a claim never waits for a row another batch holds. */
        [JQ_CLAIM] = "WITH p AS (SELECT run, job FROM jobs WHERE status = 'pending'"
                     "  ORDER BY run, job LIMIT $3 FOR UPDATE SKIP LOCKED),"
                     " c AS (SELECT run, job, row_number() OVER (ORDER BY run, job) AS i FROM p),"
                     " t AS (SELECT decode(tok, 'hex') AS token, i FROM unnest($2::text[])"
                     "  WITH ORDINALITY AS t (tok, i))"
                     " UPDATE jobs j SET status = 'assigned', attempt = j.attempt + 1, worker = $1,"
                     "  token = t.token, claimed = " NOW_USEC
                     " FROM c JOIN t USING (i) WHERE j.run = c.run AND j.job = c.job"
                     " RETURNING j.run, j.job, j.attempt, encode(j.token, 'hex')",
        [JQ_LOG] = "INSERT INTO write_log (lease, holder, generation, at, what)"
                   " VALUES ($1, $2, $3, " NOW_USEC ", $4)",
};
static const int job_sql_params[JQ_N] = { 4, 5, 3, 3, 4 };

static void job_statement_name(char name[16], int which) {
        snprintf(name, 16, "sdlive_job%d", which);
}

/* Prepares the job statements this connection does not have yet. */
static int prepare_job_statements(struct store_pg *p) {
        char name[16];
        PGresult *res;
        int r = 0;

        for (int which = 0; which < JQ_N; which++) {
                if (p->job_prepared & 1u << which)
                        continue;
                job_statement_name(name, which);
                if (!PQsendPrepare(p->conn, name, job_sql[which], job_sql_params[which], NULL)) {
                        r = fail_conn(p, -ECONNRESET, "prepare");
                        disconnect(p);
                        return r;
                }
                res = await_result(p, "prepare", &r);
                if (!res)
                        return r;
                r = check_result(p, res, "prepare");
                PQclear(res);
                if (r < 0)
                        return r;
                p->job_prepared |= 1u << which;
        }
        return 0;
}

static int send_job(struct store_pg *p, int which, const char *const *values) {
        char name[16];

        job_statement_name(name, which);
        if (PQsendQueryPrepared(p->conn, name, job_sql_params[which], values, NULL, NULL, 0))
                return 0;
        return fail_conn(p, -ECONNRESET, "send");
}

/* The next result of the pipeline, waiting at most until deadline. NULL
 * with *err = 0 is the end of one statement's results. */
static PGresult *pipe_next(struct store_pg *p, uint64_t deadline, int *err) {
        *err = 0;
        while (PQisBusy(p->conn)) {
                uint64_t now = monotonic_usec();
                struct pollfd pfd = { .fd = PQsocket(p->conn), .events = POLLIN };

                if (now >= deadline) {
                        *err = store_fail(&p->base, -ETIMEDOUT, "job batch: no answer from the store within %llu ms",
                                          (unsigned long long) ((p->lock_timeout_usec + QUERY_SLACK_USEC) / 1000));
                        return NULL;
                }
                if (poll(&pfd, 1, (int) ((deadline - now + 999) / 1000)) < 0 && errno != EINTR) {
                        *err = store_fail(&p->base, -errno, "job batch: poll: %m");
                        return NULL;
                }
                if (!PQconsumeInput(p->conn)) {
                        *err = fail_conn(p, -ECONNRESET, "job batch");
                        return NULL;
                }
        }
        return PQgetResult(p->conn);
}

/* Takes one statement's result (and the NULL after it). Returns 0 with
 * *ret to PQclear(), or < 0: the statement failed (the first failure of
 * the pipeline has the reason; later statements were skipped). */
static int pipe_take(struct store_pg *p, uint64_t deadline, const char *what, bool fence, PGresult **ret) {
        PGresult *res, *end;
        int r;

        *ret = NULL;
        res = pipe_next(p, deadline, &r);
        if (!res) {
                r = r < 0 ? r : fail_conn(p, -ECONNRESET, what);
                disconnect(p);
                return r;
        }
        end = pipe_next(p, deadline, &r);
        PQclear(end);
        if (r < 0) {
                PQclear(res);
                disconnect(p);
                return r;
        }
        if (PQresultStatus(res) == PGRES_PIPELINE_ABORTED) {
                PQclear(res);
                return -ECANCELED;
        }
        if (PQresultStatus(res) == PGRES_FATAL_ERROR && fence) {
                const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
                if (state && strcmp(state, "22012") == 0) {
                        PQclear(res);
                        return -ESTALE;
                }
        }
        r = check_result(p, res, what);
        if (r < 0) {
                PQclear(res);
                return r;
        }
        *ret = res;
        return 0;
}

/* Waits for the pipeline's sync point and leaves pipeline mode. */
static int pipe_end(struct store_pg *p, uint64_t deadline) {
        int r;

        for (;;) {
                PGresult *res = pipe_next(p, deadline, &r);
                if (r < 0)
                        return r;
                if (!res)
                        continue;
                ExecStatusType st = PQresultStatus(res);
                PQclear(res);
                if (st == PGRES_PIPELINE_SYNC)
                        break;
        }
        if (!PQexitPipelineMode(p->conn))
                return fail_conn(p, -EPROTO, "leave pipeline mode");
        return 0;
}

static void hex_token(char out[2 * STORE_TOKEN_SIZE + 1], const uint8_t *t) {
        for (int i = 0; i < STORE_TOKEN_SIZE; i++)
                snprintf(out + 2 * i, 3, "%02x", t[i]);
}

static void unhex_token(uint8_t *t, const char *hex) {
        for (int i = 0; i < STORE_TOKEN_SIZE && hex[2 * i] && hex[2 * i + 1]; i++) {
                char b[3] = { hex[2 * i], hex[2 * i + 1], 0 };
                t[i] = (uint8_t) strtoul(b, NULL, 16);
        }
}

/* The parameters of one batch: array literals built with open_memstream(). */
enum { A_RUN, A_JOB, A_ATTEMPT, A_TOKEN, A_OUTCOME, A_RQ_RUN, A_RQ_JOB, A_RQ_ATTEMPT, A_N };

struct batch_text {
        FILE *f[A_N];
        char *text[A_N];
        size_t len[A_N];
        char **claim_tokens; /* one literal per claim request */
        char (*claim_want)[16];
        char gen[24];
};

static void batch_text_free(struct batch_text *t, size_t n_claims) {
        for (int i = 0; i < A_N; i++) {
                if (t->f[i])
                        fclose(t->f[i]);
                free(t->text[i]);
        }
        if (t->claim_tokens)
                for (size_t i = 0; i < n_claims; i++)
                        free(t->claim_tokens[i]);
        free(t->claim_tokens);
        free(t->claim_want);
}

static void put(FILE *f, size_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(FILE *f, size_t i, const char *fmt, ...) {
        va_list ap;

        if (i)
                fputc(',', f);
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
}

static int batch_text_build(struct store_pg *p, const struct store_job_batch *b, struct batch_text *t) {
        char hex[2 * STORE_TOKEN_SIZE + 1];
        int r = 0;

        for (int i = 0; i < A_N; i++) {
                t->f[i] = open_memstream(&t->text[i], &t->len[i]);
                if (!t->f[i])
                        return store_fail(&p->base, -ENOMEM, "out of memory");
                fputc('{', t->f[i]);
        }
        for (size_t i = 0; i < b->n_results; i++) {
                const struct store_result *x = &b->results[i];
                bool bad = x->status < 0;
                hex_token(hex, x->token);
                put(t->f[A_RUN], i, "%llu", (unsigned long long) (bad ? 0 : x->run));
                put(t->f[A_JOB], i, "%u", bad ? 0 : x->job);
                put(t->f[A_ATTEMPT], i, "%u", bad ? 0 : x->attempt);
                put(t->f[A_TOKEN], i, "%s", hex);
                put(t->f[A_OUTCOME], i, "%lld", (long long) x->outcome);
        }
        for (size_t i = 0; i < b->n_requeues; i++) {
                const struct store_requeue *x = &b->requeues[i];
                put(t->f[A_RQ_RUN], i, "%llu", (unsigned long long) x->run);
                put(t->f[A_RQ_JOB], i, "%u", x->job);
                put(t->f[A_RQ_ATTEMPT], i, "%u", x->attempt);
        }
        for (int i = 0; i < A_N; i++) {
                fputc('}', t->f[i]);
                if (fclose(t->f[i]) != 0)
                        r = store_fail(&p->base, -ENOMEM, "out of memory");
                t->f[i] = NULL;
        }
        if (r < 0)
                return r;
        t->claim_tokens = calloc(b->n_claims + 1, sizeof(char *));
        t->claim_want = calloc(b->n_claims + 1, sizeof(*t->claim_want));
        if (!t->claim_tokens || !t->claim_want)
                return store_fail(&p->base, -ENOMEM, "out of memory");
        for (size_t i = 0; i < b->n_claims; i++) {
                const struct store_claim_request *c = &b->claims[i];
                size_t len;
                FILE *f = open_memstream(&t->claim_tokens[i], &len);
                if (!f)
                        return store_fail(&p->base, -ENOMEM, "out of memory");
                fputc('{', f);
                for (unsigned k = 0; k < c->want; k++) {
                        hex_token(hex, c->out[k].token);
                        put(f, k, "%s", hex);
                }
                fputc('}', f);
                if (fclose(f) != 0)
                        return store_fail(&p->base, -ENOMEM, "out of memory");
                snprintf(t->claim_want[i], sizeof(t->claim_want[i]), "%u", c->want);
        }
        return 0;
}

/* What the RESULTs found; the same job twice in one batch counts once. */
static void read_record(const PGresult *res, struct store_job_batch *b) {
        for (size_t i = 0; i < b->n_results; i++)
                if (b->results[i].status == 0)
                        b->results[i].status = -ENOENT; /* unless its row is found */
        for (int row = 0; row < PQntuples(res); row++) {
                size_t i = (size_t) int_value(res, row, 0) - 1;
                struct store_result *x;
                if (i >= b->n_results || PQgetisnull(res, row, 1) || b->results[i].status != -ENOENT)
                        continue;
                x = &b->results[i];
                uint32_t attempt = (uint32_t) int_value(res, row, 2);
                if (x->attempt > attempt)
                        x->status = -EINVAL;
                else if (x->attempt < attempt)
                        x->status = STORE_RECORD_STALE_ATTEMPT;
                else if (!bool_value(res, row, 3))
                        x->status = -EPERM;
                else if (strcmp(PQgetvalue(res, row, 1), "done") == 0)
                        x->status = STORE_RECORD_DUPLICATE;
                else
                        x->status = STORE_RECORD_COUNTED;
        }
        for (size_t i = 0; i < b->n_results; i++) {
                if (b->results[i].status != STORE_RECORD_COUNTED)
                        continue;
                for (size_t k = 0; k < i; k++)
                        if (b->results[k].status == STORE_RECORD_COUNTED &&
                            b->results[k].run == b->results[i].run && b->results[k].job == b->results[i].job) {
                                b->results[i].status = STORE_RECORD_DUPLICATE;
                                break;
                        }
                b->counted += b->results[i].status == STORE_RECORD_COUNTED;
        }
}

static void read_requeue(const PGresult *res, struct store_job_batch *b) {
        for (int row = 0; row < PQntuples(res); row++)
                for (size_t i = 0; i < b->n_requeues; i++)
                        if (!b->requeues[i].requeued && b->requeues[i].run == (uint64_t) int_value(res, row, 0) &&
                            b->requeues[i].job == (uint32_t) int_value(res, row, 1)) {
                                b->requeues[i].requeued = true;
                                b->requeued++;
                                break;
                        }
}

static void read_claim(const PGresult *res, struct store_claim_request *c) {
        c->got = (unsigned) PQntuples(res);
        if (c->got > c->want)
                c->got = c->want;
        for (unsigned i = 0; i < c->got; i++) {
                c->out[i].run = (uint64_t) int_value(res, (int) i, 0);
                c->out[i].job = (uint32_t) int_value(res, (int) i, 1);
                c->out[i].attempt = (uint32_t) int_value(res, (int) i, 2);
                unhex_token(c->out[i].token, PQgetvalue(res, (int) i, 3));
        }
}

/* Sends the whole batch as one pipeline (BEGIN, the fence, the RESULTs,
 * the requeues, the claims) and reads what each statement did. */
static int batch_round(struct store_pg *p, const struct store_fence *f, struct store_job_batch *b,
                       struct batch_text *t, uint64_t deadline) {
        PGresult *res;
        int r = 0, first = 0;

        if (!PQenterPipelineMode(p->conn))
                return fail_conn(p, -EPROTO, "enter pipeline mode");
        if (!PQsendQueryParams(p->conn, "BEGIN", 0, NULL, NULL, NULL, NULL, 0))
                r = fail_conn(p, -ECONNRESET, "begin transaction");
        if (r >= 0)
                r = send_job(p, JQ_FENCE, (const char *const[]) { f->lease, f->holder, t->gen,
                                                                  f->store_id ? f->store_id : p->bound_id });
        if (r >= 0 && b->n_results)
                r = send_job(p, JQ_RECORD, (const char *const[]) { t->text[A_RUN], t->text[A_JOB],
                                                                   t->text[A_ATTEMPT], t->text[A_TOKEN],
                                                                   t->text[A_OUTCOME] });
        if (r >= 0 && b->n_requeues)
                r = send_job(p, JQ_REQUEUE, (const char *const[]) { t->text[A_RQ_RUN], t->text[A_RQ_JOB],
                                                                    t->text[A_RQ_ATTEMPT] });
        for (size_t i = 0; r >= 0 && i < b->n_claims; i++)
                if (b->claims[i].want)
                        r = send_job(p, JQ_CLAIM, (const char *const[]) { b->claims[i].worker,
                                                                          t->claim_tokens[i], t->claim_want[i] });
        if (r >= 0 && !PQpipelineSync(p->conn))
                r = fail_conn(p, -ECONNRESET, "send");
        if (r < 0) {
                disconnect(p);
                return r;
        }

#define TAKE(what, then)                                           \
        do {                                                       \
                int t_ = pipe_take(p, deadline, what, false, &res); \
                if (t_ == 0 && first == 0) {                       \
                        then;                                      \
                }                                                  \
                if (t_ < 0 && first == 0)                          \
                        first = t_;                                \
                PQclear(res);                                      \
                if (!p->conn)                                      \
                        return first;                              \
        } while (0)
        TAKE("begin transaction", (void) 0);
        r = pipe_take(p, deadline, "check lease", true, &res);
        PQclear(res);
        if (!p->conn)
                return first < 0 ? first : r;
        if (first == 0 && r < 0)
                first = r;
        if (b->n_results)
                TAKE("record results", read_record(res, b));
        if (b->n_requeues)
                TAKE("requeue jobs", read_requeue(res, b));
        for (size_t i = 0; i < b->n_claims; i++)
                if (b->claims[i].want)
                        TAKE("claim jobs", (read_claim(res, &b->claims[i]), b->claimed += b->claims[i].got));
#undef TAKE
        r = pipe_end(p, deadline);
        if (r < 0) {
                disconnect(p);
                return r;
        }
        if (first == -ESTALE)
                store_fail(&p->base, -ESTALE, "lease %s is no longer held by %s as generation %llu",
                           f->lease, f->holder, (unsigned long long) f->generation);
        return first;
}

/* The write-log row and COMMIT, one more pipeline. */
static int log_and_commit(struct store_pg *p, const struct store_fence *f, const char *gen, const char *what,
                          uint64_t deadline) {
        PGresult *res;
        int r = 0, first;

        if (!PQenterPipelineMode(p->conn))
                return fail_conn(p, -EPROTO, "enter pipeline mode");
        r = send_job(p, JQ_LOG, (const char *const[]) { f->lease, f->holder, gen, what });
        if (r >= 0 && !PQsendQueryParams(p->conn, "COMMIT", 0, NULL, NULL, NULL, NULL, 0))
                r = fail_conn(p, -ECONNRESET, "commit");
        if (r >= 0 && !PQpipelineSync(p->conn))
                r = fail_conn(p, -ECONNRESET, "send");
        if (r < 0) {
                disconnect(p);
                return r;
        }
        first = pipe_take(p, deadline, "log write", false, &res);
        PQclear(res);
        if (!p->conn)
                return first;
        r = pipe_take(p, deadline, "commit", false, &res);
        PQclear(res);
        if (!p->conn)
                return first < 0 ? first : r;
        if (first == 0)
                first = r;
        r = pipe_end(p, deadline);
        if (r < 0) {
                disconnect(p);
                return r;
        }
        return first;
}

static int pg_jobs_batch(struct store *s, const struct store_fence *f, struct store_job_batch *b) {
        struct store_pg *p = to_pg(s);
        struct batch_text t = { 0 };
        uint64_t deadline;
        char what[128];
        int r;

        if ((r = need_conn(p)) < 0 || (r = prepare_job_statements(p)) < 0)
                return r;
        snprintf(t.gen, sizeof t.gen, "%llu", (unsigned long long) f->generation);
        r = batch_text_build(p, b, &t);
        if (r < 0)
                goto out;
        deadline = monotonic_usec() + p->lock_timeout_usec + QUERY_SLACK_USEC;
        r = batch_round(p, f, b, &t, deadline);
        if (r < 0 || (!b->counted && !b->requeued && !b->claimed)) {
                r = tx_abort(p, r < 0 ? r : 0);
                goto out;
        }
        if (b->inside)
                b->inside(b->userdata, b);
        snprintf(what, sizeof what, "jobs: %u recorded, %u requeued, %u claimed", b->counted,
                 b->requeued, b->claimed);
        r = log_and_commit(p, f, t.gen, what, monotonic_usec() + p->lock_timeout_usec + QUERY_SLACK_USEC);
        if (r < 0)
                r = tx_abort(p, r);
out:
        batch_text_free(&t, b->n_claims);
        return r;
}

static int pg_run_begin(struct store *s, const struct store_fence *f, uint32_t total, uint64_t *ret_run) {
        struct store_pg *p = to_pg(s);
        PGresult *res;
        char what[96];
        int64_t run;
        int r;

        if ((r = need_conn(p)) < 0 || (r = fence_begin(p, f)) < 0)
                return r;
        r = query(p, &res, "create run",
                  "INSERT INTO runs (total, done_count, created) VALUES ($1, 0, " NOW_USEC ") RETURNING id",
                  "i", (int64_t) total);
        if (r < 0)
                return tx_abort(p, r);
        run = int_value(res, 0, 0);
        PQclear(res);
        snprintf(what, sizeof what, "create run %lld of %u jobs", (long long) run, total);
        r = fence_commit(p, f, what);
        if (r < 0)
                return r;
        *ret_run = (uint64_t) run;
        return 0;
}

static int pg_run_fill(struct store *s, const struct store_fence *f, uint64_t run, uint32_t max) {
        struct store_pg *p = to_pg(s);
        int64_t total, next, n;
        PGresult *res;
        char what[96];
        int r;

        if ((r = need_conn(p)) < 0 || (r = fence_begin(p, f)) < 0)
                return r;
        r = query(p, &res, "read run",
                  "SELECT total, (SELECT coalesce(max(job) + 1, 0) FROM jobs WHERE run = $1)"
                  " FROM runs WHERE id = $1", "i", (int64_t) run);
        if (r < 0)
                return tx_abort(p, r);
        r = PQntuples(res);
        total = r ? int_value(res, 0, 0) : 0;
        next = r ? int_value(res, 0, 1) : 0;
        PQclear(res);
        if (r == 0)
                return tx_abort(p, store_fail(s, -ENOENT, "run %llu does not exist", (unsigned long long) run));
        n = total - next < (int64_t) max ? total - next : (int64_t) max;
        if (n <= 0)
                return tx_abort(p, 0);
        r = exec(p, "create jobs",
                 "INSERT INTO jobs (run, job) SELECT $1, i FROM generate_series($2::integer, $3::integer - 1) i",
                 "iii", (int64_t) run, next, next + n);
        if (r < 0)
                return tx_abort(p, r);
        snprintf(what, sizeof what, "create jobs %lld..%lld of run %llu", (long long) next,
                 (long long) (next + n - 1), (unsigned long long) run);
        r = fence_commit(p, f, what);
        return r < 0 ? r : (int) n;
}

static int pg_job_claim(struct store *s, const struct store_fence *f, uint64_t run,
                        const char *worker, struct store_job *ret) {
        struct store_pg *p = to_pg(s);
        PGresult *res;
        char what[128];
        int r;

        if ((r = need_conn(p)) < 0 || (r = fence_begin(p, f)) < 0)
                return r;
        /* SKIP LOCKED: concurrent claimers take different jobs, never wait. */
        r = query(p, &res, "claim job",
                  "UPDATE jobs SET status = 'assigned', attempt = attempt + 1, worker = $2"
                  " WHERE (run, job) = (SELECT run, job FROM jobs WHERE status = 'pending'"
                  "  AND ($1::bigint = 0 OR run = $1::bigint) ORDER BY run, job LIMIT 1 FOR UPDATE SKIP LOCKED)"
                  " RETURNING " JOB_COLUMNS,
                  "it", (int64_t) run, worker);
        if (r < 0)
                return tx_abort(p, r);
        if (PQntuples(res) == 0) {
                PQclear(res);
                return tx_abort(p, 0);
        }
        job_from_row(res, 0, ret);
        PQclear(res);
        snprintf(what, sizeof what, "assign job %llu/%u attempt %u to %s",
                 (unsigned long long) ret->run, ret->job, ret->attempt, worker);
        r = fence_commit(p, f, what);
        return r < 0 ? r : 1;
}

static int pg_jobs_requeue(struct store *s, const struct store_fence *f, const char *worker) {
        struct store_pg *p = to_pg(s);
        char what[128];
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        snprintf(what, sizeof what, "requeue in-flight jobs of %s", worker ? worker : "every worker");
        return fenced_exec(p, f, what,
                           "UPDATE jobs SET status = 'pending' WHERE status = 'assigned'"
                           " AND ($1::text IS NULL OR worker = $1)",
                           "t", worker);
}

static int pg_job_requeue(struct store *s, const struct store_fence *f, uint64_t run,
                          uint32_t job, uint32_t attempt) {
        struct store_pg *p = to_pg(s);
        char what[96];
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        snprintf(what, sizeof what, "requeue job %llu/%u attempt %u", (unsigned long long) run, job, attempt);
        return fenced_exec(p, f, what,
                           "UPDATE jobs SET status = 'pending' WHERE run = $1 AND job = $2"
                           " AND attempt = $3 AND status = 'assigned'",
                           "iii", (int64_t) run, (int64_t) job, (int64_t) attempt);
}

static int pg_job_record(struct store *s, const struct store_fence *f, uint64_t run,
                         uint32_t job, uint32_t attempt, int64_t outcome) {
        struct store_pg *p = to_pg(s);
        struct store_job cur = { 0 };
        PGresult *res;
        char what[128];
        int r, result;

        if ((r = need_conn(p)) < 0 || (r = fence_begin(p, f)) < 0)
                return r;
        /* The row lock serializes recorders of one job: the second sees the
         * first's committed status. */
        r = query(p, &res, "read job",
                  "SELECT " JOB_COLUMNS " FROM jobs WHERE run = $1 AND job = $2 FOR UPDATE",
                  "ii", (int64_t) run, (int64_t) job);
        if (r < 0)
                return tx_abort(p, r);
        if (PQntuples(res) == 1)
                job_from_row(res, 0, &cur);
        r = PQntuples(res);
        PQclear(res);
        if (r == 0)
                return tx_abort(p, store_fail(s, -ENOENT, "job %llu/%u does not exist",
                                              (unsigned long long) run, job));
        if (attempt > cur.attempt)
                return tx_abort(p, store_fail(s, -EINVAL, "attempt %u of job %llu/%u was never assigned (current %u)",
                                              attempt, (unsigned long long) run, job, cur.attempt));

        if (attempt < cur.attempt)
                result = STORE_RECORD_STALE_ATTEMPT;
        else if (cur.status == STORE_JOB_DONE)
                result = STORE_RECORD_DUPLICATE;
        else
                result = STORE_RECORD_COUNTED;

        if (result == STORE_RECORD_COUNTED) {
                r = exec(p, "record outcome",
                         "UPDATE jobs SET status = 'done', outcome = $3, executions = executions + 1"
                         " WHERE run = $1 AND job = $2",
                         "iii", (int64_t) run, (int64_t) job, outcome);
                if (r >= 0)
                        r = exec(p, "count done job", "UPDATE runs SET done_count = done_count + 1 WHERE id = $1",
                                 "i", (int64_t) run);
        } else
                r = exec(p, "count execution",
                         "UPDATE jobs SET executions = executions + 1 WHERE run = $1 AND job = $2",
                         "ii", (int64_t) run, (int64_t) job);
        if (r < 0)
                return tx_abort(p, r);
        snprintf(what, sizeof what, "record job %llu/%u attempt %u outcome %lld: %s",
                 (unsigned long long) run, job, attempt, (long long) outcome,
                 result == STORE_RECORD_COUNTED ? "counted" :
                 result == STORE_RECORD_DUPLICATE ? "duplicate" : "stale attempt");
        r = fence_commit(p, f, what);
        return r < 0 ? r : result;
}

static int pg_runs_summary(struct store *s, struct store_run_summary *out, size_t max) {
        struct store_pg *p = to_pg(s);
        PGresult *res;
        int r, n;

        if ((r = need_conn(p)) < 0)
                return r;
        r = query(p, &res, "summarize runs",
                  "SELECT r.id, r.total, r.done_count, r.created, count(j.job),"
                  " count(*) FILTER (WHERE j.status = 'pending'), count(*) FILTER (WHERE j.status = 'assigned'),"
                  " count(*) FILTER (WHERE j.status = 'done'), count(*) FILTER (WHERE j.attempt > 1)"
                  " FROM (SELECT * FROM runs ORDER BY id DESC LIMIT $1) r LEFT JOIN jobs j ON j.run = r.id"
                  " GROUP BY r.id, r.total, r.done_count, r.created ORDER BY r.id DESC",
                  "i", (int64_t) max);
        if (r < 0)
                return r;
        n = PQntuples(res);
        for (int i = 0; i < n && (size_t) i < max; i++)
                out[i] = (struct store_run_summary) {
                        .id = (uint64_t) int_value(res, i, 0),
                        .total = (uint32_t) int_value(res, i, 1),
                        .done_count = (uint32_t) int_value(res, i, 2),
                        .created_usec = int_value(res, i, 3),
                        .created = (uint32_t) int_value(res, i, 4),
                        .pending = (uint32_t) int_value(res, i, 5),
                        .in_flight = (uint32_t) int_value(res, i, 6),
                        .done = (uint32_t) int_value(res, i, 7),
                        .redelivered = (uint32_t) int_value(res, i, 8),
                };
        PQclear(res);
        return n;
}

static int pg_job_oldest_in_flight(struct store *s, struct store_job *ret, int64_t *claimed_usec) {
        struct store_pg *p = to_pg(s);
        PGresult *res;
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        r = query(p, &res, "read the oldest in-flight job",
                  "SELECT " JOB_COLUMNS ", coalesce(claimed, 0) FROM jobs WHERE status = 'assigned'"
                  " ORDER BY claimed NULLS FIRST, run, job LIMIT 1", "");
        if (r < 0)
                return r;
        r = PQntuples(res);
        if (r == 1) {
                job_from_row(res, 0, ret);
                *claimed_usec = int_value(res, 0, 7);
        }
        PQclear(res);
        return r;
}

static int pg_job_read(struct store *s, uint64_t run, uint32_t job, struct store_job *ret) {
        struct store_pg *p = to_pg(s);
        PGresult *res;
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        r = query(p, &res, "read job", "SELECT " JOB_COLUMNS " FROM jobs WHERE run = $1 AND job = $2",
                  "ii", (int64_t) run, (int64_t) job);
        if (r < 0)
                return r;
        r = PQntuples(res);
        if (r == 1)
                job_from_row(res, 0, ret);
        PQclear(res);
        if (r == 0)
                return store_fail(s, -ENOENT, "job %llu/%u does not exist", (unsigned long long) run, job);
        return 0;
}

static int pg_run_read(struct store *s, uint64_t run, struct store_run *ret) {
        struct store_pg *p = to_pg(s);
        PGresult *res;
        int r;

        if ((r = need_conn(p)) < 0)
                return r;
        r = query(p, &res, "read run",
                  "SELECT id, total, done_count, created,"
                  " (SELECT count(*) FROM jobs WHERE run = $1 AND status = 'done'),"
                  " (SELECT count(*) FROM jobs WHERE run = $1 AND attempt > 1),"
                  " (SELECT count(*) FROM jobs WHERE run = $1 AND executions > 1)"
                  " FROM runs WHERE id = $1",
                  "i", (int64_t) run);
        if (r < 0)
                return r;
        r = PQntuples(res);
        if (r == 1) {
                ret->id = (uint64_t) int_value(res, 0, 0);
                ret->total = (uint32_t) int_value(res, 0, 1);
                ret->done_count = (uint32_t) int_value(res, 0, 2);
                ret->created_usec = int_value(res, 0, 3);
                ret->jobs_done = (uint32_t) int_value(res, 0, 4);
                ret->jobs_redelivered = (uint32_t) int_value(res, 0, 5);
                ret->jobs_reexecuted = (uint32_t) int_value(res, 0, 6);
        }
        PQclear(res);
        if (r == 0)
                return store_fail(s, -ENOENT, "run %llu does not exist", (unsigned long long) run);
        return 0;
}

static int pg_runs_unfinished(struct store *s, uint64_t *ids, size_t max) {
        struct store_pg *p = to_pg(s);
        PGresult *res;
        int r, i, n;

        if ((r = need_conn(p)) < 0)
                return r;
        r = query(p, &res, "list unfinished runs",
                  "SELECT id FROM runs WHERE done_count < total ORDER BY id LIMIT $1", "i", (int64_t) max);
        if (r < 0)
                return r;
        n = PQntuples(res);
        for (i = 0; i < n; i++)
                ids[i] = (uint64_t) int_value(res, i, 0);
        PQclear(res);
        return n;
}

static const struct store_backend pg_backend = {
        .name = "postgresql",
        .close = pg_close,
        .reconnect = pg_reconnect,
        .set_lock_timeout = pg_set_lock_timeout,
        .same_store = pg_same_store,
        .follow_store = pg_follow_store,
        .identity = pg_identity,
        .lease_acquire = pg_lease_acquire,
        .lease_refresh = pg_lease_refresh,
        .lease_release = pg_lease_release,
        .lease_read = pg_lease_read,
        .lease_listen = pg_lease_listen,
        .lease_notified = pg_lease_notified,
        .lease_unlisten = pg_lease_unlisten,
        .log_summary = pg_log_summary,
        .seed_inventory = pg_seed_inventory,
        .blobs_list = pg_blobs_list,
        .artifacts_list = pg_artifacts_list,
        .nodes_list = pg_nodes_list,
        .blob_mark_deleted = pg_blob_mark_deleted,
        .artifact_prune = pg_artifact_prune,
        .node_mark_missing = pg_node_mark_missing,
        .node_checkin = pg_node_checkin,
        .run_begin = pg_run_begin,
        .run_fill = pg_run_fill,
        .jobs_batch = pg_jobs_batch,
        .runs_summary = pg_runs_summary,
        .job_oldest_in_flight = pg_job_oldest_in_flight,
        .job_claim = pg_job_claim,
        .jobs_requeue = pg_jobs_requeue,
        .job_requeue = pg_job_requeue,
        .job_record = pg_job_record,
        .job_read = pg_job_read,
        .run_read = pg_run_read,
        .runs_unfinished = pg_runs_unfinished,
};
