/* SPDX-License-Identifier: MIT */
/* The store tests' per-test handle and helpers (store_test.h). */
#include "store_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

struct store *s;

int setup(void **state) {
        test_env_reset();
        if (store_open(test_env.url, &s) < 0)
                fail_msg("store_open(%s): %s", test_env.url, store_errmsg(NULL));
        return 0;
}

int seeded_setup(void **state) {
        setup(state);
        assert_int_equal(store_seed_inventory(s, 6, 20, 8), 0);
        return 0;
}

int teardown(void **state) {
        s = store_close(s);
        return 0;
}

struct store *open_other(void) {
        struct store *o = NULL;

        if (store_open(test_env.url, &o) < 0)
                fail_msg("store_open(%s): %s", test_env.url, store_errmsg(NULL));
        return o;
}

uint64_t acquire_ok(struct store *st, const char *name, const char *holder, uint64_t ttl) {
        uint64_t gen = 0;
        int r = store_lease_acquire(st, name, holder, ttl, &gen);

        if (r < 0)
                fail_msg("acquire %s by %s: %s", name, holder, store_errmsg(st));
        assert_true(gen > 0);
        return gen;
}

struct store_fence lead_for(const char *holder, uint64_t ttl) {
        struct store_fence f = { .lease = "cluster", .holder = holder };

        f.generation = acquire_ok(s, "cluster", holder, ttl);
        return f;
}

struct store_fence lead(const char *holder) {
        return lead_for(holder, 60 * SEC);
}
