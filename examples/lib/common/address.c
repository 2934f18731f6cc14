/* SPDX-License-Identifier: MIT */
#include "address.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static int invalid(const char **ret_why, const char *why) {
        if (ret_why)
                *ret_why = why;
        return -EINVAL;
}

static bool has_control_or_space(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s <= 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/* A DNS name: labels of letters, digits and '-' (not at either end), 1 to
 * 63 bytes each, separated by single dots; an optional final dot. */
static bool valid_host_name(const char *s, size_t len) {
        size_t label = 0;

        if (len == 0 || len > ADDRESS_HOST_MAX)
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                if (c == '.') {
                        if (label == 0 || s[i - 1] == '-')
                                return false;
                        label = 0;
                        continue;
                }
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-'))
                        return false;
                if (c == '-' && label == 0)
                        return false;
                if (++label > 63)
                        return false;
        }
        return s[len - 1] != '-';
}

static int parse_port(const char *s, uint16_t *ret, const char **ret_why) {
        unsigned long value = 0;

        if (!*s)
                return invalid(ret_why, "no port after ':'");
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return invalid(ret_why, "the port is not a decimal number");
                value = value * 10 + (unsigned long) (*p - '0');
                if (value > 65535)
                        return invalid(ret_why, "port out of range (1 to 65535)");
        }
        if (value == 0)
                return invalid(ret_why, "port out of range (1 to 65535)");
        *ret = (uint16_t) value;
        return 0;
}

static int parse_tcp(const char *text, unsigned flags, struct address *a, const char **ret_why) {
        const char *host = text, *port;
        size_t len;
        bool bracketed = text[0] == '[';

        if (bracketed) {
                const char *close = strchr(text, ']');
                if (!close)
                        return invalid(ret_why, "'[' without ']'");
                host = text + 1;
                len = (size_t) (close - host);
                if (close[1] != ':')
                        return invalid(ret_why, "expected ':PORT' after ']'");
                port = close + 2;
        } else {
                const char *colon = strchr(text, ':');
                if (!colon)
                        return invalid(ret_why, (flags & ADDRESS_ALLOW_UNIX)
                                                        ? "expected HOST:PORT, [IPV6]:PORT or /PATH"
                                                        : "expected HOST:PORT or [IPV6]:PORT");
                if (strchr(colon + 1, ':'))
                        return invalid(ret_why, "an IPv6 address needs brackets: [IPV6]:PORT");
                len = (size_t) (colon - text);
                port = colon + 1;
        }
        if (len == 0)
                return invalid(ret_why, "empty host");
        if (len > ADDRESS_HOST_MAX)
                return invalid(ret_why, "host name too long");
        memcpy(a->host, host, len);
        a->host[len] = '\0';

        struct in6_addr v6;
        struct in_addr v4;
        if (bracketed) {
                if (inet_pton(AF_INET6, a->host, &v6) != 1)
                        return invalid(ret_why, "not an IPv6 address inside [ ]");
        } else if (inet_pton(AF_INET, a->host, &v4) != 1) {
                if (flags & ADDRESS_NUMERIC_HOST)
                        return invalid(ret_why, "the host must be an IP address");
                if (!valid_host_name(a->host, len))
                        return invalid(ret_why, "not a valid host name or IPv4 address");
        }
        a->kind = ADDRESS_TCP;
        return parse_port(port, &a->port, ret_why);
}

int address_parse(const char *text, unsigned flags, struct address *ret, const char **ret_why) {
        struct address a = {};

        if (!text || !*text)
                return invalid(ret_why, "empty address");
        if (has_control_or_space(text))
                return invalid(ret_why, "control character or space in the address");
        if (text[0] == '/') {
                if (!(flags & ADDRESS_ALLOW_UNIX))
                        return invalid(ret_why, "a unix socket path is not allowed here");
                if (strlen(text) >= sizeof(a.path))
                        return invalid(ret_why, "unix socket path too long (at most 107 bytes)");
                strcpy(a.path, text);
                a.kind = ADDRESS_UNIX;
        } else {
                if (!(flags & ADDRESS_ALLOW_TCP))
                        return invalid(ret_why, (flags & ADDRESS_ALLOW_UNIX)
                                                        ? "expected an absolute unix socket path"
                                                        : "not a TCP address");
                int r = parse_tcp(text, flags, &a, ret_why);
                if (r < 0)
                        return r;
        }
        *ret = a;
        return 0;
}

bool address_is_loopback(const struct address *a) {
        struct in6_addr v6;
        struct in_addr v4;

        if (a->kind != ADDRESS_TCP)
                return false;
        if (inet_pton(AF_INET, a->host, &v4) == 1)
                return (ntohl(v4.s_addr) >> 24) == 127;
        if (inet_pton(AF_INET6, a->host, &v6) != 1)
                return false;
        if (IN6_IS_ADDR_LOOPBACK(&v6))
                return true;
        return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

int address_resolve(const struct address *a, bool passive, struct addrinfo **ret) {
        struct addrinfo hints = {
                .ai_socktype = SOCK_STREAM,
                .ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0),
        };
        char port[8];

        if (a->kind != ADDRESS_TCP)
                return -EINVAL;
        snprintf(port, sizeof(port), "%u", (unsigned) a->port);
        if (getaddrinfo(a->host, port, &hints, ret) != 0 || !*ret)
                return -EADDRNOTAVAIL;
        return 0;
}
