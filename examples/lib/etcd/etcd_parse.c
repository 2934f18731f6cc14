/* SPDX-License-Identifier: MIT */
/* The answer parser: etcd's JSON gateway answers into the part's structs.
 * Every field is checked for its type and range; whatever is not what etcd
 * sends is -EBADMSG, never a crash and never a guess. */
#include "etcd_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deep enough for every answer we read (a txn answer is 6 levels deep). */
#define ETCD_JSON_DEPTH 12

int etcd_parse_object(const char *text, size_t len, json_object **ret) {
        struct json_tokener *tok;
        json_object *obj;

        *ret = NULL;
        if (!text || len == 0 || len > ETCD_ANSWER_MAX || memchr(text, '\0', len))
                return -EBADMSG;
        while (len > 0 && strchr(" \t\r\n", text[len - 1]))
                len--;
        if (len == 0)
                return -EBADMSG;
        tok = json_tokener_new_ex(ETCD_JSON_DEPTH);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        obj = json_tokener_parse_ex(tok, text, (int) len);
        if (!obj || json_tokener_get_error(tok) != json_tokener_success ||
            json_tokener_get_parse_end(tok) != len || !json_object_is_type(obj, json_type_object)) {
                json_object_put(obj);
                json_tokener_free(tok);
                return -EBADMSG;
        }
        json_tokener_free(tok);
        *ret = obj;
        return 0;
}

static int parse_decimal(const char *s, int64_t *ret) {
        int64_t v = 0;

        if (!*s || strlen(s) > 19)
                return -EBADMSG;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return -EBADMSG;
                if (v > (INT64_MAX - (*s - '0')) / 10)
                        return -EBADMSG;
                v = v * 10 + (*s - '0');
        }
        *ret = v;
        return 0;
}

int etcd_field_int64(json_object *obj, const char *name, bool required, int64_t *ret) {
        json_object *f;
        int64_t v;

        *ret = 0;
        if (!json_object_object_get_ex(obj, name, &f))
                return required ? -EBADMSG : 0;
        if (json_object_is_type(f, json_type_string))
                return parse_decimal(json_object_get_string(f), ret);
        if (!json_object_is_type(f, json_type_int))
                return -EBADMSG;
        /* json-c clamps what does not fit to INT64_MAX (or keeps a uint64):
         * no real revision, id or TTL gets there. */
        v = json_object_get_int64(f);
        if (v < 0 || v == INT64_MAX)
                return -EBADMSG;
        *ret = v;
        return 0;
}

int etcd_field_bool(json_object *obj, const char *name, bool *ret) {
        json_object *f;

        *ret = false;
        if (!json_object_object_get_ex(obj, name, &f))
                return 0;
        if (!json_object_is_type(f, json_type_boolean))
                return -EBADMSG;
        *ret = json_object_get_boolean(f);
        return 0;
}

/* The object field name: required, and an object. */
static json_object *field_object(json_object *obj, const char *name) {
        json_object *f;

        if (!json_object_object_get_ex(obj, name, &f) || !json_object_is_type(f, json_type_object))
                return NULL;
        return f;
}

int etcd_parse_header(json_object *answer, int64_t *revision) {
        json_object *header = field_object(answer, "header");

        if (!header)
                return -EBADMSG;
        return etcd_field_int64(header, "revision", false, revision);
}

/* A base64 field decoded into out (NUL-terminated, no NUL inside). */
static int field_base64(json_object *obj, const char *name, bool required, char *out,
                        size_t out_max) {
        json_object *f;
        int n;

        out[0] = '\0';
        if (!json_object_object_get_ex(obj, name, &f))
                return required ? -EBADMSG : 0;
        if (!json_object_is_type(f, json_type_string))
                return -EBADMSG;
        n = etcd_base64_decode(json_object_get_string(f), (size_t) json_object_get_string_len(f),
                               (unsigned char *) out, out_max);
        if (n < 0 || memchr(out, '\0', (size_t) n))
                return -EBADMSG;
        out[n] = '\0';
        return 0;
}

