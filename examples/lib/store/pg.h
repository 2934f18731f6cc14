/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_STORE_PG_H
#define SDLIVE_EXAMPLE_STORE_PG_H

/* The PostgreSQL backend's handle and what its files share: the driver
 * (pg_driver.c), connecting and identity (pg_open.c), release
 * announcements (pg_listen.c), the pipelined job batch (pg_batch.c), the
 * pipelined inventory writes (pg_inventory.c) and the SQL (pg_sql.c). */

#include "store_backend.h"

#include <libpq-fe.h>

/* Our statements take their own time far below this; the rest is slack
 * for a busy server. */
#define PG_QUERY_SLACK_USEC UINT64_C(4000000)

/* Microseconds since the epoch on the database clock. */
#define PG_NOW_USEC "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint"

/* The channel a release is announced on. */
#define PG_RELEASED_CHANNEL "sdlive_lease_released"

struct store_pg {
        struct store base; /* first: struct store * converts to this */
        PGconn *conn;
        /* bit i: batch statement i is prepared on conn (the job batch's
         * JQ_*, then from bit JQ_N the inventory list's IQ_*) */
        unsigned job_prepared;
        char *conninfo;
        uint64_t lock_timeout_usec;
        uint64_t connections;      /* connections made so far */
        uint64_t round_trips;      /* answers awaited so far */
        uint64_t listening_on;     /* the connection LISTENing (its number), 0: none */
        bool readonly;
        bool opened;                      /* once: never create the schema again */
        char store_id[STORE_ID_MAX + 1];  /* of the schema connected to now */
        char bound_id[STORE_ID_MAX + 1];  /* of the incarnation we are bound to */
        uint64_t standbys_safe_on;        /* the connection last found safe (pg_standbys.c), 0: none */
        uint64_t standbys_checked_at;     /* when (CLOCK_MONOTONIC) */
        /* The jobs claimed by job batches whose COMMIT went unanswered and
         * not yet known to be settled (pg_unanswered.c). */
        struct pg_unanswered_claim *unanswered;
        size_t n_unanswered;
        /* What a batch sends to settle them: allocated once, at the size
         * of a full list, with the list, and reused by every batch (a
         * quarter of a MiB allocated and freed per batch made the kernel
         * fault its pages in again each time: pg_settle_build()). */
        struct pg_settle_space {
                struct pg_claim_xid {
                        uint64_t xid;
                        uint32_t claim;
                } *by_xid;      /* the claims' transactions, sorted */
                uint32_t *slot; /* per claim: its transaction's place in xids */
                uint64_t *xids;
                bool *ended;
                char *xid_text;
                char *token_text;
        } settle_space;
};

static inline struct store_pg *to_pg(struct store *s) {
        return (struct store_pg *) s;
}

extern const struct store_backend pg_backend;
uint64_t pg_round_trips(const struct store *s);
/* The statements of enum store_stmt. */
extern const struct store_sql pg_sql[STMT_N];

/* The statements of the pipelined job batch, prepared once per
 * connection (pg_sql.c), and their parameter counts. */
enum { JQ_FENCE, JQ_RECORD, JQ_REQUEUE, JQ_CLAIM, JQ_LOG, JQ_XID, JQ_ENDED, JQ_PUT_BACK, JQ_N };
extern const char *const pg_batch_sql[JQ_N];
extern const int pg_batch_params[JQ_N];

/* The statements of a list of inventory writes (pg_inventory.c): the
 * job batch's fence, then every write and write-log row in one. */
enum { IQ_FENCE, IQ_WRITE, IQ_N };
extern const char *const pg_inventory_sql[IQ_N];
extern const int pg_inventory_params[IQ_N];

/* Statements prepared once per connection and sent by number: named
 * prefix + number, marked prepared from bit first_bit of job_prepared. */
