/* SPDX-License-Identifier: MIT */
/*
 * sdlive-leader-example: the leader pattern of leading.c as a daemon. Run
 * it on several nodes against one store: one leads, the others stand by,
 * and a leader that wedges loses its lease to a standby within the
 * health gate, before the watchdog kills it. This file holds the options
 * and the set-up; --seed-nodes, --checkin and --inspect are what a
 * demonstration or a test needs around it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <sdlive.h>

#include "cli.h"
#include "fault.h"
#include "leading.h"
#include "log.h"
#include "printable.h"
#include "supervision.h"

#define DURATION_MAX_USEC (UINT64_C(24) * 3600 * SDLIVE_USEC_PER_SEC)
#define SEED_MAX 100000

struct options {
        const char *store_url;
        const char *holder;
        uint64_t ttl_usec, poll_usec, pass_interval_usec, stale_after_usec, health_gate_usec;
        uint64_t seed_nodes;
        const char *checkin;
        const char *wedge_file;
        bool health_gate_set, inspect;
};

static void usage(void) {
        printf("Usage: %s --store URL --node NAME [OPTION]...\n"
               "Contend for a lease with the other nodes of the store; the holder marks\n"
               "nodes that stopped checking in as missing, one fenced write per node.\n"
               "\n"
               "  --store URL           sqlite:PATH or postgresql:CONNINFO\n"
               "  --node NAME           this node's name, the lease's holder\n"
               "  --lease DUR           the lease's time to live (default 3s)\n"
               "  --poll DUR            a standby's time between attempts (default 500ms)\n"
               "  --pass-interval DUR   a leader's time between passes (default 1s)\n"
               "  --stale-after DUR     a node silent this long is missing (default 5s)\n"
               "  --health-gate DUR     give the lease back when the loop has not petted\n"
               "                        for DUR (default: half of WatchdogSec; 0: off)\n"
               "  --wedge-file PATH     fault injection: when PATH exists the pass hangs\n"
               "  --seed-nodes N        add nodes node-00001..N first (every fourth silent)\n"
               "  --checkin NAME        check node NAME in and exit\n"
               "  --inspect             print the lease and its write log, and exit\n",
               program_invocation_short_name);
        cli_usage_help_version(22);
        printf(CLI_USAGE_DURATIONS_AND_EXIT);
}

enum { OPT_STORE = 0x100, OPT_NODE, OPT_LEASE, OPT_POLL, OPT_PASS, OPT_STALE, OPT_GATE, OPT_WEDGE,
       OPT_SEED, OPT_CHECKIN, OPT_INSPECT };

static const struct cli_option options[] = {
        { "store", true, OPT_STORE },          { "node", true, OPT_NODE },
        { "lease", true, OPT_LEASE },          { "poll", true, OPT_POLL },
        { "pass-interval", true, OPT_PASS },   { "stale-after", true, OPT_STALE },
        { "health-gate", true, OPT_GATE },     { "wedge-file", true, OPT_WEDGE },
        { "seed-nodes", true, OPT_SEED },      { "checkin", true, OPT_CHECKIN },
        { "inspect", false, OPT_INSPECT },
};

static void set_option(int id, const char *option, const char *value, void *userdata) {
        struct options *o = userdata;

        switch (id) {
        case OPT_STORE: o->store_url = cli_path(option, value); break;
        case OPT_NODE: o->holder = cli_text(option, value, STORE_NAME_MAX); break;
        case OPT_LEASE: o->ttl_usec = cli_duration_range(option, value, SDLIVE_USEC_PER_SEC, DURATION_MAX_USEC); break;
        case OPT_POLL: o->poll_usec = cli_duration_range(option, value, 1, DURATION_MAX_USEC); break;
        case OPT_PASS: o->pass_interval_usec = cli_duration_range(option, value, 1, DURATION_MAX_USEC); break;
        case OPT_STALE: o->stale_after_usec = cli_duration_range(option, value, 0, DURATION_MAX_USEC); break;
        case OPT_GATE:
                o->health_gate_usec = cli_duration_range(option, value, 0, DURATION_MAX_USEC);
                o->health_gate_set = true;
                break;
        case OPT_WEDGE: o->wedge_file = cli_path(option, value); break;
        case OPT_SEED: o->seed_nodes = cli_number(option, value, 1, SEED_MAX); break;
        case OPT_CHECKIN: o->checkin = cli_text(option, value, STORE_NAME_MAX); break;
        case OPT_INSPECT: o->inspect = true; break;
        }
}

/* --inspect: one line a test or an operator can read. The holder comes
 * from the store, where anyone who may write the file can put anything:
 * it is printed escaped. */
