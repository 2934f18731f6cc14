/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "probes.h"

struct body {
        size_t total;
        size_t kept;
        char text[PROBE_HTTP_BODY_KEEP + 1];
};

/* Keeps the start of the body for the error, counts the rest; past
 * PROBE_HTTP_BODY_MAX ends the transfer (CURLE_WRITE_ERROR). */
static size_t body_write(char *data, size_t size, size_t n, void *userdata) {
        struct body *b = userdata;
        size_t len = size * n;

        if (len > PROBE_HTTP_BODY_MAX - b->total)
                return 0;
        b->total += len;
        if (b->kept < PROBE_HTTP_BODY_KEEP) {
                size_t room = PROBE_HTTP_BODY_KEEP - b->kept;
                size_t take = len < room ? len : room;
                memcpy(b->text + b->kept, data, take);
                b->kept += take;
                b->text[b->kept] = '\0';
        }
        return len;
}

bool probe_run_http(const struct probe_spec *p, char *error, size_t size) {
        char curl_error[CURL_ERROR_SIZE] = "";
        struct body body = { 0 };
        long status = 0, timeout_ms = (long) ((p->s.timeout_usec + 999) / 1000);
        bool ok = false;
        CURLcode r;
        CURL *h = curl_easy_init();

        if (!h) {
                snprintf(error, size, "cannot create an HTTP request (out of memory)");
                return false;
        }
        /* Only what the URL says: no proxy from the environment, no
         * redirect, no other protocol, no signals (we run in a thread). */
        (void) curl_easy_setopt(h, CURLOPT_URL, p->target);
        (void) curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        (void) curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
        (void) curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
        (void) curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        (void) curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
        (void) curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
        (void) curl_easy_setopt(h, CURLOPT_MAXFILESIZE, (long) PROBE_HTTP_BODY_MAX);
        (void) curl_easy_setopt(h, CURLOPT_USERAGENT, "sdlive-probe");
        (void) curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_error);
        (void) curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_write);
        (void) curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);

        r = curl_easy_perform(h);
        if (r == CURLE_WRITE_ERROR || r == CURLE_FILESIZE_EXCEEDED)
                snprintf(error, size, "body larger than %d bytes", PROBE_HTTP_BODY_MAX);
        else if (r != CURLE_OK)
                snprintf(error, size, "%s", curl_error[0] ? curl_error : curl_easy_strerror(r));
        else if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
                snprintf(error, size, "no HTTP status");
        else if (status < (long) p->s.status_min || status > (long) p->s.status_max)
                snprintf(error, size, "HTTP %ld (expected %u-%u): %s", status, p->s.status_min,
                         p->s.status_max, body.text);
        else
                ok = true;
        curl_easy_cleanup(h);
        return ok;
}
