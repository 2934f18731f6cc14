/* SPDX-License-Identifier: MIT */
/*
 * NOTIFY_SOCKET as the manager sets it: an absolute path, an abstract
 * socket "@name", or "vsock:CID:PORT" (a virtual machine's manager on the
 * host; also "vsock-stream:", "vsock-seqpacket:" and "vsock-dgram:", which
 * fix the socket type), read as libsystemd reads it. Pure parsing, no system call: also the fuzz target's entry.
 */
#include <errno.h>
#include <string.h>

#include "sdlive_internal.h"

/* Strict unsigned decimal up to UINT32_MAX, ending at end. */
static int parse_u32(const char *s, const char *end, uint32_t *ret) {
        uint64_t v = 0;

        if (s == end)
                return -EINVAL;
        for (; s < end; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                v = v * 10 + (uint64_t) (*s - '0');
                if (v > UINT32_MAX)
                        return -EINVAL;
        }
        *ret = (uint32_t) v;
        return 0;
}

/* A CID as systemd reads it: decimal, or one of the names of the special
 * CIDs. VMADDR_CID_ANY (also an empty CID) names no peer: refused, as
 * sd_notify() refuses it. */
static int parse_cid(const char *s, const char *end, uint32_t *ret) {
        static const struct {
                const char *name;
                uint32_t cid;
        } names[] = {
                { "hypervisor", VMADDR_CID_HYPERVISOR },
                { "local", VMADDR_CID_LOCAL },
                { "host", VMADDR_CID_HOST },
        };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if ((size_t) (end - s) == strlen(names[i].name) &&
                    strncmp(s, names[i].name, (size_t) (end - s)) == 0) {
                        *ret = names[i].cid;
                        return 0;
                }
        if (parse_u32(s, end, ret) < 0 || *ret == VMADDR_CID_ANY)
                return -EINVAL;
        return 0;
}

/* "CID:PORT" after a vsock prefix. Port VMADDR_PORT_ANY is refused. */
static int parse_vsock(const char *spec, int type, sdlive_notify_address *out) {
        const char *colon = strchr(spec, ':');
        uint32_t cid, port;

        if (!colon || parse_cid(spec, colon, &cid) < 0 ||
            parse_u32(colon + 1, colon + 1 + strlen(colon + 1), &port) < 0 ||
            port == VMADDR_PORT_ANY)
                return -EINVAL;
        out->vm = (struct sockaddr_vm) { .svm_family = AF_VSOCK, .svm_cid = cid, .svm_port = port };
        out->len = sizeof(out->vm);
        out->vsock_type = type;
        return 0;
}

/* The vsock prefixes systemd knows: "vsock:" leaves the socket type to the
 * sender, the others fix it. */
static const char *vsock_prefix(const char *env, int *ret_type) {
        static const struct {
                const char *prefix;
                int type;
        } prefixes[] = {
                { "vsock:", 0 },
                { "vsock-stream:", SOCK_STREAM },
                { "vsock-seqpacket:", SOCK_SEQPACKET },
                { "vsock-dgram:", SOCK_DGRAM },
        };

        for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
                size_t n = strlen(prefixes[i].prefix);
                if (strncmp(env, prefixes[i].prefix, n) == 0) {
                        *ret_type = prefixes[i].type;
                        return env + n;
                }
        }
        return NULL;
}

int sdlive_notify_parse_address(const char *env, sdlive_notify_address *out) {
        const char *spec;
        size_t len;
        int type;

        memset(out, 0, sizeof(*out));
        if (!env || !*env)
                return 0;
        spec = vsock_prefix(env, &type);
        if (spec)
                return parse_vsock(spec, type, out) < 0 ? -EINVAL : 1;
        if (env[0] != '/' && env[0] != '@')
                return -EAFNOSUPPORT;
        len = strlen(env);
        if (len >= sizeof(out->un.sun_path) || len < 2)
                return -EINVAL;
        out->un.sun_family = AF_UNIX;
        memcpy(out->un.sun_path, env, len);
        if (env[0] == '@')
                out->un.sun_path[0] = '\0'; /* abstract namespace */
        out->len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + len +
                                (env[0] == '/' ? 1 : 0));
        return 1;
}
