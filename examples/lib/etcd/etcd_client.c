/* SPDX-License-Identifier: MIT */
/* The client: its endpoints, its one curl handle, and the request that
 * fails over from one endpoint to the next within the caller's budget. */
#include "etcd_internal.h"
#include "monotonic.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static __thread char open_errmsg[256];
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;

static void curl_init(void) {
        curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int etcd_fail(struct etcd_client *c, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(c ? c->errmsg : open_errmsg, sizeof(open_errmsg), fmt, ap);
        va_end(ap);
        return r;
}

const char *etcd_errmsg(const struct etcd_client *c) {
        return c ? c->errmsg : open_errmsg;
}

const char *etcd_current_endpoint(const struct etcd_client *c) {
        return c->endpoints[c->current];
}

size_t etcd_answer_write(char *ptr, size_t size, size_t nmemb, void *userdata) {
        struct etcd_answer *a = userdata;
        size_t n = size * nmemb;

        if (n > ETCD_ANSWER_MAX - a->len) {
                a->overflow = true;
                return 0; /* curl fails the transfer with CURLE_WRITE_ERROR */
        }
        memcpy(a->data + a->len, ptr, n);
        a->len += n;
        a->data[a->len] = '\0';
        return n;
}

void etcd_curl_defaults(CURL *curl) {
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
        curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
}

/* One endpoint of the list: http(s)://, printable, no spaces; a trailing
 * slash is dropped. */
static int add_endpoint(struct etcd_client *c, const char *s, size_t len) {
        size_t i;

        if (len > 0 && s[len - 1] == '/')
                len--;
        if (c->n_endpoints == ETCD_ENDPOINTS_MAX)
                return etcd_fail(NULL, -EINVAL, "more than %d etcd endpoints", ETCD_ENDPOINTS_MAX);
        if (len > ETCD_URL_MAX)
                return etcd_fail(NULL, -EINVAL, "etcd endpoint longer than %d bytes", ETCD_URL_MAX);
        for (i = 0; i < len; i++)
                if (s[i] <= ' ' || s[i] == 0x7f)
                        return etcd_fail(NULL, -EINVAL, "etcd endpoint with a space or control character");
        if (!((len > 7 && strncmp(s, "http://", 7) == 0) ||
              (len > 8 && strncmp(s, "https://", 8) == 0)))
                return etcd_fail(NULL, -EINVAL, "etcd endpoint \"%.*s\" is not http://HOST:PORT or https://HOST:PORT",
                                 (int) (len > 64 ? 64 : len), s);
        memcpy(c->endpoints[c->n_endpoints], s, len);
        c->endpoints[c->n_endpoints][len] = '\0';
        c->n_endpoints++;
        return 0;
}

struct etcd_client *etcd_client_close(struct etcd_client *c) {
        if (!c)
                return NULL;
        if (c->curl)
                curl_easy_cleanup(c->curl);
        if (c->multi)
                curl_multi_cleanup(c->multi);
        curl_slist_free_all(c->headers);
        free(c);
        return NULL;
}

int etcd_client_open(const char *endpoints, struct etcd_client **ret) {
        struct etcd_client *c;
        const char *p, *comma;
        int r;

        *ret = NULL;
        open_errmsg[0] = '\0';
        if (!endpoints || !*endpoints)
                return etcd_fail(NULL, -EINVAL, "no etcd endpoint given");
        pthread_once(&curl_once, curl_init);
        if (curl_init_result != CURLE_OK)
                return etcd_fail(NULL, -ENOMEM, "curl_global_init: %s", curl_easy_strerror(curl_init_result));
        c = calloc(1, sizeof(*c));
        if (!c)
                return etcd_fail(NULL, -ENOMEM, "out of memory");
        for (p = endpoints;; p = comma + 1) {
                comma = strchr(p, ',');
                r = add_endpoint(c, p, comma ? (size_t) (comma - p) : strlen(p));
                if (r < 0) {
                        etcd_client_close(c);
                        return r;
                }
                if (!comma)
                        break;
        }
        c->curl = curl_easy_init();
        c->multi = curl_multi_init();
        c->headers = curl_slist_append(NULL, "Content-Type: application/json");
        if (!c->curl || !c->multi || !c->headers) {
                etcd_client_close(c);
                return etcd_fail(NULL, -ENOMEM, "curl_easy_init failed");
        }
        etcd_curl_defaults(c->curl);
        curl_easy_setopt(c->curl, CURLOPT_MAXCONNECTS, (long) c->n_endpoints);
        curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
        curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, etcd_answer_write);
        curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &c->answer);
        *ret = c;
        return 0;
}

