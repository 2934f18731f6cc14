/* SPDX-License-Identifier: MIT */
/* The cluster daemon's lease in etcd (--lease-store etcd:...), against the
 * throwaway three-member cluster of tests/etcd (argv[1] etcd-cluster.sh,
 * argv[2] its state): the election takes the key with its create_revision
 * as the token and a deadline from the grant; the refresher keeps it past
 * several TTLs and moves the deadline from etcd's answers; a lease revoked
 * behind its back is lost at the next keep-alive; a closed health gate
 * releases the key by token; quorum lost: the holder stops acting before
 * its TTL could run out on etcd's side, and nobody else can take it; a
 * standby's watch wakes it at once on a release; the release after death
 * deletes only the key of its own token; and the work store, fencing by
 * token, rejects the deposed holder's write once the next holder wrote. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../etcd/etcd_test.h"
#include "cluster_test_util.h"
#include "cluster_etcd.h"
#include "election.h"
#include "election_backend.h"
#include "harness.h"
#include "lease.h"

#define TTL (2 * SEC)

typedef struct fixture {
        const char *key;
        struct etcd_client *client;  /* the test's own view of etcd */
        struct etcd_client *election_client;
        sdlive *d;
        struct lease_config c;
        struct election e;
        struct election_result won;
        struct lease_holder *h;
        struct temp_store t;
        struct store *s;             /* the work store, when a case opens it */
        struct etcd_client *standby_client; /* a standby thread's, closed by teardown */
} fixture;

static int setup(void **state) {
        fixture *f = calloc(1, sizeof(*f));
        sdlive_options o = SDLIVE_OPTIONS_INIT;

        assert_non_null(f);
        harness_env_clear();
        o.pet_interval_usec = 20 * MS;
        assert_int_equal(sdlive_new(&f->d, &o), 0);
        f->key = unique_key("leader");
        f->client = client_on(NULL);
        temp_store_create(&f->t);
        f->c = (struct lease_config) {
                .store_url = f->t.url,
                .etcd_endpoints = etcd_env.endpoints,
                .etcd_key = f->key,
                .name = "cluster",
                .holder = "a",
                .ttl_usec = TTL,
        };
        f->e = (struct election) {
                .d = f->d,
                .lease_name = "cluster",
                .holder = "a",
                .ttl_usec = TTL,
                .poll_usec = 5 * SEC,
                .etcd_endpoints = etcd_env.endpoints,
                .etcd_key = f->key,
                .etcd = &f->election_client,
                .etcd_budget_usec = SEC,
        };
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;

        lease_holder_stop(f->h, false);
        store_close(f->s);
        etcd_client_close(f->client);
        etcd_client_close(f->election_client);
        etcd_client_close(f->standby_client);
        sdlive_free(f->d);
        temp_store_remove(&f->t);
        free(f);
        return 0;
}

static struct etcd_holder read_key(fixture *f) {
        struct etcd_holder h;

        assert_int_equal(etcd_read(f->client, f->key, BUDGET, &h), 0);
        return h;
}

/* Wins the election as "a" and starts holding. */
static void elect_and_hold(fixture *f) {
        uint64_t before = monotonic_usec();
        struct etcd_holder h;

        assert_int_equal(election_run(&f->e, &f->won), 1);
        h = read_key(f);
        assert_true(h.held);
        assert_string_equal(h.value, "a");
        assert_int_equal((int64_t) f->won.generation, h.create_revision);
        assert_int_equal(f->won.etcd_lease, h.lease);
        /* The first deadline: the grant's send time + TTL - TTL/8. */
        uint64_t ttl = f->e.ttl_usec;

        assert_true(f->won.act_until_usec >= before + ttl - ttl / 8 - 10 * MS);
        assert_true(f->won.act_until_usec <= monotonic_usec() + ttl - ttl / 8);
        assert_int_equal(lease_holder_start_etcd(&f->c, f->won.generation, f->won.etcd_lease,
                                                 f->won.act_until_usec, &f->h), 0);
}

static bool lost_within(fixture *f, uint64_t usec) {
        struct pollfd p = { .fd = lease_holder_fd(f->h), .events = POLLIN };

        return poll(&p, 1, (int) (usec / MS)) == 1 && lease_holder_lost(f->h);
}

