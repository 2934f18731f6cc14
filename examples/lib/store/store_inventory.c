/* SPDX-License-Identifier: MIT */
/* The cluster inventory the leader maintains: blobs, artifact versions and
 * nodes; listed in keyset batches by anyone, changed by fenced writes (a
 * list of them per transaction, the one-item calls a list of one), plus
 * the nodes' own check-ins and a seed for demonstrations and tests. */

#include "store_check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_seed_inventory(struct store *s, uint64_t blobs, uint64_t artifacts, uint64_t nodes) {
        const struct store_backend *b;
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if (blobs > INT32_MAX || artifacts > INT32_MAX || nodes > INT32_MAX)
                return store_fail(s, -EINVAL, "at most %d items of each kind", INT32_MAX);
        b = s->backend;
        if ((r = b->connect(s)) < 0 || (r = b->begin(s)) < 0)
                return r;
        r = store_exec(s, STMT_SEED_BLOBS, "seed blobs", (int64_t) blobs);
        if (r >= 0)
                r = store_exec(s, STMT_SEED_ARTIFACTS, "seed artifacts", (int64_t) artifacts);
        if (r >= 0)
                r = store_exec(s, STMT_SEED_NODES, "seed nodes", (int64_t) nodes);
        return r < 0 ? b->abort(s, r) : b->commit(s);
}

static void blob_from_row(const struct store_rows *rows, void *item) {
        struct store_blob *b = item;

        b->id = store_rows_int(rows, 0);
        b->refcount = store_rows_int(rows, 1);
        b->deleted = store_rows_bool(rows, 2);
}

int store_blobs_list(struct store *s, int64_t after_id, struct store_blob *out, size_t max) {
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        return store_read_rows(s, out, sizeof *out, max, blob_from_row, STMT_BLOBS_LIST, "list blobs",
                               after_id, (int64_t) max);
}

static void artifact_from_row(const struct store_rows *rows, void *item) {
        struct store_artifact *a = item;

        store_copy_name(a->name, store_rows_text(rows, 0));
        a->version = store_rows_int(rows, 1);
        a->created_usec = store_rows_int(rows, 2);
}

int store_artifacts_list(struct store *s, const struct store_artifact *after,
                         struct store_artifact *out, size_t max) {
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if (after && strnlen(after->name, sizeof after->name) > STORE_NAME_MAX)
                return store_fail(s, -EINVAL, "artifact cursor name is not terminated");
        return store_read_rows(s, out, sizeof *out, max, artifact_from_row, STMT_ARTIFACTS_LIST,
                               "list artifacts", after ? after->name : NULL, after ? after->version : INT64_C(0),
                               (int64_t) max);
}

static void node_from_row(const struct store_rows *rows, void *item) {
        struct store_node *x = item;

        store_copy_name(x->name, store_rows_text(rows, 0));
        x->last_checkin_usec = store_rows_int(rows, 1);
        x->since_checkin_usec = store_rows_int(rows, 2);
        x->missing = store_rows_bool(rows, 3);
}

int store_nodes_list(struct store *s, const char *after_name, struct store_node *out, size_t max) {
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        return store_read_rows(s, out, sizeof *out, max, node_from_row, STMT_NODES_LIST, "list nodes",
                               after_name ? after_name : "", (int64_t) max);
}

void store_inventory_what(const struct store_inventory_write *w, char what[STORE_INVENTORY_WHAT_MAX]) {
        switch (w->op) {
        case STORE_BLOB_MARK_DELETED:
                snprintf(what, STORE_INVENTORY_WHAT_MAX, "mark blob %lld deleted", (long long) w->id);
                return;
        case STORE_ARTIFACT_PRUNE:
                snprintf(what, STORE_INVENTORY_WHAT_MAX, "prune artifact %s version %lld", w->name,
                         (long long) w->version);
                return;
        case STORE_NODE_MARK_MISSING:
                snprintf(what, STORE_INVENTORY_WHAT_MAX, "mark node %s missing", w->name);
                return;
        }
        snprintf(what, STORE_INVENTORY_WHAT_MAX, "inventory write");
}

static int check_item(struct store *s, size_t i, const struct store_inventory_write *w) {
        switch (w->op) {
        case STORE_BLOB_MARK_DELETED:
                return 0;
        case STORE_ARTIFACT_PRUNE:
        case STORE_NODE_MARK_MISSING:
                if (strnlen(w->name, sizeof w->name) > STORE_NAME_MAX)
                        return store_fail(s, -EINVAL, "inventory write %zu: the name is not terminated", i);
                return store_check_name(s, w->op == STORE_ARTIFACT_PRUNE ? "artifact name" : "node name", w->name);
        }
        return store_fail(s, -EINVAL, "inventory write %zu: unknown operation %d", i, (int) w->op);
}

