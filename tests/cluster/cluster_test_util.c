/* SPDX-License-Identifier: MIT */
#include "cluster_test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

void temp_store_create(struct temp_store *t) {
        snprintf(t->dir, sizeof(t->dir), "/tmp/sdlive-cluster-test.XXXXXX");
        assert_non_null(mkdtemp(t->dir));
        snprintf(t->path, sizeof(t->path), "%s/cluster.db", t->dir);
        snprintf(t->url, sizeof(t->url), "sqlite:%s", t->path);
        store_close(temp_store_open(t));
}

void temp_store_remove(struct temp_store *t) {
        static const char *const suffixes[] = { "", "-wal", "-shm", "-journal", "-released" };
        char path[192];

        for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
                snprintf(path, sizeof(path), "%s%s", t->path, suffixes[i]);
                unlink(path);
        }
        rmdir(t->dir);
}

struct store *temp_store_open(const struct temp_store *t) {
        struct store *s = NULL;

        if (store_open(t->url, &s) < 0)
                fail_msg("store_open(%s): %s", t->url, store_errmsg(NULL));
        return s;
}

void election_store_create(struct election_store *es, sdlive *d, uint64_t ttl_usec, uint64_t poll_usec) {
        temp_store_create(&es->t);
        es->other = temp_store_open(&es->t);
        es->e = (struct election) {
                .d = d,
                .store = &es->s,
                .store_url = es->t.url,
                .lease_name = "cluster",
                .holder = "a",
                .ttl_usec = ttl_usec,
                .poll_usec = poll_usec,
        };
}

void election_store_remove(struct election_store *es) {
        store_close(es->s);
        store_close(es->other);
        temp_store_remove(&es->t);
}

sdlive *test_handle_petting(uint64_t pet_usec, harness_clock *c) {
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        sdlive *d = NULL;

        harness_env_clear();
        o.pet_interval_usec = pet_usec;
        if (c) {
                harness_clock_init(c, NULL);
                assert_int_equal(harness_new_fake(&d, &o, c), 0);
        } else {
                assert_int_equal(sdlive_new(&d, &o), 0);
        }
        return d;
}

void test_sleep_usec(uint64_t usec) {
        struct timespec ts = { .tv_sec = (time_t) (usec / 1000000u),
                               .tv_nsec = (long) (usec % 1000000u) * 1000 };

        while (nanosleep(&ts, &ts) < 0)
                ;
}

void assert_stop_petted(sdlive *d, uint64_t took, uint64_t min_took, const char *what) {
        uint64_t age = UINT64_MAX;

        assert_int_equal(sdlive_last_pet_age(d, &age), 0);
        print_message("stopping took %llu ms (%s); last keepalive %llu ms before it returned\n",
                      (unsigned long long) (took / 1000), what, (unsigned long long) (age / 1000));
        /* It did wait for the call... */
        assert_true(took >= min_took);
        /* ...petting all along (one interval plus the 100 ms poll). */
        assert_true(age < 200 * 1000);
}