static void keepalives_hold_the_key(void **state) {
        fixture *f = *state;
        uint64_t first;

        elect_and_hold(f);
        first = atomic_load(lease_holder_act_until(f->h));
        /* Three TTLs: without keep-alives etcd would have deleted it. */
        assert_false(lost_within(f, 3 * TTL));
        assert_true(lease_holder_refreshes(f->h) >= 6);
        assert_true(lease_holder_may_act(f->h));
        assert_true(atomic_load(lease_holder_act_until(f->h)) > first + 2 * TTL);
        assert_int_equal(read_key(f).create_revision, (int64_t) f->won.generation);
        /* A clean stop releases by token: the key is gone at once. */
        f->h = lease_holder_stop(f->h, true);
        assert_false(read_key(f).held);
}

/* The lease is revoked behind the holder's back: the next keep-alive is
 * answered "gone" and the loss is signalled (not at the deadline). */
static void revoked_lease_is_lost_at_the_next_keepalive(void **state) {
        fixture *f = *state;
        uint64_t revoked;

        elect_and_hold(f);
        assert_int_equal(etcd_lease_revoke(f->client, f->won.etcd_lease, BUDGET), 0);
        revoked = monotonic_usec();
        assert_true(lost_within(f, TTL));
        assert_true(monotonic_usec() - revoked <= TTL / 3 + 300 * MS);
        assert_non_null(strstr(lease_holder_reason(f->h), "no longer ours"));
}

/* The main loop stops petting: the gate closes and the key is deleted by
 * token, long before the TTL; once. */
static void closed_gate_releases_by_token(void **state) {
        fixture *f = *state;
        uint64_t started, ms;

        f->c.ttl_usec = 10 * SEC;
        f->e.ttl_usec = 10 * SEC;
        f->c.health_stale_usec = 150 * MS;
        f->c.d = f->d;
        sdlive_pet_watchdog(f->d);
        started = monotonic_usec();
        assert_int_equal(election_run(&f->e, &f->won), 1);
        assert_int_equal(lease_holder_start_etcd(&f->c, f->won.generation, f->won.etcd_lease,
                                                 f->won.act_until_usec, &f->h), 0);
        assert_true(lost_within(f, 2 * SEC));
        ms = (monotonic_usec() - started) / MS;
        print_message("main loop stale -> etcd key released after %llu ms (stale 150 ms + 2 checks + pet)\n",
                      (unsigned long long) ms);
        assert_true(ms <= 150 + 2 * 150 / 4 + 20 + 400);
        assert_non_null(strstr(lease_holder_reason(f->h), "health gate"));
        for (int i = 0; i < 100 && lease_holder_state(f->h) != LEASE_LOST; i++)
                test_sleep_usec(10 * MS);
        assert_int_equal(lease_holder_gate_releases(f->h), 1);
        assert_false(read_key(f).held);
}

struct standby_run {
        fixture *f;
        struct election e;
        struct etcd_client *client;
        struct election_result won;
        int r;
        uint64_t won_at;
};

static void *standby_thread(void *userdata) {
        struct standby_run *s = userdata;

        s->r = election_run(&s->e, &s->won);
        s->won_at = monotonic_usec();
        return NULL;
}

/* b waits (poll 5 s) while a holds; a's release wakes b's watch: b leads
 * within a fraction of the poll, with a larger token. Without the watch b
 * would find the key gone at its next poll, about 3.5 s after the release.
 * The bound leaves room for the release call itself (up to its 500 ms
 * budget: on a loaded machine, under the sanitizers, etcd's answer can
 * come after b was already woken by the delete). */
