/* SPDX-License-Identifier: MIT */
/* Connecting to a PostgreSQL store: the session's settings (lock and
 * idle-in-transaction timeouts, read-only for inspection), the schema
 * created once per handle (only when the catalogs show it incomplete),
 * and the store identity the handle is bound to.
 * The backend's properties are in docs/store.md. */

#include "pg.h"
#include "store_open.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const char schema_sql[] =
        "BEGIN;"
        /* Concurrent CREATE ... IF NOT EXISTS can still collide: serialize. */
        "SELECT pg_advisory_xact_lock(7153200512);"
        "CREATE TABLE IF NOT EXISTS store_meta (key text PRIMARY KEY, value text NOT NULL);"
        "INSERT INTO store_meta VALUES ('schema', '" STORE_SCHEMA_VERSION "') ON CONFLICT DO NOTHING;"
        /* %s: a new identity, hex digits only. */
        "INSERT INTO store_meta VALUES ('store_id', '%s') ON CONFLICT DO NOTHING;"
        "CREATE TABLE IF NOT EXISTS leases (name text PRIMARY KEY, holder text NOT NULL,"
        "  generation bigint NOT NULL, expires timestamptz NOT NULL);"
        /* The highest fencing token a write by token passed with, per
         * lease (store_fence.by_token); a store made before tokens gains
         * it (schema_complete_sql lists it). */
        "CREATE TABLE IF NOT EXISTS lease_tokens (lease text PRIMARY KEY, token bigint NOT NULL);"
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
        char why[sizeof p->base.errmsg];
        int r = store_meta_read(&p->base, p->store_id, "postgresql");

        if (r == -EPROTO && p->opened) {
                memcpy(why, p->base.errmsg, sizeof why);
                r = store_fail(&p->base, gone, "the store's tables are gone (%.200s); a running"
                               " member never creates them again", why);
        }
        return r;
}

/* Whether the schema is complete already: every table and index the
 * script creates, and the job columns it adds. Read from the catalogs
 * only, so it takes no lock on any table of the store: a member opening
 * the store while another client holds a table lock (LOCK TABLE jobs)
 * does not queue behind it for set-up it does not need. */
static const char schema_complete_sql[] =
        "SELECT count(*) FILTER (WHERE to_regclass(n) IS NULL) = 0"
        " AND (SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass('jobs')"
        "  AND attname IN ('token', 'claimed') AND NOT attisdropped) = 2"
        " FROM unnest(ARRAY['store_meta', 'leases', 'lease_tokens', 'write_log', 'blobs', 'artifacts', 'artifacts_newest',"
        "  'nodes', 'runs', 'jobs', 'jobs_pending', 'jobs_in_flight']) n";

/* 1 when the schema is complete and has its identity (nothing to set up),
 * 0 when the set-up script must run, < 0 on error. */
static int schema_ready(struct store_pg *p) {
        PGresult *res;
        bool complete;
        int r;

        if (!PQsendQuery(p->conn, schema_complete_sql))
                return pg_fail_conn(p, -ECONNRESET, "read the schema");
        res = pg_await_result(p, "read the schema", &r);
        if (!res)
                return r;
        r = pg_check_result(p, res, "read the schema");
        complete = r >= 0 && PQntuples(res) == 1 && pg_bool_value(res, 0, 0);
        PQclear(res);
        if (r < 0 || !complete)
                return r < 0 ? r : 0;
        r = store_meta_read(&p->base, p->store_id, "postgresql");
        if (r < 0)
                return r;
        return p->store_id[0] ? 1 : 0; /* a store made before identities gains one */
}

static int create_schema(struct store_pg *p) {
        char id[STORE_ID_MAX + 1], sql[sizeof schema_sql + STORE_ID_MAX];
        int r;

        r = store_new_identity(id);
        if (r < 0)
                return store_fail(&p->base, r, "cannot draw a store identity: %s", strerror(-r));
        snprintf(sql, sizeof sql, schema_sql, id);
        r = pg_exec_script(p, "create schema", sql);
        return r < 0 ? pg_abort(&p->base, r) : 0;
}

/* The lock timeout bounds both sides of a lock: how long we wait for one,
 * and how long the server lets a session of ours sit idle inside a
 * transaction. A session whose process was stopped mid-transaction (a
 * paused leader holding FOR KEY SHARE on the lease row) is ended after that
 * long, its locks released, so a standby's acquisition is never held up
 * longer than it would wait for a lock anyway. A fenced transaction sets
 * its own, longer, with its BEGIN (pg_send_begin()). */
static int apply_lock_timeout(struct store_pg *p) {
        char ms[24];
        int r;

        snprintf(ms, sizeof ms, "%llu", (unsigned long long) (p->lock_timeout_usec / 1000));
        r = pg_exec_text(p, "set lock timeout",
                         "SELECT set_config('lock_timeout', $1, false),"
                         " set_config('idle_in_transaction_session_timeout', $1, false)",
                         ms);
        return r < 0 ? r : 0;
}

