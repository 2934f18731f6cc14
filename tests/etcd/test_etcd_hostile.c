/* SPDX-License-Identifier: MIT */
/* The client against a hostile "etcd": a loopback server (fake_etcd.c)
 * that answers what etcd never would (garbage, an endless body, HTML
 * errors, a trickle, a watch stream without line ends or flooded). Every
 * such answer is refused within the budget and bounded in memory; what is
 * not etcd's, or UNAVAILABLE, moves to the next endpoint, etcd's own
 * INVALID_ARGUMENT does not. */
#include "etcd_lease.h"
#include "fake_etcd.h"
#include "monotonic.h"
#include "runqueue_wait.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define OK_HEAD FAKE_OK_HEAD
#define GRANT "{\"header\":{\"revision\":\"3\"},\"ID\":\"77\",\"TTL\":\"5\"}"

/* A member that answers one request and keeps the connection, then takes
 * the next request on it, drops it after drop_ms with nothing answered,
 * and never answers on a new connection: curl retries a request that died
 * on a reused connection, and that retry must not get a budget of its own. */
struct dropper {
        int listen_fd;
        char url[64];
        int drop_ms;
        pthread_t thread;
        atomic_bool stop;
};

static void *serve_drop(void *arg) {
        struct dropper *d = arg;
        char answer[256], path[128];
        int fds[8], n = 0, i;

        snprintf(answer, sizeof(answer),
                 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                 strlen(GRANT), GRANT);

        while (!d->stop && n < 8) {
                struct pollfd p = {d->listen_fd, POLLIN, 0};

                if (poll(&p, 1, 20) <= 0)
                        continue;
                if ((fds[n] = accept(d->listen_fd, NULL, NULL)) < 0)
                        continue;
                if (n++ > 0)
                        continue; /* later connections: never an answer */
                fake_read_request(fds[0], path, sizeof(path));
                assert_int_equal(send(fds[0], answer, strlen(answer), MSG_NOSIGNAL),
                                 (ssize_t) strlen(answer));
                fake_read_request(fds[0], path, sizeof(path));
                usleep((useconds_t) d->drop_ms * 1000);
                shutdown(fds[0], SHUT_RDWR);
        }
        while (!d->stop)
                usleep(20000);
        for (i = 0; i < n; i++)
                close(fds[i]);
        return NULL;
}

static struct etcd_client *open_on(const char *endpoints) {
        struct etcd_client *c;

        assert_int_equal(etcd_client_open(endpoints, &c), 0);
        return c;
}

#define PROXY_502 "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n"
#define PROXY_PAGE "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"

/* Only etcd's own answers stand (etcd's error, or JSON etcd could have
 * sent with a field wrong): asked once. What etcd never sends is another
 * member's business: the only endpoint is asked again, round after round,
 * until the budget is spent, and the call fails with what it got. */
static void test_garbage_and_errors_refused(void **state) {
        static const struct {
                const char *head, *body;
                int expect;
                bool stands;
        } cases[] = {
                {OK_HEAD, "not json", -EBADMSG, false},
                {OK_HEAD, "{\"header\":{},\"ID\":\"77\"}", -EBADMSG, true},
                {OK_HEAD, "", -EBADMSG, false},
                {"HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n", "<html>no</html>", -EBADMSG, false},
                {PROXY_502, PROXY_PAGE, -EBADMSG, false},
                {"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n",
                 "{\"error\":\"x\",\"message\":\"bad TTL\",\"code\":3}", -EINVAL, true},
                {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\n", "{\"a\":", -EBADMSG, false},
        };
        struct etcd_lease l;
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct fake f = {.head = cases[i].head, .body = cases[i].body};
                struct etcd_client *c;
                int r;

                fake_start(&f);
                c = open_on(f.url);
                r = etcd_lease_grant(c, 5, 400 * 1000, &l);
                if (r != cases[i].expect)
                        fail_msg("case %zu: %d (%s), expected %d", i, r, etcd_errmsg(c), cases[i].expect);
                if (cases[i].stands ? f.requests != 1 : f.requests < 2)
                        fail_msg("case %zu: asked %d times (%s)", i, (int) f.requests,
                                 cases[i].stands ? "stands: once" : "not etcd's: again");
                etcd_client_close(c);
                fake_stop(&f);
        }
}