static int inspect(struct store *s) {
        char holder[PRINTABLE_SIZE(STORE_NAME_MAX)];
        struct store_lease_info lease;
        struct store_log_summary log;

        if (store_lease_read(s, LEADING_LEASE_NAME, &lease) < 0 ||
            store_log_summary(s, LEADING_LEASE_NAME, &log) < 0) {
                log_error("cannot read the lease: %s", store_errmsg(s));
                return EXIT_FAILURE;
        }
        printf("holder=%s generation=%" PRIu64 " held=%d writes=%" PRIu64 " generations=%" PRIu64
               " overlaps=%" PRIu64 "\n", lease.held ? printable(lease.holder, holder, sizeof(holder)) : "-",
               lease.generation, lease.held,
               log.entries, log.generations, log.overlaps);
        return EXIT_SUCCESS;
}

int main(int argc, char **argv) {
        struct options o = {
                .ttl_usec = 3 * SDLIVE_USEC_PER_SEC,
                .poll_usec = 500 * SDLIVE_USEC_PER_MSEC,
                .pass_interval_usec = SDLIVE_USEC_PER_SEC,
                .stale_after_usec = 5 * SDLIVE_USEC_PER_SEC,
        };
        struct leading_config c = { 0 };
        struct store *s = NULL;
        fault_switch wedge;
        uint64_t watchdog_usec = 0;
        int status = EXIT_FAILURE;

        cli_parse(argc, argv, options, sizeof(options) / sizeof(options[0]), usage, set_option, &o);
        if (!o.store_url)
                cli_usage_error("--store is required");
        if (!o.holder && !o.checkin && !o.inspect)
                cli_usage_error("--node is required");
        if (store_open(o.store_url, &s) < 0) {
                log_error("cannot open store %s: %s", o.store_url, store_errmsg(NULL));
                return EXIT_FAILURE;
        }
        if (o.inspect) {
                status = inspect(s);
                goto out;
        }
        if (o.checkin) {
                status = store_node_checkin(s, o.checkin) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
                if (status != EXIT_SUCCESS)
                        log_error("cannot check %s in: %s", o.checkin, store_errmsg(s));
                goto out;
        }
        if (o.seed_nodes > 0 && store_seed_inventory(s, 0, 0, o.seed_nodes) < 0) {
                log_error("cannot add the nodes: %s", store_errmsg(s));
                goto out;
        }
        fault_switch_init(&wedge, "leader's pass", o.wedge_file, "SDLIVE_WEDGE_FILE");
        if (supervision_start(&c.d, SDLIVE_HANDLE_SIGNALS) < 0)
                goto out;
        (void) sdlive_watchdog_enabled(c.d, &watchdog_usec);
        c.store = s;
        c.store_url = o.store_url;
        c.holder = o.holder;
        c.ttl_usec = o.ttl_usec;
        c.poll_usec = o.poll_usec;
        c.pass_interval_usec = o.pass_interval_usec;
        c.stale_after_usec = o.stale_after_usec;
        c.health_stale_usec = o.health_gate_set ? o.health_gate_usec : watchdog_usec / 2;
        c.wedge = &wedge;

        sdlive_notify_status(c.d, "standby: first attempt");
        sdlive_notify_ready(c.d);
        status = leading_run(&c);
        sdlive_notify_stopping(c.d);
        c.d = sdlive_free(c.d);
out:
        store_close(s);
        return status;
}
