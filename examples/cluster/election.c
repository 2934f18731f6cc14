/* SPDX-License-Identifier: MIT */
#include "election.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "election_backend.h"
#include "log.h"

uint64_t election_max_pause(uint64_t poll_usec) {
        return 2 * poll_usec;
}

uint64_t election_backoff(uint64_t poll_usec, unsigned failures) {
        uint64_t delay = poll_usec / 2;

        while (failures-- > 1 && delay < election_max_pause(poll_usec))
                delay *= 2;
        return delay < election_max_pause(poll_usec) ? delay : election_max_pause(poll_usec);
}

static bool spinning(const struct election *e, bool *announced) {
        bool on = e->spin_file && access(e->spin_file, F_OK) == 0;

        if (on && !*announced)
                log_warning("fault injected: %s found, the election loop keeps idling (and petting) "
                            "but no longer attempts to acquire the lease", e->spin_file);
        *announced = on;
        return on;
}

/* The lease's keeper the election was configured with. NULL when it was
 * built without it (etcd: the option is refused at start). */
static const struct election_backend *backend_of(const struct election *e) {
#if SDLIVE_CLUSTER_ETCD
        if (e->etcd_endpoints)
                return &election_etcd_backend;
#else
        if (e->etcd_endpoints)
                return NULL;
#endif
        return &election_store_backend;
}

int election_run(const struct election *e, struct election_result *ret) {
        const struct election_backend *b = backend_of(e);
        struct election_standby standby = { .watch_from = 0 };
        bool announced = false;
        unsigned failures = 0;

        if (!b)
                return -ENOTSUP;
        for (;;) {
                uint64_t pause = e->poll_usec;
                int r;

                if (sdlive_stopping(e->d) > 0)
                        return 0;
                if (!spinning(e, &announced)) {
                        r = b->attempt(e, &standby, ret, &failures, &pause);
                        if (e->progress)
                                sdlive_progress_beat(e->progress);
                        if (r != 0) {
                                b->end(&standby);
                                return r;
                        }
                }
                if (failures > 0)
                        r = sdlive_idle(e->d, pause);
                else
                        r = b->wait_for_release(e, &standby, pause);
                if (r == SDLIVE_WAKE_FD)
                        log_debug("a release was announced: attempting now");
                if (r == SDLIVE_WAKE_STOP || r < 0)
                        b->end(&standby);
                if (r == SDLIVE_WAKE_STOP)
                        return 0;
                if (r < 0) {
                        log_error("idle failed: %s", strerror(-r));
                        return r;
                }
        }
}
