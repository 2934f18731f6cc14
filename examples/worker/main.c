/* SPDX-License-Identifier: MIT */
/*
 * sdlive-worker: a periodic daemon. Its main loop waits for work while
 * petting (sdlive_wait_fd), hands each unit of work to the job-executor
 * thread (executor.c, a progress loop) and reports the results. Work comes
 * from a timer (timer.c), or with --coordinator from the cluster's job
 * coordinator (jobmode.c). This file holds the options and the set-up.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <sdlive.h>

#include "cli.h"
#include "duration.h"
#include "executor.h"
#include "fault.h"
#include "job.h"
#include "jobmode.h"
#include "log.h"
#include "monitor.h"
#include "supervision.h"
#include "timer.h"
#include "tls.h"

/* Ranges of the options (docs/daemons.md). */
#define INTERVAL_MAX_USEC (UINT64_C(7) * 24 * 3600 * SDLIVE_USEC_PER_SEC)
#define WINDOW_MAX_USEC (UINT64_C(24) * 3600 * SDLIVE_USEC_PER_SEC)
#define RECONNECT_MAX_USEC (UINT64_C(3600) * SDLIVE_USEC_PER_SEC)
#define IDENTITY_MAX 63

/* How long a stopping worker waits for the job in progress. */
#define EXECUTOR_STOP_TIMEOUT_USEC (200 * SDLIVE_USEC_PER_MSEC)

typedef struct worker_options {
        uint64_t interval_usec;
        uint64_t executor_max_silence_usec;
        bool progress_check;
        bool trigger_on_stall;
        const char *wedge_file;
        const char *hang_executor_file;
        jobmode_options jobs; /* jobs.link.n_addresses > 0: serve a coordinator */
        struct tls_files tls; /* all set: TCP through TLS */
} worker_options;

static void usage(void) {
        printf("Usage: %s [OPTION]...\n"
               "Run one short job per interval on a job-executor thread, petting the\n"
               "systemd watchdog from the main loop while the executor keeps moving.\n"
               "\n"
               "  --interval DUR               time between jobs (default 5s; up to 7d)\n"
               "  --executor-max-silence DUR   longest a job may run before keepalives are\n"
               "                               withheld (default 10s; up to 1d)\n"
               "  --no-progress-check          do not register the executor as a progress\n"
               "                               loop: a hung executor then goes unnoticed\n"
               "  --trigger-on-stall           send WATCHDOG=trigger as soon as the executor\n"
               "                               stalls instead of waiting out WatchdogSec\n"
               "  --wedge-file PATH            fault injection: when PATH exists the main loop\n"
               "                               hangs forever without petting (also\n"
               "                               $SDLIVE_WEDGE_FILE; off by default)\n"
               "  --hang-executor-file PATH    fault injection: when PATH exists the executor\n"
               "                               hangs in its next job while the main loop goes\n"
               "                               on petting (also $SDLIVE_HANG_EXECUTOR_FILE)\n"
               "\n"
               "Job mode: take jobs from the cluster's coordinator instead of the timer.\n"
               "  --coordinator ADDR           /PATH (unix socket), HOST:PORT or [IPV6]:PORT;\n"
               "                               repeat it to list every cluster node (at most\n"
               "                               8; only the leader listens)\n"
               "  --identity NAME              name in HELLO (default host-pid; 1 to 63 bytes)\n"
               "  --coordinator-timeout DUR    reconnect when the coordinator is silent this\n"
               "                               long (default 30s; up to 1d)\n"
               "  --heartbeat DUR              heartbeat interval, at most a third of the\n"
               "                               coordinator's worker timeout (default 10s;\n"
               "                               up to 1d)\n"
               "  --reconnect-max DUR          longest reconnect backoff (default 5s; up to 1h)\n"
               "  --tls-cert FILE              TCP through TLS 1.3: our client certificate; its\n"
               "                               name is the default --identity\n"
               "  --tls-key FILE               its private key (mode 0600 or stricter)\n"
               "  --tls-ca FILE                CA that signed the coordinator's certificate;\n"
               "                               relative FILEs are in $CREDENTIALS_DIRECTORY\n"
               "  --tcp-insecure               TCP in the clear instead, to loopback IPs only\n"
               "  --tls-handshake-timeout DUR  give up a TLS handshake not done in DUR (the\n"
               "                               loop waits for it; default 6s; 100ms to 1min)\n",
               program_invocation_short_name);
        cli_usage_help_version(29);
        printf(CLI_USAGE_DURATIONS_AND_EXIT);
}

