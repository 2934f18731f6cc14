/* SPDX-License-Identifier: MIT */
/* The cluster inventory the leader maintains: blobs, artifact versions and
 * nodes; listed in keyset batches by anyone, changed by fenced writes, plus
 * the nodes' own check-ins and a seed for demonstrations and tests. */

#include "store-check.h"

#include <errno.h>
#include <stdio.h>
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

int store_blob_mark_deleted(struct store *s, const struct store_fence *f, int64_t id) {
        char what[96];
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = store_check_fence(s, f)) < 0 || (r = s->backend->connect(s)) < 0)
                return r;
        snprintf(what, sizeof what, "mark blob %lld deleted", (long long) id);
        return store_fenced_exec(s, f, what, STMT_BLOB_DELETE, id);
}

int store_artifact_prune(struct store *s, const struct store_fence *f, const char *name, int64_t version) {
        char what[128];
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = store_check_fence(s, f)) < 0 || (r = store_check_name(s, "artifact name", name)) < 0 ||
            (r = s->backend->connect(s)) < 0)
                return r;
        snprintf(what, sizeof what, "prune artifact %s version %lld", name, (long long) version);
        return store_fenced_exec(s, f, what, STMT_ARTIFACT_PRUNE, name, version);
}

int store_node_mark_missing(struct store *s, const struct store_fence *f, const char *name) {
        char what[128];
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = store_check_fence(s, f)) < 0 || (r = store_check_name(s, "node name", name)) < 0 ||
            (r = s->backend->connect(s)) < 0)
                return r;
        snprintf(what, sizeof what, "mark node %s missing", name);
        return store_fenced_exec(s, f, what, STMT_NODE_MISSING, name);
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
