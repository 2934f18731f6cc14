/* SPDX-License-Identifier: MIT */
/* The etcd lease when etcd itself fails: a member killed (the client fails
 * over), a member silent (its share of the budget, then the next), the
 * etcd leader killed (our lease survives), quorum lost (every call fails
 * within its budget; the lease survives when quorum returns within its
 * TTL). Each case brings the cluster back before it ends.
 * test-etcd-faults ETCD_CLUSTER_SH STATE_DIR */
#include "etcd_test.h"
#include "monotonic.h"
#include "runqueue_wait.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* The endpoints with member first, then the other two. */
static const char *endpoints_from(int first) {
        static char list[512];

        snprintf(list, sizeof(list), "%s,%s,%s", etcd_env.member[first],
                 etcd_env.member[(first + 1) % 3], etcd_env.member[(first + 2) % 3]);
        return list;
}

static int a_follower(void) {
        return (etcd_cluster_leader() + 1) % 3;
}

/* A key held under a lease through a client that talks to one member
 * first. */
struct held_key {
        struct etcd_client *c;
        struct etcd_lease l;
        const char *key;
        struct etcd_holder h;
};

/* Acquires a unique key named name under a lease of ttl_sec through a
 * client on member first; fails the test unless it holds it. */
static struct held_key hold_through(int member, int64_t ttl_sec, const char *name) {
        struct held_key x = { .c = client_on(endpoints_from(member)) };

        x.l = grant_ok(x.c, ttl_sec);
        x.key = unique_key(name);
        assert_int_equal(etcd_acquire(x.c, x.key, "node-a", x.l.id, BUDGET, &x.h), 1);
        return x;
}

/* Kills member, then sends one keep-alive of x's lease with budget, which
 * must be answered (into *ka); returns the ms it took. */
static int64_t keepalive_after_kill(struct held_key *x, int member, uint64_t budget, struct etcd_lease *ka) {
        int64_t start;

        etcd_cluster("kill", member);
        start = monotonic_ms();
        assert_int_equal(etcd_lease_keepalive(x->c, x->l.id, budget, ka), 0);
        return monotonic_ms() - start;
}

/* x's key is still held under its lease with the same token; then member
 * comes back up, the key is released and the client closed. */
static void still_held_then_release(struct held_key *x, int member) {
        struct etcd_holder read;

        assert_int_equal(etcd_read(x->c, x->key, BUDGET, &read), 0);
        assert_true(read.held);
        assert_int_equal(read.create_revision, x->h.create_revision);
        assert_int_equal(read.lease, x->l.id);

        etcd_cluster("up", member);
        assert_int_equal(etcd_release(x->c, x->key, x->h.create_revision, x->l.id, BUDGET), 0);
        etcd_client_close(x->c);
}

static void test_member_killed_fails_over(void **state) {
        int f = a_follower();
        struct held_key x = hold_through(f, 10, "killed");
        struct etcd_lease ka;
        int64_t took;

        assert_string_equal(etcd_current_endpoint(x.c), etcd_env.member[f]);
        took = keepalive_after_kill(&x, f, 2 * SEC, &ka);
        printf("keep-alive failed over from a killed member in %lld ms\n", (long long) took);
        assert_true(took < 1000);
        assert_string_not_equal(etcd_current_endpoint(x.c), etcd_env.member[f]);
        still_held_then_release(&x, f);
}

/* A member that accepts connections and never answers gets its share of
 * the budget (a third, with three endpoints), then the next one answers. */
static void test_silent_member_gets_its_share(void **state) {
        int f = a_follower();
        struct etcd_client *c = client_on(endpoints_from(f)), *other = client_on(NULL);
        struct etcd_lease l = grant_ok(other, 10), ka;
        int64_t start, took, waited;

        etcd_cluster("pause", f);
        start = monotonic_ms();
        waited = runqueue_wait_ms();
        assert_int_equal(etcd_lease_keepalive(c, l.id, 1500 * MS, &ka), 0);
        took = monotonic_ms() - start;
        waited = runqueue_wait_ms() - waited;
        etcd_cluster("resume", f);
        printf("keep-alive past a silent member in %lld ms, %lld of them waiting for a CPU "
               "(budget 1500 ms, its share 500 ms)\n",
               (long long) took, (long long) waited);
        assert_true(took >= 490);
        assert_true(took - waited < 1500 + SLACK_MS);
        assert_string_not_equal(etcd_current_endpoint(c), etcd_env.member[f]);

        /* Only a silent member: the call ends with its budget. */
        etcd_cluster("pause", f);
        etcd_client_close(c);
        c = client_on(etcd_env.member[f]);
        start = monotonic_ms();
        waited = runqueue_wait_ms();
        assert_int_equal(etcd_lease_keepalive(c, l.id, 700 * MS, &ka), -ETIMEDOUT);
        took = monotonic_ms() - start;
        waited = runqueue_wait_ms() - waited;
        etcd_cluster("resume", f);
        printf("keep-alive at a silent member alone: %lld ms, %lld waiting for a CPU (budget 700 ms)\n",
               (long long) took, (long long) waited);
        assert_true(took >= 690 && took - waited < 700 + SLACK_MS);
        assert_int_equal(etcd_lease_revoke(other, l.id, BUDGET), 0);
        etcd_client_close(c);
        etcd_client_close(other);
}

