/* SPDX-License-Identifier: MIT */
#ifndef CLUSTER_OPTIONS_H
#define CLUSTER_OPTIONS_H

/*
 * The cluster daemon's command line and the defaults it takes from the
 * environment ($SDLIVE_STORE, $SDLIVE_NODE, $STATE_DIRECTORY, the fault
 * injection variables); the ranges are in docs/cluster.md.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "coordinator.h"
#include "tls.h"

/* The lease the members compete for, and the lease record's lease. */
#define LEASE_NAME "cluster"
/* With --lease-store etcd:...: the leader key in etcd. */
#define LEASE_ETCD_KEY "sdlive/" LEASE_NAME "/leader"
/* The most --coordinator-allow-uid options. */
#define ALLOWED_UIDS_MAX 16

typedef struct cluster_options {
        const char *store_url;             /* NULL: sqlite:$STATE_DIRECTORY/cluster.db */
        /* --lease-store etcd:ENDPOINTS (else $SDLIVE_LEASE_STORE): the
         * endpoints, after "etcd:"; NULL: the lease is the store's own. */
        const char *etcd_endpoints;
        const char *node;                  /* NULL: $SDLIVE_NODE, else <hostname>-<pid> */
        uint64_t lease_usec;
        uint64_t poll_usec;
        uint64_t maintenance_interval_usec;
        uint64_t maintenance_rate;
        uint64_t health_gate_usec;
        bool health_gate_set;
        uint64_t seed;
        bool inspect;
        bool release_after_death;
        const char *lease_record;          /* NULL: $STATE_DIRECTORY/<node>.lease; "": none */
        const char *wedge_file;
        const char *spin_file;
        /* Job coordinator (docs/jobs.md): on when a listener is given. */
        struct coordinator_config jobs;
        struct tls_files tls;              /* all set: the TCP listener is TLS */
        uid_t allowed_uids[ALLOWED_UIDS_MAX];
        char *derived_url;                 /* owned defaults, freed at exit */
        char *derived_node;
        char *derived_record;
} cluster_options;

/* Fills o from the command line and the environment over the defaults the
 * caller set in it: o is read, so every field must be set on entry (a
 * designated initialiser; a field not named is 0, "not given"). Derived
 * strings are owned by o (cluster_options_free()). Exits 0 after --help or --version,
 * 2 on bad usage (a value out of range, a contradiction, something that
 * cannot be derived), 1 when out of memory. */
void cluster_options_parse(int argc, char **argv, cluster_options *o);

/* Frees what cluster_options_parse() derived. */
void cluster_options_free(cluster_options *o);

#endif
