/* SPDX-License-Identifier: MIT */
/* The etcd lease on a healthy three-member cluster: acquire, the holder
 * seen by a second acquirer, renew, release (refused for another token),
 * tokens across holders, a lost lease and the standby's watch.
 * test-etcd-lease ETCD_CLUSTER_SH STATE_DIR */
#include "etcd_test.h"
#include "monotonic.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Waits up to timeout_ms for the watch to report the key deleted; the
 * monotonic time it did, or -1. */
static int64_t wait_deleted(struct etcd_watch *w, int64_t timeout_ms) {
        int64_t deadline = monotonic_ms() + timeout_ms;
        int r;

        while (monotonic_ms() < deadline) {
                r = etcd_watch_step(w, 50);
                if (r == 1)
                        return monotonic_ms();
                if (r < 0)
                        fail_msg("watch failed: %d %s", r, etcd_watch_errmsg(w));
        }
        return -1;
}

/* After a's lease lost_lease is gone: a's keep-alive says lost, and b
 * acquires key with its lease with a token larger than a's old_token, then
 * releases it. */
static void standby_takes_over(struct etcd_client *a, int64_t lost_lease, struct etcd_client *b, int64_t lease,
                               const char *key, int64_t old_token) {
        struct etcd_lease ka;
        struct etcd_holder h;

        assert_int_equal(etcd_lease_keepalive(a, lost_lease, BUDGET, &ka), -ESTALE);
        assert_int_equal(etcd_acquire(b, key, "node-b", lease, BUDGET, &h), 1);
        assert_true(h.create_revision > old_token);
        assert_int_equal(etcd_release(b, key, h.create_revision, lease, BUDGET), 0);
}

static void test_acquire_and_holder_seen(void **state) {
        struct etcd_client *a = client_on(NULL), *b = client_on(NULL);
        struct etcd_lease la = grant_ok(a, 10), lb = grant_ok(b, 10);
        const char *key = unique_key("acquire");
        struct etcd_holder h, seen, read;

        assert_int_equal(la.ttl_sec, 10);
        assert_int_equal(etcd_acquire(a, key, "node-a", la.id, BUDGET, &h), 1);
        assert_true(h.held);
        assert_true(h.create_revision > 0);
        assert_string_equal(h.value, "node-a");
        assert_int_equal(h.lease, la.id);

        /* The second acquirer does not take it and learns who holds it. */
        assert_int_equal(etcd_acquire(b, key, "node-b", lb.id, BUDGET, &seen), 0);
        assert_true(seen.held);
        assert_string_equal(seen.value, "node-a");
        assert_int_equal(seen.create_revision, h.create_revision);
        assert_int_equal(seen.lease, la.id);

        /* The holder acquiring again with its lease is told it holds it
         * (a retry after a lost answer), with the same token. */
        assert_int_equal(etcd_acquire(a, key, "node-a", la.id, BUDGET, &seen), 1);
        assert_int_equal(seen.create_revision, h.create_revision);

        assert_int_equal(etcd_read(b, key, BUDGET, &read), 0);
        assert_true(read.held);
        assert_string_equal(read.value, "node-a");
        assert_int_equal(read.create_revision, h.create_revision);
        assert_int_equal(read.lease, la.id);
        assert_true(read.revision >= h.create_revision);

        assert_int_equal(etcd_read(b, unique_key("nobody"), BUDGET, &read), 0);
        assert_false(read.held);

        assert_int_equal(etcd_release(a, key, h.create_revision, la.id, BUDGET), 0);
        assert_int_equal(etcd_lease_revoke(b, lb.id, BUDGET), 0);
        etcd_client_close(a);
        etcd_client_close(b);
}

