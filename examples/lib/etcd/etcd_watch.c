/* SPDX-License-Identifier: MIT */
/* Watching the leader key for its deletion: one streaming POST to
 * /v3/watch, driven by curl's multi interface so that a poll loop can run
 * it a bounded step at a time. The gateway sends one JSON message a line.
 * What the stream can make us spend is bounded by two token buckets: the
 * bytes taken from the connection and the messages parsed per second.
 * Past either, the transfer is paused (TCP then holds the sender back)
 * and the step sleeps until the bucket refills. */
#include "etcd_internal.h"
#include "monotonic.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long the stream may take to connect; the caller's steps are bounded
 * by their own timeout, this only ends a watch that never connects. */
#define ETCD_WATCH_CONNECT_MS 2000L
/* What a watch takes at most, a second, each with a burst of one second's
 * worth. The leader key's watch sees a few messages a term; a stream past
 * these is a flood, and only slows down the waiter's own wake-up. */
#define ETCD_WATCH_BYTES_PER_SEC (128 * 1024)
#define ETCD_WATCH_MESSAGES_PER_SEC 100

struct etcd_watch {
        CURL *curl;
        CURLM *multi;
        struct curl_slist *headers;
        char *body;
        char url[ETCD_URL_MAX + 16];
        bool started;
        int result; /* 0 while waiting; then 1 (deleted) or < 0, for good */
        size_t len; /* bytes received and not parsed yet in buf */
        char buf[ETCD_ANSWER_MAX + 1];
        /* The buckets: credits left, refilled from refilled_usec on. */
        int64_t byte_credit, message_credit;
        uint64_t refilled_usec;
        bool paused; /* the write callback paused the transfer */
        char errmsg[ETCD_URL_MAX + 128];
};

static int watch_fail(struct etcd_watch *w, int r, const char *what) {
        if (w->result == 0) {
                w->result = r;
                snprintf(w->errmsg, sizeof(w->errmsg), "%s: %s", w->url, what);
        }
        return r;
}

static int64_t refill_one(int64_t credit, int64_t per_sec, uint64_t elapsed_usec) {
        int64_t add = elapsed_usec >= 1000000 ? per_sec : (int64_t) elapsed_usec * per_sec / 1000000;

        return credit + add < per_sec ? credit + add : per_sec;
}

static void refill(struct etcd_watch *w) {
        uint64_t now = monotonic_usec(), elapsed = now - w->refilled_usec;

        /* Whole units only, so that slow refills are never rounded away. */
        if (elapsed * ETCD_WATCH_MESSAGES_PER_SEC < 1000000 && elapsed * ETCD_WATCH_BYTES_PER_SEC < 1000000)
                return;
        w->byte_credit = refill_one(w->byte_credit, ETCD_WATCH_BYTES_PER_SEC, elapsed);
        w->message_credit = refill_one(w->message_credit, ETCD_WATCH_MESSAGES_PER_SEC, elapsed);
        w->refilled_usec = now;
}

/* Parses the complete lines in buf while message credit lasts (one
 * message a line); keeps the rest. The watch's result once a line ends
 * it, else 0. */
static int parse_lines(struct etcd_watch *w) {
        size_t off = 0, line;
        char *nl;
        int r = 0;

        while (w->result == 0 && w->message_credit > 0 && (nl = memchr(w->buf + off, '\n', w->len - off))) {
                line = (size_t) (nl - (w->buf + off)) + 1;
                w->message_credit--;
                r = etcd_parse_watch_message(w->buf + off, line);
                off += line;
                if (r != 0)
                        watch_fail(w, r,
                                   r == 1          ? "the key was deleted"
                                   : r == -ESTALE  ? "etcd cancelled the watch"
                                   : r == -EBADMSG ? "a watch message that is not etcd's"
                                                   : "etcd reported a watch error");
        }
        memmove(w->buf, w->buf + off, w->len - off);
        w->len -= off;
        w->buf[w->len] = '\0';
        return w->result;
}

/* Takes what curl received into buf and parses what credit allows; pauses
 * the transfer when a bucket is empty or buf holds unparsed messages. */
