/* SPDX-License-Identifier: MIT */
/* The SQLite backend's SQL: the schema and one statement per entry of enum
 * store_stmt, and the backend's table of calls.
 *
 * - WAL mode (readers never block the writer), synchronous=NORMAL (a power
 *   loss may drop the last commits; it also reboots the host, which ends
 *   every lease — see boot_id below — and a lost "done" only re-runs a job).
 * - Every change that spans statements runs in BEGIN IMMEDIATE: the write
 *   lock is taken up front, so a transaction never fails half way with
 *   SQLITE_BUSY and all writers are serialized. Waiting for the lock is
 *   bounded by the busy timeout; running out of it is -ETIMEDOUT, "store
 *   unavailable", never "lease held by another".
 * - Lease times ('L') are CLOCK_BOOTTIME microseconds: the same for every
 *   process of the host, not moved by wall-clock steps (NTP, an operator's
 *   `date`), and still counting while the machine is suspended, so a holder
 *   frozen by a suspend sees its lease expire like everyone else. It
 *   restarts at zero on boot, so each lease row also stores the boot_id
 *   ('B') that wrote it: a row from an earlier boot is expired whatever its
 *   number says.
 * - Inventory and job timestamps ('W') are CLOCK_REALTIME microseconds:
 *   they are for humans and for the "node has not checked in" heuristic,
 *   where a clock step shifts a decision but cannot let two leaders write.
 */

#include "sqlite.h"

const char sqlite_schema_sql[] =
        "CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT OR IGNORE INTO store_meta VALUES ('schema', '" STORE_SCHEMA_VERSION "');"
        "INSERT OR IGNORE INTO store_meta VALUES ('store_id', :store_id);"
        /* Raised by every fenced transaction (sqlite_restore.c). */
        "INSERT OR IGNORE INTO store_meta VALUES ('fenced_writes', '0');"
        "CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL,"
        "  generation INTEGER NOT NULL, expires INTEGER NOT NULL, boot_id TEXT NOT NULL);"
        /* The highest fencing token a write by token passed with, per
         * lease (store_fence.by_token). The script runs at every connect:
         * a store made before tokens gains the table. */
        "CREATE TABLE IF NOT EXISTS lease_tokens (lease TEXT PRIMARY KEY, token INTEGER NOT NULL);"
        "CREATE TABLE IF NOT EXISTS write_log (id INTEGER PRIMARY KEY AUTOINCREMENT,"
        "  lease TEXT NOT NULL, holder TEXT NOT NULL, generation INTEGER NOT NULL,"
        "  at INTEGER NOT NULL, what TEXT NOT NULL);"
        "CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY,"
        "  refcount INTEGER NOT NULL DEFAULT 0, deleted BOOLEAN NOT NULL DEFAULT FALSE);"
        "CREATE TABLE IF NOT EXISTS artifacts (name TEXT NOT NULL, version INTEGER NOT NULL,"
        "  created INTEGER NOT NULL, PRIMARY KEY (name, version));"
        "CREATE INDEX IF NOT EXISTS artifacts_newest ON artifacts (name, version DESC);"
        "CREATE TABLE IF NOT EXISTS nodes (name TEXT PRIMARY KEY, last_checkin INTEGER NOT NULL,"
        "  missing BOOLEAN NOT NULL DEFAULT FALSE);"
        "CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY AUTOINCREMENT,"
        "  total INTEGER NOT NULL, done_count INTEGER NOT NULL DEFAULT 0, created INTEGER NOT NULL);"
        "CREATE TABLE IF NOT EXISTS jobs (run INTEGER NOT NULL REFERENCES runs (id),"
        "  job INTEGER NOT NULL,"
        "  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'assigned', 'done')),"
        "  attempt INTEGER NOT NULL DEFAULT 0, worker TEXT, outcome INTEGER,"
        "  executions INTEGER NOT NULL DEFAULT 0, token BLOB, claimed INTEGER, PRIMARY KEY (run, job));"
        "CREATE INDEX IF NOT EXISTS jobs_pending ON jobs (run, job) WHERE status = 'pending';"
        "CREATE INDEX IF NOT EXISTS jobs_in_flight ON jobs (worker) WHERE status = 'assigned';";