/* TCP is through TLS (all three files) or, by explicit choice, in the
 * clear to loopback literals only; exits 2 otherwise. */
static void check_transport(const worker_options *o) {
        cli_check_transport(&(struct cli_transport) {
                .names = CLI_TLS_OPTION_NAMES("", "--coordinator"),
                .cert = o->tls.cert,
                .key = o->tls.key,
                .ca = o->tls.ca,
                .insecure = o->jobs.link.tcp_insecure,
                .handshake_timeout_usec = o->jobs.link.handshake_timeout_usec,
                .addresses = o->jobs.link.addresses,
                .n_addresses = o->jobs.link.n_addresses,
                .address_flags = ADDRESS_ALLOW_UNIX | ADDRESS_ALLOW_TCP,
        });
}

enum {
        OPT_INTERVAL = 0x100,
        OPT_EXECUTOR_MAX_SILENCE,
        OPT_NO_PROGRESS_CHECK,
        OPT_TRIGGER_ON_STALL,
        OPT_WEDGE_FILE,
        OPT_HANG_EXECUTOR_FILE,
        OPT_COORDINATOR,
        OPT_IDENTITY,
        OPT_COORDINATOR_TIMEOUT,
        OPT_HEARTBEAT,
        OPT_RECONNECT_MAX,
        OPT_TLS, /* CLI_TLS_OPTIONS_COUNT ids from here */
};

static const struct cli_option options[] = {
        { "interval", true, OPT_INTERVAL },
        { "executor-max-silence", true, OPT_EXECUTOR_MAX_SILENCE },
        { "no-progress-check", false, OPT_NO_PROGRESS_CHECK },
        { "trigger-on-stall", false, OPT_TRIGGER_ON_STALL },
        { "wedge-file", true, OPT_WEDGE_FILE },
        { "hang-executor-file", true, OPT_HANG_EXECUTOR_FILE },
        { "coordinator", true, OPT_COORDINATOR },
        { "identity", true, OPT_IDENTITY },
        { "coordinator-timeout", true, OPT_COORDINATOR_TIMEOUT },
        { "heartbeat", true, OPT_HEARTBEAT },
        { "reconnect-max", true, OPT_RECONNECT_MAX },
        CLI_TLS_OPTIONS("", OPT_TLS),
};

static void set_option(int id, const char *option, const char *value, void *userdata) {
        worker_options *o = userdata;
        struct address address;

        switch (id) {
        case OPT_INTERVAL:
                o->interval_usec = cli_duration_range(option, value, 1, INTERVAL_MAX_USEC);
                break;
        case OPT_EXECUTOR_MAX_SILENCE:
                o->executor_max_silence_usec = cli_duration_range(option, value, 1, WINDOW_MAX_USEC);
                break;
        case OPT_NO_PROGRESS_CHECK:
                o->progress_check = false;
                break;
        case OPT_TRIGGER_ON_STALL:
                o->trigger_on_stall = true;
                break;
        case OPT_WEDGE_FILE:
                o->wedge_file = cli_path(option, value);
                break;
        case OPT_HANG_EXECUTOR_FILE:
                o->hang_executor_file = cli_path(option, value);
                break;
        case OPT_COORDINATOR:
                if (o->jobs.link.n_addresses == COORDINATOR_LINK_ADDRESSES_MAX)
                        cli_usage_error("%s: at most %d addresses", option, COORDINATOR_LINK_ADDRESSES_MAX);
                cli_address(option, value, ADDRESS_ALLOW_UNIX | ADDRESS_ALLOW_TCP, &address);
                o->jobs.link.addresses[o->jobs.link.n_addresses++] = value;
                break;
        case OPT_IDENTITY:
                o->jobs.link.identity = cli_text(option, value, IDENTITY_MAX);
                break;
        case OPT_COORDINATOR_TIMEOUT:
                o->jobs.link.timeout_usec = cli_duration_range(option, value, 1, WINDOW_MAX_USEC);
                break;
        case OPT_HEARTBEAT:
                o->jobs.link.heartbeat_usec = cli_duration_range(option, value, 1, WINDOW_MAX_USEC);
                break;
        case OPT_RECONNECT_MAX:
                o->jobs.backoff_max_usec = cli_duration_range(option, value, 1, RECONNECT_MAX_USEC);
                break;
        default:
                cli_tls_option(id, OPT_TLS, option, value,
                               &(struct cli_tls_values) { &o->tls.cert, &o->tls.key, &o->tls.ca,
                                                          &o->jobs.link.tcp_insecure,
                                                          &o->jobs.link.handshake_timeout_usec });
                break;
        }
}

