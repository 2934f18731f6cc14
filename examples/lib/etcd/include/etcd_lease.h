/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_ETCD_LEASE_H
#define SDLIVE_EXAMPLE_ETCD_LEASE_H

/*
 * A cluster lease held in etcd (docs/etcd.md): a key put with an etcd lease
 * only while it does not exist, whose create_revision is the fencing token
 * (etcd's revision only grows, so every acquisition, by anyone, gets a
 * larger token than every earlier one). The client talks to etcd v3
 * through its JSON gateway (/v3/...) over HTTP with libcurl and json-c.
 *
 * Endpoints: "http://HOST:PORT,http://HOST:PORT,..." (https:// too). A call
 * starts at the endpoint that answered last and moves to the next one when
 * an endpoint cannot be reached, does not answer within its share of the
 * budget, answers that it is unavailable (no leader, shutting down), or
 * answers what etcd never sends (an HTTP error without etcd's error body,
 * such as a proxy's page; a 200 whose body is not one JSON object; an
 * answer past ETCD_ANSWER_MAX). Only etcd's own answers stand.
 *
 * Budgets: every call that talks to etcd takes budget_usec, the longest the
 * caller lets it take, failover included. It never blocks longer (each
 * HTTP request's timeout is the rest of the budget split over the endpoints
 * not tried yet in a round, so one silent member cannot eat all of it;
 * after a round in which every endpoint failed at once it pauses 50 ms and
 * goes round again). When the budget ran out with no answer it fails with
 * the last endpoint's error (-ETIMEDOUT, -ECONNREFUSED, -ECONNRESET,
 * -EAGAIN, or -EBADMSG for an answer that was not etcd's). A daemon passes at most what its main loop may spend
 * (WatchdogSec/4).
 *
 * Return convention: < 0 is -errno, >= 0 is success, like the store:
 *   -ESTALE        the lease or the key is no longer ours (lost);
 *   -ETIMEDOUT     no answer within the budget (or etcd's own deadline);
 *   -ECONNREFUSED, -ECONNRESET  the endpoint could not be reached, or cut
 *                  the connection;
 *   -EAGAIN        etcd answered that it cannot serve now (no leader ...);
 *   -ENOENT        etcd answered that what was named does not exist;
 *   -EBADMSG       an answer that is not what etcd sends (bad JSON, missing
 *                  or mistyped fields, numbers out of range, too large);
 *   -EINVAL        bad arguments, or etcd refused the request as invalid;
 *   -EIO           any other failure etcd reported.
 * After any error etcd_errmsg() says what happened.
 *
 * Resources: one client holds one curl handle (its connections to at most
 * one per endpoint; a multi handle drives it, so that a request ends at the
 * client's deadline whatever curl retries inside) and fixed buffers; an answer larger than
 * ETCD_ANSWER_MAX is refused (-EBADMSG). A watch holds one more curl
 * handle and a buffer of the same bound, and takes at most 128 KiB and
 * 100 messages a second from its stream (a flood is held back by TCP).
 *
 * Threads: a client (and each watch) is used by one thread at a time.
 * Safe after curl_global_init(), which etcd_client_open() calls the first
 * time (call it yourself before starting threads).
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct etcd_client;
struct etcd_watch;

/* Most endpoints a client takes; longest endpoint URL, without the NUL. */
#define ETCD_ENDPOINTS_MAX 8
#define ETCD_URL_MAX 255
/* Longest key and holder value, in bytes, without the NUL. */
#define ETCD_KEY_MAX 255
#define ETCD_VALUE_MAX 255
/* Largest answer (or watch message) the client reads. */
#define ETCD_ANSWER_MAX (64 * 1024)

/* Opens a client for the comma-separated endpoints (no connection yet).
 * -EINVAL for an empty list, more than ETCD_ENDPOINTS_MAX, a URL that is
 * not http:// or https:// or is longer than ETCD_URL_MAX. On failure *ret
 * is NULL and etcd_errmsg(NULL) says why (for this thread). */
int etcd_client_open(const char *endpoints, struct etcd_client **ret);
/* Closes the client; accepts NULL; returns NULL. */
struct etcd_client *etcd_client_close(struct etcd_client *c);
/* The reason of the last error on c ("" when none); with NULL, of the last
 * failed etcd_client_open() in this thread. Valid until the next call. */
const char *etcd_errmsg(const struct etcd_client *c);
/* The endpoint the next call starts at (the one that answered last). */
const char *etcd_current_endpoint(const struct etcd_client *c);

/* ------------------------------------------------------------------ */
/* Leases                                                              */
/* ------------------------------------------------------------------ */

struct etcd_lease {
        int64_t id;      /* etcd's lease id (> 0) */
        int64_t ttl_sec; /* the TTL etcd answered: granted, or after a keep-alive */
        int64_t sent_ms; /* monotonic_ms() when the answered request was sent */
};

/* Grants a lease of ttl_sec seconds (1 .. 9e9). etcd may grant more than
 * asked (never less than its own minimum, about 1.5 election timeouts):
 * ret->ttl_sec is what it granted. A grant whose answer was lost (timeout)
 * leaves an unused lease that expires on its own. */
