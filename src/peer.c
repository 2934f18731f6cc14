/* SPDX-License-Identifier: MIT */
/*
 * Peer liveness for connection loops: an inactivity window restarted only by
 * frames received from the peer, and a heartbeat schedule for our side.
 * Not thread-safe by design: one connection loop owns its peer.
 */
#include <errno.h>
#include <stdlib.h>

#include "sdlive_internal.h"

struct sdlive_peer {
        const sdlive *owner;
        uint64_t timeout_usec;
        uint64_t heartbeat_usec; /* UINT64_MAX: never */
        uint64_t last_received;
        uint64_t last_sent;
};

SDLIVE_EXPORT int sdlive_peer_new(sdlive *d, uint64_t timeout_usec, uint64_t heartbeat_usec,
                                  sdlive_peer **ret) {
        sdlive_peer *p;

        if (!d || !ret)
                return -EINVAL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->owner = d;
        p->timeout_usec = timeout_usec ? timeout_usec : SDLIVE_PEER_TIMEOUT_DEFAULT_USEC;
        p->heartbeat_usec = heartbeat_usec ? heartbeat_usec : SDLIVE_HEARTBEAT_INTERVAL_DEFAULT_USEC;
        p->last_received = p->last_sent = sdlive_now(d);
        *ret = p;
        return 0;
}

SDLIVE_EXPORT sdlive_peer *sdlive_peer_free(sdlive_peer *p) {
        free(p);
        return NULL;
}

SDLIVE_EXPORT void sdlive_peer_received(sdlive_peer *p) {
        if (p)
                p->last_received = sdlive_now(p->owner);
}

SDLIVE_EXPORT void sdlive_peer_sent(sdlive_peer *p) {
        if (p)
                p->last_sent = sdlive_now(p->owner);
}

static uint64_t expiry(const sdlive_peer *p) {
        return sdlive_usec_add(p->last_received, p->timeout_usec);
}

static uint64_t heartbeat_deadline(const sdlive_peer *p) {
        return sdlive_usec_add(p->last_sent, p->heartbeat_usec);
}

SDLIVE_EXPORT int sdlive_peer_expired(const sdlive_peer *p) {
        if (!p)
                return -EINVAL;
        return sdlive_now(p->owner) >= expiry(p);
}

SDLIVE_EXPORT int sdlive_peer_heartbeat_due(const sdlive_peer *p) {
        if (!p)
                return -EINVAL;
        return sdlive_now(p->owner) >= heartbeat_deadline(p);
}

SDLIVE_EXPORT int sdlive_peer_poll_timeout(const sdlive_peer *p) {
        uint64_t now, next, wait_usec, ms;

        if (!p)
                return 0; /* poll() reads any negative timeout as "forever" */
        now = sdlive_now(p->owner);
        next = expiry(p);
        if (heartbeat_deadline(p) < next)
                next = heartbeat_deadline(p);
        wait_usec = sdlive_usec_sub(next, now);
        ms = wait_usec / 1000 + (wait_usec % 1000 != 0);
        return ms > INT32_MAX ? INT32_MAX : (int) ms;
}