int etcd_parse_kv(json_object *kv, struct etcd_holder *ret) {
        char key[ETCD_KEY_MAX + 1];
        int64_t version;

        *ret = (struct etcd_holder) {0};
        if (!json_object_is_type(kv, json_type_object))
                return -EBADMSG;
        if (field_base64(kv, "key", true, key, ETCD_KEY_MAX) < 0 || key[0] == '\0' ||
            field_base64(kv, "value", false, ret->value, ETCD_VALUE_MAX) < 0 ||
            etcd_field_int64(kv, "create_revision", true, &ret->create_revision) < 0 ||
            etcd_field_int64(kv, "mod_revision", true, &ret->mod_revision) < 0 ||
            etcd_field_int64(kv, "version", false, &version) < 0 ||
            etcd_field_int64(kv, "lease", false, &ret->lease) < 0)
                return -EBADMSG;
        if (ret->create_revision <= 0 || ret->mod_revision < ret->create_revision)
                return -EBADMSG;
        ret->held = true;
        return 0;
}

/* "kvs" of a range answer: absent or [] is "not held", one KeyValue is the
 * holder; we ask for one key, so more is malformed. */
static int parse_kvs(json_object *range, struct etcd_holder *ret) {
        json_object *kvs;

        *ret = (struct etcd_holder) {0};
        if (!json_object_object_get_ex(range, "kvs", &kvs))
                return 0;
        if (!json_object_is_type(kvs, json_type_array) || json_object_array_length(kvs) > 1)
                return -EBADMSG;
        if (json_object_array_length(kvs) == 0)
                return 0;
        return etcd_parse_kv(json_object_array_get_idx(kvs, 0), ret);
}

int etcd_parse_grant(const char *text, size_t len, struct etcd_lease *ret) {
        json_object *obj;
        int64_t revision;
        int r;

        *ret = (struct etcd_lease) {0};
        if ((r = etcd_parse_object(text, len, &obj)) < 0)
                return r;
        r = etcd_parse_header(obj, &revision);
        if (r == 0)
                r = etcd_field_int64(obj, "ID", true, &ret->id);
        if (r == 0)
                r = etcd_field_int64(obj, "TTL", true, &ret->ttl_sec);
        json_object_put(obj);
        if (r == 0 && (ret->id <= 0 || ret->ttl_sec <= 0))
                r = -EBADMSG;
        return r;
}

int etcd_parse_keepalive(const char *text, size_t len, int64_t id, struct etcd_lease *ret) {
        json_object *obj, *result;
        int64_t revision;
        int r;

        *ret = (struct etcd_lease) {0};
        if ((r = etcd_parse_object(text, len, &obj)) < 0)
                return r;
        result = field_object(obj, "result");
        r = result ? etcd_parse_header(result, &revision) : -EBADMSG;
        if (r == 0)
                r = etcd_field_int64(result, "ID", true, &ret->id);
        if (r == 0)
                r = etcd_field_int64(result, "TTL", false, &ret->ttl_sec);
        json_object_put(obj);
        if (r == 0 && ret->id != id)
                r = -EBADMSG;
        return r;
}

int etcd_parse_range(const char *text, size_t len, struct etcd_holder *ret) {
        json_object *obj;
        int64_t revision = 0;
        int r;

        if ((r = etcd_parse_object(text, len, &obj)) < 0)
                return r;
        r = etcd_parse_header(obj, &revision);
        if (r == 0)
                r = parse_kvs(obj, ret);
        ret->revision = revision;
        json_object_put(obj);
        return r;
}

/* The txn answer's header, "succeeded" and its "responses" array of n
 * elements (n_success when succeeded, else n_failure). */
static int parse_txn(json_object *obj, size_t n_success, size_t n_failure, bool *succeeded,
                     int64_t *revision, json_object **responses) {
        int r;

        if ((r = etcd_parse_header(obj, revision)) < 0 ||
            (r = etcd_field_bool(obj, "succeeded", succeeded)) < 0)
                return r;
        *responses = NULL;
        if (!json_object_object_get_ex(obj, "responses", responses)) {
                *responses = NULL;
                return (*succeeded ? n_success : n_failure) == 0 ? 0 : -EBADMSG;
        }
        if (!json_object_is_type(*responses, json_type_array) ||
            json_object_array_length(*responses) != (*succeeded ? n_success : n_failure))
                return -EBADMSG;
        return 0;
}

