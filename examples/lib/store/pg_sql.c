/* SPDX-License-Identifier: MIT */
/* The PostgreSQL backend's SQL: the schema, one statement per entry of
 * enum store_stmt, the pipelined batch's statements, and the backend's
 * table of calls. Same tables and semantics as SQLite; the differences
 * are how time and concurrency work.
 *
 * - Lease times come from the database clock (clock_timestamp(), the time
 *   the statement runs, not now(), the time the transaction began), so the
 *   hosts' own clocks never enter a lease decision. A step of the database
 *   host's clock moves every lease at once; run NTP with slewing there.
 * - Isolation is READ COMMITTED plus row locks, chosen per statement:
 *   acquire is one upsert whose WHERE is re-checked on the locked row; a
 *   fenced write takes FOR KEY SHARE on the lease row and keeps it until
 *   commit, and an acquisition first locks that row FOR UPDATE, the one
 *   mode that conflicts with FOR KEY SHARE, so it waits until every write
 *   of the previous generation has committed or rolled back. A refresh
 *   (an UPDATE of the expiry, FOR NO KEY UPDATE) does not conflict with
 *   FOR KEY SHARE: a fenced write that waits for a lock on a job table
 *   never holds up the renewal of the lease it is fenced by. Job rows are
 *   locked FOR UPDATE while an outcome is recorded; claims SKIP LOCKED rows,
 *   so concurrent claimers take different jobs and never wait.
 */

#include "pg.h"

#define JOB_COLUMNS "run, job, status, attempt, coalesce(worker, ''), coalesce(outcome, 0), executions"