/* A broken endpoint listed first (a proxy's 502 page, a 200 whose body is
 * not JSON, a connection closed with nothing answered): the call moves to
 * the healthy member, and the next calls start there. */
static void test_broken_endpoint_first_fails_over(void **state) {
        static const struct {
                const char *name, *head, *body;
        } broken[] = {
                {"a proxy's 502 page", PROXY_502, PROXY_PAGE},
                {"a 200 that is not JSON", OK_HEAD, "<html>ok</html>"},
                {"a transport error", "", ""},
        };
        size_t i;

        for (i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
                struct fake bad = {.head = broken[i].head, .body = broken[i].body};
                struct fake good = {.head = OK_HEAD, .body = GRANT};
                struct etcd_client *c;
                struct etcd_lease l;
                char list[160];
                int k;

                fake_start(&bad);
                fake_start(&good);
                snprintf(list, sizeof(list), "%s,%s", bad.url, good.url);
                c = open_on(list);
                for (k = 0; k < 5; k++)
                        if (etcd_lease_grant(c, 5, 2000 * 1000, &l) != 0 || l.id != 77)
                                fail_msg("%s first, call %d: %s", broken[i].name, k, etcd_errmsg(c));
                printf("%s first: %d requests to it, %d to the healthy member, in 5 calls\n", broken[i].name,
                       (int) bad.requests, (int) good.requests);
                assert_int_equal(bad.requests, 1);
                assert_int_equal(good.requests, 5);
                assert_string_equal(etcd_current_endpoint(c), good.url);
                etcd_client_close(c);
                fake_stop(&bad);
                fake_stop(&good);
        }
}

/* "Lease not found" is a lost lease to keep-alive, and done to revoke. */
static void test_lease_not_found(void **state) {
        struct fake f = {.head = "HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n",
                         .body = "{\"error\":\"etcdserver: requested lease not found\","
                                 "\"message\":\"etcdserver: requested lease not found\",\"code\":5}"};
        struct etcd_client *c;
        struct etcd_lease l;

        fake_start(&f);
        c = open_on(f.url);
        assert_int_equal(etcd_lease_keepalive(c, 77, 2000 * 1000, &l), -ESTALE);
        assert_int_equal(l.ttl_sec, 0);
        assert_int_equal(etcd_lease_revoke(c, 77, 2000 * 1000), 0);
        assert_int_equal(f.requests, 2);
        etcd_client_close(c);
        fake_stop(&f);
}

static void test_endless_answer_bounded(void **state) {
        struct fake f = {.head = OK_HEAD, .body = NULL, .body_fill = ' '};
        struct etcd_client *c;
        struct etcd_lease l;

        fake_start(&f);
        c = open_on(f.url);
        assert_int_equal(etcd_lease_grant(c, 5, 500 * 1000, &l), -EBADMSG);
        assert_non_null(strstr(etcd_errmsg(c), "larger than"));
        etcd_client_close(c);
        fake_stop(&f);
}

/* An endpoint whose answer is not etcd's, then one that runs out of its
 * share of the budget: the call fails with the answer that was wrong, not
 * with the timeout that came after it, whichever attempt ran last. */
static void test_wrong_answer_outlasts_a_later_timeout(void **state) {
        struct fake big = {.head = OK_HEAD, .body = NULL, .body_fill = ' '};
        struct fake slow = {.head = OK_HEAD, .body = GRANT, .trickle_ms = 1000};
        struct etcd_client *c;
        struct etcd_lease l;
        char list[160];

        fake_start(&big);
        fake_start(&slow);
        snprintf(list, sizeof(list), "%s,%s", big.url, slow.url);
        c = open_on(list);
        assert_int_equal(etcd_lease_grant(c, 5, 600 * 1000, &l), -EBADMSG);
        assert_non_null(strstr(etcd_errmsg(c), "larger than"));
        assert_true(slow.requests >= 1);
        etcd_client_close(c);
        fake_stop(&big);
        fake_stop(&slow);
}

/* A server that answers a byte every 50 ms: the budget, not the server,
 * decides when the call ends. */
