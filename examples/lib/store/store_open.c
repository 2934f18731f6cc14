/* SPDX-License-Identifier: MIT */
/* Opening a store by URL (the factory: the URL's scheme picks the
 * backend), closing it, and the calls that reach the handle itself: its
 * last message, backend, identity, reconnecting, the lock timeout and
 * the wait hook. */

#include "store_check.h"
#include "store_open.h"
#include "store_url.h"

#include <errno.h>
#include <stdio.h>

#include "monotonic.h"

#define WAIT_HOOK_INTERVAL_MIN_USEC UINT64_C(1000)
#define WAIT_HOOK_INTERVAL_MAX_USEC UINT64_C(3600000000)

static _Thread_local char open_errmsg[512];

static int open_url(const char *url, bool readonly, struct store **ret) {
        struct store_url u;
        int r;

        open_errmsg[0] = '\0';
        if (!ret)
                return -EINVAL;
        *ret = NULL;
        r = store_url_parse(url, &u, open_errmsg, sizeof open_errmsg);
        if (r < 0)
                return r;
        if (u.kind == STORE_URL_SQLITE)
                return store_sqlite_open(u.rest, readonly, ret, open_errmsg, sizeof open_errmsg);
#if SDLIVE_STORE_HAVE_POSTGRES
        return store_pg_open(u.rest, readonly, ret, open_errmsg, sizeof open_errmsg);
#else
        snprintf(open_errmsg, sizeof open_errmsg, "this build has no PostgreSQL store (built without libpq)");
        return -EPROTONOSUPPORT;
#endif
}

int store_open(const char *url, struct store **ret) {
        return open_url(url, false, ret);
}

int store_open_readonly(const char *url, struct store **ret) {
        return open_url(url, true, ret);
}

struct store *store_close(struct store *s) {
        if (s)
                s->backend->close(s);
        return NULL;
}

const char *store_errmsg(const struct store *s) {
        return s ? s->errmsg : open_errmsg;
}

const char *store_backend(const struct store *s) {
        return s ? s->backend->name : NULL;
}

const char *store_identity(const struct store *s) {
        return s ? s->backend->identity(s) : "";
}

int store_reconnect(struct store *s) {
        int r = store_begin_call(s);
        return r < 0 ? r : s->backend->reconnect(s);
}

int store_set_lock_timeout(struct store *s, uint64_t usec) {
        int r = store_begin_call(s);
        if (r < 0)
                return r;
        if (usec < 1000 || usec > UINT64_C(3600000000))
                return store_fail(s, -EINVAL, "lock timeout must be between 1 ms and 1 h");
        return s->backend->set_lock_timeout(s, usec);
}

int store_set_wait_hook(struct store *s, const struct store_wait_hook *hook) {
        int r = store_begin_call(s);
        if (r < 0)
                return r;
        if (!hook) {
                s->wait_hook = (struct store_wait_hook) { 0 };
                return 0;
        }
        if (!hook->fn || hook->interval_usec < WAIT_HOOK_INTERVAL_MIN_USEC ||
            hook->interval_usec > WAIT_HOOK_INTERVAL_MAX_USEC)
                return store_fail(s, -EINVAL, "a wait hook needs a function and an interval between 1 ms and 1 h");
        s->wait_hook = *hook;
        s->wait_hook_ran_usec = monotonic_usec();
        return 0;
}

void store_waiting(struct store *s) {
        uint64_t now;

        if (!s->wait_hook.fn)
                return;
        now = monotonic_usec();
        if (now - s->wait_hook_ran_usec < s->wait_hook.interval_usec)
                return;
        s->wait_hook_ran_usec = now;
        s->wait_hook.fn(s->wait_hook.userdata);
}

uint64_t store_wait_slice(const struct store *s) {
        return s->wait_hook.fn ? s->wait_hook.interval_usec : UINT64_MAX;
}
