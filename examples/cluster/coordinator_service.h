/* SPDX-License-Identifier: MIT */
#ifndef CLUSTER_COORDINATOR_SERVICE_H
#define CLUSTER_COORDINATOR_SERVICE_H

#include "coordinator.h"
#include "leader.h"

/*
 * The job coordinator as a leader service: started with each term's fence,
 * stopped when the term ends. Its event fd is watched by the leader loop;
 * when the coordinator stops by itself (a fenced write refused, or a
 * failure) the term ends with its error, and the daemon goes back to the
 * election — a new term starts a fresh coordinator that requeues and
 * resumes from the store.
 */
struct coordinator_service {
        struct coordinator_config config; /* fence filled in per term */
        sdlive *d;
        struct coordinator *running;
        struct leader_watch watch;
};

/* A leader_service running s. */
struct leader_service coordinator_service(struct coordinator_service *s);

#endif