int etcd_grpc_errno(int64_t code) {
        switch (code) {
        case 1: /* CANCELLED */
                return -ECANCELED;
        case 3: /* INVALID_ARGUMENT */
        case 11: /* OUT_OF_RANGE */
                return -EINVAL;
        case 4: /* DEADLINE_EXCEEDED */
                return -ETIMEDOUT;
        case 5: /* NOT_FOUND */
                return -ENOENT;
        case 7: /* PERMISSION_DENIED */
        case 16: /* UNAUTHENTICATED */
                return -EACCES;
        case 8: /* RESOURCE_EXHAUSTED */
                return -ENOSPC;
        case 14: /* UNAVAILABLE: no leader, request timed out, stopping */
                return -EAGAIN;
        default:
                return -EIO;
        }
}

/* An answer other than 200: etcd's error, and whether another endpoint
 * may do better (< 0 and *next set) or the answer stands. A body that is
 * not etcd's error (a proxy's error page) is no answer from etcd: next. */
static int error_answer(struct etcd_client *c, long status, const char *url, bool *next) {
        char msg[160];
        int64_t code;
        int r;

        *next = true;
        if (etcd_parse_error(c->answer.data, c->answer.len, &code, msg, sizeof(msg)) < 0)
                return etcd_fail(c, -EBADMSG, "%s: HTTP %ld with an answer that is not etcd's", url, status);
        r = etcd_grpc_errno(code);
        *next = r == -EAGAIN || r == -ETIMEDOUT;
        return etcd_fail(c, r, "%s: %s (code %lld)", url, msg, (long long) code);
}

/* A 200 answer is etcd's only when its body is one JSON object: anything
 * else (an HTML page, a truncated body) came from something else at the
 * endpoint's address. Its fields are checked by the caller's parser. */
static bool json_object_body(const struct etcd_answer *a) {
        json_object *obj;

        if (etcd_parse_object(a->data, a->len, &obj) < 0)
                return false;
        json_object_put(obj);
        return true;
}

/* Runs the transfer set up on c->curl until it ends or deadline_usec
 * passes, whichever comes first. CURLOPT_TIMEOUT_MS alone is not a hard
 * bound: curl retries a request that died on a reused connection on a new
 * one, with a timeout of its own. Driving the transfer ourselves, we stop
 * it at our deadline whatever curl does inside. */
static CURLcode perform_until(struct etcd_client *c, uint64_t deadline_usec) {
        CURLcode result = CURLE_OPERATION_TIMEDOUT;
        struct CURLMsg *msg;
        int running, left;
        bool done = false;

        if (curl_multi_add_handle(c->multi, c->curl) != CURLM_OK)
                return CURLE_OUT_OF_MEMORY;
        while (!done) {
                uint64_t now;

                if (curl_multi_perform(c->multi, &running) != CURLM_OK) {
                        result = CURLE_RECV_ERROR;
                        break;
                }
                while ((msg = curl_multi_info_read(c->multi, &left)))
                        if (msg->msg == CURLMSG_DONE && msg->easy_handle == c->curl) {
                                result = msg->data.result;
                                done = true;
                        }
                now = monotonic_usec();
                if (done || now >= deadline_usec)
                        break;
                /* Wake at the deadline at the latest (rounded up to a ms). */
                if (curl_multi_poll(c->multi, NULL, 0, (int) ((deadline_usec - now + 999) / 1000),
                                    NULL) != CURLM_OK) {
                        result = CURLE_RECV_ERROR;
                        break;
                }
        }
        /* An unfinished transfer's connection is closed, never reused. */
        curl_multi_remove_handle(c->multi, c->curl);
        return result;
}