const struct store_sql sqlite_sql[STMT_N] = {
        [STMT_META] = { "SELECT key, value FROM store_meta WHERE key IN ('schema', 'store_id')", "" },
        [STMT_FENCE] = { "SELECT 1 FROM leases WHERE name = ?1 AND holder = ?2 AND generation = ?3"
                         " AND boot_id = ?5 AND expires > ?6"
                         " AND EXISTS (SELECT 1 FROM store_meta WHERE key = 'store_id' AND value = ?4)",
                         "ttitBL" },
        /* BEGIN IMMEDIATE serializes it with every other write. */
        [STMT_FENCE_TOKEN] = { "INSERT INTO lease_tokens (lease, token) VALUES (?1, ?2)"
                               " ON CONFLICT (lease) DO UPDATE SET token = excluded.token"
                               "  WHERE lease_tokens.token <= excluded.token"
                               " RETURNING token",
                               "ti" },
        [STMT_TOKEN_MARK] = { "SELECT token FROM lease_tokens WHERE lease = ?1", "t" },
        [STMT_LOG] = { "INSERT INTO write_log (lease, holder, generation, at, what) VALUES (?1, ?2, ?3, ?5, ?4)",
                       "ttitL" },
        [STMT_LEASE_ACQUIRE] = { "INSERT INTO leases (name, holder, generation, expires, boot_id)"
                                 " VALUES (?1, ?2, 1, ?4 + ?3, ?5)"
                                 " ON CONFLICT (name) DO UPDATE SET holder = excluded.holder,"
                                 "  generation = leases.generation + 1, expires = excluded.expires,"
                                 "  boot_id = excluded.boot_id"
                                 "  WHERE leases.boot_id <> excluded.boot_id OR leases.expires <= ?4"
                                 " RETURNING generation",
                                 "ttiLB" },
        [STMT_LEASE_REFRESH] = { "UPDATE leases SET expires = ?5 + ?4 WHERE name = ?1 AND holder = ?2"
                                 " AND generation = ?3 AND boot_id = ?6 AND expires > ?5",
                                 "ttiiLB" },
        [STMT_LEASE_RELEASE] = { "UPDATE leases SET holder = '', expires = ?4 WHERE name = ?1 AND holder = ?2"
                                 " AND generation = ?3",
                                 "ttiL" },
        [STMT_LEASE_READ] = { "SELECT holder, generation, boot_id = ?2 AND expires > ?3,"
                              " CASE WHEN boot_id = ?2 AND expires > ?3 THEN expires - ?3 ELSE 0 END"
                              " FROM leases WHERE name = ?1",
                              "tBL" },
        [STMT_LOG_SUMMARY] = { STORE_LOG_SUMMARY_SQL("?1"), "t" },
        [STMT_SEED_BLOBS] = { "WITH RECURSIVE seq (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?1)"
                              " INSERT OR IGNORE INTO blobs (id, refcount, deleted)"
                              " SELECT i, CASE WHEN i % 3 = 0 THEN 0 ELSE 1 END, FALSE FROM seq",
                              "i" },
        [STMT_SEED_ARTIFACTS] = { "WITH RECURSIVE seq (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?1)"
                                  " INSERT OR IGNORE INTO artifacts (name, version, created)"
                                  " SELECT printf('artifact-%05d', i / 10), i % 10 + 1,"
                                  "  ?2 - (10 - i % 10) * 1000000 FROM seq WHERE ?1 > 0",
                                  "iW" },
        [STMT_SEED_NODES] = { "WITH RECURSIVE seq (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?1)"
                              " INSERT OR IGNORE INTO nodes (name, last_checkin, missing)"
                              " SELECT printf('node-%05d', i),"
                              "  ?2 - CASE WHEN i % 4 = 0 THEN 3600000000 ELSE 0 END, FALSE FROM seq WHERE ?1 > 0",
                              "iW" },
        [STMT_BLOBS_LIST] = { "SELECT id, refcount, deleted FROM blobs WHERE id > ?1 ORDER BY id LIMIT ?2", "ii" },
        [STMT_ARTIFACTS_LIST] = { "SELECT name, version, created FROM artifacts"
                                  " WHERE ?1 IS NULL OR name > ?1 OR (name = ?1 AND version < ?2)"
                                  " ORDER BY name, version DESC LIMIT ?3",
                                  "tii" },
        [STMT_NODES_LIST] = { "SELECT name, last_checkin, ?3 - last_checkin, missing FROM nodes"
                              " WHERE name > ?1 ORDER BY name LIMIT ?2",
                              "tiW" },
        [STMT_BLOB_DELETE] = { "UPDATE blobs SET deleted = TRUE WHERE id = ?1 AND refcount = 0 AND NOT deleted", "i" },
        [STMT_ARTIFACT_PRUNE] = { "DELETE FROM artifacts WHERE name = ?1 AND version = ?2", "ti" },
        [STMT_NODE_MISSING] = { "UPDATE nodes SET missing = TRUE WHERE name = ?1 AND NOT missing", "t" },
        [STMT_NODE_CHECKIN] = { "INSERT INTO nodes (name, last_checkin, missing) VALUES (?1, ?2, FALSE)"
                                " ON CONFLICT (name) DO UPDATE SET last_checkin = excluded.last_checkin, missing = FALSE",
                                "tW" },
        [STMT_RUN_BEGIN] = { "INSERT INTO runs (total, done_count, created) VALUES (?1, 0, ?2) RETURNING id", "iW" },
        [STMT_RUN_NEXT] = { "SELECT total, (SELECT coalesce(max(job) + 1, 0) FROM jobs WHERE run = ?1)"
                            " FROM runs WHERE id = ?1",
                            "i" },
        [STMT_RUN_FILL] = { "WITH RECURSIVE seq (i) AS (SELECT ?2 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?3)"
                            " INSERT INTO jobs (run, job) SELECT ?1, i FROM seq",
                            "iii" },
        [STMT_JOB_CLAIM] = { "UPDATE jobs SET status = 'assigned', attempt = attempt + 1, worker = ?2"
                             " WHERE (run, job) = (SELECT run, job FROM jobs WHERE status = 'pending'"
                             "  AND (?1 = 0 OR run = ?1) ORDER BY run, job LIMIT 1)"
                             " RETURNING " STORE_JOB_COLUMNS,
                             "it" },
        [STMT_JOBS_REQUEUE] = { "UPDATE jobs SET status = 'pending' WHERE status = 'assigned'"
                                " AND (?1 IS NULL OR worker = ?1)",
                                "t" },
        [STMT_JOB_REQUEUE] = { "UPDATE jobs SET status = 'pending' WHERE run = ?1 AND job = ?2"
                               " AND attempt = ?3 AND status = 'assigned'",
                               "iii" },
        /* BEGIN IMMEDIATE already serializes recorders. */
        [STMT_JOB_LOCK] = { "SELECT " STORE_JOB_COLUMNS " FROM jobs WHERE run = ?1 AND job = ?2", "ii" },
        [STMT_JOB_DONE] = { "UPDATE jobs SET status = 'done', outcome = ?3, executions = executions + 1"
                            " WHERE run = ?1 AND job = ?2",
                            "iii" },
        [STMT_JOB_EXECUTED] = { "UPDATE jobs SET executions = executions + 1 WHERE run = ?1 AND job = ?2", "ii" },
        [STMT_RUN_COUNT] = { "UPDATE runs SET done_count = done_count + 1 WHERE id = ?1", "i" },
        [STMT_RUNS_SUMMARY] = { "SELECT r.id, r.total, r.done_count, r.created, count(j.job),"
                                " coalesce(sum(j.status = 'pending'), 0), coalesce(sum(j.status = 'assigned'), 0),"
                                " coalesce(sum(j.status = 'done'), 0), coalesce(sum(j.attempt > 1), 0)"
                                " FROM (SELECT * FROM runs ORDER BY id DESC LIMIT ?1) r"
                                " LEFT JOIN jobs j ON j.run = r.id GROUP BY r.id ORDER BY r.id DESC",
                                "i" },
        [STMT_JOB_OLDEST] = { "SELECT " STORE_JOB_COLUMNS ", coalesce(claimed, 0) FROM jobs"
                              " WHERE status = 'assigned' ORDER BY claimed, run, job LIMIT 1",
                              "" },
        [STMT_JOB_READ] = { "SELECT " STORE_JOB_COLUMNS " FROM jobs WHERE run = ?1 AND job = ?2", "ii" },
        [STMT_RUN_READ] = { "SELECT id, total, done_count, created,"
                            " (SELECT count(*) FROM jobs WHERE run = ?1 AND status = 'done'),"
                            " (SELECT count(*) FROM jobs WHERE run = ?1 AND attempt > 1),"
                            " (SELECT count(*) FROM jobs WHERE run = ?1 AND executions > 1)"
                            " FROM runs WHERE id = ?1",
                            "i" },
        [STMT_RUNS_UNFINISHED] = { "SELECT id FROM runs WHERE done_count < total ORDER BY id LIMIT ?1", "i" },
        [STMT_RESULT_READ] = { "SELECT status = 'done', attempt, coalesce(token = ?3, 0) FROM jobs"
                               " WHERE run = ?1 AND job = ?2",
                               "iib" },
        [STMT_CLAIM_NEXT] = { "UPDATE jobs SET status = 'assigned', attempt = attempt + 1, worker = ?1, token = ?2,"
                              " claimed = ?3"
                              " WHERE (run, job) = (SELECT run, job FROM jobs WHERE status = 'pending'"
                              "  ORDER BY run, job LIMIT 1)"
                              " RETURNING run, job, attempt",
                              "tbW" },
};

const struct store_backend sqlite_backend = {
        .name = "sqlite",
        .sql = sqlite_sql,
        .connect = sqlite_need_db,
        .query = sqlite_query,
        .next = sqlite_next,
        .int_at = sqlite_int_at,
        .text_at = sqlite_text_at,
        .bool_at = sqlite_bool_at,
        .end = sqlite_end,
        .exec = sqlite_exec,
        .begin = sqlite_begin,
        .commit = sqlite_commit,
        .abort = sqlite_abort,
        .still_bound = sqlite_still_bound,
        .announce_release = sqlite_announce_release,
        .adopt_store = sqlite_adopt_store,
        .lock_single_writes = true,
        .close = sqlite_close,
        .reconnect = sqlite_reconnect,
        .set_lock_timeout = sqlite_set_lock_timeout,
        .same_store = sqlite_same_store,
        .follow_store = sqlite_follow_store,
        .identity = sqlite_identity,
        .lease_listen = sqlite_lease_listen,
        .lease_notified = sqlite_lease_notified,
        .lease_unlisten = sqlite_lease_unlisten,
};
