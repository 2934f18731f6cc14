/* SPDX-License-Identifier: MIT */
/* The leader key: acquire (put if absent), release (delete if ours), read.
 * Each is one etcd transaction or range, so each is atomic in etcd. */
#include "etcd_internal.h"
#include "monotonic.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

/* Builds JSON objects, remembering whether any allocation failed. */
struct builder {
        bool failed;
};

static json_object *object(struct builder *b) {
        json_object *o = json_object_new_object();

        b->failed |= !o;
        return o;
}

/* Adds value (consumed) to obj as name; NULL obj or value marks failure. */
static json_object *add(struct builder *b, json_object *obj, const char *name, json_object *value) {
        if (!obj || !value || json_object_object_add(obj, name, value) < 0) {
                b->failed = true;
                json_object_put(value);
        }
        return obj;
}

static json_object *array(struct builder *b, json_object *first, json_object *second) {
        json_object *a = json_object_new_array();

        if (!a)
                b->failed = true;
        for (json_object **e = (json_object *[]){first, second}, **end = e + 2; e < end; e++) {
                if (!*e)
                        continue;
                if (!a || json_object_array_add(a, *e) < 0) {
                        b->failed = true;
                        json_object_put(*e);
                }
        }
        return a;
}

/* {"<op>": {"key": K}} */
static json_object *key_op(struct builder *b, const char *op, const char *key) {
        return add(b, object(b), op, add(b, object(b), "key", etcd_json_base64(key)));
}

/* [{"target": "CREATE", "result": "EQUAL", "key": K, "create_revision": rev}] */
static json_object *create_revision_is(struct builder *b, const char *key, int64_t rev) {
        json_object *cmp = object(b);

        add(b, cmp, "target", json_object_new_string("CREATE"));
        add(b, cmp, "result", json_object_new_string("EQUAL"));
        add(b, cmp, "key", etcd_json_base64(key));
        add(b, cmp, "create_revision", etcd_json_int64(rev));
        return array(b, cmp, NULL);
}

/* Posts a txn body (consumed) built by b; 0 with the answer in c->answer. */
static int post_txn(struct etcd_client *c, struct builder *b, json_object *body,
                    uint64_t budget_usec) {
        int r;

        if (b->failed) {
                json_object_put(body);
                return etcd_fail(c, -ENOMEM, "out of memory");
        }
        r = etcd_post(c, "/v3/kv/txn", body, budget_usec, NULL);
        json_object_put(body);
        return r;
}

static int check_key(struct etcd_client *c, const char *key) {
        return etcd_check_bytes(key, ETCD_KEY_MAX) < 0
                       ? etcd_fail(c, -EINVAL, "key must be 1 .. %d bytes", ETCD_KEY_MAX)
                       : 0;
}

int etcd_acquire(struct etcd_client *c, const char *key, const char *value, int64_t lease,
                 uint64_t budget_usec, struct etcd_holder *ret) {
        struct builder b = {0};
        json_object *body, *put;
        bool succeeded;
        int r;

        memset(ret, 0, sizeof(*ret));
        if ((r = check_key(c, key)) < 0)
                return r;
        if (etcd_check_bytes(value, ETCD_VALUE_MAX) < 0)
                return etcd_fail(c, -EINVAL, "value must be 1 .. %d bytes", ETCD_VALUE_MAX);
        if (lease <= 0)
                return etcd_fail(c, -EINVAL, "lease id %" PRId64 " is not positive", lease);
        put = object(&b);
        add(&b, put, "key", etcd_json_base64(key));
        add(&b, put, "value", etcd_json_base64(value));
        add(&b, put, "lease", etcd_json_int64(lease));
        body = object(&b);
        add(&b, body, "compare", create_revision_is(&b, key, 0));
        /* Both branches read the key back: its create_revision is the token
         * (success), or the holder (failure). */
        add(&b, body, "success",
            array(&b, add(&b, object(&b), "request_put", put), key_op(&b, "request_range", key)));
        add(&b, body, "failure", array(&b, key_op(&b, "request_range", key), NULL));
        if ((r = post_txn(c, &b, body, budget_usec)) < 0)
                return r;
        r = etcd_parse_acquire(c->answer.data, c->answer.len, &succeeded, ret);
        if (r < 0)
                return etcd_fail(c, r, "%s: a txn answer that is not etcd's", etcd_current_endpoint(c));
        /* Taken by our put, or by an earlier attempt of ours whose answer
         * was lost (only our lease's holder attaches keys to it). */
        if (succeeded || ret->lease == lease) {
                if (ret->lease != lease || strcmp(ret->value, value) != 0)
                        return etcd_fail(c, -EBADMSG, "%s: the txn put the key but reads another",
                                         etcd_current_endpoint(c));
                return 1;
        }
        return 0;
}

int etcd_release(struct etcd_client *c, const char *key, int64_t token, int64_t lease,
                 uint64_t budget_usec) {
        struct builder b = {0};
        json_object *body;
        bool succeeded;
        int r, rr;

        uint64_t deadline = monotonic_usec() + budget_usec, now;

        if ((r = check_key(c, key)) < 0)
                return r;
        if (token <= 0)
                return etcd_fail(c, -EINVAL, "token %" PRId64 " is not positive", token);
        body = object(&b);
        add(&b, body, "compare", create_revision_is(&b, key, token));
        add(&b, body, "success", array(&b, key_op(&b, "request_delete_range", key), NULL));
        if ((r = post_txn(c, &b, body, budget_usec)) < 0)
                return r;
        r = etcd_parse_release(c->answer.data, c->answer.len, &succeeded);
        if (r < 0)
                return etcd_fail(c, r, "%s: a txn answer that is not etcd's", etcd_current_endpoint(c));
        /* The revoke gets what the txn left of the budget. */
        now = monotonic_usec();
        if (lease > 0 && (rr = etcd_lease_revoke(c, lease, now < deadline ? deadline - now : 0)) < 0)
                return rr;
        if (!succeeded)
                return etcd_fail(c, -ESTALE, "key is not held with token %" PRId64, token);
        return 0;
}

int etcd_read(struct etcd_client *c, const char *key, uint64_t budget_usec,
              struct etcd_holder *ret) {
        struct builder b = {0};
        json_object *body;
        int r;

        memset(ret, 0, sizeof(*ret));
        if ((r = check_key(c, key)) < 0)
                return r;
        body = add(&b, object(&b), "key", etcd_json_base64(key));
        if (b.failed) {
                json_object_put(body);
                return etcd_fail(c, -ENOMEM, "out of memory");
        }
        r = etcd_post(c, "/v3/kv/range", body, budget_usec, NULL);
        json_object_put(body);
        if (r < 0)
                return r;
        r = etcd_parse_range(c->answer.data, c->answer.len, ret);
        if (r < 0)
                return etcd_fail(c, r, "%s: a range answer that is not etcd's", etcd_current_endpoint(c));
        return 0;
}
