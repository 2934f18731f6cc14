/* SPDX-License-Identifier: MIT */
#include "release_after_death.h"

#include <errno.h>
#include <string.h>

#include "cluster_etcd.h"
#include "lease_record.h"
#include "log.h"
#include "monotonic.h"
#include "store.h"

#define LOCK_TIMEOUT_DEFAULT_USEC 500000

/* The record is trusted and its leader gone: delete the leader key in etcd
 * if it is still that leader's (by token). */
static enum release_outcome release_in_etcd(const struct release_config *c, const struct lease_record *rec) {
        uint64_t started = monotonic_usec();
        enum release_outcome outcome;
        char why[512];
        int r;

        r = cluster_etcd_release(c->etcd_endpoints, c->etcd_key, rec->generation,
                                 c->lock_timeout_usec ? c->lock_timeout_usec : LOCK_TIMEOUT_DEFAULT_USEC, why,
                                 sizeof(why));
        if (r >= 0) {
                log_notice("lease %s generation %llu of %s released after its holder's death (in etcd, %llu ms)",
                           rec->lease, (unsigned long long) rec->generation, rec->holder,
                           (unsigned long long) ((monotonic_usec() - started) / 1000));
                outcome = RELEASE_DONE;
        } else if (r == -ESTALE) {
                log_info("lease %s is no longer held by %s as generation %llu in etcd: nothing to release",
                         rec->lease, rec->holder, (unsigned long long) rec->generation);
                outcome = RELEASE_NOTHING;
        } else {
                log_warning("etcd unavailable (%s): lease %s generation %llu is left to expire", why, rec->lease,
                            (unsigned long long) rec->generation);
                outcome = RELEASE_UNREACHABLE;
        }
        if (outcome == RELEASE_DONE || outcome == RELEASE_NOTHING)
                lease_record_remove(c->record_path, rec->generation);
        return outcome;
}

enum release_outcome release_after_death(const struct release_config *c) {
        struct lease_record rec;
        struct store *s = NULL;
        enum release_outcome outcome;
        char why[512];
        int r;

        if (!c->invocation || !c->invocation[0]) {
                log_error("no $INVOCATION_ID: --release-after-death runs as its unit's ExecStopPost=, where "
                          "systemd names the run; run by hand it could release a live leader's lease: refused");
                return RELEASE_REFUSED;
        }
        r = lease_record_check(c->record_path, why, sizeof(why));
        if (r < 0 && r != -ENOENT) {
                log_error("lease record refused: %s", why);
                return RELEASE_REFUSED;
        }
        r = lease_record_read(c->record_path, &rec);
        if (r == -ENOENT) {
                log_info("no lease record at %s: nothing to release", c->record_path);
                return RELEASE_NOTHING;
        }
        if (r < 0) {
                log_warning("lease record %s refused: %s", c->record_path, strerror(-r));
                return RELEASE_REFUSED;
        }
        if (strcmp(rec.lease, c->lease) != 0 || strcmp(rec.holder, c->node) != 0) {
                log_warning("lease record %s names lease %s held by %s, not %s by %s: refused",
                            c->record_path, rec.lease, rec.holder, c->lease, c->node);
                return RELEASE_REFUSED;
        }
        if (strcmp(rec.invocation, c->invocation) != 0) {
                log_info("lease record %s is from another run (%s): nothing to release", c->record_path,
                         rec.invocation[0] ? rec.invocation : "outside systemd");
                return RELEASE_NOTHING;
        }
        r = lease_record_process_gone(&rec);
        if (r == 0) {
                log_warning("lease record %s: its leader (pid %d) is still running: lease %s generation %llu "
                            "is not released", c->record_path, (int) rec.pid, rec.lease,
                            (unsigned long long) rec.generation);
                return RELEASE_REFUSED;
        }
        if (r < 0) {
                log_warning("cannot tell whether the leader of lease record %s (pid %d) is gone (%s): "
                            "lease %s generation %llu is left to expire", c->record_path, (int) rec.pid,
                            strerror(-r), rec.lease, (unsigned long long) rec.generation);
                return RELEASE_REFUSED;
        }

        if (c->etcd_endpoints)
                return release_in_etcd(c, &rec);
        r = store_open(c->store_url, &s);
        if (r >= 0)
                r = store_set_lock_timeout(s, c->lock_timeout_usec ? c->lock_timeout_usec
                                                                   : LOCK_TIMEOUT_DEFAULT_USEC);
        if (r >= 0)
                r = store_lease_release(s, rec.lease, rec.holder, rec.generation);
        if (r >= 0) {
                log_notice("lease %s generation %llu of %s released after its holder's death", rec.lease,
                           (unsigned long long) rec.generation, rec.holder);
                outcome = RELEASE_DONE;
        } else if (r == -ESTALE) {
                log_info("lease %s is no longer held by %s as generation %llu: nothing to release",
                         rec.lease, rec.holder, (unsigned long long) rec.generation);
                outcome = RELEASE_NOTHING;
        } else if (store_error_class(r) == STORE_UNAVAILABLE) {
                log_warning("store unavailable (%s): lease %s generation %llu is left to expire",
                            store_errmsg(s), rec.lease, (unsigned long long) rec.generation);
                outcome = RELEASE_UNREACHABLE;
        } else {
                log_error("cannot release lease %s generation %llu: %s", rec.lease,
                          (unsigned long long) rec.generation, store_errmsg(s));
                outcome = RELEASE_FAILED;
        }
        store_close(s);
        if (outcome == RELEASE_DONE || outcome == RELEASE_NOTHING)
                lease_record_remove(c->record_path, rec.generation);
        return outcome;
}
