/* SPDX-License-Identifier: MIT */
#include "etcd_test.h"
#include "monotonic.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

struct etcd_test_env etcd_env;

/* Runs the script and returns its first line of output in out. */
static int run_script(const char *cmd, int member, char *out, size_t out_size) {
        char line[1024];
        FILE *p;
        int status;

        if (member >= 0)
                snprintf(line, sizeof(line), "'%s' %s '%s' %d", etcd_env.script, cmd, etcd_env.state,
                         member);
        else
                snprintf(line, sizeof(line), "'%s' %s '%s'", etcd_env.script, cmd, etcd_env.state);
        p = popen(line, "r");
        if (!p)
                return -1;
        if (out && (!fgets(out, (int) out_size, p)))
                out[0] = '\0';
        if (out)
                out[strcspn(out, "\n")] = '\0';
        while (fgets(line, sizeof(line), p))
                ;
        status = pclose(p);
        return status == 0 ? 0 : -1;
}

void etcd_env_init(int argc, char **argv) {
        char *p, *comma;
        int i;

        if (argc < 3) {
                fprintf(stderr, "usage: %s ETCD_CLUSTER_SH STATE_DIR\n", argv[0]);
                exit(2);
        }
        etcd_env.script = argv[1];
        etcd_env.state = argv[2];
        if (run_script("endpoints", -1, etcd_env.endpoints, sizeof(etcd_env.endpoints)) < 0 ||
            !etcd_env.endpoints[0]) {
                fprintf(stderr, "%s: no etcd cluster running (etcd-cluster.sh start)\n", argv[0]);
                exit(2);
        }
        p = etcd_env.endpoints;
        for (i = 0; i < 3; i++) {
                comma = strchr(p, ',');
                snprintf(etcd_env.member[i], sizeof(etcd_env.member[i]), "%.*s",
                         comma ? (int) (comma - p) : (int) strlen(p), p);
                if (!comma)
                        break;
                p = comma + 1;
        }
        if (i != 2) {
                fprintf(stderr, "%s: expected three endpoints, got %s\n", argv[0], etcd_env.endpoints);
                exit(2);
        }
}

void etcd_cluster(const char *cmd, int member) {
        if (run_script(cmd, member, NULL, 0) < 0)
                fail_msg("etcd-cluster.sh %s %d failed", cmd, member);
}

int etcd_cluster_leader(void) {
        char out[16];

        if (run_script("leader", -1, out, sizeof(out)) < 0 || out[0] < '0' || out[0] > '2')
                fail_msg("etcd-cluster.sh leader failed");
        return out[0] - '0';
}

struct etcd_client *client_on(const char *endpoints) {
        struct etcd_client *c;
        int r = etcd_client_open(endpoints ? endpoints : etcd_env.endpoints, &c);

        if (r < 0)
                fail_msg("etcd_client_open: %d %s", r, etcd_errmsg(NULL));
        return c;
}

struct etcd_lease grant_ok(struct etcd_client *c, int64_t ttl_sec) {
        struct etcd_lease lease;
        int r = etcd_lease_grant(c, ttl_sec, BUDGET, &lease);

        if (r < 0)
                fail_msg("etcd_lease_grant: %d %s", r, etcd_errmsg(c));
        assert_true(lease.id > 0);
        return lease;
}

const char *unique_key(const char *name) {
        static char keys[8][128];
        static unsigned next;
        char *key = keys[next++ % 8];

        snprintf(key, sizeof(keys[0]), "sdlive-test/%ld-%lld/%s", (long) getpid(),
                 (long long) monotonic_usec(), name);
        return key;
}

void sleep_ms(int64_t ms) {
        struct timespec ts = {(time_t) (ms / 1000), (long) (ms % 1000) * 1000000L};

        nanosleep(&ts, NULL);
}
