/* SPDX-License-Identifier: MIT */
#ifndef CLUSTER_LEASE_RECORD_H
#define CLUSTER_LEASE_RECORD_H

/*
 * The lease record: a small file in which a leader writes the lease it
 * holds (name, holder, generation), the service invocation it runs in and
 * the process that holds it, so that a step run after the leader's death
 * (ExecStopPost=, see release_after_death.h) can give that lease back, and
 * only once that process is gone.
 *
 * Format, one key per line, every key exactly once:
 *
 *   sdlive-lease-record 2
 *   lease=cluster
 *   holder=a
 *   generation=7
 *   invocation=<32 hex digits, $INVOCATION_ID> or -
 *   pid=<the leader's pid>
 *   start=<its start time: field 22 of /proc/PID/stat, clock ticks since boot>
 *
 * Kept in a directory private to its owner: trusted (trusted_dir.h) and
 * writable by nobody else, sticky or not, so no other user can create one
 * of its names first; every call below opens that directory and works
 * relative to it. Written safely: a temporary file beside it, created
 * exclusively and never through a symlink, mode 0600, then renamed over
 * the record. Read distrustfully: never through a symlink, a regular file
 * owned by the reader's own uid and writable by nobody else, at most
 * LEASE_RECORD_SIZE_MAX bytes, exactly the format above; anything else is
 * refused. What a record says is only a request: the store releases a
 * lease only if it is still exactly (name, holder, generation).
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "store.h"

#define LEASE_RECORD_SIZE_MAX 512
#define LEASE_RECORD_INVOCATION_MAX 32

struct lease_record {
        char lease[STORE_NAME_MAX + 1];
        char holder[STORE_NAME_MAX + 1];
        uint64_t generation;
        char invocation[LEASE_RECORD_INVOCATION_MAX + 1]; /* "" when none */
        pid_t pid;              /* the process that holds the lease */
        uint64_t start_time;    /* its start time (/proc/PID/stat field 22) */
};

/* The record path for node in dir: "<dir>/<node>.lease". -EINVAL when the
 * node name cannot be a file name (only letters, digits and "._@:-", not
 * starting with "."). The caller frees *ret. */
int lease_record_path(const char *dir, const char *node, char **ret);

/* The invocation id of this service run: $INVOCATION_ID when it is 32 hex
 * digits, else "" (outside systemd). */
const char *lease_record_invocation(void);

/* Whether a leader may keep its record at path: the directory is private
 * to its owner, and what is at the path is nothing, a symlink or a record
 * of ours (lease_record_write() may replace it). 0, or -errno with `why`
 * naming the cause: checked at startup, so that a record that could never
 * be written stops the daemon instead of quietly disabling the release. */
int lease_record_check(const char *path, char *why, size_t size);

/* Sets r->pid and r->start_time to this process's, and no other field
 * (the caller's own). 0, or -errno with r->start_time untouched. */
int lease_record_this_process(struct lease_record *r);

/* Whether the process r names has ended: 1 gone (no such pid, another
 * process under its pid, or a zombie), 0 still running, -errno when it
 * cannot be told (its /proc entry unreadable). */
int lease_record_process_gone(const struct lease_record *r);

/* Writes r to path atomically. What is at the path is replaced only when
 * it is a lease record of ours or a symlink (replaced itself, never
 * followed); anything else — a device such as /dev/null, a directory, a
 * file named by mistake — is left alone: -EEXIST. 0 or -errno. */
int lease_record_write(const char *path, const struct lease_record *r);

/* Reads and validates path. 0 with every field of *ret set, or -ENOENT
 * (no record), -EPERM (not a regular file of ours, writable by others, or
 * in a directory that is not private to its owner), -EFBIG, -EBADMSG
 * (malformed), or another -errno, with *ret untouched. */
int lease_record_read(const char *path, struct lease_record *ret);

/* Removes the record if it is a record of ours that still names this
 * generation: a record of a newer term is left alone (0), and so is
 * anything at the path that is not a record of ours (the error of
 * lease_record_read()). 0, or -errno. */
int lease_record_remove(const char *path, uint64_t generation);

#endif