/* Pause between rounds in which every endpoint failed at once (an
 * election in progress, members restarting). */
#define ETCD_ROUND_PAUSE_USEC 50000

int etcd_post(struct etcd_client *c, const char *path, json_object *body, uint64_t budget_usec,
              int64_t *sent_ms) {
        uint64_t deadline = monotonic_usec() + budget_usec, now;
        const char *json = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
        size_t start = c->current, tried;
        char url[ETCD_URL_MAX + 64];
        int r = -ETIMEDOUT;

        if (!json)
                return etcd_fail(c, -ENOMEM, "out of memory");
        etcd_fail(c, -ETIMEDOUT, "a budget of %llu us leaves no time for a request",
                  (unsigned long long) budget_usec);
        /* Round after round over the endpoints until one answers or the
         * budget is spent. */
        for (tried = 0;; tried++) {
                size_t idx = (start + tried) % c->n_endpoints;
                size_t left_in_round = c->n_endpoints - tried % c->n_endpoints;
                long share_ms, status = 0;
                int64_t t_sent;
                CURLcode cr;
                bool next;

                now = monotonic_usec();
                if (tried > 0 && left_in_round == c->n_endpoints) {
                        uint64_t pause = ETCD_ROUND_PAUSE_USEC;

                        if (now + pause + 1000 > deadline)
                                break;
                        nanosleep(&(struct timespec){0, (long) pause * 1000}, NULL);
                        now = monotonic_usec();
                }
                if (now + 1000 > deadline)
                        break;
                /* The rest of the budget split over the endpoints not tried
                 * yet in this round, so that one silent member cannot spend
                 * all of it. */
                share_ms = (long) ((deadline - now) / 1000 / left_in_round);
                if (share_ms < 1)
                        share_ms = 1;
                snprintf(url, sizeof(url), "%s%s", c->endpoints[idx], path);
                curl_easy_setopt(c->curl, CURLOPT_URL, url);
                curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, json);
                curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE, (long) strlen(json));
                curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, share_ms);
                curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, share_ms);
                c->answer.len = 0;
                c->answer.data[0] = '\0';
                c->answer.overflow = false;
                t_sent = monotonic_ms();
                cr = perform_until(c, now + (uint64_t) share_ms * 1000);
                if (cr == CURLE_WRITE_ERROR && c->answer.overflow) {
                        r = etcd_fail(c, -EBADMSG, "%s: answer larger than %d bytes", url, ETCD_ANSWER_MAX);
                        continue;
                }
                if (cr != CURLE_OK) {
                        /* An answer that was not etcd's, seen earlier in
                         * this call, says more than a later attempt that
                         * ran out of its share of the budget (re-reading
                         * an oversized answer, say): it stays the error. */
                        if (r == -EBADMSG)
                                continue;
                        r = cr == CURLE_OPERATION_TIMEDOUT  ? -ETIMEDOUT
                            : cr == CURLE_COULDNT_CONNECT ? -ECONNREFUSED
                                                          : -ECONNRESET;
                        etcd_fail(c, r, "%s: %s", url, curl_easy_strerror(cr));
                        continue;
                }
                curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
                if (status == 200 && !json_object_body(&c->answer)) {
                        r = etcd_fail(c, -EBADMSG, "%s: HTTP 200 with a body that is not JSON", url);
                        continue;
                }
                if (status == 200) {
                        c->current = idx;
                        if (sent_ms)
                                *sent_ms = t_sent;
                        c->errmsg[0] = '\0';
                        return 0;
                }
                r = error_answer(c, status, url, &next);
                if (!next) {
                        c->current = idx;
                        return r;
                }
        }
        /* Nobody answered in time: the next call starts at the next endpoint. */
        c->current = (start + 1) % c->n_endpoints;
        {
                char last[sizeof(c->errmsg)];

                snprintf(last, sizeof(last), "%s", c->errmsg);
                return etcd_fail(c, r, "no etcd endpoint answered within %llu ms; last: %s",
                                 (unsigned long long) budget_usec / 1000, last);
        }
}