/* STMT_RESULT_READ and STMT_CLAIM_NEXT stay out: pg_batch.c has its own path. */
const struct store_sql pg_sql[STMT_N] = {
        [STMT_META] = { "SELECT key, value FROM store_meta WHERE key IN ('schema', 'store_id')", "" },
        [STMT_FENCE] = { "SELECT 1 FROM leases WHERE name = $1 AND holder = $2 AND generation = $3"
                         " AND expires > clock_timestamp()"
                         " AND EXISTS (SELECT 1 FROM store_meta WHERE key = 'store_id' AND value = $4) FOR KEY SHARE",
                         "ttit" },
        /* The conflicting row is locked first (waiting for a raise in
         * flight), then the WHERE is evaluated against its latest
         * committed version: a token that lost to a raise committed
         * meanwhile gets no row. */
        [STMT_FENCE_TOKEN] = { "INSERT INTO lease_tokens (lease, token) SELECT $1::text, $2::bigint"
                               " WHERE EXISTS (SELECT 1 FROM store_meta WHERE key = 'store_id' AND value = $3)"
                               " ON CONFLICT (lease) DO UPDATE SET token = excluded.token"
                               "  WHERE lease_tokens.token <= excluded.token"
                               " RETURNING token",
                               "tit" },
        [STMT_TOKEN_MARK] = { "SELECT token FROM lease_tokens WHERE lease = $1", "t" },
        [STMT_LOG] = { "INSERT INTO write_log (lease, holder, generation, at, what)"
                       " VALUES ($1, $2, $3, " PG_NOW_USEC ", $4)",
                       "ttit" },
        /* An expired row is locked FOR UPDATE first (waiting for the
         * fenced writes in flight, which hold FOR KEY SHARE), then on
         * conflict the WHERE is evaluated against its latest committed
         * version; the new expiry is computed after that wait. A row
         * whose lease is live is neither locked nor inserted over (ON
         * CONFLICT would lock it before its WHERE): an attempt on a held
         * lease waits for nobody's writes and makes nobody wait (its lock
         * would be held until its commit, which under synchronous
         * replication waits for the replica, while the holder's refresh
         * queued behind it). */
        [STMT_LEASE_ACQUIRE] = { "WITH held AS MATERIALIZED (SELECT 1 FROM leases WHERE name = $1"
                                 "  AND expires <= clock_timestamp() FOR UPDATE)"
                                 " INSERT INTO leases (name, holder, generation, expires)"
                                 " SELECT $1, $2, 1, clock_timestamp() + $3 * interval '1 microsecond'"
                                 " FROM (SELECT count(*) FROM held) h"
                                 " WHERE NOT EXISTS (SELECT 1 FROM leases WHERE name = $1"
                                 "  AND expires > clock_timestamp())"
                                 " ON CONFLICT (name) DO UPDATE SET holder = excluded.holder,"
                                 "  generation = leases.generation + 1, expires = excluded.expires"
                                 "  WHERE leases.expires <= clock_timestamp() AND EXISTS (SELECT 1 FROM held)"
                                 " RETURNING generation",
                                 "tti" },
        /* In the incarnation the handle is bound to, checked in the same
         * round trip: on a slow network a refresh is one round trip.
         * Committed on the primary alone (synchronous_commit = local for
         * this transaction): a renewal grants no generation and records
         * no outcome, so it need not wait for the synchronous standby,
         * and waiting made a lagging standby end healthy terms. What a
         * failover can lose of it is bounded in docs/store.md. */
        [STMT_LEASE_REFRESH] = { "UPDATE leases SET expires = clock_timestamp() + $4 * interval '1 microsecond'"
                                 " FROM (SELECT set_config('synchronous_commit', 'local', true)) AS commit_locally"
                                 " WHERE name = $1 AND holder = $2 AND generation = $3"
                                 " AND expires > clock_timestamp()"
                                 " AND EXISTS (SELECT 1 FROM store_meta WHERE key = 'store_id' AND value = $5)",
                                 "ttiiB" },
        [STMT_LEASE_RELEASE] = { "WITH released AS (UPDATE leases SET holder = '', expires = clock_timestamp()"
                                 "  WHERE name = $1 AND holder = $2 AND generation = $3 RETURNING name)"
                                 " SELECT pg_notify('" PG_RELEASED_CHANNEL "', name) FROM released",
                                 "tti" },
        [STMT_LEASE_READ] = { "SELECT holder, generation, expires > clock_timestamp(),"
                              " CASE WHEN expires > clock_timestamp()"
                              "  THEN (extract(epoch FROM expires - clock_timestamp()) * 1000000)::bigint ELSE 0 END"
                              " FROM leases WHERE name = $1",
                              "t" },
        [STMT_LOG_SUMMARY] = { STORE_LOG_SUMMARY_SQL("$1"), "t" },
        [STMT_SEED_BLOBS] = { "INSERT INTO blobs (id, refcount, deleted)"
                              " SELECT i, CASE WHEN i % 3 = 0 THEN 0 ELSE 1 END, false"
                              " FROM generate_series(1, $1::bigint) i ON CONFLICT DO NOTHING",
                              "i" },
        [STMT_SEED_ARTIFACTS] = { "INSERT INTO artifacts (name, version, created)"
                                  " SELECT format('artifact-%s', lpad((i / 10)::text, 5, '0')), i % 10 + 1,"
                                  "  " PG_NOW_USEC " - (10 - i % 10) * 1000000"
                                  " FROM generate_series(0, $1::bigint - 1) i ON CONFLICT DO NOTHING",
                                  "i" },
        [STMT_SEED_NODES] = { "INSERT INTO nodes (name, last_checkin, missing)"
                              " SELECT format('node-%s', lpad(i::text, 5, '0')),"
                              "  " PG_NOW_USEC " - CASE WHEN i % 4 = 0 THEN 3600000000 ELSE 0 END, false"
                              " FROM generate_series(0, $1::bigint - 1) i ON CONFLICT DO NOTHING",
                              "i" },
        [STMT_BLOBS_LIST] = { "SELECT id, refcount, deleted FROM blobs WHERE id > $1 ORDER BY id LIMIT $2", "ii" },
        [STMT_ARTIFACTS_LIST] = { "SELECT name, version, created FROM artifacts"
                                  " WHERE $1::text IS NULL OR name > $1 OR (name = $1 AND version < $2)"
                                  " ORDER BY name, version DESC LIMIT $3",
                                  "tii" },
        [STMT_NODES_LIST] = { "SELECT name, last_checkin, " PG_NOW_USEC " - last_checkin, missing FROM nodes"
                              " WHERE name > $1 ORDER BY name LIMIT $2",
                              "ti" },
        [STMT_BLOB_DELETE] = { "UPDATE blobs SET deleted = true WHERE id = $1 AND refcount = 0 AND NOT deleted", "i" },
        [STMT_ARTIFACT_PRUNE] = { "DELETE FROM artifacts WHERE name = $1 AND version = $2", "ti" },
        [STMT_NODE_MISSING] = { "UPDATE nodes SET missing = true WHERE name = $1 AND NOT missing", "t" },
        [STMT_NODE_CHECKIN] = { "INSERT INTO nodes (name, last_checkin, missing) VALUES ($1, " PG_NOW_USEC ", false)"
                                " ON CONFLICT (name) DO UPDATE SET last_checkin = excluded.last_checkin, missing = false",
                                "t" },
        [STMT_RUN_BEGIN] = { "INSERT INTO runs (total, done_count, created) VALUES ($1, 0, " PG_NOW_USEC ")"
                             " RETURNING id",
                             "i" },
        [STMT_RUN_NEXT] = { "SELECT total, (SELECT coalesce(max(job) + 1, 0) FROM jobs WHERE run = $1)"
                            " FROM runs WHERE id = $1",
                            "i" },
        [STMT_RUN_FILL] = { "INSERT INTO jobs (run, job) SELECT $1, i FROM generate_series($2::integer, $3::integer - 1) i",
                            "iii" },
        [STMT_JOB_CLAIM] = { "UPDATE jobs SET status = 'assigned', attempt = attempt + 1, worker = $2"
                             " WHERE (run, job) = (SELECT run, job FROM jobs WHERE status = 'pending'"
                             "  AND ($1::bigint = 0 OR run = $1::bigint) ORDER BY run, job LIMIT 1"
                             "  FOR UPDATE SKIP LOCKED)"
                             " RETURNING " JOB_COLUMNS,
                             "it" },
        [STMT_JOBS_REQUEUE] = { "UPDATE jobs SET status = 'pending' WHERE status = 'assigned'"
                                " AND ($1::text IS NULL OR worker = $1)",
                                "t" },
        [STMT_JOB_REQUEUE] = { "UPDATE jobs SET status = 'pending' WHERE run = $1 AND job = $2"
                               " AND attempt = $3 AND status = 'assigned'",
                               "iii" },
        /* The row lock serializes recorders of one job: the second sees the
         * first's committed status. */
        [STMT_JOB_LOCK] = { "SELECT " JOB_COLUMNS " FROM jobs WHERE run = $1 AND job = $2 FOR UPDATE", "ii" },
        [STMT_JOB_DONE] = { "UPDATE jobs SET status = 'done', outcome = $3, executions = executions + 1"
                            " WHERE run = $1 AND job = $2",
                            "iii" },
        [STMT_JOB_EXECUTED] = { "UPDATE jobs SET executions = executions + 1 WHERE run = $1 AND job = $2", "ii" },
        [STMT_RUN_COUNT] = { "UPDATE runs SET done_count = done_count + 1 WHERE id = $1", "i" },
        [STMT_RUNS_SUMMARY] = { "SELECT r.id, r.total, r.done_count, r.created, count(j.job),"
                                " count(*) FILTER (WHERE j.status = 'pending'),"
                                " count(*) FILTER (WHERE j.status = 'assigned'),"
                                " count(*) FILTER (WHERE j.status = 'done'), count(*) FILTER (WHERE j.attempt > 1)"
                                " FROM (SELECT * FROM runs ORDER BY id DESC LIMIT $1) r LEFT JOIN jobs j ON j.run = r.id"
                                " GROUP BY r.id, r.total, r.done_count, r.created ORDER BY r.id DESC",
                                "i" },
        [STMT_JOB_OLDEST] = { "SELECT " JOB_COLUMNS ", coalesce(claimed, 0) FROM jobs WHERE status = 'assigned'"
                              " ORDER BY claimed NULLS FIRST, run, job LIMIT 1",
                              "" },
        [STMT_JOB_READ] = { "SELECT " JOB_COLUMNS " FROM jobs WHERE run = $1 AND job = $2", "ii" },
        [STMT_RUN_READ] = { "SELECT id, total, done_count, created,"
                            " (SELECT count(*) FROM jobs WHERE run = $1 AND status = 'done'),"
                            " (SELECT count(*) FROM jobs WHERE run = $1 AND attempt > 1),"
                            " (SELECT count(*) FROM jobs WHERE run = $1 AND executions > 1)"
                            " FROM runs WHERE id = $1",
                            "i" },
        [STMT_RUNS_UNFINISHED] = { "SELECT id FROM runs WHERE done_count < total ORDER BY id LIMIT $1", "i" },
};