static void test_trickle_ends_with_the_budget(void **state) {
        struct fake f = {.head = OK_HEAD, .body = GRANT, .trickle_ms = 50};
        struct etcd_client *c;
        struct etcd_lease l;
        int64_t start, took, waited;

        fake_start(&f);
        c = open_on(f.url);
        start = monotonic_ms();
        waited = runqueue_wait_ms();
        assert_int_equal(etcd_lease_grant(c, 5, 600 * 1000, &l), -ETIMEDOUT);
        took = monotonic_ms() - start;
        waited = runqueue_wait_ms() - waited;
        printf("a trickling answer ended after %lld ms, %lld waiting for a CPU (budget 600 ms)\n",
               (long long) took, (long long) waited);
        assert_true(took >= 590 && took - waited < 1000);
        etcd_client_close(c);
        fake_stop(&f);
}

static void test_dropped_reused_connection_keeps_the_budget(void **state) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        struct dropper d = {.drop_ms = 600};
        socklen_t alen = sizeof(a);
        struct etcd_client *c;
        struct etcd_lease l;
        int64_t start, took, waited;
        int r;

        d.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_int_equal(bind(d.listen_fd, (struct sockaddr *) &a, sizeof(a)), 0);
        assert_int_equal(listen(d.listen_fd, 8), 0);
        assert_int_equal(getsockname(d.listen_fd, (struct sockaddr *) &a, &alen), 0);
        snprintf(d.url, sizeof(d.url), "http://127.0.0.1:%d", ntohs(a.sin_port));
        assert_int_equal(pthread_create(&d.thread, NULL, serve_drop, &d), 0);

        c = open_on(d.url);
        assert_int_equal(etcd_lease_grant(c, 5, 2000 * 1000, &l), 0); /* the connection stays */
        start = monotonic_ms();
        waited = runqueue_wait_ms();
        r = etcd_lease_keepalive(c, 77, 1000 * 1000, &l);
        took = monotonic_ms() - start;
        waited = runqueue_wait_ms() - waited;
        printf("a request dropped on a reused connection after 600 ms: %d after %lld ms, %lld waiting "
               "for a CPU (budget 1000 ms)\n",
               r, (long long) took, (long long) waited);
        assert_true(r < 0);
        assert_true(took - waited < 1000 + 100);
        etcd_client_close(c);
        d.stop = true;
        pthread_join(d.thread, NULL);
        close(d.listen_fd);
}

/* UNAVAILABLE (no leader) at the first endpoint: the next one answers. */
static void test_unavailable_fails_over(void **state) {
        struct fake bad = {.head = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n",
                           .body = "{\"error\":\"etcdserver: no leader\",\"message\":"
                                   "\"etcdserver: no leader\",\"code\":14}"};
        struct fake good = {.head = OK_HEAD, .body = GRANT};
        struct etcd_client *c;
        struct etcd_lease l;
        char list[160];

        fake_start(&bad);
        fake_start(&good);
        snprintf(list, sizeof(list), "%s,%s", bad.url, good.url);
        c = open_on(list);
        assert_int_equal(etcd_lease_grant(c, 5, 2000 * 1000, &l), 0);
        assert_int_equal(l.id, 77);
        assert_int_equal(l.ttl_sec, 5);
        assert_int_equal(bad.requests, 1);
        assert_string_equal(etcd_current_endpoint(c), good.url);
        etcd_client_close(c);

        /* Only the unavailable one: rounds until the budget, then -EAGAIN. */
        c = open_on(bad.url);
        assert_int_equal(etcd_lease_grant(c, 5, 300 * 1000, &l), -EAGAIN);
        assert_true(bad.requests > 2);
        assert_non_null(strstr(etcd_errmsg(c), "no leader"));
        etcd_client_close(c);
        fake_stop(&bad);
        fake_stop(&good);
}