/* Keep-alives hold the key past its TTL; without them it expires. */
static void test_renew(void **state) {
        struct etcd_client *a = client_on(NULL), *b = client_on(NULL);
        struct etcd_lease la = grant_ok(a, 2), ka;
        const char *key = unique_key("renew");
        struct etcd_holder h, read;
        int64_t start = monotonic_ms(), now;

        assert_int_equal(etcd_acquire(a, key, "node-a", la.id, BUDGET, &h), 1);
        while (monotonic_ms() - start < 2 * la.ttl_sec * 1000 + 500) {
                now = monotonic_ms();
                assert_int_equal(etcd_lease_keepalive(a, la.id, BUDGET, &ka), 0);
                assert_int_equal(ka.id, la.id);
                assert_int_equal(ka.ttl_sec, la.ttl_sec);
                assert_true(ka.sent_ms >= now && ka.sent_ms <= monotonic_ms());
                assert_true(etcd_lease_deadline_ms(&ka, la.ttl_sec, 100) == ka.sent_ms + ka.ttl_sec * 1000 - 100);
                /* Never more than asked for, whatever etcd answered. */
                assert_true(etcd_lease_deadline_ms(&ka, 1, 100) == ka.sent_ms + 1000 - 100);
                sleep_ms(ka.ttl_sec * 1000 / 3);
        }
        /* Past two TTLs the key is still ours. */
        assert_int_equal(etcd_read(b, key, BUDGET, &read), 0);
        assert_true(read.held);
        assert_int_equal(read.create_revision, h.create_revision);

        /* No keep-alive: etcd lets it go (its expiry check runs every 0.5 s). */
        sleep_ms(la.ttl_sec * 1000 + 1500);
        assert_int_equal(etcd_read(b, key, BUDGET, &read), 0);
        assert_false(read.held);
        assert_int_equal(etcd_lease_keepalive(a, la.id, BUDGET, &ka), -ESTALE);
        assert_int_equal(ka.ttl_sec, 0);
        etcd_client_close(a);
        etcd_client_close(b);
}

/* A release with another token deletes nothing: a deposed holder's late
 * release cannot free a newer holder's key. */
static void test_release_refused_for_other_token(void **state) {
        struct etcd_client *a = client_on(NULL), *b = client_on(NULL);
        struct etcd_lease la = grant_ok(a, 10), lb = grant_ok(b, 10), ka;
        const char *key = unique_key("release");
        struct etcd_holder ha, hb, read;

        assert_int_equal(etcd_acquire(a, key, "node-a", la.id, BUDGET, &ha), 1);
        assert_int_equal(etcd_release(b, key, ha.create_revision + 1, 0, BUDGET), -ESTALE);
        assert_int_equal(etcd_release(b, key, ha.create_revision - 1, 0, BUDGET), -ESTALE);
        assert_int_equal(etcd_read(b, key, BUDGET, &read), 0);
        assert_true(read.held);
        assert_int_equal(read.create_revision, ha.create_revision);

        /* The holder's release deletes the key and revokes its lease. */
        assert_int_equal(etcd_release(a, key, ha.create_revision, la.id, BUDGET), 0);
        assert_int_equal(etcd_read(b, key, BUDGET, &read), 0);
        assert_false(read.held);
        assert_int_equal(etcd_lease_keepalive(a, la.id, BUDGET, &ka), -ESTALE);

        /* b takes it; a's release of its old token, again, changes nothing. */
        assert_int_equal(etcd_acquire(b, key, "node-b", lb.id, BUDGET, &hb), 1);
        assert_true(hb.create_revision > ha.create_revision);
        assert_int_equal(etcd_release(a, key, ha.create_revision, la.id, BUDGET), -ESTALE);
        assert_int_equal(etcd_read(a, key, BUDGET, &read), 0);
        assert_true(read.held);
        assert_string_equal(read.value, "node-b");
        assert_int_equal(read.create_revision, hb.create_revision);
        assert_int_equal(etcd_release(b, key, hb.create_revision, lb.id, BUDGET), 0);
        etcd_client_close(a);
        etcd_client_close(b);
}

/* Every acquisition, by any holder, gets a larger token than all before,
 * also with other writes to the cluster in between. */
static void test_token_strictly_increasing(void **state) {
        struct etcd_client *c[3] = {client_on(NULL), client_on(NULL), client_on(NULL)};
        const char *key = unique_key("tokens");
        const char *other = "sdlive-test/unrelated";
        int64_t last = 0;
        char name[16];
        int i;

        for (i = 0; i < 9; i++) {
                struct etcd_client *me = c[i % 3];
                struct etcd_lease l = grant_ok(me, 10);
                struct etcd_holder h;

                snprintf(name, sizeof(name), "node-%d", i % 3);
                assert_int_equal(etcd_acquire(me, key, name, l.id, BUDGET, &h), 1);
                assert_true(h.create_revision > last);
                last = h.create_revision;
                if (i % 2 == 0) {
                        /* a release by delete */
                        assert_int_equal(etcd_release(me, key, h.create_revision, l.id, BUDGET), 0);
                } else {
                        /* a loss by revocation, and someone else's write */
                        struct etcd_lease o = grant_ok(me, 10);
                        struct etcd_holder ho;

                        assert_int_equal(etcd_lease_revoke(me, l.id, BUDGET), 0);
                        assert_int_equal(etcd_acquire(me, other, "x", o.id, BUDGET, &ho), 1);
                        assert_int_equal(etcd_lease_revoke(me, o.id, BUDGET), 0);
                }
        }
        for (i = 0; i < 3; i++)
                etcd_client_close(c[i]);
}

