/* SPDX-License-Identifier: MIT */
/*
 * sdlive-cluster: one elected leader among several instances sharing a
 * store. Standbys try to acquire the lease every election poll; the leader
 * renews it from a refresher thread, runs a fenced maintenance pass over the
 * store's inventory every maintenance interval, and goes back to standby the
 * moment its lease is lost. See docs/cluster.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sdlive.h>

#include "cli.h"
#include "coordinator_service.h"
#include "duration.h"
#include "election.h"
#include "fault.h"
#include "leader.h"
#include "lease.h"
#include "lease_record.h"
#include "log.h"
#include "monitor.h"
#include "release_after_death.h"
#include "store.h"
#include "supervision.h"
#include "tls.h"

#define LEASE_NAME "cluster"
/* The election loop must complete an attempt within this many polls. */
#define ELECTION_SILENCE_POLLS 3
/* A store call of the main loop waits at most this long for a lock. */
#define LOCK_TIMEOUT_MAX_USEC SDLIVE_USEC_PER_SEC
#define ALLOWED_UIDS_MAX 16
#define SEED_ATTEMPTS 10
#define SEED_RETRY_FIRST_USEC (100 * SDLIVE_USEC_PER_MSEC)
/* --release-after-death ends after this long whatever the store does. */
#define RELEASE_DEADLINE_SEC 5
/* After a term that could not run, the next election waits one lease
 * time (at least one election poll), doubling up to this. */
#define TERM_RETRY_MAX_USEC (60 * SDLIVE_USEC_PER_SEC)

typedef struct cluster_options {
        const char *store_url;             /* NULL: sqlite:$STATE_DIRECTORY/cluster.db */
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

static void usage(void) {
        printf("Usage: %s [OPTION]...\n"
               "Elect one leader among the instances sharing a store; the leader renews a\n"
               "lease, runs fenced maintenance passes over the store's inventory, and steps\n"
               "down as soon as the lease is lost.\n"
               "\n"
               "  --store URL                sqlite:PATH or postgresql:CONNINFO (default:\n"
               "                             $SDLIVE_STORE, else sqlite:$STATE_DIRECTORY/cluster.db)\n"
               "  --node NAME                this member's name (default: $SDLIVE_NODE, else\n"
               "                             <hostname>-<pid>)\n"
               "  --lease DUR                lease time (default 15s; 3ms to 1d), renewed\n"
               "                             every third\n"
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
               "                             (also $SDLIVE_SPIN_ELECTION_FILE)\n"
               "  -h, --help                 show this help and exit\n"
               "  -V, --version              show the version and exit\n"
               "\n"
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
               "  --job-window N             jobs in flight per worker (default 4; 1 to 64)\n"
               "  --job-run N                when elected and no run is unfinished, create a\n"
               "                             run of N jobs (1 to 2147483647)\n"
               "  --job-payload TEXT         what each job does: noop, checksum, spin USEC\n"
               "  --coordinator-tls-cert FILE  TCP through TLS 1.3: our certificate\n"
               "  --coordinator-tls-key FILE   its private key (mode 0600 or stricter)\n"
               "  --coordinator-tls-ca FILE    CA of the workers' client certificates; a\n"
               "                             worker's HELLO name must be its certificate's;\n"
               "                             relative FILEs are in $CREDENTIALS_DIRECTORY\n"
               "  --coordinator-tcp-insecure   TCP in the clear instead, on loopback only\n"
               "\n"
               "Exit status: 0 success or stopped by SIGTERM/SIGINT, 1 failure, 2 bad usage.\n",
               program_invocation_short_name);
}

/* Ranges of the options (docs/cluster.md). */
#define LEASE_MIN_USEC (3 * SDLIVE_USEC_PER_MSEC) /* renewed every third */
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
        bool tls = o->tls.cert || o->tls.key || o->tls.ca;
        struct address a;

        if (tls && !(o->tls.cert && o->tls.key && o->tls.ca))
                cli_usage_error("TLS needs all of --coordinator-tls-cert, --coordinator-tls-key and "
                                "--coordinator-tls-ca");
        if (tls && o->jobs.tcp_insecure)
                cli_usage_error("--coordinator-tcp-insecure contradicts the TLS options");
        if ((tls || o->jobs.tcp_insecure) && !o->jobs.tcp_address)
                cli_usage_error("%s: no --coordinator-tcp to use it with",
                                tls ? "--coordinator-tls-cert" : "--coordinator-tcp-insecure");
        if (!o->jobs.tcp_address || tls)
                return;
        if (!o->jobs.tcp_insecure)
                cli_usage_error("--coordinator-tcp: TCP needs --coordinator-tls-cert, --coordinator-tls-key "
                                "and --coordinator-tls-ca (or --coordinator-tcp-insecure on loopback)");
        if (address_parse(o->jobs.tcp_address, ADDRESS_ALLOW_TCP | ADDRESS_NUMERIC_HOST, &a, NULL) < 0 ||
            !address_is_loopback(&a))
                cli_usage_error("--coordinator-tcp-insecure: '%s' is not a loopback address",
                                o->jobs.tcp_address);
}

