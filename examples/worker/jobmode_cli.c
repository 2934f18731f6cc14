/* SPDX-License-Identifier: MIT */
/* The worker's job-mode options and their set-up (jobmode_cli.h). */
#include "jobmode_cli.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "jobmode.h"
#include "log.h"
#include "tls.h"

#define WINDOW_MAX_USEC (UINT64_C(24) * 3600 * SDLIVE_USEC_PER_SEC)
#define RECONNECT_MAX_USEC (UINT64_C(3600) * SDLIVE_USEC_PER_SEC)
#define IDENTITY_MAX 63

static struct {
        jobmode_options jobs; /* jobs.link.n_addresses > 0: serve a coordinator */
        struct tls_files tls; /* all set: TCP through TLS */
        SSL_CTX *tls_ctx;
        char identity[IDENTITY_MAX + 1];
} jm;

enum {
        OPT_COORDINATOR = JOBMODE_OPTION_FIRST,
        OPT_IDENTITY,
        OPT_COORDINATOR_TIMEOUT,
        OPT_HEARTBEAT,
        OPT_RECONNECT_MAX,
        OPT_TLS, /* CLI_TLS_OPTIONS_COUNT ids from here */
};

static const struct cli_option options[] = {
        { "coordinator", true, OPT_COORDINATOR },
        { "identity", true, OPT_IDENTITY },
        { "coordinator-timeout", true, OPT_COORDINATOR_TIMEOUT },
        { "heartbeat", true, OPT_HEARTBEAT },
        { "reconnect-max", true, OPT_RECONNECT_MAX },
        CLI_TLS_OPTIONS("", OPT_TLS),
};
const struct cli_option *const jobmode_cli_options = options;
const size_t jobmode_cli_n_options = sizeof(options) / sizeof(options[0]);

void jobmode_cli_usage(void) {
        printf("Job mode: take jobs from the cluster's coordinator instead of the timer.\n"
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
               "                               loop waits for it; default 6s; 100ms to 1min)\n");
}

void jobmode_cli_option(int id, const char *option, const char *value) {
        struct address address;

        switch (id) {
        case OPT_COORDINATOR:
                if (jm.jobs.link.n_addresses == COORDINATOR_LINK_ADDRESSES_MAX)
                        cli_usage_error("%s: at most %d addresses", option, COORDINATOR_LINK_ADDRESSES_MAX);
                cli_address(option, value, ADDRESS_ALLOW_UNIX | ADDRESS_ALLOW_TCP, &address);
                jm.jobs.link.addresses[jm.jobs.link.n_addresses++] = value;
                break;
        case OPT_IDENTITY:
                jm.jobs.link.identity = cli_text(option, value, IDENTITY_MAX);
                break;
        case OPT_COORDINATOR_TIMEOUT:
                jm.jobs.link.timeout_usec = cli_duration_range(option, value, 1, WINDOW_MAX_USEC);
                break;
        case OPT_HEARTBEAT:
                jm.jobs.link.heartbeat_usec = cli_duration_range(option, value, 1, WINDOW_MAX_USEC);
                break;
        case OPT_RECONNECT_MAX:
                jm.jobs.backoff_max_usec = cli_duration_range(option, value, 1, RECONNECT_MAX_USEC);
                break;
        default:
                cli_tls_option(id, OPT_TLS, option, value,
                               &(struct cli_tls_values) { &jm.tls.cert, &jm.tls.key, &jm.tls.ca,
                                                          &jm.jobs.link.tcp_insecure,
                                                          &jm.jobs.link.handshake_timeout_usec });
                break;
        }
}

bool jobmode_cli_enabled(void) {
        return jm.jobs.link.n_addresses > 0;
}

int jobmode_cli_prepare(void) {
        char why[512];

        /* TCP is through TLS (all three files) or, by explicit choice, in
         * the clear to loopback literals only; exits 2 otherwise. */
        cli_check_transport(&(struct cli_transport) {
                .names = CLI_TLS_OPTION_NAMES("", "--coordinator"),
                .cert = jm.tls.cert,
                .key = jm.tls.key,
                .ca = jm.tls.ca,
                .insecure = jm.jobs.link.tcp_insecure,
                .handshake_timeout_usec = jm.jobs.link.handshake_timeout_usec,
                .addresses = jm.jobs.link.addresses,
                .n_addresses = jm.jobs.link.n_addresses,
                .address_flags = ADDRESS_ALLOW_UNIX | ADDRESS_ALLOW_TCP,
        });
        if (jm.tls.cert) {
                if (tls_context_new(&jm.tls, false, &jm.tls_ctx, why, sizeof(why)) < 0) {
                        log_error("cannot load the TLS credentials: %s", why);
                        return -EINVAL;
                }
                jm.jobs.link.tls = jm.tls_ctx;
                /* The coordinator only takes the name the certificate proves. */
                if (!jm.jobs.link.identity && tls_own_name(jm.tls_ctx, jm.identity, sizeof(jm.identity))[0])
                        jm.jobs.link.identity = jm.identity;
        }
        if (jm.jobs.link.n_addresses && !jm.jobs.link.identity) {
                char host[32] = "worker";
                (void) gethostname(host, sizeof(host) - 1);
                snprintf(jm.identity, sizeof(jm.identity), "%s-%d", host, (int) getpid());
                jm.jobs.link.identity = jm.identity;
        }
        return 0;
}

void jobmode_cli_log(bool executor_checked) {
        log_info("serving the coordinator as %s (%zu address(es)); executor %s", jm.jobs.link.identity,
                 jm.jobs.link.n_addresses, executor_checked ? "registered as progress loop" : "NOT registered");
}

int jobmode_cli_run(sdlive *d, executor *e, const fault_switch *wedge) {
        return jobmode_run(d, e, wedge, &jm.jobs);
}

void jobmode_cli_free(void) {
        SSL_CTX_free(jm.tls_ctx);
        jm.tls_ctx = NULL;
}
