/* SPDX-License-Identifier: MIT */
/*
 * The cluster daemon's options: --help, parsing and range checks (through
 * the daemons' common cli.h), the transport rules of the job coordinator's
 * listeners, and the defaults derived from the environment.
 */
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sdlive.h>

#include "address.h"
#include "cli.h"
#if SDLIVE_CLUSTER_ETCD
#include "etcd_lease.h"
#endif
#include "lease_record.h"
#include "log.h"
#include "store.h"

static void usage(void) {
        printf("Usage: %s [OPTION]...\n"
               "Elect one leader among the instances sharing a store; the leader renews a\n"
               "lease, runs fenced maintenance passes over the store's inventory, and steps\n"
               "down as soon as the lease is lost.\n"
               "\n"
               "  --store URL                sqlite:PATH or postgresql:CONNINFO (default:\n"
               "                             $SDLIVE_STORE, else sqlite:$STATE_DIRECTORY/cluster.db)\n"
               "  --lease-store etcd:URL,... hold the lease in etcd (at most 8 endpoints,\n"
               "                             http://HOST:PORT or https://), fencing the store's\n"
               "                             writes by its token (default: $SDLIVE_LEASE_STORE,\n"
               "                             else the lease is the store's own)\n"
               "  --node NAME                this member's name (default: $SDLIVE_NODE, else\n"
               "                             <hostname>-<pid>)\n"
               "  --lease DUR                lease time (default 15s; 3ms to 1d, whole seconds\n"
               "                             with etcd), renewed every sixth\n"
               "  --election-poll DUR        longest pause between election attempts (default\n"
               "                             2s; up to 1h); an announced release wakes at once\n"
               "  --lease-record PATH        where the leader records the lease it holds, for\n"
               "                             --release-after-death (default:\n"
               "                             $STATE_DIRECTORY/NODE.lease; \"\": none)\n"
               "  --release-after-death      release the lease recorded by this node's dead\n"
               "                             leader process (ExecStopPost=), then exit\n"
               "  --maintenance-interval DUR time between maintenance passes (default 60s;\n"
               "                             up to 7d)\n"
               "  --maintenance-rate N       make at most N maintenance writes per second\n"
               "                             (default 0: unlimited; up to 1000000); the pacing\n"
               "                             sleeps pet\n"
               "  --health-gate DUR          stop renewing the lease once the main loop has not\n"
               "                             petted for DUR (default: WatchdogSec/2 when the\n"
               "                             watchdog is armed; 0: off; up to 1d)\n"
               "  --seed-inventory N         first add N blobs, N/100 artifacts (10 versions\n"
               "                             each) and N/100 nodes to the store (idempotent;\n"
               "                             up to 10000000)\n"
               "  --inspect                  print the lease and the write-log summary, exit\n"
               "                             (read-only: takes no lock, creates nothing)\n"
               "  --wedge-file PATH          fault injection: when PATH exists the main loop\n"
               "                             hangs without petting while the lease refresher\n"
               "                             runs on (also $SDLIVE_WEDGE_FILE)\n"
               "  --spin-election-file PATH  fault injection: when PATH exists the election loop\n"
               "                             keeps idling and petting but stops attempting\n"
               "                             (also $SDLIVE_SPIN_ELECTION_FILE)\n",
               program_invocation_short_name);
        cli_usage_help_version(27);
        printf("\n"
               "DUR is a whole number with a unit: 500ms, 2s, 1min; bare numbers are seconds.\n"
               "Every value is checked against its range at start; names and paths take no\n"
               "control characters.\n"
               "Job coordinator (runs while this node leads; docs/jobs.md):\n"
               "  --coordinator-socket PATH  serve workers on this unix socket (absolute, at\n"
               "                             most 107 bytes)\n"
               "  --coordinator-tcp IP:PORT  also serve workers over TCP, [IPV6]:PORT for IPv6\n"
               "                             (TLS with client certificates, see below)\n"
               "  --coordinator-allow-uid UID  unix peers allowed besides root and our uid\n"
               "                             (at most 16)\n"
               "  --worker-timeout DUR       reap a worker silent this long (default 30s;\n"
               "                             up to 1d)\n"
               "  --worker-heartbeat DUR     heartbeat to workers (default 10s; up to 1d)\n"
               "  --job-window N             jobs in flight per worker (default 16; 1 to 64)\n"
               "  --job-run N                when elected and no run is unfinished, create a\n"
               "                             run of N jobs (1 to 2147483647)\n"
               "  --job-payload TEXT         what each job does: noop, checksum, spin USEC\n"
               "  --coordinator-tls-cert FILE  TCP through TLS 1.3: our certificate\n"
               "  --coordinator-tls-key FILE   its private key (mode 0600 or stricter)\n"
               "  --coordinator-tls-ca FILE    CA of the workers' client certificates; a\n"
               "                             worker's HELLO name must be its certificate's;\n"
               "                             relative FILEs are in $CREDENTIALS_DIRECTORY\n"
               "  --coordinator-tcp-insecure   TCP in the clear instead, on loopback only\n"
               "  --coordinator-tls-handshake-timeout DUR  cut a TLS handshake not done in\n"
               "                             DUR, freeing its place among the 64 (16 per\n"
               "                             source) for unauthenticated peers (default 6s,\n"
               "                             at most the worker timeout; 100ms to 1min)\n"
               "\n"
               "Exit status: 0 success or stopped by SIGTERM/SIGINT, 1 failure, 2 bad usage.\n");
}

