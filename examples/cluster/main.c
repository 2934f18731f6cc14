/* SPDX-License-Identifier: MIT */
/*
 * sdlive-cluster: one elected leader among several instances sharing a
 * store. Standbys try to acquire the lease every election poll; the leader
 * renews it from a refresher thread, runs a fenced maintenance pass over the
 * store's inventory every maintenance interval, and goes back to standby the
 * moment its lease is lost. See docs/cluster.md.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sdlive.h>

#include "coordinator_service.h"
#include "duration.h"
#include "election.h"
#include "cluster_etcd.h"
#include "fault.h"
#include "health_gate.h"
#include "leader.h"
#include "lease.h"
#include "lease_record.h"
#include "log.h"
#include "monitor.h"
#include "options.h"
#include "printable.h"
#include "release_after_death.h"
#include "store.h"
#include "supervision.h"
#include "tls.h"

/* The election loop must complete an attempt within this many polls. */
#define ELECTION_SILENCE_POLLS 3
/* A store call of the main loop waits at most this long for a lock. */
#define LOCK_TIMEOUT_MAX_USEC SDLIVE_USEC_PER_SEC
#define SEED_ATTEMPTS 10
#define SEED_RETRY_FIRST_USEC (100 * SDLIVE_USEC_PER_MSEC)
/* --release-after-death ends after this long whatever the store does. */
#define RELEASE_DEADLINE_SEC 5
/* After a term that could not run, the next election waits one lease
 * time (at least one election poll), doubling up to this. */
#define TERM_RETRY_MAX_USEC (60 * SDLIVE_USEC_PER_SEC)

/* --inspect: for operators and shell tests. Read-only: it never takes the
 * write lock, sets up a schema or creates a file beside the store. */
static int inspect(const char *url) {
        struct store_log_summary summary;
        struct store_lease_info info;
        struct store *s = NULL;
        char holder[PRINTABLE_SIZE(STORE_NAME_MAX)];

        if (store_open_readonly(url, &s) < 0) {
                log_error("cannot open store %s: %s", url, store_errmsg(NULL));
                return EXIT_FAILURE;
        }
        if (store_lease_read(s, LEASE_NAME, &info) < 0 || store_log_summary(s, LEASE_NAME, &summary) < 0) {
                log_error("cannot read store %s: %s", url, store_errmsg(s));
                store_close(s);
                return EXIT_FAILURE;
        }
        printf("lease=%s held=%d holder=%s generation=%llu remaining_ms=%llu\n", LEASE_NAME, info.held,
               info.holder[0] ? printable(info.holder, holder, sizeof(holder)) : "-",
               (unsigned long long) info.generation,
               (unsigned long long) (info.remaining_usec / 1000));
        printf("log entries=%llu generations=%llu overlaps=%llu\n", (unsigned long long) summary.entries,
               (unsigned long long) summary.generations, (unsigned long long) summary.overlaps);
        store_close(s);
        return EXIT_SUCCESS;
}

static uint64_t min_u64(uint64_t a, uint64_t b) {
        return a < b ? a : b;
}

/* Opens a handle of the main loop: its lock timeout and its wait hook
 * (petting while a call waits on the store), the hook run around the
 * connect too, which no hook on the handle can reach yet. */
static int open_main_store(const char *url, uint64_t lock_timeout_usec, const struct store_wait_hook *hook,
                           struct store **s) {
        int r;

        hook->fn(hook->userdata);
        r = store_open(url, s);
        hook->fn(hook->userdata);
        if (r < 0)
                return r;
        if (store_set_wait_hook(*s, hook) < 0)
                log_warning("cannot set the store's wait hook: %s", store_errmsg(*s));
        store_set_lock_timeout(*s, lock_timeout_usec);
        return 0;
}

/* Seeding needs the store now: a store that is briefly unavailable (locked
 * by another member opening it, restarting) is retried with backoff, petting
 * meanwhile, for up to SEED_ATTEMPTS tries. */