/* Fails (division by zero) unless the fence holds: the rest of a
 * pipeline is then skipped. $5: fenced by token (as STMT_FENCE_TOKEN: the
 * mark is raised), else by the lease row (as STMT_FENCE); only the branch
 * taken reads its table. */
#define PIPELINE_FENCE_SQL \
        "WITH mark AS (INSERT INTO lease_tokens (lease, token) SELECT $1::text, $3::bigint" \
        "  WHERE $5::boolean" \
        "  AND EXISTS (SELECT 1 FROM store_meta WHERE key = 'store_id' AND value = $4)" \
        "  ON CONFLICT (lease) DO UPDATE SET token = excluded.token" \
        "  WHERE lease_tokens.token <= excluded.token RETURNING 1)" \
        " SELECT 1 / (CASE WHEN $5::boolean THEN (SELECT count(*) FROM mark)" \
        " ELSE (SELECT count(*) FROM (SELECT 1 FROM leases WHERE name = $1 AND holder = $2" \
        " AND generation = $3 AND expires > clock_timestamp()" \
        " AND EXISTS (SELECT 1 FROM store_meta WHERE key = 'store_id' AND value = $4)" \
        " FOR KEY SHARE) l) END)::integer"

/* Statements of the batched job path (pg_batch.c). */
const char *const pg_batch_sql[JQ_N] = {
        [JQ_FENCE] = PIPELINE_FENCE_SQL,
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
                     "  token = t.token, claimed = " PG_NOW_USEC
                     " FROM c JOIN t USING (i) WHERE j.run = c.run AND j.job = c.job"
                     " RETURNING j.run, j.job, j.attempt, encode(j.token, 'hex')",
        [JQ_LOG] = "INSERT INTO write_log (lease, holder, generation, at, what)"
                   " VALUES ($1, $2, $3, " PG_NOW_USEC ", $4)",
        /* The batch's transaction, kept with its claims should its COMMIT
         * go unanswered (pg_unanswered.c). */
        [JQ_XID] = "SELECT pg_current_xact_id()::text",
        /* Per transaction (in order), whether it has ended: 'in progress'
         * until it left the server's list of running transactions, which
         * is when a later statement's snapshot sees what it did. One not
         * yet assigned on this server (a failover to a standby that never
         * saw it) counts as in progress, never as an error that would
         * abort the batch; one so old its status is gone has ended. */
        [JQ_ENDED] = "SELECT CASE WHEN x >= pg_snapshot_xmax(pg_current_snapshot()) THEN 'in progress'"
                     "  ELSE coalesce(pg_xact_status(x), 'ended') END <> 'in progress'"
                     " FROM unnest($1::xid8[]) WITH ORDINALITY AS u (x, i) ORDER BY i",
        /* A statement of its own, after JQ_ENDED: its snapshot is taken
         * once the transactions found ended are visible. */
        [JQ_PUT_BACK] = "UPDATE jobs SET status = 'pending' WHERE status = 'assigned'"
                        " AND token IN (SELECT decode(t, 'hex') FROM unnest($1::text[]) AS t)"
                        " RETURNING run, job",
};
const int pg_batch_params[JQ_N] = { 5, 5, 3, 3, 4, 0, 1, 1 };