static void standby_watch_wakes_on_release(void **state) {
        fixture *f = *state;
        struct standby_run s = { .f = f };
        uint64_t released, ms;
        pthread_t t;

        elect_and_hold(f);
        s.e = f->e;
        s.e.holder = "b";
        s.e.etcd = &s.client;
        assert_int_equal(pthread_create(&t, NULL, standby_thread, &s), 0);
        sleep_ms(1500); /* b reads, finds a, watches */
        released = monotonic_usec();
        f->h = lease_holder_stop(f->h, true);
        assert_int_equal(pthread_join(t, NULL), 0);
        f->standby_client = s.client;
        assert_int_equal(s.r, 1);
        ms = (s.won_at - released) / MS;
        print_message("release -> standby elected by its watch %llu ms after the release began (poll 5 s)\n",
                      (unsigned long long) ms);
        assert_true(s.won_at > released);
        assert_true(ms <= 1500);
        assert_true(s.won.generation > f->won.generation);
        assert_string_equal(read_key(f).value, "b");
        assert_int_equal(cluster_etcd_release(etcd_env.endpoints, f->key, s.won.generation, BUDGET,
                                              (char[256]) { 0 }, 256), 0);
        etcd_lease_revoke(f->client, s.won.etcd_lease, BUDGET);
}

/* The release after death deletes the key only with its holder's token. */
static void release_after_death_only_by_its_token(void **state) {
        fixture *f = *state;
        char why[256];

        elect_and_hold(f);
        f->h = lease_holder_stop(f->h, false); /* "died": the key stays */
        assert_int_equal(cluster_etcd_release(etcd_env.endpoints, f->key, f->won.generation - 1, BUDGET, why,
                                              sizeof(why)), -ESTALE);
        assert_int_equal(cluster_etcd_release(etcd_env.endpoints, f->key, f->won.generation + 1, BUDGET, why,
                                              sizeof(why)), -ESTALE);
        assert_true(read_key(f).held);
        assert_int_equal(cluster_etcd_release(etcd_env.endpoints, f->key, f->won.generation, BUDGET, why,
                                              sizeof(why)), 0);
        assert_false(read_key(f).held);
        /* Again: nothing of ours left. */
        assert_int_equal(cluster_etcd_release(etcd_env.endpoints, f->key, f->won.generation, BUDGET, why,
                                              sizeof(why)), -ESTALE);
        etcd_lease_revoke(f->client, f->won.etcd_lease, BUDGET);
}

/* Two members of three down: keep-alives fail, the holder stops acting at
 * its deadline, before its TTL since the last keep-alive it sent could
 * run out (etcd cannot expire anything without a quorum); no standby can
 * take the key meanwhile. Quorum back: a new holder only after the key
 * is gone. */
static void quorum_lost_holder_stops_before_its_ttl(void **state) {
        fixture *f = *state;
        struct election_result other;
        uint64_t down, lost, limit;
        int leader, a, b;

        /* A TTL that outlasts healing the cluster (the key must survive). */
        f->c.ttl_usec = f->e.ttl_usec = 3 * TTL;
        elect_and_hold(f);
        assert_false(lost_within(f, TTL / 2));
        leader = etcd_cluster_leader();
        a = (leader + 1) % 3, b = (leader + 2) % 3;
        etcd_cluster("kill", a);
        etcd_cluster("kill", b);
        down = monotonic_usec();
        /* As the main loop does: may it act? (The refresher itself may
         * notice later, once its call in progress returns.) */
        while (lease_holder_may_act(f->h) && monotonic_usec() - down < 4 * TTL)
                test_sleep_usec(5 * MS);
        lost = monotonic_usec();
        assert_true(lost_within(f, TTL));
        print_message("quorum lost -> holder stopped acting after %llu ms (TTL %llu ms, deadline %lld ms after "
                      "the quorum loss)\n", (unsigned long long) ((lost - down) / MS),
                      (unsigned long long) (f->c.ttl_usec / MS),
                      (long long) ((int64_t) atomic_load(lease_holder_act_until(f->h)) - (int64_t) down) / 1000);
        /* The holder stopped at the deadline of the last keep-alive etcd
         * answered (send + TTL - TTL/8, before etcd's expiry of send +
         * TTL). That send may follow `down` by up to two election timeouts
         * (500 ms here): a leader that lost its quorum still answers
         * keep-alives until its check of the quorum, once per election
         * timeout, makes it step down; nobody can expire the lease
         * before a new leader, with the quorum back, extended it. */
        limit = atomic_load(lease_holder_act_until(f->h));
        assert_true(lost <= limit + 50 * MS);
        assert_true(lost - down < f->c.ttl_usec - f->c.ttl_usec / 8 + 2 * 500 * MS + 100 * MS);
        assert_false(lease_holder_may_act(f->h));
        /* Said by whichever saw the deadline first: the main loop, or the
         * refresher between its retries. */
        print_message("lost: %s\n", lease_holder_reason(f->h));
        assert_true(strstr(lease_holder_reason(f->h), "deadline for acting passed") ||
                    strstr(lease_holder_reason(f->h), "unreachable until its deadline"));
        /* Nobody else gets it while the quorum is gone. */
        f->e.holder = "b";
        f->e.poll_usec = 300 * MS;
        etcd_client_close(f->election_client);
        f->election_client = NULL;
        struct election_standby s = { 0 };
        unsigned failures = 0;
        uint64_t pause;
        assert_int_equal(election_etcd_backend.attempt(&f->e, &s, &other, &failures, &pause), 0);
        assert_int_equal(failures, 1);
        election_etcd_backend.end(&s);
        /* The stopped holder's release cannot reach etcd either. */
        f->h = lease_holder_stop(f->h, true);
        etcd_cluster("heal", -1);
        assert_true(read_key(f).held);
        /* Back: the key outlived the release; the process whose term held
         * it releases it by that token at its next attempt and leads. */
        uint64_t own = f->won.generation;
        f->e.holder = "a";
        f->e.etcd_own_token = &own;
        failures = 0;
        assert_int_equal(election_etcd_backend.attempt(&f->e, &s, &other, &failures, &pause), 1);
        assert_true(other.generation > own);
        assert_string_equal(read_key(f).value, "a");
        etcd_lease_revoke(f->client, other.etcd_lease, BUDGET);
}

