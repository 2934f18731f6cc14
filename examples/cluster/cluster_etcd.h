/* SPDX-License-Identifier: MIT */
#ifndef CLUSTER_CLUSTER_ETCD_H
#define CLUSTER_CLUSTER_ETCD_H

/*
 * The daemon's uses of etcd outside the election and the refresher: the
 * operator's --inspect, the release after death, closing the main loop's
 * client. Built without the etcd client, --lease-store is refused at start
 * and these are never reached with a lease in etcd.
 */

#include <stddef.h>
#include <stdint.h>

struct etcd_client;

#if SDLIVE_CLUSTER_ETCD
/* --inspect with the lease in etcd: the holder from etcd (its token as
 * the generation), the write-log summary from the store, in the format of
 * the store's --inspect ("remaining_ms=-": etcd keeps the time). */
int etcd_inspect(const char *store_url, const char *endpoints, const char *key);
/* Deletes key only if its create_revision is token (etcd_release() with no
 * lease: the dead holder's lease, with nothing attached any more, expires
 * by itself). 0 released, -ESTALE not ours (nothing done), another -errno
 * when etcd could not be asked; why says what happened. */
int cluster_etcd_release(const char *endpoints, const char *key, uint64_t token, uint64_t budget_usec,
                         char *why, size_t size);
void cluster_etcd_close(struct etcd_client *c);
#else
#include <errno.h>
#include <stdlib.h>
static inline int etcd_inspect(const char *store_url, const char *endpoints, const char *key) {
        (void) store_url, (void) endpoints, (void) key;
        return EXIT_FAILURE;
}
static inline int cluster_etcd_release(const char *endpoints, const char *key, uint64_t token,
                                       uint64_t budget_usec, char *why, size_t size) {
        (void) endpoints, (void) key, (void) token, (void) budget_usec, (void) why, (void) size;
        return -ENOTSUP;
}
static inline void cluster_etcd_close(struct etcd_client *c) {
        (void) c;
}
#endif

#endif
