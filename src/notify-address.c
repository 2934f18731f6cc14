/* SPDX-License-Identifier: MIT */
/*
 * NOTIFY_SOCKET as the manager sets it: an absolute path, an abstract
 * socket "@name", or "vsock:CID:PORT" (a virtual machine's manager on the
 * host). Pure parsing, no system call: also the fuzz target's entry.
 */
#include <errno.h>
#include <string.h>

#include "sdlive-internal.h"

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

static int parse_vsock(const char *spec, sdlive_notify_address *out) {
        const char *colon = strchr(spec, ':');
        uint32_t cid, port;

        if (!colon || parse_u32(spec, colon, &cid) < 0 ||
            parse_u32(colon + 1, colon + 1 + strlen(colon + 1), &port) < 0)
                return -EINVAL;
        out->vm = (struct sockaddr_vm) { .svm_family = AF_VSOCK, .svm_cid = cid, .svm_port = port };
        out->len = sizeof(out->vm);
        return 0;
}

int sdlive_notify_parse_address(const char *env, sdlive_notify_address *out) {
        size_t len;

        memset(out, 0, sizeof(*out));
        if (!env || !*env)
                return 0;
        if (strncmp(env, "vsock:", 6) == 0)
                return parse_vsock(env + 6, out) < 0 ? -EINVAL : 1;
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