/* Ranges of the options (docs/cluster.md). */
#define LEASE_MIN_USEC (3 * SDLIVE_USEC_PER_MSEC) /* renewed every sixth: every 500 us */
#define LEASE_MAX_USEC (UINT64_C(24) * 3600 * SDLIVE_USEC_PER_SEC)
#define POLL_MAX_USEC (UINT64_C(3600) * SDLIVE_USEC_PER_SEC)
#define INTERVAL_MAX_USEC (UINT64_C(7) * 24 * 3600 * SDLIVE_USEC_PER_SEC)
#define PEER_WINDOW_MAX_USEC (UINT64_C(24) * 3600 * SDLIVE_USEC_PER_SEC)
#define RATE_MAX 1000000
#define SEED_MAX 10000000
#define UID_MAX_VALID (UINT32_MAX - 1) /* (uid_t) -1 means "no uid" */
#define PAYLOAD_MAX 255

/* The TCP listener is TLS (all three files) or, by explicit choice, in
 * the clear on a loopback address only; exits 2 otherwise. */
static void check_transport(const cluster_options *o) {
        cli_check_transport(&(struct cli_transport) {
                .names = CLI_TLS_OPTION_NAMES("coordinator-", "--coordinator-tcp"),
                .cert = o->tls.cert,
                .key = o->tls.key,
                .ca = o->tls.ca,
                .insecure = o->jobs.tcp_insecure,
                .handshake_timeout_usec = o->jobs.handshake_timeout_usec,
                .addresses = &o->jobs.tcp_address,
                .n_addresses = o->jobs.tcp_address ? 1 : 0,
                .address_flags = ADDRESS_ALLOW_TCP | ADDRESS_NUMERIC_HOST,
        });
}

enum {
        OPT_STORE = 0x100,
        OPT_LEASE_STORE,
        OPT_NODE,
        OPT_LEASE,
        OPT_POLL,
        OPT_INTERVAL,
        OPT_RATE,
        OPT_HEALTH_GATE,
        OPT_SEED,
        OPT_INSPECT,
        OPT_LEASE_RECORD,
        OPT_RELEASE_AFTER_DEATH,
        OPT_WEDGE_FILE,
        OPT_SPIN_FILE,
        OPT_COORDINATOR_SOCKET,
        OPT_COORDINATOR_TCP,
        OPT_COORDINATOR_ALLOW_UID,
        OPT_WORKER_TIMEOUT,
        OPT_WORKER_HEARTBEAT,
        OPT_JOB_WINDOW,
        OPT_JOB_RUN,
        OPT_JOB_PAYLOAD,
        OPT_TLS, /* CLI_TLS_OPTIONS_COUNT ids from here: keep it last */
};

static const struct cli_option options[] = {
        { "store", true, OPT_STORE },
        { "lease-store", true, OPT_LEASE_STORE },
        { "node", true, OPT_NODE },
        { "lease", true, OPT_LEASE },
        { "election-poll", true, OPT_POLL },
        { "maintenance-interval", true, OPT_INTERVAL },
        { "maintenance-rate", true, OPT_RATE },
        { "health-gate", true, OPT_HEALTH_GATE },
        { "seed-inventory", true, OPT_SEED },
        { "inspect", false, OPT_INSPECT },
        { "lease-record", true, OPT_LEASE_RECORD },
        { "release-after-death", false, OPT_RELEASE_AFTER_DEATH },
        { "wedge-file", true, OPT_WEDGE_FILE },
        { "spin-election-file", true, OPT_SPIN_FILE },
        { "coordinator-socket", true, OPT_COORDINATOR_SOCKET },
        { "coordinator-tcp", true, OPT_COORDINATOR_TCP },
        { "coordinator-allow-uid", true, OPT_COORDINATOR_ALLOW_UID },
        { "worker-timeout", true, OPT_WORKER_TIMEOUT },
        { "worker-heartbeat", true, OPT_WORKER_HEARTBEAT },
        { "job-window", true, OPT_JOB_WINDOW },
        { "job-run", true, OPT_JOB_RUN },
        { "job-payload", true, OPT_JOB_PAYLOAD },
        CLI_TLS_OPTIONS("coordinator-", OPT_TLS),
};