struct pg_statements {
        const char *prefix;
        unsigned first_bit;
        int n;
        const char *const *sql;
        const int *params;      /* parameter count of each */
};
extern const struct pg_statements pg_batch_statements, pg_inventory_statements;
/* Prepares those of set this connection does not have yet: 0, or < 0
 * with the reason recorded (the connection dropped if it broke). */
int pg_prepare_once(struct store_pg *p, const struct pg_statements *set);
/* Sends statement `which` of set with its parameters (in a pipeline). */
int pg_send_prepared(struct store_pg *p, const struct pg_statements *set, int which, const char *const *values);
/* The next result of the pipeline, waiting at most until deadline. NULL
 * with *err = 0 is the end of one statement's results. */
PGresult *pg_pipeline_next(struct store_pg *p, uint64_t deadline, const char *what, int *err);
/* Queues BEGIN and, in the same pipeline, how long the server waits for
 * this transaction's next statement: until the deadline for acting of the
 * fenced call in progress, at least the lock timeout. Two results follow,
 * BEGIN's and the setting's. In pipeline mode; 0 or < 0. */
int pg_send_begin(struct store_pg *p);
/* Waits for the pipeline's sync point and leaves pipeline mode: 0 or < 0
 * (the connection left to the caller). */
int pg_pipeline_end(struct store_pg *p, uint64_t deadline, const char *what);

/* Drops the connection (and what was prepared on it). A statement still
 * running on the server is left to it, never cancelled: a commit waiting
 * for the synchronous standby, cancelled, would become visible on the
 * primary alone, and a failover would then forget what others had seen
 * (docs/store.md, "A statement given up on is not cancelled"). */
void pg_disconnect(struct store_pg *p);
/* Records "what: libpq's message" on the handle, one line; returns r. */
int pg_fail_conn(struct store_pg *p, int r, const char *what);
/* Waits until libpq holds the next result of what was sent, at most
 * until deadline (CLOCK_MONOTONIC): 0, or < 0 with a message (-ETIMEDOUT,
 * a poll error, -ECONNRESET); the connection is left to the caller. */
int pg_wait_answer(struct store_pg *p, uint64_t deadline, const char *what);
/* Waits for the complete answer to the query just sent, under the query
 * deadline. Returns the last result (the first failed one, if any) or
 * NULL with *err set; on timeout or a broken connection the connection is
 * dropped. */
PGresult *pg_await_result(struct store_pg *p, const char *what, int *err);
/* 0 for a successful result, else -errno with the reason recorded. */
int pg_check_result(struct store_pg *p, PGresult *res, const char *what);
/* Runs a script of several statements (simple query protocol). */
int pg_exec_script(struct store_pg *p, const char *what, const char *sql);
/* Runs sql with one text parameter $1 (NULL: none): the rows it returned
 * or changed. */
int pg_exec_text(struct store_pg *p, const char *what, const char *sql, const char *param);
int64_t pg_int_value(const PGresult *res, int row, int col);
bool pg_bool_value(const PGresult *res, int row, int col);

/* The driver calls of struct store_backend (pg_driver.c). */
int pg_query(struct store *s, enum store_stmt id, const char *what, struct store_rows *rows, va_list ap);
int pg_next(struct store_rows *rows);
int64_t pg_int_at(const struct store_rows *rows, int col);
const char *pg_text_at(const struct store_rows *rows, int col);
bool pg_bool_at(const struct store_rows *rows, int col);
void pg_end(struct store_rows *rows);
int pg_exec(struct store *s, enum store_stmt id, const char *what, va_list ap);
int pg_begin(struct store *s);
int pg_commit(struct store *s);
int pg_abort(struct store *s, int r);

/* Connecting and identity (pg_open.c). */
/* Called first by every operation: reconnects after a lost connection. */
int pg_need_conn(struct store *s);
int pg_connect(struct store_pg *p);
void pg_close(struct store *s);
int pg_reconnect(struct store *s);
int pg_set_lock_timeout(struct store *s, uint64_t usec);
int pg_same_store(struct store *s);
int pg_follow_store(struct store *s);
const char *pg_identity(const struct store *s);