/* etcd's own leader dies: after its election our lease is still there,
 * with the same token; no spurious loss. */
static void test_etcd_leader_killed_keeps_lease(void **state) {
        int leader = etcd_cluster_leader();
        struct held_key x = hold_through(leader, 5, "leader-killed");
        struct etcd_lease ka;
        int64_t took;

        took = keepalive_after_kill(&x, leader, BUDGET, &ka);
        printf("keep-alive answered %lld ms after the etcd leader was killed\n", (long long) took);
        assert_true(ka.ttl_sec == x.l.ttl_sec);
        still_held_then_release(&x, leader);
}

/* Two members of three stopped: no call can succeed, and none waits past
 * its budget; when quorum returns the lease is still ours. */
static void test_quorum_lost_fails_within_budget(void **state) {
        struct etcd_client *c = client_on(NULL), *b = client_on(NULL);
        struct etcd_lease l = grant_ok(c, 15), lb = grant_ok(b, 15), ka, g;
        const char *key = unique_key("quorum");
        struct etcd_holder h, seen;
        int64_t start, took, waited;
        int r;

        assert_int_equal(etcd_acquire(c, key, "node-a", l.id, BUDGET, &h), 1);
        etcd_cluster("down", 1);
        etcd_cluster("down", 2);
        /* An etcd leader renews leases on its own, without a round of
         * consensus: until it notices that it lost its quorum (one
         * election timeout, 500 ms here) it may still answer a keep-alive.
         * That answer is safe: no other member can expire the lease
         * without being elected, and a new leader extends every lease by
         * its whole TTL. Then it steps down and everything fails. */
        r = etcd_lease_keepalive(c, l.id, 1 * SEC, &ka);
        printf("keep-alive just after two members stopped: %d\n", r);
        sleep_ms(1000);

        start = monotonic_ms();
        waited = runqueue_wait_ms();
        r = etcd_lease_keepalive(c, l.id, 1 * SEC, &ka);
        took = monotonic_ms() - start;
        waited = runqueue_wait_ms() - waited;
        printf("keep-alive without quorum: %d after %lld ms, %lld waiting for a CPU (budget 1000 ms)\n",
               r, (long long) took, (long long) waited);
        assert_true(r < 0 && r != -ESTALE);
        assert_true(took - waited < 1000 + SLACK_MS);

        start = monotonic_ms();
        waited = runqueue_wait_ms();
        r = etcd_acquire(b, key, "node-b", lb.id, 1 * SEC, &seen);
        took = monotonic_ms() - start;
        waited = runqueue_wait_ms() - waited;
        printf("acquire without quorum: %d after %lld ms, %lld waiting for a CPU (budget 1000 ms)\n",
               r, (long long) took, (long long) waited);
        assert_true(r < 0);
        assert_true(took - waited < 1000 + SLACK_MS);

        start = monotonic_ms();
        waited = runqueue_wait_ms();
        assert_true(etcd_read(b, key, 1 * SEC, &seen) < 0);
        assert_true(etcd_lease_grant(b, 5, 1 * SEC, &g) < 0);
        took = monotonic_ms() - start;
        waited = runqueue_wait_ms() - waited;
        printf("read and grant without quorum: %lld ms, %lld waiting for a CPU (budgets 2 x 1000 ms)\n",
               (long long) took, (long long) waited);
        assert_true(took - waited < 2000 + SLACK_MS);

        etcd_cluster("up", 1);
        etcd_cluster("up", 2);
        assert_int_equal(etcd_lease_keepalive(c, l.id, BUDGET, &ka), 0);
        assert_int_equal(etcd_acquire(b, key, "node-b", lb.id, BUDGET, &seen), 0);
        assert_int_equal(seen.create_revision, h.create_revision);
        assert_int_equal(etcd_release(c, key, h.create_revision, l.id, BUDGET), 0);
        assert_int_equal(etcd_lease_revoke(b, lb.id, BUDGET), 0);
        etcd_client_close(c);
        etcd_client_close(b);
}

/* After each case, failed or not: every member running and answering,
 * so that one failure does not spread to the cases after it. */
static int restore_cluster(void **state) {
        etcd_cluster("heal", -1);
        return 0;
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_member_killed_fails_over, restore_cluster),
                cmocka_unit_test_teardown(test_silent_member_gets_its_share, restore_cluster),
                cmocka_unit_test_teardown(test_etcd_leader_killed_keeps_lease, restore_cluster),
                cmocka_unit_test_teardown(test_quorum_lost_fails_within_budget, restore_cluster),
        };

        etcd_env_init(argc, argv);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