int etcd_lease_grant(struct etcd_client *c, int64_t ttl_sec, uint64_t budget_usec,
                     struct etcd_lease *ret);
/* Renews lease id. 0 with ret->ttl_sec > 0: etcd counts the TTL again from
 * when it received the request. -ESTALE when etcd answers that the lease
 * is gone (TTL 0, or "not found": expired or revoked): the holder lost it and must stop
 * acting at once. Any other error says nothing about the lease: the holder
 * keeps acting only until etcd_lease_deadline_ms() of its last success. */
int etcd_lease_keepalive(struct etcd_client *c, int64_t id, uint64_t budget_usec,
                         struct etcd_lease *ret);
/* Revokes lease id, deleting every key attached to it. A lease that is
 * already gone is no error (0). */
int etcd_lease_revoke(struct etcd_client *c, int64_t id, uint64_t budget_usec);

/* The local monotonic time (ms) until which the holder of a lease may act
 * on it: sent_ms + min(ttl_sec, ttl_asked_sec) - margin_ms, from the last
 * successful grant or keep-alive (struct etcd_lease) of a lease granted
 * with ttl_asked_sec. An answer's TTL beyond what the holder asked for
 * (etcd rounding a short TTL up to its minimum, or an answer that is not
 * etcd's) never gives more time than asked. etcd restarts the TTL when it receives
 * the request, after we sent it, so its expiry is later than sent + TTL;
 * on its own leader change etcd extends the remaining TTLs, never
 * shortens them. margin_ms covers the two clocks' rates drifting apart
 * and the holder's own reaction time. Returns INT64_MIN when the lease
 * gives no time at all (ttl_sec <= 0). */
int64_t etcd_lease_deadline_ms(const struct etcd_lease *lease, int64_t ttl_asked_sec, int64_t margin_ms);

/* ------------------------------------------------------------------ */
/* The leader key                                                      */
/* ------------------------------------------------------------------ */

struct etcd_holder {
        bool held;               /* false: the key does not exist */
        char value[ETCD_VALUE_MAX + 1]; /* the holder's value (NUL-free) */
        int64_t create_revision; /* the holder's fencing token */
        int64_t mod_revision;
        int64_t lease;           /* the lease the key is attached to (0: none) */
        int64_t revision;        /* etcd's revision when it answered: watch from revision + 1 */
};

/* Puts key = value attached to lease only if key does not exist (a txn
 * comparing create_revision with 0). 1: taken, ret->create_revision is the
 * fencing token. 0: held by another, *ret says by whom (value, token,
 * lease). A key already attached to this very lease counts as taken (the
 * answer to an earlier attempt of ours was lost). key and value: 1 ..
 * ETCD_KEY_MAX / ETCD_VALUE_MAX bytes, no NUL; lease > 0. */
int etcd_acquire(struct etcd_client *c, const char *key, const char *value, int64_t lease,
                 uint64_t budget_usec, struct etcd_holder *ret);
/* Deletes key only if its create_revision is token (a txn), so a deposed
 * holder's late release never deletes a newer holder's key; then revokes
 * lease when lease > 0. 0: the key with that token is gone now. -ESTALE:
 * the key is absent or another's (nothing deleted; the lease is still
 * revoked). */
int etcd_release(struct etcd_client *c, const char *key, int64_t token, int64_t lease,
                 uint64_t budget_usec);
/* Reads key (linearizable: it needs a quorum). 0 with ret->held false when
 * the key does not exist. */
int etcd_read(struct etcd_client *c, const char *key, uint64_t budget_usec,
              struct etcd_holder *ret);

/* ------------------------------------------------------------------ */
/* Watch                                                               */
/* ------------------------------------------------------------------ */

/* Starts watching key for its deletion (a release, or the expiry or
 * revocation of its lease) at revisions >= from_revision (pass
 * etcd_holder.revision + 1 from the read that found it held, so no delete
 * between the read and the watch is missed). Does not block: the stream is
 * opened at the client's current endpoint by etcd_watch_step(). The watch
 * holds its own curl handle; it does not fail over (a waiter re-reads and
 * watches again, and polls as the fallback). */
int etcd_watch_open(struct etcd_client *c, const char *key, int64_t from_revision,
                    struct etcd_watch **ret);
/* Runs the watch for at most timeout_ms (0: only what is ready now).
 * 1: the key was deleted (try to acquire now). 0: nothing yet. < 0: the
 * stream failed or ended (-ECONNRESET, -ECONNREFUSED, -ETIMEDOUT when it
 * could not connect in time, -EBADMSG, -ESTALE when etcd cancelled it, for
 * example because from_revision was compacted): read the key again and
 * open a new watch. Once it returned non-zero it returns the same again. */
int etcd_watch_step(struct etcd_watch *w, int timeout_ms);
/* The reason of the watch's last failure ("" when none). */
const char *etcd_watch_errmsg(const struct etcd_watch *w);
/* Closes the watch; accepts NULL; returns NULL. */
struct etcd_watch *etcd_watch_close(struct etcd_watch *w);

#ifdef __cplusplus
}
#endif

#endif
