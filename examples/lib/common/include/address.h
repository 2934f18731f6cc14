/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_ADDRESS_H
#define SDLIVE_EXAMPLE_ADDRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>

/*
 * Socket addresses given on the command line, in one syntax for every
 * daemon:
 *   /PATH          a unix socket (absolute, shorter than sun_path)
 *   HOST:PORT      IPv4 literal or host name, PORT 1 to 65535 in decimal
 *   [V6]:PORT      IPv6 literal
 * No control characters, no spaces, no empty parts, no port 0.
 */
enum address_kind {
        ADDRESS_UNIX,
        ADDRESS_TCP,
};

/* Which forms address_parse() accepts. */
enum {
        ADDRESS_ALLOW_UNIX = 1 << 0,
        ADDRESS_ALLOW_TCP = 1 << 1,
        /* TCP hosts must be IP literals (a listener: what it binds, and
         * whether that is loopback, must not depend on name resolution). */
        ADDRESS_NUMERIC_HOST = 1 << 2,
};

#define ADDRESS_HOST_MAX 253

struct address {
        enum address_kind kind;
        char path[sizeof(((struct sockaddr_un *) 0)->sun_path)]; /* ADDRESS_UNIX */
        char host[ADDRESS_HOST_MAX + 1];                         /* ADDRESS_TCP, no brackets */
        uint16_t port;                                           /* ADDRESS_TCP, never 0 */
};

/* Parses text into *ret. 0 with every field of *ret written (those of the
 * other kind empty), or -EINVAL with *ret untouched and *ret_why (when not
 * NULL) set to a static phrase saying what is wrong ("port out of range (1
 * to 65535)"). Never resolves names. */
int address_parse(const char *text, unsigned flags, struct address *ret, const char **ret_why);

/* For a TCP address with a numeric host: true when it is a loopback
 * address (127.0.0.0/8, ::1, or ::ffff:127.0.0.0/104). False for names. */
bool address_is_loopback(const struct address *a);

/* getaddrinfo() for a TCP address; passive for a listener. 0, or
 * -EADDRNOTAVAIL when the name does not resolve. Free with freeaddrinfo(). */
struct addrinfo;
int address_resolve(const struct address *a, bool passive, struct addrinfo **ret);

#endif