int etcd_parse_acquire(const char *text, size_t len, bool *succeeded, struct etcd_holder *ret) {
        json_object *obj, *responses, *last, *range;
        int64_t revision = 0;
        int r;

        if ((r = etcd_parse_object(text, len, &obj)) < 0)
                return r;
        /* success: [put, range]; failure: [range] */
        r = parse_txn(obj, 2, 1, succeeded, &revision, &responses);
        if (r == 0) {
                last = json_object_array_get_idx(responses,
                                                 json_object_array_length(responses) - 1);
                range = json_object_is_type(last, json_type_object)
                                ? field_object(last, "response_range")
                                : NULL;
                r = range ? parse_kvs(range, ret) : -EBADMSG;
                ret->revision = revision;
        }
        if (r == 0 && *succeeded) {
                json_object *first = json_object_array_get_idx(responses, 0);
                if (!json_object_is_type(first, json_type_object) ||
                    !field_object(first, "response_put"))
                        r = -EBADMSG;
        }
        json_object_put(obj);
        /* Whichever branch ran, the key existed when the range read it. */
        if (r == 0 && !ret->held)
                r = -EBADMSG;
        return r;
}

int etcd_parse_release(const char *text, size_t len, bool *succeeded) {
        json_object *obj, *responses;
        int64_t revision;
        int r;

        if ((r = etcd_parse_object(text, len, &obj)) < 0)
                return r;
        /* success: [delete_range]; failure: nothing */
        r = parse_txn(obj, 1, 0, succeeded, &revision, &responses);
        if (r == 0 && *succeeded) {
                json_object *first = json_object_array_get_idx(responses, 0);
                if (!json_object_is_type(first, json_type_object) ||
                    !field_object(first, "response_delete_range"))
                        r = -EBADMSG;
        }
        json_object_put(obj);
        return r;
}

int etcd_parse_error(const char *text, size_t len, int64_t *code, char *msg, size_t msg_size) {
        json_object *obj, *m;
        int r;

        msg[0] = '\0';
        if ((r = etcd_parse_object(text, len, &obj)) < 0)
                return r;
        r = etcd_field_int64(obj, "code", true, code);
        if (r == 0 && (json_object_object_get_ex(obj, "message", &m) ||
                       json_object_object_get_ex(obj, "error", &m))) {
                if (json_object_is_type(m, json_type_string))
                        snprintf(msg, msg_size, "%s", json_object_get_string(m));
                else
                        r = -EBADMSG;
        }
        json_object_put(obj);
        return r;
}

/* 1 when events holds a DELETE, 0 when only PUTs. */
static int parse_events(json_object *result) {
        json_object *events, *event, *type;
        bool deleted = false;
        size_t i, n;

        if (!json_object_object_get_ex(result, "events", &events))
                return 0;
        if (!json_object_is_type(events, json_type_array))
                return -EBADMSG;
        n = json_object_array_length(events);
        for (i = 0; i < n; i++) {
                event = json_object_array_get_idx(events, i);
                if (!json_object_is_type(event, json_type_object) || !field_object(event, "kv"))
                        return -EBADMSG;
                if (!json_object_object_get_ex(event, "type", &type))
                        continue; /* PUT, proto3's default */
                if (!json_object_is_type(type, json_type_string))
                        return -EBADMSG;
                if (strcmp(json_object_get_string(type), "DELETE") == 0)
                        deleted = true;
                else if (strcmp(json_object_get_string(type), "PUT") != 0)
                        return -EBADMSG;
        }
        return deleted;
}

int etcd_parse_watch_message(const char *text, size_t len) {
        json_object *obj, *result;
        bool canceled;
        int r;

        if ((r = etcd_parse_object(text, len, &obj)) < 0)
                return r;
        if (json_object_object_get_ex(obj, "error", &result)) {
                json_object_put(obj);
                return -EIO;
        }
        result = field_object(obj, "result");
        if (!result || !field_object(result, "header"))
                r = -EBADMSG;
        else if ((r = etcd_field_bool(result, "canceled", &canceled)) == 0)
                r = canceled ? -ESTALE : parse_events(result);
        json_object_put(obj);
        return r;
}