static size_t watch_write(char *ptr, size_t size, size_t nmemb, void *userdata) {
        struct etcd_watch *w = userdata;
        size_t n = size * nmemb;
        long status = 0;

        curl_easy_getinfo(w->curl, CURLINFO_RESPONSE_CODE, &status);
        if (status != 200) {
                watch_fail(w, -EIO, "etcd refused the watch");
                return 0;
        }
        if (w->result != 0)
                return w->result == 1 ? n : 0;
        refill(w);
        if (parse_lines(w) != 0)
                return w->result == 1 ? n : 0;
        if (n > ETCD_ANSWER_MAX - w->len) {
                if (memchr(w->buf, '\n', w->len) == NULL) {
                        watch_fail(w, -EBADMSG, "a watch message larger than the limit");
                        return 0;
                }
                w->paused = true; /* complete messages wait for credit */
                return CURL_WRITEFUNC_PAUSE;
        }
        if (w->byte_credit <= 0) {
                w->paused = true;
                return CURL_WRITEFUNC_PAUSE;
        }
        memcpy(w->buf + w->len, ptr, n);
        w->len += n;
        w->buf[w->len] = '\0';
        w->byte_credit -= (int64_t) n;
        parse_lines(w);
        return w->result == 0 || w->result == 1 ? n : 0;
}

struct etcd_watch *etcd_watch_close(struct etcd_watch *w) {
        if (!w)
                return NULL;
        if (w->multi && w->curl && w->started)
                curl_multi_remove_handle(w->multi, w->curl);
        if (w->curl)
                curl_easy_cleanup(w->curl);
        if (w->multi)
                curl_multi_cleanup(w->multi);
        curl_slist_free_all(w->headers);
        free(w->body);
        free(w);
        return NULL;
}

int etcd_watch_open(struct etcd_client *c, const char *key, int64_t from_revision,
                    struct etcd_watch **ret) {
        json_object *body, *create;
        struct etcd_watch *w;
        const char *json;
        bool failed;

        *ret = NULL;
        if (etcd_check_bytes(key, ETCD_KEY_MAX) < 0)
                return etcd_fail(c, -EINVAL, "key must be 1 .. %d bytes", ETCD_KEY_MAX);
        if (from_revision < 0)
                return etcd_fail(c, -EINVAL, "watch from a negative revision");
        w = calloc(1, sizeof(*w));
        if (!w)
                return etcd_fail(c, -ENOMEM, "out of memory");
        create = json_object_new_object();
        body = json_object_new_object();
        failed = !create || !body ||
                 json_object_object_add(create, "key", etcd_json_base64(key)) < 0 ||
                 json_object_object_add(create, "start_revision", etcd_json_int64(from_revision)) < 0;
        if (!failed && json_object_object_add(body, "create_request", create) == 0)
                create = NULL;
        else
                failed = true;
        json = failed ? NULL : json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
        w->body = json ? strdup(json) : NULL;
        json_object_put(create);
        json_object_put(body);
        snprintf(w->url, sizeof(w->url), "%s/v3/watch", etcd_current_endpoint(c));
        w->curl = curl_easy_init();
        w->multi = curl_multi_init();
        w->headers = curl_slist_append(NULL, "Content-Type: application/json");
        if (!w->body || !w->curl || !w->multi || !w->headers) {
                etcd_watch_close(w);
                return etcd_fail(c, -ENOMEM, "out of memory");
        }
        etcd_curl_defaults(w->curl);
        curl_easy_setopt(w->curl, CURLOPT_URL, w->url);
        curl_easy_setopt(w->curl, CURLOPT_HTTPHEADER, w->headers);
        curl_easy_setopt(w->curl, CURLOPT_POSTFIELDS, w->body);
        curl_easy_setopt(w->curl, CURLOPT_POSTFIELDSIZE, (long) strlen(w->body));
        curl_easy_setopt(w->curl, CURLOPT_CONNECTTIMEOUT_MS, ETCD_WATCH_CONNECT_MS);
        curl_easy_setopt(w->curl, CURLOPT_WRITEFUNCTION, watch_write);
        curl_easy_setopt(w->curl, CURLOPT_WRITEDATA, w);
        w->byte_credit = ETCD_WATCH_BYTES_PER_SEC;
        w->message_credit = ETCD_WATCH_MESSAGES_PER_SEC;
        w->refilled_usec = monotonic_usec();
        *ret = w;
        return 0;
}