/* Release announcements (pg_listen.c). */
int pg_lease_listen(struct store *s, int *ret_fd);
int pg_lease_notified(struct store *s);
int pg_lease_unlisten(struct store *s);

/* The driver's check_durability (pg_standbys.c): whether what the server
 * acknowledges survives a failover to one of its standbys, looked up at
 * most every max_age_usec and on each new connection. */
int pg_check_standbys(struct store *s, uint64_t max_age_usec);

/* The job batch as one pipeline (pg_batch.c); b is never NULL. */
int pg_jobs_batch(struct store *s, const struct store_fence *f, struct store_job_batch *b) __attribute__((nonnull));
/* A token as the hex text the batch statements take. */
void pg_hex_token(char out[2 * FRAME_TOKEN_SIZE + 1], const uint8_t *token);

/* Claims whose COMMIT went unanswered (pg_unanswered.c).
 *
 * A job batch whose COMMIT got no answer in time may still commit later:
 * under synchronous replication the server goes on waiting for the
 * standby, and nothing cancels that wait. Its claims are then assigned in
 * the store under tokens no worker was given, and nobody would put them
 * back before the term ends. The handle keeps such claims, with the
 * batch's transaction, and each later batch settles them in its own
 * transaction: it asks the server which of those transactions have ended
 * (pg_xact_status()), then puts back to pending every job still assigned
 * under one of the tokens. A claim is forgotten once its transaction had
 * ended before that put-back looked, and the put-back either committed or
 * found nothing. At most PG_UNANSWERED_MAX claims are kept; those beyond
 * stay assigned until the next term requeues every job in flight. */
#define PG_UNANSWERED_MAX 4096

struct pg_unanswered_claim {
        uint64_t xid; /* the batch's transaction (pg_current_xact_id()) */
        uint8_t token[FRAME_TOKEN_SIZE];
};

/* What one batch sends to settle the claims kept, and what it found; its
 * arrays are the handle's settle_space. */
struct pg_settle {
        size_t n_claims; /* the first n_claims claims kept were looked at */
        uint32_t *slot;  /* per claim looked at: its transaction's place in xids */
        size_t n_xids;
        uint64_t *xids;  /* the distinct transactions of the claims kept, ascending */
        bool *ended;     /* set: per transaction, whether it had ended */
        char *xid_text;  /* the parameters: transactions as xid8[] */
        char *token_text; /*  and tokens as hex text[] */
        unsigned put_back; /* set: jobs put back to pending */
        bool answered;     /* set: both statements answered */
};

/* Keeps the claims list got in transaction xid, whose COMMIT went
 * unanswered. */
void pg_unanswered_note(struct store_pg *p, uint64_t xid, const struct store_job_batch *list);
/* Fills st from the claims kept: 1 when there are some, 0 when none,
 * < 0 out of memory. */
int pg_settle_build(struct store_pg *p, struct pg_settle *st);
/* Queues the two statements of st (in the batch's pipeline, after its
 * fence): which transactions ended, then the put-back. */
int pg_settle_send(struct store_pg *p, const struct pg_settle *st);
void pg_settle_read_ended(const PGresult *res, struct pg_settle *st);
void pg_settle_read_put_back(const PGresult *res, struct pg_settle *st);
/* After the batch: forgets the claims st found settled. committed: the
 * batch's COMMIT was answered, or it changed nothing. */
void pg_settle_finish(struct store_pg *p, struct pg_settle *st, bool committed);
void pg_settle_free(struct pg_settle *st);
/* Frees the handle's list and settle space (pg_close()). */
void pg_unanswered_free(struct store_pg *p);
/* The claims kept (store_jobs_unsettled()). */
size_t pg_jobs_unsettled(const struct store *s);

/* A list of inventory writes as one pipeline and a COMMIT (pg_inventory.c). */
int pg_inventory_write(struct store *s, const struct store_fence *f, struct store_inventory_write *w, size_t n,
                       const char *const *what);

#endif