/* The holder's lease revoked behind its back (an operator, or etcd after
 * a lost keep-alive): keep-alive says lost, the key is gone, a standby's
 * watch wakes at once and it acquires with a larger token. */
static void test_lost_lease_revoked_wakes_standby(void **state) {
        struct etcd_client *a = client_on(NULL), *b = client_on(NULL), *op = client_on(NULL);
        struct etcd_lease la = grant_ok(a, 30), lb;
        const char *key = unique_key("revoked");
        struct etcd_holder ha, seen;
        struct etcd_watch *w;
        int64_t revoked, woke;

        assert_int_equal(etcd_acquire(a, key, "node-a", la.id, BUDGET, &ha), 1);
        lb = grant_ok(b, 30);
        assert_int_equal(etcd_acquire(b, key, "node-b", lb.id, BUDGET, &seen), 0);
        assert_int_equal(etcd_watch_open(b, key, seen.revision + 1, &w), 0);
        assert_int_equal(etcd_watch_step(w, 200), 0); /* connected, nothing yet */

        revoked = monotonic_ms();
        assert_int_equal(etcd_lease_revoke(op, la.id, BUDGET), 0);
        woke = wait_deleted(w, 5000);
        assert_true(woke >= 0);
        printf("standby woke %lld ms after the revoke\n", (long long) (woke - revoked));
        assert_true(woke - revoked < 1000);
        assert_int_equal(etcd_watch_step(w, 0), 1); /* stays reported */
        etcd_watch_close(w);

        standby_takes_over(a, la.id, b, lb.id, key, ha.create_revision);
        etcd_client_close(a);
        etcd_client_close(b);
        etcd_client_close(op);
}

/* The holder stops its keep-alives: etcd expires the lease, never before
 * the holder's lease deadline; the standby's watch wakes and it acquires
 * with a larger token; the old holder's keep-alive says lost. */
static void test_lost_keepalive_expires_after_deadline(void **state) {
        struct etcd_client *a = client_on(NULL), *b = client_on(NULL);
        struct etcd_lease la = grant_ok(a, 2), lb = grant_ok(b, 10), ka;
        const char *key = unique_key("expired");
        struct etcd_holder ha, seen;
        struct etcd_watch *w;
        int64_t deadline, woke;

        assert_int_equal(etcd_acquire(a, key, "node-a", la.id, BUDGET, &ha), 1);
        assert_int_equal(etcd_lease_keepalive(a, la.id, BUDGET, &ka), 0);
        deadline = etcd_lease_deadline_ms(&ka, 2, 100);
        assert_int_equal(etcd_acquire(b, key, "node-b", lb.id, BUDGET, &seen), 0);
        assert_int_equal(etcd_watch_open(b, key, seen.revision + 1, &w), 0);

        /* An etcd election on the loaded machine would extend the lease
         * by a TTL: wait for that too. */
        woke = wait_deleted(w, 2 * ka.ttl_sec * 1000 + 3000);
        assert_true(woke >= 0);
        printf("expired %lld ms after the last keep-alive was sent (TTL %lld s, deadline %lld ms)\n",
               (long long) (woke - ka.sent_ms), (long long) ka.ttl_sec,
               (long long) (deadline - ka.sent_ms));
        /* The holder stopped acting before etcd let anyone else in. */
        assert_true(woke >= deadline);
        etcd_watch_close(w);

        standby_takes_over(a, la.id, b, lb.id, key, ha.create_revision);
        etcd_client_close(a);
        etcd_client_close(b);
}

/* Puts key = bytes value bytes long (of ch) with etcdctl, as a foreign
 * writer could. */
