/* SPDX-License-Identifier: MIT */
/* PostgreSQL release announcements: a release notifies the channel
 * sdlive_lease_released with pg_notify() in the releasing statement,
 * delivered on commit to every session that LISTENs, on any host, and only
 * if the release changed the row. A listener's connection is its main
 * one; notifications that arrive during other queries wait in libpq until
 * consumed. */

#include "pg.h"

#include <errno.h>

/* Notifications consumed per store_lease_notified() call; more stay queued. */
#define NOTIFIES_MAX 1024

int pg_lease_listen(struct store *s, int *ret_fd) {
        struct store_pg *p = to_pg(s);
        int r;

        if ((r = pg_need_conn(s)) < 0)
                return r;
        if (p->listening_on != p->connections) {
                r = pg_exec_text(p, "listen for releases", "LISTEN " PG_RELEASED_CHANNEL, NULL);
                if (r < 0)
                        return r;
                p->listening_on = p->connections;
        }
        *ret_fd = PQsocket(p->conn);
        return 0;
}

int pg_lease_notified(struct store *s) {
        struct store_pg *p = to_pg(s);
        PGnotify *n;
        int found = 0;

        if (!p->conn || p->listening_on != p->connections)
                return store_fail(s, -ENOTCONN, "not listening for releases");
        if (!PQconsumeInput(p->conn)) {
                int r = pg_fail_conn(p, -ECONNRESET, "read release announcements");

                pg_disconnect(p);
                return r;
        }
        for (int i = 0; i < NOTIFIES_MAX && (n = PQnotifies(p->conn)); i++) {
                found = 1;
                PQfreemem(n);
        }
        return found;
}

int pg_lease_unlisten(struct store *s) {
        struct store_pg *p = to_pg(s);
        PGnotify *n;
        int r;

        if (!p->conn || p->listening_on != p->connections)
                return 0;
        r = pg_exec_text(p, "stop listening for releases", "UNLISTEN " PG_RELEASED_CHANNEL, NULL);
        if (r < 0)
                return r;
        p->listening_on = 0;
        while ((n = PQnotifies(p->conn)))
                PQfreemem(n);
        return 0;
}