static int seed(sdlive *d, struct store **s, const char *url, uint64_t lock_timeout_usec,
                const struct store_wait_hook *hook, uint64_t n) {
        uint64_t groups = n / 100 ? n / 100 : 1, delay = SEED_RETRY_FIRST_USEC;
        int r = 0;

        log_info("seeding the inventory: %llu blobs, %llu artifacts, %llu nodes", (unsigned long long) n,
                 (unsigned long long) groups, (unsigned long long) groups);
        for (unsigned attempt = 1; attempt <= SEED_ATTEMPTS; attempt++) {
                if (!*s)
                        r = open_main_store(url, lock_timeout_usec, hook, s);
                if (*s)
                        r = store_seed_inventory(*s, n, 10 * groups, groups);
                if (r >= 0 || store_error_class(r) != STORE_UNAVAILABLE)
                        break;
                if (sdlive_idle(d, delay) == SDLIVE_WAKE_STOP)
                        return -ECANCELED;
                delay = min_u64(2 * delay, SDLIVE_USEC_PER_SEC);
        }
        if (r < 0)
                log_error("cannot seed the inventory: %s", store_errmsg(*s));
        return r;
}

struct cluster {
        const cluster_options *o;
        sdlive *d;
        struct store *store;
        struct store *refresher_store; /* the lease refresher's, between terms */
        struct lease_config lease;
        sdlive_progress *election_progress;
        const fault_switch *wedge;
        uint64_t lock_timeout_usec;
        struct store_wait_hook wait_hook; /* of the main loop's handles */
        struct coordinator_service jobs;
        struct leader_service services[1];
        size_t n_services;
        struct etcd_client *etcd;     /* the main loop's, with the lease in etcd */
        uint64_t etcd_last_token;     /* of our last term in etcd (0: none) */
};

/* Leaves what --release-after-death needs should this process die while
 * leading. Without it a death is still safe: the lease then expires. */
static void record_lease(const struct cluster *c, uint64_t generation) {
        struct lease_record rec = { .generation = generation };
        int r;

        if (!c->o->lease_record)
                return;
        snprintf(rec.lease, sizeof(rec.lease), "%s", LEASE_NAME);
        snprintf(rec.holder, sizeof(rec.holder), "%s", c->o->node);
        snprintf(rec.invocation, sizeof(rec.invocation), "%s", lease_record_invocation());
        r = lease_record_this_process(&rec);
        if (r >= 0)
                r = lease_record_write(c->o->lease_record, &rec);
        if (r < 0) {
                log_error("cannot write the lease record %s: %s; release after death is off for this term "
                          "(a death waits for the lease to expire)", c->o->lease_record, strerror(-r));
                sdlive_notify_status(c->d, "leader (generation %llu): cannot write the lease record %s (%s)",
                                     (unsigned long long) generation, c->o->lease_record, strerror(-r));
        }
}

/* A lease record that could never be written stops the daemon at start:
 * a foreign file in its place, or a directory another user can write,
 * would otherwise turn the release after death off unnoticed. */
static int check_lease_record(const struct cluster *c) {
        char why[512];

        if (!c->o->lease_record || lease_record_check(c->o->lease_record, why, sizeof(why)) >= 0)
                return 0;
        log_error("cannot keep the lease record: %s", why);
        sdlive_notify_status(c->d, "cannot keep the lease record: %s", why);
        return -EPERM;
}

/* With the lease in etcd, the term's first act is one fenced write under
 * its token (the claim): it raises the store's high-water mark to the
 * token, so from then on every write of an earlier leader is rejected,
 * whether or not this leader has anything else to write. The write is
 * what a new leader does anyway: put back the jobs in flight under the
 * previous one. -ESTALE: a later leader has written, or this term's time to
 * act ran out (the store's message says which): the term is over. */
