/* SPDX-License-Identifier: MIT */
#include "maintenance.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "monotonic.h"

/* Rows per listing: each page is a round trip, and a new leader's pass
 * walks what earlier passes already did. */
#define BATCH 1024
#define MAX3(a, b, c) ((a) > (b) ? ((a) > (c) ? (a) : (c)) : ((b) > (c) ? (b) : (c)))
#define PAGE_BYTES (BATCH * MAX3(sizeof(struct store_blob), sizeof(struct store_artifact), sizeof(struct store_node)))
#define PACE_SLICE_USEC (20 * SDLIVE_USEC_PER_MSEC)
#define STATUS_EVERY 4096
#define WRITE_ATTEMPTS 5
#define RETRY_FIRST_USEC (20 * SDLIVE_USEC_PER_MSEC)

enum item_kind { ITEM_BLOB, ITEM_ARTIFACT, ITEM_NODE };

static const char *const kind_names[] = {
        [ITEM_BLOB] = "blobs",
        [ITEM_ARTIFACT] = "artifacts",
        [ITEM_NODE] = "nodes",
};

struct pass {
        const struct maintenance *m;
        struct maintenance_stats *stats;
        uint64_t started_usec;
        uint64_t next_write_usec;    /* pacing: when the next transaction may begin */
        size_t list_max;             /* items per transaction: maintenance_list_size() */
        size_t n_pending;
        struct store_inventory_write *pending; /* MAINTENANCE_WRITES_PER_TRANSACTION_MAX */
        void *page;                  /* PAGE_BYTES: one listing of any kind */
};

/* What every inner-loop iteration does before touching its item: pets,
 * notices a stop or a lost lease. 0 to go on. */
static int item_begin(struct pass *p, enum item_kind kind) {
        const struct maintenance *m = p->m;

        if (m->wedge)
                fault_switch_check(m->wedge);
        sdlive_pet_watchdog(m->d);
        if (sdlive_stopping(m->d) > 0)
                return MAINTENANCE_STOPPED;
        if (m->lease_lost && m->lease_lost(m->userdata))
                return MAINTENANCE_LEASE_LOST;

        if (++p->stats->items % STATUS_EVERY == 0)
                sdlive_notify_status(m->d, "leader (generation %llu): maintenance pass, %s: %llu items "
                                     "examined, %llu deleted, %llu pruned, %llu marked missing",
                                     (unsigned long long) m->fence->generation, kind_names[kind],
                                     (unsigned long long) p->stats->items,
                                     (unsigned long long) p->stats->blobs_deleted,
                                     (unsigned long long) p->stats->artifacts_pruned,
                                     (unsigned long long) p->stats->nodes_missing);
        return 0;
}

/* The paced wait before a transaction, in slices that do what an item
 * does (the wedge, petting, a stop, a lost lease): a wait of any length
 * is noticed as quickly as the items around it. 0 once it is time. */
static int pace_until(struct pass *p, uint64_t until) {
        const struct maintenance *m = p->m;

        for (;;) {
                uint64_t now = monotonic_usec();

                if (now >= until)
                        return 0;
                if (m->wedge)
                        fault_switch_check(m->wedge);
                if (sdlive_idle(m->d, until - now < PACE_SLICE_USEC ? until - now : PACE_SLICE_USEC) ==
                    SDLIVE_WAKE_STOP)
                        return MAINTENANCE_STOPPED;
                if (m->lease_lost && m->lease_lost(m->userdata))
                        return MAINTENANCE_LEASE_LOST;
        }
}

static void count_changed(struct pass *p) {
        for (size_t i = 0; i < p->n_pending; i++) {
                if (!p->pending[i].changed)
                        continue;
                switch (p->pending[i].op) {
                case STORE_BLOB_MARK_DELETED:
                        p->stats->blobs_deleted++;
                        break;
                case STORE_ARTIFACT_PRUNE:
                        p->stats->artifacts_pruned++;
                        break;
                case STORE_NODE_MARK_MISSING:
                        p->stats->nodes_missing++;
                        break;
                }
        }
}

/* Writes the pending items in one fenced transaction: retries a store
 * that is briefly unavailable (petting while it waits), turns -ESTALE
 * into MAINTENANCE_LEASE_LOST. Retries go to the store, whose fence
 * decides; the lease-lost flag is checked again before the next item. (A
 * leader paused inside a write transaction finds its session ended by the
 * server when it resumes: its retry is what meets the fence.) Returns 0
 * (the changes counted, the list emptied), a MAINTENANCE_* code or -errno. */
