/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_ETCD_INTERNAL_H
#define SDLIVE_EXAMPLE_ETCD_INTERNAL_H

/*
 * The etcd part's private seam: the client's state, the request with its
 * failover (etcd_client.c), the requests' JSON (etcd_request.c) and the
 * answer parser (etcd_parse.c), which white-box tests feed with garbage.
 * The parser trusts nothing in an answer: every field is checked for its
 * type and range, and anything else is -EBADMSG.
 */

#include "etcd_lease.h"

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <json-c/json.h>

struct etcd_answer {
        char data[ETCD_ANSWER_MAX + 1]; /* NUL-terminated */
        size_t len;
        bool overflow; /* more than ETCD_ANSWER_MAX arrived: the answer is refused */
};

struct etcd_client {
        char endpoints[ETCD_ENDPOINTS_MAX][ETCD_URL_MAX + 1];
        size_t n_endpoints;
        size_t current; /* where the next request starts */
        CURL *curl;
        CURLM *multi; /* drives curl's transfer so that we end it at our deadline */
        struct curl_slist *headers;
        struct etcd_answer answer;
        char errmsg[256];
};

/* Sets c->errmsg (printf-style) and returns r (a -errno). */
int etcd_fail(struct etcd_client *c, int r, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* POSTs body (a JSON object, not consumed) to path ("/v3/kv/txn") at the
 * current endpoint, failing over within budget_usec (etcd_lease.h). 0: an
 * HTTP 200 answer whose body is one JSON object, in c->answer, and
 * *sent_ms (may be NULL) is when the request that got it was sent. An
 * HTTP error answer with etcd's error body is mapped from its gRPC code
 * (etcd_grpc_errno()) with etcd's message in c->errmsg; it stands unless
 * it is UNAVAILABLE or DEADLINE_EXCEEDED. Anything else an endpoint does
 * (no connection, no answer in time, a body that is not etcd's) moves the
 * request to the next endpoint. */
int etcd_post(struct etcd_client *c, const char *path, json_object *body, uint64_t budget_usec,
              int64_t *sent_ms);

/* The -errno for a gRPC status code in an error answer. */
int etcd_grpc_errno(int64_t code);
/* The curl write callback that fills a struct etcd_answer, refusing more
 * than ETCD_ANSWER_MAX (the transfer then fails). */
size_t etcd_answer_write(char *ptr, size_t size, size_t nmemb, void *userdata);
/* Applies the options every handle gets: no signals, no proxy, http(s)
 * only, no redirects, TCP keep-alive. */
void etcd_curl_defaults(CURL *curl);

/* ---- requests (etcd_request.c) ---- */

/* Base64 of len bytes into out (size >= 4 * ceil(len / 3) + 1). */
void etcd_base64_encode(const void *in, size_t len, char *out);
/* Decodes strict base64 (padding required, no whitespace) into out, at
 * most out_max bytes. The decoded length, or -EBADMSG. */
int etcd_base64_decode(const char *in, size_t in_len, unsigned char *out, size_t out_max);
/* Checks key or value: 1 .. max bytes, no NUL. -EINVAL otherwise. */
int etcd_check_bytes(const char *s, size_t max);
/* A JSON string holding base64 of s; NULL when out of memory. */
json_object *etcd_json_base64(const char *s);
/* A JSON string holding the decimal v (proto3 JSON's int64). */
json_object *etcd_json_int64(int64_t v);

/* ---- answers (etcd_parse.c); each is -EBADMSG on anything malformed ----
 * A parser that fills a struct writes every field of it when it returns 0. */

/* Parses one whole JSON object (nothing after it but whitespace); depth
 * is bounded. *ret is owned by the caller (json_object_put). */
int etcd_parse_object(const char *text, size_t len, json_object **ret);
/* Reads an int64 field (proto3 JSON: a decimal string, or an integer).
 * Absent: 0 when !required (proto3 omits zero values), else -EBADMSG. */
int etcd_field_int64(json_object *obj, const char *name, bool required, int64_t *ret);
/* Reads a bool field; absent is false. */
int etcd_field_bool(json_object *obj, const char *name, bool *ret);
/* The answer's "header" object (required) and its revision (0 if absent). */
int etcd_parse_header(json_object *answer, int64_t *revision);
/* A KeyValue ("kvs" element) into ret (held, value, revisions, lease;
 * revision 0: it is the answer's, which the caller sets). */
int etcd_parse_kv(json_object *kv, struct etcd_holder *ret);

/* /v3/lease/grant: ID (> 0) and TTL (> 0); sent_ms 0 (the caller's). */
int etcd_parse_grant(const char *text, size_t len, struct etcd_lease *ret);
/* /v3/lease/keepalive: {"result":{...}} for lease id; TTL absent is 0;
 * sent_ms 0 (the caller's). */
int etcd_parse_keepalive(const char *text, size_t len, int64_t id, struct etcd_lease *ret);
/* /v3/kv/range: zero or one KeyValue. */
int etcd_parse_range(const char *text, size_t len, struct etcd_holder *ret);
/* /v3/kv/txn of etcd_acquire(): succeeded, and the key as the txn's range
 * saw it (success: after our put; failure: the holder's). */
int etcd_parse_acquire(const char *text, size_t len, bool *succeeded, struct etcd_holder *ret);
/* /v3/kv/txn of etcd_release(): succeeded. */
int etcd_parse_release(const char *text, size_t len, bool *succeeded);
/* An error answer {"error": ..., "code": N, "message": ...}: the gRPC code
 * and the message (truncated to msg_size). */
int etcd_parse_error(const char *text, size_t len, int64_t *code, char *msg, size_t msg_size);
/* One message of the watch stream: 1 when it holds a DELETE event, 0 when
 * not (created, PUT events), -ESTALE when etcd cancelled the watch, -EIO
 * for an error message. */
int etcd_parse_watch_message(const char *text, size_t len);

#endif