/* "etcd:URL,URL,...": the endpoints, checked as the client will take
 * them (at most ETCD_ENDPOINTS_MAX http:// or https:// URLs). Exits 2
 * with the reason otherwise. */
static const char *lease_store(const char *option, const char *value) {
        const char *endpoints;

        cli_text(option, value, 4096);
        if (strncmp(value, "etcd:", 5) != 0)
                cli_usage_error("%s: \"%s\" is not etcd:URL,... (without it the lease is the store's own)", option,
                                value);
        endpoints = value + 5;
#if SDLIVE_CLUSTER_ETCD
        struct etcd_client *probe = NULL;

        if (etcd_client_open(endpoints, &probe) < 0)
                cli_usage_error("%s: %s", option, etcd_errmsg(NULL));
        etcd_client_close(probe);
#else
        cli_usage_error("%s: this build has no etcd client (libcurl and json-c were not found)", option);
#endif
        return endpoints;
}

static void set_option(int id, const char *option, const char *value, void *userdata) {
        cluster_options *o = userdata;
        struct address address;

        switch (id) {
        case OPT_STORE:
                o->store_url = cli_path(option, value);
                break;
        case OPT_LEASE_STORE:
                o->etcd_endpoints = lease_store(option, value);
                break;
        case OPT_NODE:
                o->node = cli_text(option, value, STORE_NAME_MAX);
                break;
        case OPT_LEASE:
                o->lease_usec = cli_duration_range(option, value, LEASE_MIN_USEC, LEASE_MAX_USEC);
                break;
        case OPT_POLL:
                o->poll_usec = cli_duration_range(option, value, 1, POLL_MAX_USEC);
                break;
        case OPT_INTERVAL:
                o->maintenance_interval_usec = cli_duration_range(option, value, 1, INTERVAL_MAX_USEC);
                break;
        case OPT_RATE:
                o->maintenance_rate = cli_number(option, value, 0, RATE_MAX);
                break;
        case OPT_HEALTH_GATE:
                o->health_gate_usec = cli_duration_range(option, value, 0, LEASE_MAX_USEC);
                o->health_gate_set = true;
                break;
        case OPT_SEED:
                o->seed = cli_number(option, value, 0, SEED_MAX);
                break;
        case OPT_INSPECT:
                o->inspect = true;
                break;
        case OPT_LEASE_RECORD:
                o->lease_record = value[0] ? cli_path(option, value) : value;
                break;
        case OPT_RELEASE_AFTER_DEATH:
                o->release_after_death = true;
                break;
        case OPT_WEDGE_FILE:
                o->wedge_file = cli_path(option, value);
                break;
        case OPT_SPIN_FILE:
                o->spin_file = cli_path(option, value);
                break;
        case OPT_COORDINATOR_SOCKET:
                cli_address(option, value, ADDRESS_ALLOW_UNIX, &address);
                o->jobs.unix_path = value;
                break;
        case OPT_COORDINATOR_TCP:
                cli_address(option, value, ADDRESS_ALLOW_TCP | ADDRESS_NUMERIC_HOST, &address);
                o->jobs.tcp_address = value;
                break;
        case OPT_COORDINATOR_ALLOW_UID:
                if (o->jobs.n_allowed_uids == ALLOWED_UIDS_MAX)
                        cli_usage_error("%s: at most %d", option, ALLOWED_UIDS_MAX);
                o->allowed_uids[o->jobs.n_allowed_uids++] = (uid_t) cli_number(option, value, 0, UID_MAX_VALID);
                break;
        case OPT_WORKER_TIMEOUT:
                o->jobs.worker_timeout_usec = cli_duration_range(option, value, 1, PEER_WINDOW_MAX_USEC);
                break;
        case OPT_WORKER_HEARTBEAT:
                o->jobs.heartbeat_usec = cli_duration_range(option, value, 1, PEER_WINDOW_MAX_USEC);
                break;
        case OPT_JOB_WINDOW:
                o->jobs.window = (unsigned) cli_number(option, value, 1, COORDINATOR_WINDOW_MAX);
                break;
        case OPT_JOB_RUN:
                o->jobs.run_jobs = (uint32_t) cli_number(option, value, 1, INT32_MAX);
                break;
        case OPT_JOB_PAYLOAD:
                o->jobs.job_payload = cli_text(option, value, PAYLOAD_MAX);
                break;
        default:
                cli_tls_option(id, OPT_TLS, option, value,
                               &(struct cli_tls_values) { &o->tls.cert, &o->tls.key, &o->tls.ca,
                                                          &o->jobs.tcp_insecure,
                                                          &o->jobs.handshake_timeout_usec });
                break;
        }
}