/* The transfer ended: a stream that ends was cut, however it ended. */
static int watch_finished(struct etcd_watch *w, CURLcode cr) {
        if (w->result != 0)
                return w->result;
        if (cr == CURLE_OK)
                return watch_fail(w, -ECONNRESET, "the watch stream ended");
        return watch_fail(w,
                          cr == CURLE_COULDNT_CONNECT       ? -ECONNREFUSED
                          : cr == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT
                                                           : -ECONNRESET,
                          curl_easy_strerror(cr));
}

/* The ms until the buckets give the paused transfer credit again (>= 1). */
static int64_t until_credit_ms(const struct etcd_watch *w) {
        int64_t ms = 1;

        if (w->message_credit <= 0)
                ms = (1 - w->message_credit) * 1000 / ETCD_WATCH_MESSAGES_PER_SEC + 1;
        if (w->byte_credit <= 0) {
                int64_t bytes_ms = (1 - w->byte_credit) * 1000 / ETCD_WATCH_BYTES_PER_SEC + 1;

                ms = bytes_ms > ms ? bytes_ms : ms;
        }
        return ms;
}

/* A paused transfer resumes once both buckets have credit and buf has
 * room again; until then the step sleeps (never polling curl: a paused
 * transfer's socket stays readable). 1 when it resumed. */
static bool resume(struct etcd_watch *w, int64_t deadline_ms) {
        int64_t now = monotonic_ms(), wait;

        refill(w);
        if (parse_lines(w) != 0)
                return true;
        if (w->byte_credit > 0 && w->message_credit > 0 && !memchr(w->buf, '\n', w->len)) {
                w->paused = false;
                curl_easy_pause(w->curl, CURLPAUSE_CONT); /* may call watch_write at once */
                return true;
        }
        wait = until_credit_ms(w);
        if (now + wait > deadline_ms)
                wait = deadline_ms > now ? deadline_ms - now : 0;
        if (wait > 0)
                nanosleep(&(struct timespec) {wait / 1000, (long) (wait % 1000) * 1000000L}, NULL);
        return false;
}

int etcd_watch_step(struct etcd_watch *w, int timeout_ms) {
        int64_t deadline = monotonic_ms() + (timeout_ms > 0 ? timeout_ms : 0);
        struct CURLMsg *msg;
        int running, left;

        if (w->result != 0)
                return w->result;
        if (!w->started) {
                if (curl_multi_add_handle(w->multi, w->curl) != CURLM_OK)
                        return watch_fail(w, -ENOMEM, "curl_multi_add_handle failed");
                w->started = true;
        }
        for (;;) {
                int64_t now;

                if (w->paused && !resume(w, deadline)) {
                        if (w->result != 0)
                                return w->result;
                        if (monotonic_ms() >= deadline)
                                return 0;
                        continue;
                }
                if (w->result != 0)
                        return w->result;
                if (curl_multi_perform(w->multi, &running) != CURLM_OK)
                        return watch_fail(w, -EIO, "curl_multi_perform failed");
                while ((msg = curl_multi_info_read(w->multi, &left)))
                        if (msg->msg == CURLMSG_DONE)
                                return watch_finished(w, msg->data.result);
                if (w->result != 0)
                        return w->result;
                now = monotonic_ms();
                if (now >= deadline)
                        return 0;
                if (w->paused)
                        continue;
                if (curl_multi_poll(w->multi, NULL, 0, (int) (deadline - now), NULL) != CURLM_OK)
                        return watch_fail(w, -EIO, "curl_multi_poll failed");
        }
}

const char *etcd_watch_errmsg(const struct etcd_watch *w) {
        return w->errmsg;
}