static void parse_options(int argc, char **argv, worker_options *o) {
        cli_parse(argc, argv, options, sizeof(options) / sizeof(options[0]), usage, set_option, o);
        check_transport(o);
}

int main(int argc, char **argv) {
        worker_options o = {
                .interval_usec = 5 * SDLIVE_USEC_PER_SEC,
                .executor_max_silence_usec = 10 * SDLIVE_USEC_PER_SEC,
                .progress_check = true,
        };
        char interval[DURATION_FORMAT_MAX], silence[DURATION_FORMAT_MAX];
        char identity[64];
        SSL_CTX *tls_ctx = NULL;
        fault_switch wedge, hang;
        sdlive *d = NULL;
        executor *e = NULL;
        monitor *m = NULL;
        int status;

        parse_options(argc, argv, &o);
        fault_switch_init(&wedge, "worker main loop", o.wedge_file, "SDLIVE_WEDGE_FILE");
        fault_switch_init(&hang, "job executor", o.hang_executor_file, "SDLIVE_HANG_EXECUTOR_FILE");

        if (supervision_start(&d, SDLIVE_HANDLE_SIGNALS |
                                    (o.trigger_on_stall ? SDLIVE_TRIGGER_ON_STALL : 0)) < 0)
                return EXIT_FAILURE;
        if (o.tls.cert) {
                char why[512];
                if (tls_context_new(&o.tls, false, &tls_ctx, why, sizeof(why)) < 0) {
                        log_error("cannot load the TLS credentials: %s", why);
                        sdlive_free(d);
                        return EXIT_FAILURE;
                }
                o.jobs.link.tls = tls_ctx;
                /* The coordinator only takes the name the certificate proves. */
                if (!o.jobs.link.identity && tls_own_name(tls_ctx, identity, sizeof(identity))[0])
                        o.jobs.link.identity = identity;
        }
        if (o.jobs.link.n_addresses && !o.jobs.link.identity) {
                char host[32] = "worker";
                (void) gethostname(host, sizeof(host) - 1);
                snprintf(identity, sizeof(identity), "%s-%d", host, (int) getpid());
                o.jobs.link.identity = identity;
        }
        if (executor_start(&e, d, o.jobs.link.n_addresses ? job_run : job_checksum,
                           o.progress_check ? o.executor_max_silence_usec : 0, &hang) < 0) {
                sdlive_free(d);
                SSL_CTX_free(tls_ctx);
                return EXIT_FAILURE;
        }
        if (monitor_start(&m, d) < 0) {
                executor_stop(e, EXECUTOR_STOP_TIMEOUT_USEC);
                sdlive_free(d);
                SSL_CTX_free(tls_ctx);
                return EXIT_FAILURE;
        }

        duration_format(interval, sizeof(interval), o.interval_usec);
        duration_format(silence, sizeof(silence), o.executor_max_silence_usec);
        if (o.jobs.link.n_addresses)
                log_info("serving the coordinator as %s (%zu address(es)); executor %s", o.jobs.link.identity,
                         o.jobs.link.n_addresses, o.progress_check ? "registered as progress loop" : "NOT registered");
        else if (o.progress_check)
                log_info("one job every %s; executor registered as progress loop (max silence %s)",
                         interval, silence);
        else
                log_info("one job every %s; executor NOT registered as a progress loop", interval);
        sdlive_notify_status(d, "waiting for the first job");
        sdlive_notify_ready(d);

        if (o.jobs.link.n_addresses)
                status = jobmode_run(d, e, &wedge, &o.jobs);
        else
                status = timer_run(d, e, &wedge, o.interval_usec);

        if (sdlive_stopping(d) > 0) {
                log_info("stop requested, exiting");
                sdlive_notify_stopping(d);
        }
        m = monitor_stop(m);
        if (executor_stop(e, EXECUTOR_STOP_TIMEOUT_USEC) < 0) {
                /* The hung thread may still hold the handle: leave both to exit(). */
                log_warning("executor is hung in a job; exiting without waiting for it");
                return status;
        }
        sdlive_free(d);
        SSL_CTX_free(tls_ctx);
        return status;
}