/* Token fencing in the work store: a (token T1) writes; the lease passes
 * to b (T2 > T1), b writes; a's later write with T1 is rejected. */
static void store_rejects_the_deposed_token(void **state) {
        fixture *f = *state;
        struct store *s = f->s = temp_store_open(&f->t);
        struct standby_run b = { .f = f };
        struct store_fence fa = { .lease = "cluster", .holder = "a", .by_token = true };
        struct store_fence fb = { .lease = "cluster", .holder = "b", .by_token = true };
        pthread_t t;

        assert_int_equal(store_seed_inventory(s, 30, 1, 4), 0);
        elect_and_hold(f);
        fa.generation = f->won.generation;
        assert_true(store_blob_mark_deleted(s, &fa, 3) >= 0);
        b.e = f->e;
        b.e.holder = "b";
        b.e.etcd = &b.client;
        assert_int_equal(pthread_create(&t, NULL, standby_thread, &b), 0);
        assert_int_equal(etcd_lease_revoke(f->client, f->won.etcd_lease, BUDGET), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
        f->standby_client = b.client;
        assert_int_equal(b.r, 1);
        fb.generation = b.won.generation;
        assert_true(fb.generation > fa.generation);
        assert_true(store_blob_mark_deleted(s, &fb, 6) >= 0);
        /* The deposed holder, unaware: rejected by its token. */
        assert_int_equal(store_blob_mark_deleted(s, &fa, 9), -ESTALE);
        assert_true(store_blob_mark_deleted(s, &fb, 12) >= 0);
        etcd_lease_revoke(f->client, b.won.etcd_lease, BUDGET);
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(keepalives_hold_the_key, setup, teardown),
                cmocka_unit_test_setup_teardown(revoked_lease_is_lost_at_the_next_keepalive, setup, teardown),
                cmocka_unit_test_setup_teardown(closed_gate_releases_by_token, setup, teardown),
                cmocka_unit_test_setup_teardown(standby_watch_wakes_on_release, setup, teardown),
                cmocka_unit_test_setup_teardown(release_after_death_only_by_its_token, setup, teardown),
                cmocka_unit_test_setup_teardown(store_rejects_the_deposed_token, setup, teardown),
                cmocka_unit_test_setup_teardown(quorum_lost_holder_stops_before_its_ttl, setup, teardown),
        };

        etcd_env_init(argc, argv);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