static void claim_token(struct cluster *c, const struct leader_term *term, struct lease_holder *h) {
        struct store_fence fence = term->fence;
        int r;

        fence.act_until_usec = lease_holder_act_until(h);
        r = store_jobs_requeue(c->store, &fence, NULL);
        if (r == -ESTALE) {
                log_warning("token %llu refused by the store: %s", (unsigned long long) fence.generation,
                            store_errmsg(c->store));
                lease_holder_mark_lost(h, store_errmsg(c->store));
        } else if (r < 0) {
                log_warning("cannot claim token %llu in the store yet (%s): its first write will",
                            (unsigned long long) fence.generation, store_errmsg(c->store));
        } else {
                log_info("token %llu claimed in the store (%d jobs in flight put back)",
                         (unsigned long long) fence.generation, r);
        }
}

/* One term of leadership, from a won election to the loss of the lease. */
static int lead_term(struct cluster *c, const struct election_result *won) {
        char store_id[STORE_ID_MAX + 1];
        struct lease_holder *h = NULL;
        struct leader_term term;
        int r, k;

        if (won->etcd_lease > 0)
                r = lease_holder_start_etcd(&c->lease, won->generation, won->etcd_lease, won->act_until_usec, &h);
        else
                r = lease_holder_start(&c->lease, won->generation, won->acquired_at_usec, &h);
        if (r < 0) {
                log_error("cannot hold the lease: %s", strerror(-r));
                return r;
        }
        /* With the lease in etcd the election never needed the store. (A
         * handle the election opened has its lock timeout already: setting
         * it again would be one more round trip inside the first lease.) */
        if (!c->store) {
                if ((r = open_main_store(c->o->store_url, c->lock_timeout_usec, &c->wait_hook, &c->store)) < 0) {
                        log_error("won the lease but cannot open store %s: %s", c->o->store_url,
                                  store_errmsg(NULL));
                        lease_holder_stop(h, true);
                        return r;
                }
        }
        /* The incarnation the lease was won in: no write of this term may
         * land in another. */
        snprintf(store_id, sizeof(store_id), "%s", store_identity(c->store));
        term = (struct leader_term) {
                .d = c->d,
                .store = c->store,
                .lease = h,
                /* With the lease in etcd, its token: checked by the store
                 * against the highest it has seen (store_fence.by_token). */
                .fence = { .lease = LEASE_NAME, .holder = c->o->node, .generation = won->generation,
                           .store_id = store_id, .by_token = won->etcd_lease > 0 },
                .maintenance_interval_usec = c->o->maintenance_interval_usec,
                .maintenance_rate = c->o->maintenance_rate,
                .wedge = c->wedge,
                .services = c->services,
                .n_services = c->n_services,
        };
        record_lease(c, won->generation);
        if (won->etcd_lease > 0) {
                c->etcd_last_token = won->generation;
                claim_token(c, &term, h);
        }
        sdlive_progress_park(c->election_progress);
        r = leader_run(&term);
        /* In etcd a release by token is safe whatever ended the term. */
        lease_holder_stop(h, r == LEADER_STOPPED || r < 0 || won->etcd_lease > 0);
        if (c->o->lease_record && (k = lease_record_remove(c->o->lease_record, won->generation)) < 0)
                log_warning("cannot remove the lease record %s: %s", c->o->lease_record, strerror(-k));
        sdlive_progress_beat(c->election_progress);
        return r;
}

