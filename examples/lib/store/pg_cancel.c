/* SPDX-License-Identifier: MIT */
/* Cancelling, on the server, a statement the client gave up on.
 *
 * Closing a connection does not stop what its server session is doing:
 * a backend notices the close only when it next reads from the client.
 * A commit that waits for the synchronous standby never reads, and it
 * keeps its row locks while it waits, for as long as the standby lags or
 * is gone. A renewal or fenced write given up on that way would hold the
 * lease row and refuse every acquisition, on every member, until the
 * standby caught up. So a connection dropped while a statement is still
 * running first asks the server to cancel that statement: a cancelled
 * wait for the standby ends at once (the transaction stays committed on
 * the primary, as it already was) and its locks go.
 *
 * The cancel request is a connection of its own, and libpq's PQcancel()
 * blocks on its connect with no timeout. It runs on a detached thread,
 * with every signal blocked, so the caller never waits for it; at most
 * PG_CANCELS_MAX are in flight in a process, and past that the request
 * is skipped (the lock timeout and idle_in_transaction_session_timeout
 * still bound what an idle session can hold). */

#include "pg.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#define PG_CANCELS_MAX 4

static atomic_int cancels_in_flight;

static void *send_cancel(void *arg) {
        PGcancel *cancel = arg;
        char errbuf[256];

        (void) PQcancel(cancel, errbuf, sizeof errbuf);
        PQfreeCancel(cancel);
        atomic_fetch_sub(&cancels_in_flight, 1);
        return NULL;
}

void pg_cancel_abandoned(PGconn *conn) {
        sigset_t all, old;
        pthread_attr_t attr;
        pthread_t thread;
        PGcancel *cancel;
        int r;

        if (!conn || PQstatus(conn) != CONNECTION_OK || PQtransactionStatus(conn) != PQTRANS_ACTIVE)
                return;
        if (atomic_fetch_add(&cancels_in_flight, 1) >= PG_CANCELS_MAX) {
                atomic_fetch_sub(&cancels_in_flight, 1);
                return;
        }
        cancel = PQgetCancel(conn);
        if (!cancel) {
                atomic_fetch_sub(&cancels_in_flight, 1);
                return;
        }
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = pthread_attr_init(&attr);
        if (r == 0) {
                pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                r = pthread_create(&thread, &attr, send_cancel, cancel);
                pthread_attr_destroy(&attr);
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0) {
                PQfreeCancel(cancel);
                atomic_fetch_sub(&cancels_in_flight, 1);
        }
}