/* Statements of a list of inventory writes (pg_inventory.c). */
const char *const pg_inventory_sql[IQ_N] = {
        [IQ_FENCE] = PIPELINE_FENCE_SQL,
        /* $4..$8: one array element per item (op as enum
         * store_inventory_op). Each row is changed once, by its first item
         * (DISTINCT ON); every item has its write-log row, in list order;
         * the rows returned are the items (from 1) that changed a row. */
        [IQ_WRITE] = "WITH i AS (SELECT * FROM unnest($4::integer[], $5::bigint[], $6::text[], $7::bigint[],"
                     "  $8::text[]) WITH ORDINALITY AS i (op, id, name, version, what, n)),"
                     " b AS (UPDATE blobs SET deleted = true FROM (SELECT DISTINCT ON (id) id, n FROM i"
                     "  WHERE op = 0 ORDER BY id, n) x WHERE blobs.id = x.id AND blobs.refcount = 0"
                     "  AND NOT blobs.deleted RETURNING x.n),"
                     " a AS (DELETE FROM artifacts USING (SELECT DISTINCT ON (name, version) name, version, n"
                     "  FROM i WHERE op = 1 ORDER BY name, version, n) x"
                     "  WHERE artifacts.name = x.name AND artifacts.version = x.version RETURNING x.n),"
                     " m AS (UPDATE nodes SET missing = true FROM (SELECT DISTINCT ON (name) name, n FROM i"
                     "  WHERE op = 2 ORDER BY name, n) x WHERE nodes.name = x.name AND NOT nodes.missing"
                     "  RETURNING x.n),"
                     " l AS (INSERT INTO write_log (lease, holder, generation, at, what)"
                     "  SELECT $1::text, $2::text, $3::bigint, " PG_NOW_USEC ", what FROM i ORDER BY n)"
                     " SELECT n FROM b UNION ALL SELECT n FROM a UNION ALL SELECT n FROM m",
};
const int pg_inventory_params[IQ_N] = { 5, 8 };