static void put_foreign(const char *key, char ch, size_t bytes) {
        char cmd[1024];

        snprintf(cmd, sizeof(cmd),
                 "head -c %zu /dev/zero | tr '\\0' '%c' | ETCDCTL_API=3 etcdctl --endpoints=%s put %s "
                 ">/dev/null",
                 bytes, ch, etcd_env.endpoints, key);
        if (system(cmd) != 0)
                fail_msg("%s failed", cmd);
}

/* A key written by someone else with a value we would never write, or an
 * answer past the size bound: refused as malformed, never read past. */
static void test_hostile_values_refused(void **state) {
        struct etcd_client *c = client_on(NULL);
        struct etcd_lease l = grant_ok(c, 10);
        const char *big = unique_key("big"), *huge = unique_key("huge");
        struct etcd_holder h;

        put_foreign(big, 'v', ETCD_VALUE_MAX + 1);
        assert_int_equal(etcd_read(c, big, BUDGET, &h), -EBADMSG);
        assert_false(h.held);
        assert_int_equal(etcd_acquire(c, big, "node-a", l.id, BUDGET, &h), -EBADMSG);
        put_foreign(huge, 'v', ETCD_ANSWER_MAX);
        assert_int_equal(etcd_read(c, huge, BUDGET, &h), -EBADMSG);
        assert_non_null(strstr(etcd_errmsg(c), "larger than"));
        /* The client goes on working after either. */
        put_foreign(big, 'v', ETCD_VALUE_MAX);
        assert_int_equal(etcd_read(c, big, BUDGET, &h), 0);
        assert_int_equal(strlen(h.value), ETCD_VALUE_MAX);
        assert_int_equal(etcd_lease_revoke(c, l.id, BUDGET), 0);
        etcd_client_close(c);
}

/* Bad arguments are refused before anything is sent. */
static void test_bad_arguments(void **state) {
        struct etcd_client *c = NULL, *ok;
        struct etcd_lease l;
        struct etcd_holder h;
        char longkey[ETCD_KEY_MAX + 2];

        assert_int_equal(etcd_client_open("", &c), -EINVAL);
        assert_null(c);
        assert_int_equal(etcd_client_open("ftp://127.0.0.1:1", &c), -EINVAL);
        assert_non_null(strstr(etcd_errmsg(NULL), "not http"));
        assert_int_equal(etcd_client_open("http://127.0.0.1:1,,http://127.0.0.1:2", &c), -EINVAL);
        assert_int_equal(etcd_client_open("http://a b:1", &c), -EINVAL);
        assert_int_equal(etcd_client_open("http://1,http://2,http://3,http://4,http://5,"
                                          "http://6,http://7,http://8,http://9", &c),
                         -EINVAL);
        ok = client_on(NULL);
        memset(longkey, 'k', sizeof(longkey) - 1);
        longkey[sizeof(longkey) - 1] = '\0';
        assert_int_equal(etcd_lease_grant(ok, 0, BUDGET, &l), -EINVAL);
        assert_int_equal(etcd_acquire(ok, longkey, "v", 1, BUDGET, &h), -EINVAL);
        assert_int_equal(etcd_acquire(ok, "k", "", 1, BUDGET, &h), -EINVAL);
        assert_int_equal(etcd_acquire(ok, "k", "v", 0, BUDGET, &h), -EINVAL);
        assert_int_equal(etcd_release(ok, "k", 0, 0, BUDGET), -EINVAL);
        assert_int_equal(etcd_lease_keepalive(ok, -1, BUDGET, &l), -EINVAL);
        /* No budget: nothing is sent, and it says so. */
        assert_int_equal(etcd_read(ok, "k", 0, &h), -ETIMEDOUT);
        etcd_client_close(ok);
        assert_null(etcd_client_close(NULL));
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_acquire_and_holder_seen),
                cmocka_unit_test(test_renew),
                cmocka_unit_test(test_release_refused_for_other_token),
                cmocka_unit_test(test_token_strictly_increasing),
                cmocka_unit_test(test_lost_lease_revoked_wakes_standby),
                cmocka_unit_test(test_lost_keepalive_expires_after_deadline),
                cmocka_unit_test(test_hostile_values_refused),
                cmocka_unit_test(test_bad_arguments),
        };

        etcd_env_init(argc, argv);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
