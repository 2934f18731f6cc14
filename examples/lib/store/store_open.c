/* SPDX-License-Identifier: MIT */
/* Opening a store by URL (the factory: the URL's scheme picks the
 * backend), closing it, and the calls that reach the handle itself: its
 * last message, backend, identity, reconnecting and the lock timeout. */

#include "store-check.h"
#include "store-open.h"
#include "store_url.h"

#include <errno.h>
#include <stdio.h>

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