static int write_pending(struct pass *p, enum item_kind kind) {
        const struct maintenance *m = p->m;
        uint64_t delay = RETRY_FIRST_USEC;
        size_t n = p->n_pending;
        int r = 0;

        if (n == 0)
                return 0;
        /* The rate limit paces transactions: one of n items begins no
         * sooner than n / max_rate after the one before began, so the
         * rate holds on average. The write follows the wait directly: if
         * the lease ran out after its last slice, the fence, not a flag
         * check, is what keeps the write out. */
        if (m->max_rate > 0) {
                uint64_t now;

                if ((r = pace_until(p, p->next_write_usec)) != 0)
                        return r;
                now = monotonic_usec();
                p->next_write_usec = (p->next_write_usec > now ? p->next_write_usec : now) +
                                     n * SDLIVE_USEC_PER_SEC / m->max_rate;
        }

        for (unsigned attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
                uint64_t started = monotonic_usec();

                r = store_inventory_write(m->store, m->fence, p->pending, n);
                if (r >= 0) {
                        count_changed(p);
                        p->stats->transactions++;
                        p->n_pending = 0;
                        p->list_max = maintenance_list_size(m->max_rate, monotonic_usec() - started);
                        if (p->list_max > p->stats->longest_list)
                                p->stats->longest_list = p->list_max;
                        return 0;
                }
                if (r == -ESTALE) {
                        p->stats->rejected++;
                        log_warning("write rejected by fencing (generation %llu is no longer the "
                                    "lease's): %s", (unsigned long long) m->fence->generation,
                                    store_errmsg(m->store));
                        return MAINTENANCE_LEASE_LOST;
                }
                if (store_error_class(r) != STORE_UNAVAILABLE || attempt == WRITE_ATTEMPTS)
                        break;
                if (sdlive_idle(m->d, delay) == SDLIVE_WAKE_STOP)
                        return MAINTENANCE_STOPPED;
                delay *= 2;
        }
        log_warning("maintenance write to %s failed: %s", kind_names[kind], store_errmsg(m->store));
        return r;
}

/* Adds an item to the pending list; writes the list once it is full. */
static int queue_write(struct pass *p, enum item_kind kind, struct store_inventory_write w) {
        p->pending[p->n_pending++] = w;
        return p->n_pending < p->list_max ? 0 : write_pending(p, kind);
}

/* The end of an inner loop: what is pending is written, then a listing's
 * failure reported. */
static int loop_end(struct pass *p, enum item_kind kind, int n) {
        int r = n < 0 ? n : write_pending(p, kind);

        if (n < 0)
                log_warning("cannot list %s: %s", kind_names[kind], store_errmsg(p->m->store));
        return r;
}

static int blobs_loop(struct pass *p) {
        int64_t *resume = p->m->blobs_resume;
        struct store_blob *batch = p->page;
        int64_t after = resume ? *resume : 0;
        int n, r;

        while ((n = store_blobs_list(p->m->store, after, batch, BATCH)) > 0) {
                for (int i = 0; i < n; i++) {
                        if ((r = item_begin(p, ITEM_BLOB)) != 0)
                                return r;
                        after = batch[i].id;
                        if (!batch[i].deleted && batch[i].refcount == 0) {
                                r = queue_write(p, ITEM_BLOB, (struct store_inventory_write) {
                                                                      .op = STORE_BLOB_MARK_DELETED,
                                                                      .id = batch[i].id });
                                if (r != 0)
                                        return r;
                        }
                        /* Nothing pending: every blob up to this one is done. */
                        if (resume && p->n_pending == 0)
                                *resume = after;
                }
        }
        r = loop_end(p, ITEM_BLOB, n);
        if (resume && r == 0)
                *resume = 0;
        return r;
}

/* Versions come newest first within a name: everything after the first
 * keep_versions of a name is pruned. */