const struct pg_statements pg_batch_statements = {
        .prefix = "sdlive_job", .first_bit = 0, .n = JQ_N, .sql = pg_batch_sql, .params = pg_batch_params,
};
const struct pg_statements pg_inventory_statements = {
        .prefix = "sdlive_inv", .first_bit = JQ_N, .n = IQ_N, .sql = pg_inventory_sql, .params = pg_inventory_params,
};


const struct store_backend pg_backend = {
        .name = "postgresql",
        .sql = pg_sql,
        .connect = pg_need_conn,
        .query = pg_query,
        .next = pg_next,
        .int_at = pg_int_at,
        .text_at = pg_text_at,
        .bool_at = pg_bool_at,
        .end = pg_end,
        .exec = pg_exec,
        .begin = pg_begin,
        .commit = pg_commit,
        .abort = pg_abort,
        .close = pg_close,
        .reconnect = pg_reconnect,
        .set_lock_timeout = pg_set_lock_timeout,
        .same_store = pg_same_store,
        .refresh_checks_identity = true,
        .round_trips = pg_round_trips,
        .follow_store = pg_follow_store,
        .identity = pg_identity,
        .lease_listen = pg_lease_listen,
        .lease_notified = pg_lease_notified,
        .lease_unlisten = pg_lease_unlisten,
        .jobs_batch = pg_jobs_batch,
        .jobs_unsettled = pg_jobs_unsettled,
        .inventory_write = pg_inventory_write,
        .check_durability = pg_check_standbys,
};
