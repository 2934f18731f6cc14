/* SPDX-License-Identifier: MIT */
/* Fuzz target for the daemons' socket-address parser
 * (examples/lib/common/address.c).
 *
 * Input: one byte of flags (which forms are allowed), then the option
 * value (cut at the first NUL). Beyond "no crash", it checks the contract:
 * a refusal says why and leaves *ret as it was; an accepted address has
 * every field written (those of the other kind empty), is of an allowed
 * kind, has no control character or space, a unix path is absolute and
 * fits sun_path, a port is 1 to 65535 and was written in decimal, a
 * numeric-only host is an IP literal, and writing the result back out
 * parses to the same address. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address.h"
#include "fuzz_target.h"

#define INPUT_MAX 512

static bool clean(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s <= 0x20 || *s == 0x7f)
                        return false;
        return true;
}

static bool is_ip(const char *host, bool *v6) {
        uint8_t buf[16];

        *v6 = inet_pton(AF_INET6, host, buf) == 1;
        return *v6 || inet_pton(AF_INET, host, buf) == 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char text[INPUT_MAX + 1], again[INPUT_MAX + 16];
        struct address a, b;
        const char *why = NULL;
        unsigned flags;
        size_t len;
        bool v6;
        int r;

        if (size < 1)
                return 0;
        flags = data[0] & (ADDRESS_ALLOW_UNIX | ADDRESS_ALLOW_TCP | ADDRESS_NUMERIC_HOST);
        len = size - 1 < INPUT_MAX ? size - 1 : INPUT_MAX;
        memcpy(text, data + 1, len);
        text[len] = '\0';

        /* Every field is written over what an uninitialised struct holds;
         * a refusal leaves it as it was. */
        memset(&a, 0xa5, sizeof(a));
        memcpy(&b, &a, sizeof(a));
        r = address_parse(text, flags, &a, &why);
        if (r < 0) {
                CHECK(r == -EINVAL);
                CHECK(why && why[0]);
                CHECK(memcmp(&a, &b, sizeof(a)) == 0);
                return 0;
        }
        CHECK(r == 0);
        CHECK(clean(text));
        if (a.kind == ADDRESS_UNIX) {
                CHECK(flags & ADDRESS_ALLOW_UNIX);
                CHECK(a.path[0] == '/' && strlen(a.path) < sizeof(a.path));
                CHECK(strcmp(a.path, text) == 0);
                CHECK(a.host[0] == '\0' && a.port == 0);
                CHECK(!address_is_loopback(&a));
                return 0;
        }
        CHECK(a.kind == ADDRESS_TCP);
        CHECK(a.path[0] == '\0');
        CHECK(flags & ADDRESS_ALLOW_TCP);
        CHECK(a.port >= 1);
        /* The port is the number written, never that number truncated. */
        const char *port = strrchr(text, ':');
        CHECK(port && port[1] >= '0' && port[1] <= '9');
        CHECK(strtoull(port + 1, NULL, 10) == a.port);
        CHECK(a.host[0] && strlen(a.host) <= ADDRESS_HOST_MAX && clean(a.host));
        bool ip = is_ip(a.host, &v6);
        if (flags & ADDRESS_NUMERIC_HOST)
                CHECK(ip);
        if (!ip)
                CHECK(!address_is_loopback(&a));
        snprintf(again, sizeof(again), v6 ? "[%s]:%u" : "%s:%u", a.host, (unsigned) a.port);
        CHECK(address_parse(again, flags, &b, NULL) == 0);
        CHECK(b.kind == a.kind && b.port == a.port && strcmp(b.host, a.host) == 0);
        return 0;
}
