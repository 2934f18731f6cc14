/* SPDX-License-Identifier: MIT */
/* The transport rule of a daemon's TCP job link, one for the worker
 * (client) and the cluster's coordinator (server): TLS with all three
 * files, or — chosen explicitly — in the clear with every TCP address on
 * loopback. */
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
