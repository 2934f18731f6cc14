/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_ETCD_TEST_H
#define SDLIVE_ETCD_TEST_H

/* What the etcd lease tests share: the throwaway cluster that
 * etcd-cluster.sh runs (argv[1] the script, argv[2] its state directory),
 * clients on it, and small helpers. Budgets and bounds in one place. */

#include "etcd_lease.h"

#include <stdint.h>

#define MS 1000ull /* microseconds */
#define SEC (1000 * MS)
/* The budget of an ordinary call on a healthy cluster of this machine. */
#define BUDGET (5 * SEC)
/* Slack over a budget for the call's own work and a loaded machine. */
#define SLACK_MS 400

struct etcd_test_env {
        const char *script;
        const char *state;
        char endpoints[512];
        char member[3][64]; /* each member's client URL */
};
extern struct etcd_test_env etcd_env;

/* Reads argv; fails (exit 2) without the script and its state. */
void etcd_env_init(int argc, char **argv);
/* Runs "etcd-cluster.sh CMD STATE [member]" (member < 0: none); fails the
 * test when it fails. */
void etcd_cluster(const char *cmd, int member);
/* The index of the member that leads now. */
int etcd_cluster_leader(void);
/* A client on endpoints (NULL: all three members); fails the test if it
 * cannot be opened. */
struct etcd_client *client_on(const char *endpoints);
/* A lease of ttl_sec on c, granted or the test fails. */
struct etcd_lease grant_ok(struct etcd_client *c, int64_t ttl_sec);
/* A key unique to this run and name, so the cases never share one (valid
 * until eight more keys were made). */
const char *unique_key(const char *name);
void sleep_ms(int64_t ms);

#endif