static int run(struct cluster *c) {
        struct election e = {
                .d = c->d,
                .store = &c->store,
                .store_url = c->o->store_url,
                .lease_name = LEASE_NAME,
                .holder = c->o->node,
                .ttl_usec = c->o->lease_usec,
                .poll_usec = c->o->poll_usec,
                .lock_timeout_usec = c->lock_timeout_usec,
                .progress = c->election_progress,
                .wait_hook = &c->wait_hook,
                .refresher_store = c->lease.refresher_store,
                .refresher_lock_timeout_usec = lease_refresher_lock_timeout(&c->lease),
                .spin_file = c->o->spin_file,
                .etcd_endpoints = c->o->etcd_endpoints,
                .etcd_key = LEASE_ETCD_KEY,
                .etcd = &c->etcd,
                .etcd_budget_usec = c->lock_timeout_usec,
                .etcd_own_token = &c->etcd_last_token,
        };
        /* Our lease stays in the store until it expires: wait that long. */
        uint64_t first = c->o->lease_usec > c->o->poll_usec ? c->o->lease_usec : c->o->poll_usec;
        uint64_t backoff = first;

        for (;;) {
                char delay[DURATION_FORMAT_MAX];
                struct election_result won;
                int r;

                sdlive_notify_status(c->d, "standby: trying to acquire the lease");
                r = election_run(&e, &won);
                if (r < 0)
                        return EXIT_FAILURE;
                if (r == 0)
                        return EXIT_SUCCESS;
                r = lead_term(c, &won);
                if (r == LEADER_STOPPED)
                        return EXIT_SUCCESS;
                if (r >= 0) {
                        backoff = first;
                        continue;
                }
                /* A term that could not even run (no lease refresher, no
                 * epoll): stand down, longer each time, so the generation
                 * is not bumped at the election poll's pace. */
                duration_format(delay, sizeof(delay), backoff);
                log_warning("could not lead (%s): standing down for %s", strerror(-r), delay);
                sdlive_notify_status(c->d, "standby: could not lead (%s); next election attempt in %s",
                                     strerror(-r), delay);
                sdlive_progress_park(c->election_progress);
                r = sdlive_idle(c->d, backoff);
                sdlive_progress_beat(c->election_progress);
                if (r == SDLIVE_WAKE_STOP)
                        return EXIT_SUCCESS;
                backoff = min_u64(2 * backoff, TERM_RETRY_MAX_USEC > first ? TERM_RETRY_MAX_USEC : first);
        }
}

