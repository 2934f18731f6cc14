/* SPDX-License-Identifier: MIT */
/* The cluster daemon's etcd election attempt and refresher backend
 * (examples/cluster/election_etcd.c, lease_etcd.c) against a fake etcd
 * on loopback (fake_etcd.c): a won attempt and an opened backend write the
 * whole struct they fill; a grant whose TTL leaves no time to act is
 * refused and backed off without touching the result; a keep-alive
 * answered with etcd's largest TTL gives no deadline past the TTL asked. */
#include "election.h"
#include "election_backend.h"
#include "etcd_lease.h"
#include "fake_etcd.h"
#include "harness.h"
#include "lease.h"
#include "lease_backend.h"
#include "monotonic.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define SEC 1000000ull
#define PATTERN(x) memset(&(x), 0xa5, sizeof(x))
#define KEY "sdlive/cluster/leader"
/* base64 of KEY and of "a" */
#define KEY64 "\"c2RsaXZlL2NsdXN0ZXIvbGVhZGVy\""
#define KV "{\"key\":" KEY64 ",\"create_revision\":\"5\",\"mod_revision\":\"5\",\"value\":\"YQ==\",\"lease\":\"77\"}"

static const char range_absent[] = "{\"header\":{\"revision\":\"4\"}}";
static const char acquired[] = "{\"header\":{\"revision\":\"5\"},\"succeeded\":true,\"responses\":["
                               "{\"response_put\":{\"header\":{}}},{\"response_range\":{\"header\":{},"
                               "\"kvs\":[" KV "]}}]}";
static const char revoked[] = "{\"header\":{\"revision\":\"6\"}}";

struct attempt_fixture {
        struct fake f;
        sdlive *d;
        struct etcd_client *client;
        struct election e;
        struct election_standby s;
};

static void attempt_setup(struct attempt_fixture *x, const struct fake_route *routes, uint64_t ttl_usec) {
        sdlive_options o = SDLIVE_OPTIONS_INIT;

        harness_env_clear();
        x->f = (struct fake) {.head = FAKE_OK_HEAD, .routes = routes};
        fake_start(&x->f);
        assert_int_equal(sdlive_new(&x->d, &o), 0);
        x->e = (struct election) {
                .d = x->d,
                .lease_name = "cluster",
                .holder = "a",
                .ttl_usec = ttl_usec,
                .poll_usec = SEC / 2,
                .etcd_endpoints = x->f.url,
                .etcd_key = KEY,
                .etcd = &x->client,
                .etcd_budget_usec = SEC / 2,
        };
}

static void attempt_teardown(struct attempt_fixture *x) {
        election_etcd_backend.end(&x->s);
        etcd_client_close(x->client);
        fake_stop(&x->f);
        sdlive_free(x->d);
}

static void test_won_attempt_fills_the_result(void **state) {
        static const struct fake_route routes[] = {
                {"/v3/kv/range", range_absent},
                {"/v3/lease/grant", "{\"header\":{},\"ID\":\"77\",\"TTL\":\"5\"}"},
                {"/v3/kv/txn", acquired},
                {NULL, NULL},
        };
        struct attempt_fixture x = {0};
        struct election_result won;
        unsigned failures = 0;
        uint64_t pause = 0, before, after;

        attempt_setup(&x, routes, 5 * SEC);
        PATTERN(won);
        before = monotonic_usec();
        assert_int_equal(election_etcd_backend.attempt(&x.e, &x.s, &won, &failures, &pause), 1);
        after = monotonic_usec();
        assert_int_equal(won.generation, 5);
        assert_true(won.acquired_at_usec >= before && won.acquired_at_usec <= after);
        assert_int_equal(won.etcd_lease, 77);
        /* The grant's send + 5 s - 5 s / 8, in whole ms. */
        assert_true(won.act_until_usec + 1000 >= before + 5 * SEC - lease_act_margin(5 * SEC) &&
                    won.act_until_usec <= after + 5 * SEC - lease_act_margin(5 * SEC));
        assert_int_equal(x.s.refused, 0);
        attempt_teardown(&x);
}

/* A grant answered with TTL 1 s for a lease of 16 s: the deadline (1 s
 * minus the 2 s margin) has passed before the acquire. No acquire, the
 * lease revoked, the result untouched, one lease time of pause. */
static void test_grant_without_time_refused(void **state) {
        static const struct fake_route routes[] = {
                {"/v3/kv/range", range_absent},
                {"/v3/lease/grant", "{\"header\":{},\"ID\":\"77\",\"TTL\":\"1\"}"},
                {"/v3/kv/txn", acquired},
                {"/v3/lease/revoke", revoked},
                {NULL, NULL},
        };
        struct attempt_fixture x = {0};
        struct election_result won, untouched;
        unsigned failures = 0;
        uint64_t pause = 0;

        attempt_setup(&x, routes, 16 * SEC);
        PATTERN(won);
        PATTERN(untouched);
        assert_int_equal(election_etcd_backend.attempt(&x.e, &x.s, &won, &failures, &pause), 0);
        assert_memory_equal(&won, &untouched, sizeof(won));
        assert_int_equal(x.f.requests, 3); /* range, grant, revoke */
        assert_int_equal(x.s.refused, 1);
        assert_int_equal(failures, 0);
        assert_true(pause == 16 * SEC);
        /* Refused again: the pause doubles. */
        assert_int_equal(election_etcd_backend.attempt(&x.e, &x.s, &won, &failures, &pause), 0);
        assert_true(pause == 32 * SEC);
        attempt_teardown(&x);
}

static void test_backend_filled_and_bounded(void **state) {
        struct fake f = {.head = FAKE_OK_HEAD,
                         .body = "{\"result\":{\"header\":{},\"ID\":\"77\",\"TTL\":\"9000000000\"}}"};
        struct lease_config c;
        struct lease_backend b;
        uint64_t deadline, before;

        fake_start(&f);
        c = (struct lease_config) {.etcd_endpoints = f.url, .etcd_key = KEY, .name = "cluster", .holder = "a",
                                   .ttl_usec = 3 * SEC};
        PATTERN(b);
        assert_int_equal(lease_etcd_backend_open(&c, 5, 77, &b), 0);
        assert_non_null(b.ctx);
        assert_non_null(b.renew);
        assert_non_null(b.release);
        assert_non_null(b.errmsg);
        assert_non_null(b.reconnect);
        assert_non_null(b.close);
        assert_true(b.release_when_lost);
        before = monotonic_usec();
        PATTERN(deadline);
        assert_int_equal(b.renew(b.ctx, &deadline), 0);
        /* 9e9 s answered, 3 s asked: 3 s - 3 s / 8 from the send. */
        assert_true(deadline + 1000 >= before + 3 * SEC - lease_act_margin(3 * SEC) &&
                    deadline <= monotonic_usec() + 3 * SEC - lease_act_margin(3 * SEC));
        b.close(b.ctx);
        fake_stop(&f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_won_attempt_fills_the_result),
                cmocka_unit_test(test_grant_without_time_refused),
                cmocka_unit_test(test_backend_filled_and_bounded),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