/* Fills in the defaults that depend on the environment. Exits 2 when
 * something cannot be derived. Derived strings are owned by o. */
static void resolve_defaults(cluster_options *o) {
        char host[256] = "", *url, *state_dir;
        const char *env = getenv("SDLIVE_NODE");

        if (!o->store_url && (url = getenv("SDLIVE_STORE")) && url[0])
                o->store_url = cli_path("$SDLIVE_STORE", url);
        if (!o->store_url) {
                state_dir = cli_systemd_dir("STATE_DIRECTORY");
                if (!state_dir)
                        cli_usage_error("no store: pass --store or run with StateDirectory=");
                if (asprintf(&url, "sqlite:%s/cluster.db", state_dir) < 0) {
                        log_error("out of memory");
                        exit(EXIT_FAILURE);
                }
                free(state_dir);
                o->store_url = o->derived_url = url;
        }
        if (!o->etcd_endpoints && (url = getenv("SDLIVE_LEASE_STORE")) && url[0])
                o->etcd_endpoints = lease_store("$SDLIVE_LEASE_STORE", url);
        if (o->etcd_endpoints && (o->lease_usec % SDLIVE_USEC_PER_SEC != 0 || o->lease_usec == 0))
                cli_usage_error("--lease: with the lease in etcd a whole number of seconds (etcd's TTLs are)");
        if (!o->node && env && env[0])
                o->node = env;
        if (!o->node) {
                char *node;

                if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
                        snprintf(host, sizeof(host), "localhost");
                if (asprintf(&node, "%s-%ld", host, (long) getpid()) < 0) {
                        log_error("out of memory");
                        exit(EXIT_FAILURE);
                }
                o->node = o->derived_node = node;
        }
        /* $SDLIVE_NODE and the host name are checked like --node. */
        cli_text("the node name", o->node, STORE_NAME_MAX);
        if (!o->lease_record) {
                char *dir = cli_systemd_dir("STATE_DIRECTORY");

                if (dir && lease_record_path(dir, o->node, &o->derived_record) < 0)
                        log_warning("node name %s cannot name a lease record file: "
                                    "no release after death", o->node);
                free(dir);
                o->lease_record = o->derived_record;
        }
        if (o->lease_record && !o->lease_record[0])
                o->lease_record = NULL;
        if (o->release_after_death && !o->lease_record)
                cli_usage_error("--release-after-death: no lease record (pass --lease-record or run "
                                "with StateDirectory=)");
        if (!o->spin_file || !o->spin_file[0])
                o->spin_file = getenv("SDLIVE_SPIN_ELECTION_FILE");
        if (o->spin_file && !o->spin_file[0])
                o->spin_file = NULL;
        /* Fault injection of the job path: docs/jobs.md. */
        o->jobs.pause_batch_file = getenv("SDLIVE_PAUSE_BATCH_FILE");
        if (o->jobs.pause_batch_file && !o->jobs.pause_batch_file[0])
                o->jobs.pause_batch_file = NULL;
        if (o->jobs.pause_batch_file)
                o->jobs.pause_batch_file = cli_path("$SDLIVE_PAUSE_BATCH_FILE", o->jobs.pause_batch_file);
}

void cluster_options_parse(int argc, char **argv, cluster_options *o) {
        cli_parse(argc, argv, options, sizeof(options) / sizeof(options[0]), usage, set_option, o);
        check_transport(o);
        resolve_defaults(o);
}

void cluster_options_free(cluster_options *o) {
        free(o->derived_url);
        free(o->derived_node);
        free(o->derived_record);
}