int main(int argc, char **argv) {
        cluster_options o = {
                .lease_usec = 15 * SDLIVE_USEC_PER_SEC,
                .poll_usec = 2 * SDLIVE_USEC_PER_SEC,
                .maintenance_interval_usec = 60 * SDLIVE_USEC_PER_SEC,
        };
        char t1[DURATION_FORMAT_MAX], t2[DURATION_FORMAT_MAX], t3[DURATION_FORMAT_MAX];
        struct cluster c = { .o = &o };
        uint64_t watchdog = 0;
        fault_switch wedge;
        monitor *m = NULL;
        SSL_CTX *tls_ctx = NULL;
        int r, status = EXIT_FAILURE;

        cluster_options_parse(argc, argv, &o);
        if (o.inspect) {
                status = o.etcd_endpoints ? etcd_inspect(o.store_url, o.etcd_endpoints, LEASE_ETCD_KEY)
                                          : inspect(o.store_url);
                goto out;
        }
        if (o.release_after_death) {
                struct release_config rc = {
                        .store_url = o.store_url,
                        .lease = LEASE_NAME,
                        .node = o.node,
                        .record_path = o.lease_record,
                        .invocation = lease_record_invocation(),
                        .etcd_endpoints = o.etcd_endpoints,
                        .etcd_key = LEASE_ETCD_KEY,
                };
                enum release_outcome outcome;

                alarm(RELEASE_DEADLINE_SEC);
                outcome = release_after_death(&rc);
                status = outcome == RELEASE_DONE || outcome == RELEASE_NOTHING ? EXIT_SUCCESS : EXIT_FAILURE;
                goto out;
        }

        fault_switch_init(&wedge, "cluster main loop", o.wedge_file, "SDLIVE_WEDGE_FILE");
        c.wedge = &wedge;
        if (o.spin_file)
                log_notice("fault injection armed: the election loop spins once %s exists", o.spin_file);
        if (supervision_start(&c.d, SDLIVE_HANDLE_SIGNALS) < 0)
                return EXIT_FAILURE;
        if (monitor_start(&m, c.d) < 0 || check_lease_record(&c) < 0)
                goto out;

        c.lock_timeout_usec = min_u64(LOCK_TIMEOUT_MAX_USEC, o.poll_usec);
        if (sdlive_watchdog_enabled(c.d, &watchdog) > 0)
                c.lock_timeout_usec = min_u64(c.lock_timeout_usec, watchdog / 4);
        if (!o.health_gate_set)
                o.health_gate_usec = watchdog / 2;
        else if (o.health_gate_usec > 0 && watchdog == 0)
                log_notice("--health-gate has no keepalives to watch (watchdog not armed): it stays open");

        c.wait_hook = health_gate_store_hook(c.d);
        r = open_main_store(o.store_url, c.lock_timeout_usec, &c.wait_hook, &c.store);
        if (r < 0) {
                if (store_error_class(r) != STORE_UNAVAILABLE) {
                        log_error("cannot open store %s: %s", o.store_url, store_errmsg(NULL));
                        goto out;
                }
                log_warning("store %s unavailable at start (%s): will retry", o.store_url, store_errmsg(NULL));
        }
        if (o.seed > 0 && seed(c.d, &c.store, o.store_url, c.lock_timeout_usec, &c.wait_hook, o.seed) < 0)
                goto out;

        c.lease = (struct lease_config) {
                .store_url = o.store_url,
                .name = LEASE_NAME,
                .holder = o.node,
                .ttl_usec = o.lease_usec,
                .health_stale_usec = o.health_gate_usec,
                .d = c.d,
                .etcd_endpoints = o.etcd_endpoints,
                .etcd_key = LEASE_ETCD_KEY,
                /* With the lease in etcd the refresher needs no store. */
                .refresher_store = o.etcd_endpoints ? NULL : &c.refresher_store,
        };
        /* Each keep-alive within a quarter of its interval and of WatchdogSec. */
        if (o.etcd_endpoints && watchdog > 0)
                c.lease.lock_timeout_usec = min_u64(o.lease_usec / 3 / 4, watchdog / 4);
        if (o.tls.cert) {
                char why[512];
                if (tls_context_new(&o.tls, true, &tls_ctx, why, sizeof(why)) < 0) {
                        log_error("cannot load the coordinator's TLS credentials: %s", why);
                        goto out;
                }
                o.jobs.tls = tls_ctx;
        }
        if (o.jobs.unix_path || o.jobs.tcp_address) {
                o.jobs.store_url = o.store_url;
                o.jobs.allowed_uids = o.allowed_uids;
                c.jobs = (struct coordinator_service) { .config = o.jobs, .d = c.d };
                c.services[c.n_services++] = coordinator_service(&c.jobs);
        }
        r = sdlive_progress_register(c.d, "election", ELECTION_SILENCE_POLLS * o.poll_usec,
                                     &c.election_progress);
        if (r < 0) {
                log_error("cannot register the election loop: %s", strerror(-r));
                goto out;
        }

        log_info("node %s on %s store%s: lease %s, election poll %s, health gate %s", o.node,
                 c.store ? store_backend(c.store) : "an unreachable",
                 o.etcd_endpoints ? ", lease in etcd" : "",
                 duration_format(t1, sizeof(t1), o.lease_usec), duration_format(t2, sizeof(t2), o.poll_usec),
                 o.health_gate_usec ? duration_format(t3, sizeof(t3), o.health_gate_usec) : "off");
        sdlive_notify_ready(c.d);

        status = run(&c);

        if (sdlive_stopping(c.d) > 0) {
                log_info("stop requested, exiting");
                sdlive_notify_stopping(c.d);
        }
out:
        sdlive_progress_unregister(c.election_progress);
        m = monitor_stop(m);
        store_close(c.refresher_store);
        store_close(c.store);
        cluster_etcd_close(c.etcd);
        sdlive_free(c.d);
        cluster_options_free(&o);
        SSL_CTX_free(tls_ctx);
        return status;
}