static void test_watch_streams(void **state) {
        struct fake del = {.head = OK_HEAD, .hold_ms = 2000,
                           .body = "{\"result\":{\"header\":{},\"created\":true}}\n"
                                   "{\"result\":{\"header\":{},\"events\":[{\"type\":\"DELETE\","
                                   "\"kv\":{\"key\":\"aw==\",\"mod_revision\":\"9\"}}]}}\n"};
        struct fake endless = {.head = OK_HEAD, .body = NULL, .body_fill = 'x', .hold_ms = 2000};
        struct fake ends = {.head = OK_HEAD, .body = "{\"result\":{\"header\":{},\"created\":true}}\n"};
        struct etcd_client *c;
        struct etcd_watch *w;
        int64_t deadline;
        int r = 0;

        fake_start(&del);
        c = open_on(del.url);
        assert_int_equal(etcd_watch_open(c, "k", 5, &w), 0);
        for (deadline = monotonic_ms() + 2000; r == 0 && monotonic_ms() < deadline;)
                r = etcd_watch_step(w, 100);
        assert_int_equal(r, 1);
        etcd_watch_close(w);
        etcd_client_close(c);
        fake_stop(&del);

        /* A message that never ends is refused at the bound. */
        fake_start(&endless);
        c = open_on(endless.url);
        assert_int_equal(etcd_watch_open(c, "k", 5, &w), 0);
        for (r = 0, deadline = monotonic_ms() + 2000; r == 0 && monotonic_ms() < deadline;)
                r = etcd_watch_step(w, 100);
        assert_int_equal(r, -EBADMSG);
        assert_int_equal(etcd_watch_step(w, 0), -EBADMSG);
        etcd_watch_close(w);
        etcd_client_close(c);
        fake_stop(&endless);

        /* A stream that ends is reported as cut, so the waiter reads again. */
        fake_start(&ends);
        c = open_on(ends.url);
        assert_int_equal(etcd_watch_open(c, "k", 5, &w), 0);
        for (r = 0, deadline = monotonic_ms() + 2000; r == 0 && monotonic_ms() < deadline;)
                r = etcd_watch_step(w, 100);
        assert_int_equal(r, -ECONNRESET);
        etcd_watch_close(w);
        etcd_client_close(c);
        fake_stop(&ends);
}

/* The calls that fill a caller's struct write all of it on success: each
 * struct is filled with 0xa5 first. */
#define PATTERN(x) memset(&(x), 0xa5, sizeof(x))
#define HELD_KV "{\"key\":\"aw==\",\"create_revision\":\"5\",\"mod_revision\":\"6\",\"value\":\"YQ==\"," \
                "\"lease\":\"77\"}"

static void test_pattern_filled(void **state) {
        static const char *bodies[] = {
                GRANT,
                "{\"result\":{\"header\":{},\"ID\":\"77\",\"TTL\":\"5\"}}",
                "{\"header\":{\"revision\":\"9\"},\"kvs\":[" HELD_KV "],\"count\":\"1\"}",
                "{\"header\":{\"revision\":\"9\"},\"succeeded\":true,\"responses\":[{\"response_put\":"
                "{\"header\":{}}},{\"response_range\":{\"header\":{},\"kvs\":[" HELD_KV "]}}]}",
        };
        struct fake f[4];
        struct etcd_client *c[4];
        struct etcd_lease l;
        struct etcd_holder h;
        int64_t before;
        size_t i;

        for (i = 0; i < 4; i++) {
                f[i] = (struct fake) {.head = OK_HEAD, .body = bodies[i]};
                fake_start(&f[i]);
                c[i] = open_on(f[i].url);
        }
        before = monotonic_ms();
        PATTERN(l);
        assert_int_equal(etcd_lease_grant(c[0], 5, 2000 * 1000, &l), 0);
        assert_true(l.id == 77 && l.ttl_sec == 5 && l.sent_ms >= before && l.sent_ms <= monotonic_ms());
        PATTERN(l);
        assert_int_equal(etcd_lease_keepalive(c[1], 77, 2000 * 1000, &l), 0);
        assert_true(l.id == 77 && l.ttl_sec == 5 && l.sent_ms >= before && l.sent_ms <= monotonic_ms());
        for (i = 2; i < 4; i++) {
                PATTERN(h);
                if (i == 2)
                        assert_int_equal(etcd_read(c[i], "k", 2000 * 1000, &h), 0);
                else
                        assert_int_equal(etcd_acquire(c[i], "k", "a", 77, 2000 * 1000, &h), 1);
                assert_true(h.held);
                assert_string_equal(h.value, "a");
                assert_true(h.create_revision == 5 && h.mod_revision == 6 && h.lease == 77 && h.revision == 9);
        }
        for (i = 0; i < 4; i++) {
                etcd_client_close(c[i]);
                fake_stop(&f[i]);
        }
}

