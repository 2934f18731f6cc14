/* SPDX-License-Identifier: MIT */
#include "cluster_etcd.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "etcd_lease.h"
#include "log.h"
#include "options.h"
#include "printable.h"
#include "store.h"

/* --inspect's etcd read: an operator's, bounded like a main-loop call. */
#define INSPECT_BUDGET_USEC (2 * SDLIVE_USEC_PER_SEC)

int etcd_inspect(const char *store_url, const char *endpoints, const char *key) {
        struct store_log_summary summary;
        struct etcd_client *client = NULL;
        struct etcd_holder holder;
        struct store *s = NULL;
        char value[PRINTABLE_SIZE(ETCD_VALUE_MAX)];
        int status = EXIT_FAILURE;

        if (etcd_client_open(endpoints, &client) < 0) {
                log_error("cannot open the etcd client: %s", etcd_errmsg(NULL));
                return EXIT_FAILURE;
        }
        if (etcd_read(client, key, INSPECT_BUDGET_USEC, &holder) < 0) {
                log_error("cannot read %s from etcd: %s", key, etcd_errmsg(client));
                goto out;
        }
        if (store_open_readonly(store_url, &s) < 0) {
                log_error("cannot open store %s: %s", store_url, store_errmsg(NULL));
                goto out;
        }
        if (store_log_summary(s, LEASE_NAME, &summary) < 0) {
                log_error("cannot read store %s: %s", store_url, store_errmsg(s));
                goto out;
        }
        printf("lease=%s held=%d holder=%s generation=%lld remaining_ms=- etcd_lease=%lld\n", LEASE_NAME,
               holder.held, holder.held ? printable(holder.value, value, sizeof(value)) : "-",
               (long long) (holder.held ? holder.create_revision : 0),
               (long long) (holder.held ? holder.lease : 0));
        printf("log entries=%llu generations=%llu overlaps=%llu\n", (unsigned long long) summary.entries,
               (unsigned long long) summary.generations, (unsigned long long) summary.overlaps);
        status = EXIT_SUCCESS;
out:
        store_close(s);
        etcd_client_close(client);
        return status;
}

int cluster_etcd_release(const char *endpoints, const char *key, uint64_t token, uint64_t budget_usec,
                         char *why, size_t size) {
        struct etcd_client *client = NULL;
        int r;

        if (token == 0 || token > INT64_MAX) {
                snprintf(why, size, "token %llu is not an etcd revision", (unsigned long long) token);
                return -EINVAL;
        }
        r = etcd_client_open(endpoints, &client);
        if (r < 0) {
                snprintf(why, size, "%s", etcd_errmsg(NULL));
                return r;
        }
        r = etcd_release(client, key, (int64_t) token, 0, budget_usec);
        snprintf(why, size, "%s", r < 0 ? etcd_errmsg(client) : "");
        etcd_client_close(client);
        return r;
}

void cluster_etcd_close(struct etcd_client *c) {
        etcd_client_close(c);
}