static void parse_options(int argc, char **argv, cluster_options *o) {
        enum {
                OPT_STORE = 0x100,
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
                OPT_TLS_CERT,
                OPT_TLS_KEY,
                OPT_TLS_CA,
                OPT_TCP_INSECURE,
        };
        static const struct option options[] = {
                { "store", required_argument, NULL, OPT_STORE },
                { "node", required_argument, NULL, OPT_NODE },
                { "lease", required_argument, NULL, OPT_LEASE },
                { "election-poll", required_argument, NULL, OPT_POLL },
                { "maintenance-interval", required_argument, NULL, OPT_INTERVAL },
                { "maintenance-rate", required_argument, NULL, OPT_RATE },
                { "health-gate", required_argument, NULL, OPT_HEALTH_GATE },
                { "seed-inventory", required_argument, NULL, OPT_SEED },
                { "inspect", no_argument, NULL, OPT_INSPECT },
                { "lease-record", required_argument, NULL, OPT_LEASE_RECORD },
                { "release-after-death", no_argument, NULL, OPT_RELEASE_AFTER_DEATH },
                { "wedge-file", required_argument, NULL, OPT_WEDGE_FILE },
                { "spin-election-file", required_argument, NULL, OPT_SPIN_FILE },
                { "coordinator-socket", required_argument, NULL, OPT_COORDINATOR_SOCKET },
                { "coordinator-tcp", required_argument, NULL, OPT_COORDINATOR_TCP },
                { "coordinator-allow-uid", required_argument, NULL, OPT_COORDINATOR_ALLOW_UID },
                { "worker-timeout", required_argument, NULL, OPT_WORKER_TIMEOUT },
                { "worker-heartbeat", required_argument, NULL, OPT_WORKER_HEARTBEAT },
                { "job-window", required_argument, NULL, OPT_JOB_WINDOW },
                { "job-run", required_argument, NULL, OPT_JOB_RUN },
                { "job-payload", required_argument, NULL, OPT_JOB_PAYLOAD },
                { "coordinator-tls-cert", required_argument, NULL, OPT_TLS_CERT },
                { "coordinator-tls-key", required_argument, NULL, OPT_TLS_KEY },
                { "coordinator-tls-ca", required_argument, NULL, OPT_TLS_CA },
                { "coordinator-tcp-insecure", no_argument, NULL, OPT_TCP_INSECURE },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        struct address address;
        int c;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hV", options, NULL)) >= 0) {
                switch (c) {
                case OPT_STORE:
                        o->store_url = cli_path("--store", optarg);
                        break;
                case OPT_NODE:
                        o->node = cli_text("--node", optarg, STORE_NAME_MAX);
                        break;
                case OPT_LEASE:
                        o->lease_usec = cli_duration_range("--lease", optarg, LEASE_MIN_USEC, LEASE_MAX_USEC);
                        break;
                case OPT_POLL:
                        o->poll_usec = cli_duration_range("--election-poll", optarg, 1, POLL_MAX_USEC);
                        break;
                case OPT_INTERVAL:
                        o->maintenance_interval_usec =
                                cli_duration_range("--maintenance-interval", optarg, 1, INTERVAL_MAX_USEC);
                        break;
                case OPT_RATE:
                        o->maintenance_rate = cli_number("--maintenance-rate", optarg, 0, RATE_MAX);
                        break;
                case OPT_HEALTH_GATE:
                        o->health_gate_usec = cli_duration_range("--health-gate", optarg, 0, LEASE_MAX_USEC);
                        o->health_gate_set = true;
                        break;
                case OPT_SEED:
                        o->seed = cli_number("--seed-inventory", optarg, 0, SEED_MAX);
                        break;
                case OPT_INSPECT:
                        o->inspect = true;
                        break;
                case OPT_LEASE_RECORD:
                        o->lease_record = optarg[0] ? cli_path("--lease-record", optarg) : optarg;
                        break;
                case OPT_RELEASE_AFTER_DEATH:
                        o->release_after_death = true;
                        break;
                case OPT_WEDGE_FILE:
                        o->wedge_file = cli_path("--wedge-file", optarg);
                        break;
                case OPT_SPIN_FILE:
                        o->spin_file = cli_path("--spin-election-file", optarg);
                        break;
                case OPT_COORDINATOR_SOCKET:
                        cli_address("--coordinator-socket", optarg, ADDRESS_ALLOW_UNIX, &address);
                        o->jobs.unix_path = optarg;
                        break;
                case OPT_COORDINATOR_TCP:
                        cli_address("--coordinator-tcp", optarg, ADDRESS_ALLOW_TCP | ADDRESS_NUMERIC_HOST,
                                    &address);
                        o->jobs.tcp_address = optarg;
                        break;
                case OPT_COORDINATOR_ALLOW_UID:
                        if (o->jobs.n_allowed_uids == ALLOWED_UIDS_MAX)
                                cli_usage_error("--coordinator-allow-uid: at most %d", ALLOWED_UIDS_MAX);
                        o->allowed_uids[o->jobs.n_allowed_uids++] =
                                (uid_t) cli_number("--coordinator-allow-uid", optarg, 0, UID_MAX_VALID);
                        break;
                case OPT_WORKER_TIMEOUT:
                        o->jobs.worker_timeout_usec =
                                cli_duration_range("--worker-timeout", optarg, 1, PEER_WINDOW_MAX_USEC);
                        break;
                case OPT_WORKER_HEARTBEAT:
                        o->jobs.heartbeat_usec =
                                cli_duration_range("--worker-heartbeat", optarg, 1, PEER_WINDOW_MAX_USEC);
                        break;
                case OPT_JOB_WINDOW:
                        o->jobs.window = (unsigned) cli_number("--job-window", optarg, 1, COORDINATOR_WINDOW_MAX);
                        break;
                case OPT_JOB_RUN:
                        o->jobs.run_jobs = (uint32_t) cli_number("--job-run", optarg, 1, INT32_MAX);
                        break;
                case OPT_JOB_PAYLOAD:
                        o->jobs.job_payload = cli_text("--job-payload", optarg, PAYLOAD_MAX);
                        break;
                case OPT_TLS_CERT:
                        o->tls.cert = cli_path("--coordinator-tls-cert", optarg);
                        break;
                case OPT_TLS_KEY:
                        o->tls.key = cli_path("--coordinator-tls-key", optarg);
                        break;
                case OPT_TLS_CA:
                        o->tls.ca = cli_path("--coordinator-tls-ca", optarg);
                        break;
                case OPT_TCP_INSECURE:
                        o->jobs.tcp_insecure = true;
                        break;
                default:
                        cli_common_option(c, argc, argv, usage);
                }
        }
        cli_no_operands(argc, argv);
        check_transport(o);
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

/* --inspect: for operators and shell tests. Read-only: it never takes the
 * write lock, sets up a schema or creates a file beside the store. */
static int inspect(const char *url) {
        struct store_log_summary summary;
        struct store_lease_info info;
        struct store *s = NULL;

        if (store_open_readonly(url, &s) < 0) {
                log_error("cannot open store %s: %s", url, store_errmsg(NULL));
                return EXIT_FAILURE;
        }
        if (store_lease_read(s, LEASE_NAME, &info) < 0 || store_log_summary(s, LEASE_NAME, &summary) < 0) {
                log_error("cannot read store %s: %s", url, store_errmsg(s));
                store_close(s);
                return EXIT_FAILURE;
        }
        printf("lease=%s held=%d holder=%s generation=%llu remaining_ms=%llu\n", LEASE_NAME, info.held,
               info.holder[0] ? info.holder : "-", (unsigned long long) info.generation,
               (unsigned long long) (info.remaining_usec / 1000));
        printf("log entries=%llu generations=%llu overlaps=%llu\n", (unsigned long long) summary.entries,
               (unsigned long long) summary.generations, (unsigned long long) summary.overlaps);
        store_close(s);
        return EXIT_SUCCESS;
}

static uint64_t min_u64(uint64_t a, uint64_t b) {
        return a < b ? a : b;
}

/* Seeding needs the store now: a store that is briefly unavailable (locked
 * by another member opening it, restarting) is retried with backoff, petting
 * meanwhile, for up to SEED_ATTEMPTS tries. */
static int seed(sdlive *d, struct store **s, const char *url, uint64_t lock_timeout_usec, uint64_t n) {
        uint64_t groups = n / 100 ? n / 100 : 1, delay = SEED_RETRY_FIRST_USEC;
        int r = 0;

        log_info("seeding the inventory: %llu blobs, %llu artifacts, %llu nodes", (unsigned long long) n,
                 (unsigned long long) groups, (unsigned long long) groups);
        for (unsigned attempt = 1; attempt <= SEED_ATTEMPTS; attempt++) {
                if (!*s && (r = store_open(url, s)) >= 0)
                        store_set_lock_timeout(*s, lock_timeout_usec);
                if (*s)
                        r = store_seed_inventory(*s, n, 10 * groups, groups);
                if (r >= 0 || store_error_class(r) != STORE_UNAVAILABLE)
                        break;
                if (sdlive_idle(d, delay) == SDLIVE_WAKE_STOP)
                        return -ECANCELED;
                delay = min_u64(2 * delay, SDLIVE_USEC_PER_SEC);
        }
        if (r < 0)
                log_error("cannot seed the inventory: %s", store_errmsg(*s));
        return r;
}

struct cluster {
        const cluster_options *o;
        sdlive *d;
        struct store *store;
        struct lease_config lease;
        sdlive_progress *election_progress;
        const fault_switch *wedge;
        uint64_t lock_timeout_usec;
        struct coordinator_service jobs;
        struct leader_service services[1];
        size_t n_services;
};

/* Leaves what --release-after-death needs should this process die while
 * leading. Without it a death is still safe: the lease then expires. */
static void record_lease(const struct cluster *c, uint64_t generation) {
        struct lease_record rec = { .generation = generation };
        int r;

        if (!c->o->lease_record)
                return;
        snprintf(rec.lease, sizeof(rec.lease), "%s", LEASE_NAME);
        snprintf(rec.holder, sizeof(rec.holder), "%s", c->o->node);
        snprintf(rec.invocation, sizeof(rec.invocation), "%s", lease_record_invocation());
        r = lease_record_write(c->o->lease_record, &rec);
        if (r < 0)
                log_warning("cannot write the lease record %s (a death will wait for the lease to expire): %s",
                            c->o->lease_record, strerror(-r));
}

/* One term of leadership, from a won election to the loss of the lease. */
static int lead_term(struct cluster *c, const struct election_result *won) {
        char store_id[STORE_ID_MAX + 1];
        struct lease_holder *h = NULL;
        struct leader_term term;
        int r, k;

        r = lease_holder_start(&c->lease, won->generation, won->acquired_at_usec, &h);
        if (r < 0) {
                log_error("cannot hold the lease: %s", strerror(-r));
                return r;
        }
        store_set_lock_timeout(c->store, c->lock_timeout_usec);
        /* The incarnation the lease was won in: no write of this term may
         * land in another. */
        snprintf(store_id, sizeof(store_id), "%s", store_identity(c->store));
        term = (struct leader_term) {
                .d = c->d,
                .store = c->store,
                .lease = h,
                .fence = { .lease = LEASE_NAME, .holder = c->o->node, .generation = won->generation,
                           .store_id = store_id },
                .maintenance_interval_usec = c->o->maintenance_interval_usec,
                .maintenance_rate = c->o->maintenance_rate,
                .wedge = c->wedge,
                .services = c->services,
                .n_services = c->n_services,
        };
        record_lease(c, won->generation);
        sdlive_progress_park(c->election_progress);
        r = leader_run(&term);
        lease_holder_stop(h, r == LEADER_STOPPED || r < 0);
        if (c->o->lease_record && (k = lease_record_remove(c->o->lease_record, won->generation)) < 0)
                log_warning("cannot remove the lease record %s: %s", c->o->lease_record, strerror(-k));
        sdlive_progress_beat(c->election_progress);
        return r;
}

static int run(struct cluster *c) {
        struct election e = {
                .d = c->d,
                .store = &c->store,
                .store_url = c->o->store_url,
                .lease_name = LEASE_NAME,
                .holder = c->o->node,
                .ttl_usec = c->o->lease_usec,
                .poll_usec = c->o->poll_usec,
                .lock_timeout_usec = c->lock_timeout_usec,
                .progress = c->election_progress,
                .spin_file = c->o->spin_file,
        };
        /* Our lease stays in the store until it expires: wait that long. */
        uint64_t first = c->o->lease_usec > c->o->poll_usec ? c->o->lease_usec : c->o->poll_usec;
        uint64_t backoff = first;

        for (;;) {
                char delay[DURATION_FORMAT_MAX];
                struct election_result won;
                int r;

                sdlive_notify_status(c->d, "standby: trying to acquire the lease");
                r = election_run(&e, &won);
                if (r < 0)
                        return EXIT_FAILURE;
                if (r == 0)
                        return EXIT_SUCCESS;
                r = lead_term(c, &won);
                if (r == LEADER_STOPPED)
                        return EXIT_SUCCESS;
                if (r >= 0) {
                        backoff = first;
                        continue;
                }
                /* A term that could not even run (no lease refresher, no
                 * epoll): stand down, longer each time, so the generation
                 * is not bumped at the election poll's pace. */
                duration_format(delay, sizeof(delay), backoff);
                log_warning("could not lead (%s): standing down for %s", strerror(-r), delay);
                sdlive_notify_status(c->d, "standby: could not lead (%s); next election attempt in %s",
                                     strerror(-r), delay);
                sdlive_progress_park(c->election_progress);
                r = sdlive_idle(c->d, backoff);
                sdlive_progress_beat(c->election_progress);
                if (r == SDLIVE_WAKE_STOP)
                        return EXIT_SUCCESS;
                backoff = min_u64(2 * backoff, TERM_RETRY_MAX_USEC > first ? TERM_RETRY_MAX_USEC : first);
        }
}


int main(int argc, char **argv) {
        cluster_options o = {
                .lease_usec = 15 * SDLIVE_USEC_PER_SEC,
                .poll_usec = 2 * SDLIVE_USEC_PER_SEC,
                .maintenance_interval_usec = 60 * SDLIVE_USEC_PER_SEC,
        };
        char t1[DURATION_FORMAT_MAX], t2[DURATION_FORMAT_MAX], t3[DURATION_FORMAT_MAX];
        struct cluster c = { .o = &o };
        uint64_t watchdog = 0;
        fault_switch wedge;
        monitor *m = NULL;
        SSL_CTX *tls_ctx = NULL;
        int r, status = EXIT_FAILURE;

        parse_options(argc, argv, &o);
        resolve_defaults(&o);
        if (o.inspect) {
                status = inspect(o.store_url);
                goto out;
        }
        if (o.release_after_death) {
                struct release_config rc = {
                        .store_url = o.store_url,
                        .lease = LEASE_NAME,
                        .node = o.node,
                        .record_path = o.lease_record,
                        .invocation = lease_record_invocation(),
                };
                enum release_outcome outcome;

                alarm(RELEASE_DEADLINE_SEC);
                outcome = release_after_death(&rc);
                status = outcome == RELEASE_DONE || outcome == RELEASE_NOTHING ? EXIT_SUCCESS : EXIT_FAILURE;
                goto out;
        }

        fault_switch_init(&wedge, "cluster main loop", o.wedge_file, "SDLIVE_WEDGE_FILE");
        c.wedge = &wedge;
        if (o.spin_file)
                log_notice("fault injection armed: the election loop spins once %s exists", o.spin_file);
        if (supervision_start(&c.d, SDLIVE_HANDLE_SIGNALS) < 0)
                return EXIT_FAILURE;
        if (monitor_start(&m, c.d) < 0)
                goto out;

        c.lock_timeout_usec = min_u64(LOCK_TIMEOUT_MAX_USEC, o.poll_usec);
        if (sdlive_watchdog_enabled(c.d, &watchdog) > 0)
                c.lock_timeout_usec = min_u64(c.lock_timeout_usec, watchdog / 4);
        if (!o.health_gate_set)
                o.health_gate_usec = watchdog / 2;
        else if (o.health_gate_usec > 0 && watchdog == 0)
                log_notice("--health-gate has no keepalives to watch (watchdog not armed): it stays open");

        r = store_open(o.store_url, &c.store);
        if (r < 0) {
                if (store_error_class(r) != STORE_UNAVAILABLE) {
                        log_error("cannot open store %s: %s", o.store_url, store_errmsg(NULL));
                        goto out;
                }
                log_warning("store %s unavailable at start (%s): will retry", o.store_url, store_errmsg(NULL));
        } else {
                store_set_lock_timeout(c.store, c.lock_timeout_usec);
        }
        if (o.seed > 0 && seed(c.d, &c.store, o.store_url, c.lock_timeout_usec, o.seed) < 0)
                goto out;

        c.lease = (struct lease_config) {
                .store_url = o.store_url,
                .name = LEASE_NAME,
                .holder = o.node,
                .ttl_usec = o.lease_usec,
                .health_stale_usec = o.health_gate_usec,
                .d = c.d,
        };
        if (o.tls.cert) {
                char why[512];
                if (tls_context_new(&o.tls, true, &tls_ctx, why, sizeof(why)) < 0) {
                        log_error("cannot load the coordinator's TLS credentials: %s", why);
                        goto out;
                }
                o.jobs.tls = tls_ctx;
        }
        if (o.jobs.unix_path || o.jobs.tcp_address) {
                o.jobs.store_url = o.store_url;
                o.jobs.allowed_uids = o.allowed_uids;
                c.jobs = (struct coordinator_service) { .config = o.jobs, .d = c.d };
                c.services[c.n_services++] = coordinator_service(&c.jobs);
        }
        r = sdlive_progress_register(c.d, "election", ELECTION_SILENCE_POLLS * o.poll_usec,
                                     &c.election_progress);
        if (r < 0) {
                log_error("cannot register the election loop: %s", strerror(-r));
                goto out;
        }

        log_info("node %s on %s store: lease %s, election poll %s, health gate %s", o.node,
                 c.store ? store_backend(c.store) : "an unreachable",
                 duration_format(t1, sizeof(t1), o.lease_usec), duration_format(t2, sizeof(t2), o.poll_usec),
                 o.health_gate_usec ? duration_format(t3, sizeof(t3), o.health_gate_usec) : "off");
        sdlive_notify_ready(c.d);

        status = run(&c);

        if (sdlive_stopping(c.d) > 0) {
                log_info("stop requested, exiting");
                sdlive_notify_stopping(c.d);
        }
out:
        sdlive_progress_unregister(c.election_progress);
        m = monitor_stop(m);
        store_close(c.store);
        sdlive_free(c.d);
        free(o.derived_url);
        free(o.derived_node);
        free(o.derived_record);
        SSL_CTX_free(tls_ctx);
        return status;
}