/* A keep-alive answered with etcd's largest TTL (9e9 s) for a lease asked
 * for 3 s: the deadline for acting never reaches past the 3 s asked. */
static void test_huge_keepalive_ttl_bounded(void **state) {
        struct fake f = {.head = OK_HEAD,
                         .body = "{\"result\":{\"header\":{},\"ID\":\"77\",\"TTL\":\"9000000000\"}}"};
        struct etcd_client *c;
        struct etcd_lease l;
        int64_t deadline;

        fake_start(&f);
        c = open_on(f.url);
        assert_int_equal(etcd_lease_keepalive(c, 77, 2000 * 1000, &l), 0);
        assert_true(l.ttl_sec == INT64_C(9000000000));
        deadline = etcd_lease_deadline_ms(&l, 3, 100);
        printf("a keep-alive answered TTL %lld s for 3 s asked: deadline %lld ms after it was sent\n",
               (long long) l.ttl_sec, (long long) (deadline - l.sent_ms));
        assert_true(deadline == l.sent_ms + 3000 - 100);
        /* An answer below what was asked is believed as it is. */
        l.ttl_sec = 1;
        assert_true(etcd_lease_deadline_ms(&l, 3, 100) == l.sent_ms + 1000 - 100);
        l.ttl_sec = 0;
        assert_true(etcd_lease_deadline_ms(&l, 3, 100) == INT64_MIN);
        etcd_client_close(c);
        fake_stop(&f);
}

/* A watch stream that sends PUT events as fast as they are taken: the
 * watcher spends a bounded share of a CPU on it, and the stream is still
 * watched (no wake-up, no failure). */
static void test_watch_flood_bounded(void **state) {
        struct fake f = {.head = OK_HEAD, .body = "{\"result\":{\"header\":{},\"created\":true}}\n",
                         .flood = "{\"result\":{\"header\":{\"revision\":\"7\"},\"events\":[{\"kv\":"
                                  "{\"key\":\"aw==\",\"create_revision\":\"7\",\"mod_revision\":\"7\"}}]}}\n"};
        struct timespec cpu0, cpu1;
        struct etcd_client *c;
        struct etcd_watch *w;
        int64_t start, wall, cpu_ms;
        int r = 0;

        fake_start(&f);
        c = open_on(f.url);
        assert_int_equal(etcd_watch_open(c, "k", 5, &w), 0);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
        start = monotonic_ms();
        while (r == 0 && monotonic_ms() - start < 2000)
                r = etcd_watch_step(w, 100);
        wall = monotonic_ms() - start;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
        cpu_ms = (cpu1.tv_sec - cpu0.tv_sec) * 1000 + (cpu1.tv_nsec - cpu0.tv_nsec) / 1000000;
        printf("a watch flooded with PUT events for %lld ms: the watcher used %lld ms of CPU (bound 10%%)\n",
               (long long) wall, (long long) cpu_ms);
        assert_int_equal(r, 0);
        assert_true(cpu_ms * 10 <= wall);
        etcd_watch_close(w);
        etcd_client_close(c);
        fake_stop(&f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_garbage_and_errors_refused),
                cmocka_unit_test(test_broken_endpoint_first_fails_over),
                cmocka_unit_test(test_lease_not_found),
                cmocka_unit_test(test_endless_answer_bounded),
                cmocka_unit_test(test_wrong_answer_outlasts_a_later_timeout),
                cmocka_unit_test(test_trickle_ends_with_the_budget),
                cmocka_unit_test(test_dropped_reused_connection_keeps_the_budget),
                cmocka_unit_test(test_unavailable_fails_over),
                cmocka_unit_test(test_watch_streams),
                cmocka_unit_test(test_watch_flood_bounded),
                cmocka_unit_test(test_huge_keepalive_ttl_bounded),
                cmocka_unit_test(test_pattern_filled),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
