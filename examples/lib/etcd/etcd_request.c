/* SPDX-License-Identifier: MIT */
/* What the requests are made of: checked keys and values, base64 (etcd's
 * JSON carries bytes as base64; OpenSSL's codec, made strict here), and
 * proto3 JSON's int64 as a decimal string. */
#include "etcd_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

void etcd_base64_encode(const void *in, size_t len, char *out) {
        EVP_EncodeBlock((unsigned char *) out, in, (int) len);
}

static bool base64_char(char ch) {
        return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
               ch == '+' || ch == '/';
}

int etcd_base64_decode(const char *in, size_t in_len, unsigned char *out, size_t out_max) {
        /* EVP_DecodeBlock writes 3 bytes per 4 characters, padding included. */
        unsigned char buf[(ETCD_VALUE_MAX > ETCD_KEY_MAX ? ETCD_VALUE_MAX : ETCD_KEY_MAX) + 3];
        size_t i, pad = 0, n;

        if (in_len % 4 != 0 || in_len / 4 * 3 > sizeof(buf))
                return -EBADMSG;
        if (in_len > 0 && in[in_len - 1] == '=')
                pad = (in_len > 1 && in[in_len - 2] == '=') ? 2 : 1;
        for (i = 0; i < in_len - pad; i++)
                if (!base64_char(in[i]))
                        return -EBADMSG;
        if (in_len == 0)
                return 0;
        if (EVP_DecodeBlock(buf, (const unsigned char *) in, (int) in_len) != (int) (in_len / 4 * 3))
                return -EBADMSG;
        n = in_len / 4 * 3 - pad;
        if (n > out_max)
                return -EBADMSG;
        memcpy(out, buf, n);
        return (int) n;
}

int etcd_check_bytes(const char *s, size_t max) {
        size_t n;

        if (!s)
                return -EINVAL;
        n = strnlen(s, max + 1);
        return n == 0 || n > max ? -EINVAL : 0;
}

json_object *etcd_json_base64(const char *s) {
        char out[(ETCD_VALUE_MAX > ETCD_KEY_MAX ? ETCD_VALUE_MAX : ETCD_KEY_MAX) / 3 * 4 + 5];
        size_t n = strlen(s);

        if (n > ETCD_KEY_MAX || n > ETCD_VALUE_MAX)
                return NULL;
        etcd_base64_encode(s, n, out);
        return json_object_new_string(out);
}

json_object *etcd_json_int64(int64_t v) {
        char text[24];

        snprintf(text, sizeof(text), "%" PRId64, v);
        return json_object_new_string(text);
}
