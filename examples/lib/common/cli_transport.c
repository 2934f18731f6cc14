/* SPDX-License-Identifier: MIT */
/* The transport options of a daemon's TCP job link and their rule, one
 * for the worker (client) and the cluster's coordinator (server): TLS with
 * all three files, or — chosen explicitly — in the clear with every TCP
 * address on loopback; and how long a TLS handshake may take. */
#include "cli.h"

void cli_check_transport(const struct cli_transport *t) {
        const struct cli_transport_names *n = &t->names;
        bool tls = t->cert || t->key || t->ca, any_tcp = false;
        struct address a;

        for (size_t i = 0; i < t->n_addresses; i++)
                any_tcp |= address_parse(t->addresses[i], t->address_flags, &a, NULL) == 0 &&
                           a.kind == ADDRESS_TCP;
        if (tls && !(t->cert && t->key && t->ca))
                cli_usage_error("TLS needs all of %s, %s and %s", n->cert, n->key, n->ca);
        if (tls && t->insecure)
                cli_usage_error("%s contradicts the TLS options", n->insecure);
        if (t->handshake_timeout_usec && !tls)
                cli_usage_error("%s: no TLS to time (it needs %s, %s and %s)", n->handshake_timeout, n->cert,
                                n->key, n->ca);
        if ((tls || t->insecure) && !any_tcp)
                cli_usage_error("%s: no TCP %s address to use it with", tls ? n->cert : n->insecure,
                                n->address);
        if (!any_tcp || tls)
                return;
        if (!t->insecure)
                cli_usage_error("%s: TCP needs %s, %s and %s (or %s on loopback)", n->address, n->cert,
                                n->key, n->ca, n->insecure);
        for (size_t i = 0; i < t->n_addresses; i++)
                if (address_parse(t->addresses[i], t->address_flags, &a, NULL) == 0 &&
                    a.kind == ADDRESS_TCP && !address_is_loopback(&a))
                        cli_usage_error("%s: '%s' is not a loopback IP address", n->insecure,
                                        t->addresses[i]);
}

bool cli_tls_option(int id, int first_id, const char *option, const char *value, const struct cli_tls_values *v) {
        switch (id - first_id) {
        case 0:
                *v->cert = cli_path(option, value);
                return true;
        case 1:
                *v->key = cli_path(option, value);
                return true;
        case 2:
                *v->ca = cli_path(option, value);
                return true;
        case 3:
                *v->insecure = true;
                return true;
        case 4:
                *v->handshake_timeout_usec = cli_duration_range(option, value, CLI_TLS_HANDSHAKE_MIN_USEC,
                                                                CLI_TLS_HANDSHAKE_MAX_USEC);
                return true;
        default:
                return false;
        }
}
