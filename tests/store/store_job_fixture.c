/* SPDX-License-Identifier: MIT */
#include "store_job_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

struct store *s;

int job_setup(void **state) {
        (void) state;
        test_env_reset();
        if (store_open(test_env.url, &s) < 0)
                fail_msg("store_open(%s): %s", test_env.url, store_errmsg(NULL));
        return 0;
}

int job_teardown(void **state) {
        (void) state;
        s = store_close(s);
        return 0;
}

struct store_fence job_lead(const char *holder, uint64_t ttl_usec) {
        struct store_fence f = { .lease = "cluster", .holder = holder };

        if (store_lease_acquire(s, "cluster", holder, ttl_usec, &f.generation) < 0)
                fail_msg("acquire: %s", store_errmsg(s));
        return f;
}

struct store_result job_result_of(const struct store_claim *c, int64_t outcome) {
        struct store_result x = { .run = c->run, .job = c->job, .attempt = c->attempt, .outcome = outcome };

        memcpy(x.token, c->token, FRAME_TOKEN_SIZE);
        return x;
}
