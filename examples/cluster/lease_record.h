/* SPDX-License-Identifier: MIT */
#ifndef CLUSTER_LEASE_RECORD_H
#define CLUSTER_LEASE_RECORD_H

/*
 * The lease record: a small file in which a leader writes the lease it
 * holds (name, holder, generation) and the service invocation it runs in,
 * so that a step run after the leader's death (ExecStopPost=, see
 * release_after_death.h) can give that lease back.
 *
 * Format, one key per line, every key exactly once:
 *
 *   sdlive-lease-record 1
 *   lease=cluster
 *   holder=a
 *   generation=7
 *   invocation=<32 hex digits, $INVOCATION_ID> or -
 *
 * Written safely: a temporary file beside it, created exclusively and
 * never through a symlink, mode 0600, then renamed over the record. Read
 * distrustfully: never through a symlink, a regular file owned by the
 * reader's own uid and writable by nobody else, at most
 * LEASE_RECORD_SIZE_MAX bytes, exactly the format above; anything else is
 * refused. What a record says is only a request: the store releases a
 * lease only if it is still exactly (name, holder, generation).
 */

#include <stdint.h>

#include "store.h"

#define LEASE_RECORD_SIZE_MAX 512
#define LEASE_RECORD_INVOCATION_MAX 32

struct lease_record {
        char lease[STORE_NAME_MAX + 1];
        char holder[STORE_NAME_MAX + 1];
        uint64_t generation;
        char invocation[LEASE_RECORD_INVOCATION_MAX + 1]; /* "" when none */
};

/* The record path for node in dir: "<dir>/<node>.lease". -EINVAL when the
 * node name cannot be a file name (only letters, digits and "._@:-", not
 * starting with "."). The caller frees *ret. */
int lease_record_path(const char *dir, const char *node, char **ret);

/* The invocation id of this service run: $INVOCATION_ID when it is 32 hex
 * digits, else "" (outside systemd). */
const char *lease_record_invocation(void);

/* Writes r to path atomically. What is at the path is replaced only when
 * it is a lease record of ours or a symlink (replaced itself, never
 * followed); anything else — a device such as /dev/null, a directory, a
 * file named by mistake — is left alone: -EEXIST. 0 or -errno. */
int lease_record_write(const char *path, const struct lease_record *r);

/* Reads and validates path. 0, -ENOENT (no record), -EPERM (not a regular
 * file of ours, or writable by others), -EFBIG, -EBADMSG (malformed), or
 * another -errno. */
int lease_record_read(const char *path, struct lease_record *ret);

/* Removes the record if it is a record of ours that still names this
 * generation: a record of a newer term is left alone (0), and so is
 * anything at the path that is not a record of ours (the error of
 * lease_record_read()). 0, or -errno. */
int lease_record_remove(const char *path, uint64_t generation);

#endif