static void clear_changed(struct store_inventory_write *w, size_t n) {
        for (size_t i = 0; i < n; i++)
                w[i].changed = false;
}

/* The list statement by statement, each item followed by its write-log
 * row, in one transaction (SQLite: local, no round trips to save). */
static int write_in_steps(struct store *s, const struct store_fence *f, struct store_inventory_write *w, size_t n,
                          const char *const *what) {
        int r = store_fence_begin(s, f), changed = 0;

        if (r < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++) {
                switch (w[i].op) {
                case STORE_BLOB_MARK_DELETED:
                        r = store_exec(s, STMT_BLOB_DELETE, what[i], w[i].id);
                        break;
                case STORE_ARTIFACT_PRUNE:
                        r = store_exec(s, STMT_ARTIFACT_PRUNE, what[i], w[i].name, w[i].version);
                        break;
                case STORE_NODE_MARK_MISSING:
                        r = store_exec(s, STMT_NODE_MISSING, what[i], w[i].name);
                        break;
                }
                if (r < 0)
                        break;
                w[i].changed = r > 0;
                changed += r > 0;
                r = store_exec(s, STMT_LOG, "log write", f->lease, f->holder, (int64_t) f->generation, what[i]);
        }
        if (r >= 0)
                r = store_fence_in_time(s, f);
        r = r < 0 ? s->backend->abort(s, r) : s->backend->commit(s);
        return r < 0 ? r : changed;
}

int store_inventory_write(struct store *s, const struct store_fence *f, struct store_inventory_write *w, size_t n) {
        char (*text)[STORE_INVENTORY_WHAT_MAX];
        const char **what;
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = store_check_fence(s, f)) < 0)
                return r;
        if (n > STORE_INVENTORY_WRITES_MAX)
                return store_fail(s, -EINVAL, "%zu inventory writes in one transaction: at most %d", n,
                                  STORE_INVENTORY_WRITES_MAX);
        if (n > 0 && !w)
                return store_fail(s, -EINVAL, "no list of inventory writes");
        for (size_t i = 0; i < n; i++) {
                if ((r = check_item(s, i, &w[i])) < 0)
                        return r;
                w[i].changed = false;
        }
        if (n == 0)
                return 0;
        if ((r = s->backend->connect(s)) < 0)
                return r;
        text = calloc(n, sizeof *text);
        what = calloc(n, sizeof *what);
        if (!text || !what) {
                free(text);
                free(what);
                return store_fail(s, -ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; i++) {
                store_inventory_what(&w[i], text[i]);
                what[i] = text[i];
        }
        r = s->backend->inventory_write ? s->backend->inventory_write(s, f, w, n, what)
                                        : write_in_steps(s, f, w, n, what);
        if (r < 0)
                clear_changed(w, n);
        free(what);
        free(text);
        return r;
}

/* The one-item calls: a list of one. */
int store_blob_mark_deleted(struct store *s, const struct store_fence *f, int64_t id) {
        struct store_inventory_write w = { .op = STORE_BLOB_MARK_DELETED, .id = id };

        return store_inventory_write(s, f, &w, 1);
}

static int write_named(struct store *s, const struct store_fence *f, enum store_inventory_op op, const char *what,
                       const char *name, int64_t version) {
        struct store_inventory_write w = { .op = op, .version = version };
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = store_check_name(s, what, name)) < 0)
                return r;
        memcpy(w.name, name, strlen(name) + 1);
        return store_inventory_write(s, f, &w, 1);
}

int store_artifact_prune(struct store *s, const struct store_fence *f, const char *name, int64_t version) {
        return write_named(s, f, STORE_ARTIFACT_PRUNE, "artifact name", name, version);
}

int store_node_mark_missing(struct store *s, const struct store_fence *f, const char *name) {
        return write_named(s, f, STORE_NODE_MARK_MISSING, "node name", name, 0);
}

int store_node_checkin(struct store *s, const char *name) {
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = store_check_name(s, "node name", name)) < 0 || (r = s->backend->connect(s)) < 0)
                return r;
        r = store_exec(s, STMT_NODE_CHECKIN, "node check-in", name);
        return r < 0 ? r : 0;
}
