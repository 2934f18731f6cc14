/* SPDX-License-Identifier: MIT */
/* etcd leases: grant, keep-alive, revoke, and how long a holder may act. */
#include "etcd_internal.h"

#include <errno.h>
#include <inttypes.h>

/* etcd takes TTLs up to 9,000,000,000 s (MaxLeaseTTL). */
#define ETCD_TTL_MAX INT64_C(9000000000)

int etcd_lease_grant(struct etcd_client *c, int64_t ttl_sec, uint64_t budget_usec,
                     struct etcd_lease *ret) {
        json_object *body;
        int64_t sent;
        int r;

        *ret = (struct etcd_lease){0};
        if (ttl_sec < 1 || ttl_sec > ETCD_TTL_MAX)
                return etcd_fail(c, -EINVAL, "lease TTL %" PRId64 " s is not 1 .. %" PRId64, ttl_sec,
                                 ETCD_TTL_MAX);
        body = json_object_new_object();
        if (!body || json_object_object_add(body, "TTL", etcd_json_int64(ttl_sec)) < 0) {
                json_object_put(body);
                return etcd_fail(c, -ENOMEM, "out of memory");
        }
        r = etcd_post(c, "/v3/lease/grant", body, budget_usec, &sent);
        json_object_put(body);
        if (r < 0)
                return r;
        r = etcd_parse_grant(c->answer.data, c->answer.len, ret);
        if (r < 0)
                return etcd_fail(c, r, "%s: a lease grant answer that is not etcd's",
                                 etcd_current_endpoint(c));
        ret->sent_ms = sent;
        return 0;
}

/* A body {"ID": "<id>"}. */
static json_object *lease_body(int64_t id) {
        json_object *body = json_object_new_object();

        if (body && json_object_object_add(body, "ID", etcd_json_int64(id)) < 0) {
                json_object_put(body);
                return NULL;
        }
        return body;
}

int etcd_lease_keepalive(struct etcd_client *c, int64_t id, uint64_t budget_usec,
                         struct etcd_lease *ret) {
        json_object *body;
        int64_t sent;
        int r;

        *ret = (struct etcd_lease){.id = id};
        if (id <= 0)
                return etcd_fail(c, -EINVAL, "lease id %" PRId64 " is not positive", id);
        if (!(body = lease_body(id)))
                return etcd_fail(c, -ENOMEM, "out of memory");
        /* A stream in gRPC; through the gateway one request, one answer. */
        r = etcd_post(c, "/v3/lease/keepalive", body, budget_usec, &sent);
        json_object_put(body);
        /* etcd 3.4 answers TTL 0 for a lease it does not have; an etcd that
         * answers "lease not found" instead says the same. */
        if (r == -ENOENT)
                return etcd_fail(c, -ESTALE, "lease %" PRId64 " is gone: %s", id, "not found");
        if (r < 0)
                return r;
        r = etcd_parse_keepalive(c->answer.data, c->answer.len, id, ret);
        if (r < 0)
                return etcd_fail(c, r, "%s: a keep-alive answer that is not etcd's",
                                 etcd_current_endpoint(c));
        ret->sent_ms = sent;
        if (ret->ttl_sec <= 0)
                return etcd_fail(c, -ESTALE, "lease %" PRId64 " is gone (expired or revoked)", id);
        return 0;
}

int etcd_lease_revoke(struct etcd_client *c, int64_t id, uint64_t budget_usec) {
        json_object *body, *answer;
        int64_t revision;
        int r;

        if (id <= 0)
                return etcd_fail(c, -EINVAL, "lease id %" PRId64 " is not positive", id);
        if (!(body = lease_body(id)))
                return etcd_fail(c, -ENOMEM, "out of memory");
        r = etcd_post(c, "/v3/lease/revoke", body, budget_usec, NULL);
        json_object_put(body);
        if (r == -ENOENT) {
                c->errmsg[0] = '\0';
                return 0; /* gone already: what revoking wanted */
        }
        if (r < 0)
                return r;
        r = etcd_parse_object(c->answer.data, c->answer.len, &answer);
        if (r == 0) {
                r = etcd_parse_header(answer, &revision);
                json_object_put(answer);
        }
        return r < 0 ? etcd_fail(c, r, "%s: a revoke answer that is not etcd's",
                                 etcd_current_endpoint(c))
                     : 0;
}

int64_t etcd_lease_deadline_ms(const struct etcd_lease *lease, int64_t ttl_asked_sec, int64_t margin_ms) {
        int64_t ttl = lease->ttl_sec < ttl_asked_sec ? lease->ttl_sec : ttl_asked_sec;

        if (ttl <= 0 || ttl > ETCD_TTL_MAX)
                return INT64_MIN;
        return lease->sent_ms + ttl * 1000 - margin_ms;
}