static void ignore_notice(void *userdata, const char *message) {
}

/* libpq's connect_timeout (seconds, per host) for this handle: its lock
 * timeout rounded up, at least libpq's least of 2 and at most 5. A
 * connect blocks its caller, and a caller with a short lock timeout (a
 * lease refresher, a main loop that must pet) cannot wait out 5 s per
 * silent host. */
static unsigned connect_timeout_sec(const struct store_pg *p) {
        uint64_t sec = (p->lock_timeout_usec + 999999) / 1000000;

        return sec < 2 ? 2 : sec > 5 ? 5 : (unsigned) sec;
}

int pg_connect(struct store_pg *p) {
        /* Defaults first: anything the caller's conninfo says overrides them. */
        static const char *const keys[] = {
                "connect_timeout", "keepalives_idle", "keepalives_interval", "keepalives_count",
                "application_name", "dbname", NULL,
        };
        char timeout[4];
        const char *values[] = { timeout, "5", "2", "3", "sdlive", p->conninfo, NULL };
        int r;

        snprintf(timeout, sizeof timeout, "%u", connect_timeout_sec(p));

        pg_disconnect(p);
        /* libpq's connect blocks (connect_timeout per host): the wait
         * hook runs just before and just after it. */
        store_waiting(&p->base);
        p->conn = PQconnectdbParams(keys, values, 1);
        store_waiting(&p->base);
        if (!p->conn)
                return store_fail(&p->base, -ENOMEM, "cannot allocate a connection");
        if (PQstatus(p->conn) != CONNECTION_OK) {
                r = pg_fail_conn(p, errno_from_connect_failure(PQerrorMessage(p->conn)),
                              "cannot connect to the store");
                pg_disconnect(p);
                return r;
        }
        p->connections++;
        PQsetNoticeProcessor(p->conn, ignore_notice, NULL);
        r = pg_exec_script(p, "configure session",
                        "SET client_min_messages = warning");
        if (r >= 0 && p->readonly)
                r = pg_exec_script(p, "configure session", "SET default_transaction_read_only = on");
        if (r >= 0)
                r = apply_lock_timeout(p);
        if (r >= 0 && !p->readonly && !p->opened && (r = schema_ready(p)) == 0)
                r = create_schema(p);
        if (r >= 0)
                r = read_meta(p, -EIO);
        if (r < 0) {
                pg_disconnect(p);
                return r;
        }
        if (!p->opened)
                memcpy(p->bound_id, p->store_id, sizeof p->bound_id);
        p->opened = true;
        return 0;
}

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
        r = pg_connect(p);
        if (r < 0) {
                snprintf(errbuf, errlen, "%s", p->base.errmsg);
                free(p->conninfo);
                free(p);
                return r;
        }
        *ret = &p->base;
        return 0;
}

/* Called first by every operation: reconnects after a lost connection. */
int pg_need_conn(struct store *s) {
        struct store_pg *p = to_pg(s);

        if (p->conn && PQstatus(p->conn) == CONNECTION_OK)
                return 0;
        return pg_connect(p);
}

void pg_close(struct store *s) {
        struct store_pg *p = to_pg(s);

        pg_disconnect(p);
        pg_unanswered_free(p);
        free(p->conninfo);
        free(p);
}

int pg_reconnect(struct store *s) {
        return pg_connect(to_pg(s));
}

/* -ESTALE when the schema reached now is another incarnation (a database
 * or schema dropped and created again) than the one we are bound to. */
int pg_same_store(struct store *s) {
        struct store_pg *p = to_pg(s);
        int r;

        if ((r = pg_need_conn(s)) < 0 || (r = read_meta(p, -ESTALE)) < 0)
                return r;
        return store_identity_check(s, p->store_id, p->bound_id, "postgresql");
}

int pg_follow_store(struct store *s) {
        struct store_pg *p = to_pg(s);
        int r;

        if ((r = pg_need_conn(s)) < 0 || (r = read_meta(p, -EIO)) < 0)
                return r;
        memcpy(p->bound_id, p->store_id, sizeof p->bound_id);
        return 0;
}

const char *pg_identity(const struct store *s) {
        return ((const struct store_pg *) s)->bound_id;
}

int pg_set_lock_timeout(struct store *s, uint64_t usec) {
        struct store_pg *p = to_pg(s);

        p->lock_timeout_usec = usec;
        /* Without a live connection, pg_connect() applies it later. */
        if (!p->conn || PQstatus(p->conn) != CONNECTION_OK)
                return 0;
        return apply_lock_timeout(p);
}

