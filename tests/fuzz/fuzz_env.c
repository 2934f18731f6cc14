/* SPDX-License-Identifier: MIT */
/* Fuzz target for the environment the library reads: NOTIFY_SOCKET,
 * WATCHDOG_USEC and WATCHDOG_PID (src/notify_address.c, src/env.c).
 *
 * Input: three strings separated by NUL bytes (missing ones are unset).
 * Beyond "no crash, no out-of-bounds access", it checks the contracts: only
 * the documented results; an accepted address is one of the three forms and
 * its length fits; an armed WATCHDOG_USEC is in range and reads back as the
 * exact decimal it came from; WATCHDOG_PID only ever disarms. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "sdlive_internal.h"

#define SELF 4242

/* s with the leading zeros of each number removed ("vsock:007:0" ->
 * "vsock:7:0"); out holds strlen(s) + 1. */
static void without_leading_zeros(const char *s, char *out, size_t size) {
        size_t o = 0;
        bool at_number_start = false;

        for (size_t i = 0; s[i] && o + 1 < size; i++) {
                if (s[i] == ':') {
                        at_number_start = true;
                } else if (at_number_start && s[i] == '0' && s[i + 1] >= '0' && s[i + 1] <= '9') {
                        continue;
                } else {
                        at_number_start = false;
                }
                out[o++] = s[i];
        }
        out[o] = '\0';
}

/* The vsock prefixes and the socket type each fixes (0: the sender's
 * choice), and the names of the special CIDs, as systemd reads them. */
static const struct {
        const char *prefix;
        int type;
} vsock_prefixes[] = {
        { "vsock:", 0 },
        { "vsock-stream:", SOCK_STREAM },
        { "vsock-seqpacket:", SOCK_SEQPACKET },
        { "vsock-dgram:", SOCK_DGRAM },
};

static const struct {
        const char *name;
        uint32_t cid;
} cid_names[] = {
        { "hypervisor", VMADDR_CID_HYPERVISOR },
        { "local", VMADDR_CID_LOCAL },
        { "host", VMADDR_CID_HOST },
};

/* An accepted vsock address: one of the prefixes, with its socket type,
 * and "CID:PORT" that reads back as the numbers parsed (a CID may be a
 * name; numbers may have leading zeros). */
static void check_vsock(const char *env, const sdlive_notify_address *a) {
        const char *spec = NULL;
        char back[64], *canon;
        int type = -1;

        for (size_t i = 0; i < sizeof(vsock_prefixes) / sizeof(vsock_prefixes[0]); i++) {
                size_t n = strlen(vsock_prefixes[i].prefix);
                if (strncmp(env, vsock_prefixes[i].prefix, n) == 0) {
                        spec = env + n;
                        type = vsock_prefixes[i].type;
                        break;
                }
        }
        CHECK(spec);
        CHECK(a->vsock_type == type);
        CHECK(a->len == sizeof(a->vm));
        for (size_t i = 0; i < sizeof(cid_names) / sizeof(cid_names[0]); i++) {
                size_t n = strlen(cid_names[i].name);
                if (strncmp(spec, cid_names[i].name, n) == 0 && spec[n] == ':') {
                        CHECK(a->vm.svm_cid == cid_names[i].cid);
                        snprintf(back, sizeof(back), ":%" PRIu32, a->vm.svm_port);
                        canon = malloc(strlen(spec + n) + 1);
                        CHECK(canon);
                        without_leading_zeros(spec + n, canon, strlen(spec + n) + 1);
                        CHECK(strcmp(back, canon) == 0);
                        free(canon);
                        return;
                }
        }
        /* Behind a ':', without_leading_zeros() sees the CID as a number. */
        {
                size_t n = strlen(spec) + 2;
                char *colon_spec = malloc(n);

                canon = malloc(n);
                CHECK(colon_spec && canon);
                snprintf(colon_spec, n, ":%s", spec);
                without_leading_zeros(colon_spec, canon, n);
                free(colon_spec);
        }
        snprintf(back, sizeof(back), ":%" PRIu32 ":%" PRIu32, a->vm.svm_cid, a->vm.svm_port);
        CHECK(strcmp(back, canon) == 0);
        free(canon);
}

static void check_address(const char *env) {
        sdlive_notify_address a;
        int r = sdlive_notify_parse_address(env, &a);

        CHECK(r == 1 || r == 0 || r == -EINVAL || r == -EAFNOSUPPORT);
        if (r <= 0) {
                CHECK(a.sa.sa_family == AF_UNSPEC);
                CHECK(r != 0 || !env || !*env);
                return;
        }
        if (a.sa.sa_family == AF_VSOCK) {
                check_vsock(env, &a);
                return;
        }
        CHECK(a.sa.sa_family == AF_UNIX);
        CHECK(env[0] == '/' || env[0] == '@');
        CHECK(a.len <= sizeof(a.un));
        CHECK(a.len > offsetof(struct sockaddr_un, sun_path) + 1);
        if (env[0] == '/') {
                CHECK(a.un.sun_path[0] == '/');
                CHECK(strcmp(a.un.sun_path, env) == 0);
        } else {
                size_t n = a.len - offsetof(struct sockaddr_un, sun_path);

                CHECK(a.un.sun_path[0] == '\0');
                CHECK(n == strlen(env) && memcmp(a.un.sun_path + 1, env + 1, n - 1) == 0);
        }
}

static void check_watchdog(const char *usec_env, const char *pid_env) {
        uint64_t usec = 0;
        int r = sdlive_watchdog_parse_env(usec_env, pid_env, SELF, &usec);

        CHECK(r == 0 || r == 1 || r == -EINVAL || r == -ERANGE);
        if (!usec_env)
                CHECK(r == 1);
        if (r == 0) {
                char back[32];

                CHECK(usec >= SDLIVE_WATCHDOG_MIN_USEC && usec != UINT64_MAX);
                CHECK(usec / 6 >= SDLIVE_PET_INTERVAL_MIN_USEC);
                snprintf(back, sizeof(back), "%" PRIu64, usec);
                /* Leading zeros are the one other spelling of a number. */
                {
                        const char *digits = usec_env;
                        while (digits[0] == '0' && digits[1])
                                digits++;
                        CHECK(strcmp(back, digits) == 0);
                }
        }
        /* Without WATCHDOG_PID the verdict on WATCHDOG_USEC alone; a PID can
         * only turn "armed" into "not ours" or "refused". */
        if (pid_env) {
                uint64_t alone_usec = 0;
                int alone = sdlive_watchdog_parse_env(usec_env, NULL, SELF, &alone_usec);

                if (r == 0)
                        CHECK(alone == 0 && alone_usec == usec);
                if (alone < 0)
                        CHECK(r == alone);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size + 1), *field[3] = { NULL, NULL, NULL };
        size_t start = 0, n = 0;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        for (size_t i = 0; i <= size && n < 3; i++) {
                if (i == size || buf[i] == '\0') {
                        buf[i] = '\0';
                        field[n++] = buf + start;
                        start = i + 1;
                        if (i == size)
                                break;
                }
        }
        check_address(field[0]);
        check_watchdog(field[1], field[2]);
        check_watchdog(field[0], NULL);
        free(buf);
        return 0;
}