static int artifacts_loop(struct pass *p) {
        unsigned keep = p->m->keep_versions ? p->m->keep_versions : 3;
        struct store_artifact *batch = p->page, after;
        struct store_inventory_write w;
        char current[STORE_NAME_MAX + 1] = "";
        unsigned seen = 0;
        bool started = false;
        int n, r;

        while ((n = store_artifacts_list(p->m->store, started ? &after : NULL, batch, BATCH)) > 0) {
                for (int i = 0; i < n; i++) {
                        if ((r = item_begin(p, ITEM_ARTIFACT)) != 0)
                                return r;
                        after = batch[i];
                        started = true;
                        if (strcmp(current, batch[i].name) != 0) {
                                memcpy(current, batch[i].name, sizeof(current));
                                seen = 0;
                        }
                        if (++seen <= keep)
                                continue;
                        w = (struct store_inventory_write) { .op = STORE_ARTIFACT_PRUNE,
                                                             .version = batch[i].version };
                        memcpy(w.name, batch[i].name, sizeof(w.name));
                        if ((r = queue_write(p, ITEM_ARTIFACT, w)) != 0)
                                return r;
                }
        }
        return loop_end(p, ITEM_ARTIFACT, n);
}

static int nodes_loop(struct pass *p) {
        uint64_t missing_after = p->m->node_missing_usec ? p->m->node_missing_usec
                                                         : 10 * 60 * SDLIVE_USEC_PER_SEC;
        char after[STORE_NAME_MAX + 1] = "";
        struct store_node *batch = p->page;
        struct store_inventory_write w;
        int n, r;

        while ((n = store_nodes_list(p->m->store, after[0] ? after : NULL, batch, BATCH)) > 0) {
                for (int i = 0; i < n; i++) {
                        if ((r = item_begin(p, ITEM_NODE)) != 0)
                                return r;
                        memcpy(after, batch[i].name, sizeof(after));
                        if (batch[i].missing || batch[i].since_checkin_usec < 0 ||
                            (uint64_t) batch[i].since_checkin_usec <= missing_after)
                                continue;
                        w = (struct store_inventory_write) { .op = STORE_NODE_MARK_MISSING };
                        memcpy(w.name, batch[i].name, sizeof(w.name));
                        if ((r = queue_write(p, ITEM_NODE, w)) != 0)
                                return r;
                }
        }
        return loop_end(p, ITEM_NODE, n);
}

size_t maintenance_list_size(uint64_t max_rate, uint64_t last_write_usec) {
        size_t usual = max_rate > 0 && max_rate * MAINTENANCE_PACE_MAX_SEC < MAINTENANCE_WRITES_PER_TRANSACTION
                               ? (size_t) (max_rate * MAINTENANCE_PACE_MAX_SEC)
                               : MAINTENANCE_WRITES_PER_TRANSACTION;
        uint64_t want;

        if (max_rate == 0 || last_write_usec == 0)
                return usual;
        /* What max_rate allows in one and a half such writes, rounded up;
         * the rate and the time are bounded, so no overflow before the cap. */
        if (last_write_usec > 60 * SDLIVE_USEC_PER_SEC || max_rate > 1000000)
                return MAINTENANCE_WRITES_PER_TRANSACTION_MAX;
        want = (max_rate * last_write_usec * 3 + 2 * SDLIVE_USEC_PER_SEC - 1) / (2 * SDLIVE_USEC_PER_SEC);
        if (want <= usual)
                return usual;
        return want < MAINTENANCE_WRITES_PER_TRANSACTION_MAX ? (size_t) want : MAINTENANCE_WRITES_PER_TRANSACTION_MAX;
}

int maintenance_pass(const struct maintenance *m, struct maintenance_stats *stats) {
        struct pass p = {
                .m = m,
                .stats = stats,
                .started_usec = monotonic_usec(),
                .list_max = maintenance_list_size(m->max_rate, 0),
        };
        int r;

        *stats = (struct maintenance_stats) { .longest_list = p.list_max };
        p.page = malloc(PAGE_BYTES);
        p.pending = calloc(MAINTENANCE_WRITES_PER_TRANSACTION_MAX, sizeof(*p.pending));
        if (!p.page || !p.pending) {
                log_warning("maintenance pass: out of memory");
                free(p.page);
                free(p.pending);
                return -ENOMEM;
        }
        r = blobs_loop(&p);
        if (r == 0)
                r = artifacts_loop(&p);
        if (r == 0)
                r = nodes_loop(&p);
        free(p.page);
        free(p.pending);
        stats->duration_usec = monotonic_usec() - p.started_usec;
        return r;
}
