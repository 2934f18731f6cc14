/* SPDX-License-Identifier: MIT */
/* The answer parser against etcd's real answers, garbage, and mutations
 * of the real answers: every malformed answer is -EBADMSG, every accepted
 * one holds what etcd said, and none crashes (run under ASan). */
#include "etcd_internal.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define HDR "\"header\":{\"cluster_id\":\"16910563570454714076\",\"member_id\":\"1790562940\"," \
            "\"revision\":\"7\",\"raft_term\":\"2\"}"
/* base64 of "sdlive/leader" and "node-a" */
#define KEY "\"c2RsaXZlL2xlYWRlcg==\""
#define VAL "\"bm9kZS1h\""
#define KV "{\"key\":" KEY ",\"create_revision\":\"5\",\"mod_revision\":\"6\",\"version\":\"2\"," \
           "\"value\":" VAL ",\"lease\":\"5736919831009302536\"}"

static const char grant_ok[] = "{" HDR ",\"ID\":\"5736919831009302534\",\"TTL\":\"10\"}";
static const char keepalive_ok[] = "{\"result\":{" HDR ",\"ID\":\"42\",\"TTL\":\"5\"}}";
static const char keepalive_gone[] = "{\"result\":{" HDR ",\"ID\":\"42\"}}";
static const char range_held[] = "{" HDR ",\"kvs\":[" KV "],\"count\":\"1\"}";
static const char range_absent[] = "{" HDR "}";
static const char acquire_taken[] = "{" HDR ",\"succeeded\":true,\"responses\":[{\"response_put\":{"
                                    HDR "}},{\"response_range\":{" HDR ",\"kvs\":[" KV "]}}]}";
static const char acquire_held[] = "{" HDR ",\"responses\":[{\"response_range\":{" HDR ",\"kvs\":["
                                   KV "],\"count\":\"1\"}}]}";
static const char release_ok[] = "{" HDR ",\"succeeded\":true,\"responses\":[{"
                                 "\"response_delete_range\":{" HDR ",\"deleted\":\"1\"}}]}";
static const char release_refused[] = "{" HDR "}";
static const char error_answer[] = "{\"error\":\"etcdserver: requested lease not found\","
                                   "\"message\":\"etcdserver: requested lease not found\",\"code\":5}";
static const char watch_created[] = "{\"result\":{" HDR ",\"created\":true}}\n";
static const char watch_deleted[] = "{\"result\":{" HDR ",\"events\":[{\"kv\":" KV "},{\"type\":"
                                    "\"DELETE\",\"kv\":{\"key\":" KEY ",\"mod_revision\":\"8\"}}]}}\n";
static const char watch_canceled[] = "{\"result\":{\"header\":{\"raft_term\":\"2\"},"
                                     "\"canceled\":true,\"compact_revision\":\"3\"}}";

static void test_real_answers(void **state) {
        struct etcd_lease l;
        struct etcd_holder h;
        bool ok;
        int64_t code;
        char msg[64];

        assert_int_equal(etcd_parse_grant(grant_ok, strlen(grant_ok), &l), 0);
        assert_int_equal(l.id, INT64_C(5736919831009302534));
        assert_int_equal(l.ttl_sec, 10);
        assert_int_equal(etcd_parse_keepalive(keepalive_ok, strlen(keepalive_ok), 42, &l), 0);
        assert_int_equal(l.ttl_sec, 5);
        /* proto3 omits a zero TTL: the lease is gone. */
        assert_int_equal(etcd_parse_keepalive(keepalive_gone, strlen(keepalive_gone), 42, &l), 0);
        assert_int_equal(l.ttl_sec, 0);
        /* An answer about another lease is not ours. */
        assert_int_equal(etcd_parse_keepalive(keepalive_ok, strlen(keepalive_ok), 43, &l), -EBADMSG);

        assert_int_equal(etcd_parse_range(range_held, strlen(range_held), &h), 0);
        assert_true(h.held);
        assert_string_equal(h.value, "node-a");
        assert_int_equal(h.create_revision, 5);
        assert_int_equal(h.mod_revision, 6);
        assert_int_equal(h.lease, INT64_C(5736919831009302536));
        assert_int_equal(h.revision, 7);
        assert_int_equal(etcd_parse_range(range_absent, strlen(range_absent), &h), 0);
        assert_false(h.held);

        assert_int_equal(etcd_parse_acquire(acquire_taken, strlen(acquire_taken), &ok, &h), 0);
        assert_true(ok);
        assert_int_equal(h.create_revision, 5);
        assert_int_equal(etcd_parse_acquire(acquire_held, strlen(acquire_held), &ok, &h), 0);
        assert_false(ok);
        assert_string_equal(h.value, "node-a");

        assert_int_equal(etcd_parse_release(release_ok, strlen(release_ok), &ok), 0);
        assert_true(ok);
        assert_int_equal(etcd_parse_release(release_refused, strlen(release_refused), &ok), 0);
        assert_false(ok);

        assert_int_equal(etcd_parse_error(error_answer, strlen(error_answer), &code, msg, sizeof(msg)), 0);
        assert_int_equal(code, 5);
        assert_string_equal(msg, "etcdserver: requested lease not found");
        assert_int_equal(etcd_grpc_errno(code), -ENOENT);
        assert_int_equal(etcd_grpc_errno(14), -EAGAIN);

        assert_int_equal(etcd_parse_watch_message(watch_created, strlen(watch_created)), 0);
        assert_int_equal(etcd_parse_watch_message(watch_deleted, strlen(watch_deleted)), 1);
        assert_int_equal(etcd_parse_watch_message(watch_canceled, strlen(watch_canceled)), -ESTALE);
}

/* Answers etcd never sends, each -EBADMSG from the parser named. */
enum parser { GRANT, KEEPALIVE, RANGE, ACQUIRE, RELEASE, ERROR, WATCH };

static int run_parser(enum parser p, const char *text, size_t len) {
        struct etcd_lease l;
        struct etcd_holder h;
        int64_t code;
        char msg[32];
        bool ok;

        switch (p) {
        case GRANT:
                return etcd_parse_grant(text, len, &l);
        case KEEPALIVE:
                return etcd_parse_keepalive(text, len, 42, &l);
        case RANGE:
                return etcd_parse_range(text, len, &h);
        case ACQUIRE:
                return etcd_parse_acquire(text, len, &ok, &h);
        case RELEASE:
                return etcd_parse_release(text, len, &ok);
        case ERROR:
                return etcd_parse_error(text, len, &code, msg, sizeof(msg));
        case WATCH:
                return etcd_parse_watch_message(text, len);
        }
        return 0;
}

/* A grant answer with the ID id (JSON), and a range answer with one key
 * of fields (JSON members). */
#define GRANT_ID(id) {GRANT, "{" HDR ",\"ID\":" id ",\"TTL\":\"10\"}"}
#define RANGE_KV(fields) {RANGE, "{" HDR ",\"kvs\":[{" fields "}]}"}

static void test_garbage_answers(void **state) {
        static const struct {
                enum parser p;
                const char *text;
        } bad[] = {
                {GRANT, ""},
                {GRANT, "   \n"},
                {GRANT, "not json"},
                {GRANT, "[]"},
                {GRANT, "\"string\""},
                {GRANT, "{" HDR ",\"ID\":\"1\",\"TTL\":\"10\"} trailing"},
                {GRANT, "{" HDR ",\"ID\":\"1\",\"TTL\":\"10\"}{}"},
                {GRANT, "{" HDR ",\"ID\":\"1\",\"TTL\":\"10\""},               /* truncated */
                {GRANT, "{\"ID\":\"1\",\"TTL\":\"10\"}"},                      /* no header */
                {GRANT, "{\"header\":[],\"ID\":\"1\",\"TTL\":\"10\"}"},        /* header not an object */
                {GRANT, "{" HDR ",\"TTL\":\"10\"}"},                           /* no ID */
                {GRANT, "{" HDR ",\"ID\":\"1\"}"},                             /* no TTL */
                GRANT_ID("\"0\""),
                GRANT_ID("\"-1\""),
                GRANT_ID("-1"),
                GRANT_ID("\"1x\""),
                GRANT_ID("\"\""),
                GRANT_ID("\" 1\""),
                GRANT_ID("\"9223372036854775808\""),
                GRANT_ID("\"99999999999999999999999\""),
                GRANT_ID("9223372036854775808"),
                GRANT_ID("1e300"),
                GRANT_ID("1.5"),
                GRANT_ID("true"),
                GRANT_ID("null"),
                GRANT_ID("{}"),
                {GRANT, "{" HDR ",\"ID\":\"1\",\"TTL\":\"0\"}"},
                {GRANT, "{\"header\":{\"revision\":\"-3\"},\"ID\":\"1\",\"TTL\":\"10\"}"},
                {GRANT, "{\"header\":{\"revision\":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]},\"ID\":\"1\",\"TTL\":\"1\"}"},
                {GRANT, "{'ID':'1'}"},
                {GRANT, "{\"ID\":\"\xff\xfe\"," HDR ",\"TTL\":\"1\"}"}, /* not UTF-8 */
                {KEEPALIVE, "{" HDR ",\"ID\":\"42\",\"TTL\":\"5\"}"},         /* no result */
                {KEEPALIVE, "{\"result\":\"x\"}"},
                {KEEPALIVE, "{\"result\":{\"ID\":\"42\",\"TTL\":\"5\"}}"},    /* no header */
                {KEEPALIVE, "{\"result\":{" HDR ",\"TTL\":\"5\"}}"},          /* no ID */
                {KEEPALIVE, "{\"result\":{" HDR ",\"ID\":\"42\",\"TTL\":\"five\"}}"},
                {KEEPALIVE, "{\"result\":{" HDR ",\"ID\":\"42\",\"TTL\":\"-5\"}}"},
                {RANGE, "{\"header\":{\"revision\":\"9223372036854775808\"}}"},  /* INT64_MAX + 1 */
                {RANGE, "{\"header\":{\"revision\":\"9999999999999999999\"}}"},
                {RANGE, "{" HDR ",\"kvs\":{}}"},
                {RANGE, "{" HDR ",\"kvs\":[" KV "," KV "]}"},                 /* one key asked */
                {RANGE, "{" HDR ",\"kvs\":[1]}"},
                RANGE_KV(""),
                RANGE_KV("\"key\":" KEY ",\"mod_revision\":\"6\""),
                RANGE_KV("\"key\":" KEY ",\"create_revision\":\"0\",\"mod_revision\":\"6\""),
                RANGE_KV("\"key\":" KEY ",\"create_revision\":\"7\",\"mod_revision\":\"6\""),
                RANGE_KV("\"key\":\"\",\"create_revision\":\"5\",\"mod_revision\":\"6\""),
                RANGE_KV("\"key\":\"!!!!\",\"create_revision\":\"5\",\"mod_revision\":\"6\""),
                RANGE_KV("\"key\":\"abc\",\"create_revision\":\"5\",\"mod_revision\":\"6\""),
                RANGE_KV("\"key\":\"a=bc\",\"create_revision\":\"5\",\"mod_revision\":\"6\""),
                RANGE_KV("\"key\":" KEY ",\"value\":\"AAA=\",\"create_revision\":\"5\",\"mod_revision\":\"6\""),
                RANGE_KV("\"key\":" KEY ",\"value\":7,\"create_revision\":\"5\",\"mod_revision\":\"6\""),
                {ACQUIRE, "{" HDR ",\"succeeded\":\"yes\",\"responses\":[]}"},
                {ACQUIRE, "{" HDR ",\"succeeded\":true}"},
                {ACQUIRE, "{" HDR ",\"succeeded\":true,\"responses\":[{\"response_range\":{" HDR ",\"kvs\":[" KV "]}}]}"},
                {ACQUIRE, "{" HDR ",\"succeeded\":true,\"responses\":[1,{\"response_range\":{" HDR ",\"kvs\":[" KV "]}}]}"},
                {ACQUIRE, "{" HDR ",\"succeeded\":true,\"responses\":[{\"response_put\":{}},{\"response_range\":{" HDR "}}]}"},
                {ACQUIRE, "{" HDR ",\"responses\":[{\"response_range\":{" HDR "}}]}"}, /* refused, nobody holds */
                {ACQUIRE, "{" HDR ",\"responses\":[{\"response_put\":{}}]}"},
                {ACQUIRE, "{" HDR ",\"responses\":{}}"},
                {RELEASE, "{" HDR ",\"succeeded\":true}"},
                {RELEASE, "{" HDR ",\"succeeded\":true,\"responses\":[{\"response_range\":{}}]}"},
                {RELEASE, "{" HDR ",\"succeeded\":1}"},
                {RELEASE, "{" HDR ",\"responses\":[{\"response_delete_range\":{}}]}"},
                {ERROR, "{\"error\":\"x\"}"},
                {ERROR, "{\"code\":\"x\",\"message\":\"m\"}"},
                {ERROR, "{\"code\":14,\"message\":7}"},
                {ERROR, "<html>502 Bad Gateway</html>"},
                {WATCH, "{\"result\":{\"events\":[]}}"},                      /* no header */
                {WATCH, "{\"result\":{" HDR ",\"events\":{}}}"},
                {WATCH, "{\"result\":{" HDR ",\"events\":[{\"type\":\"DELETE\"}]}}"},
                {WATCH, "{\"result\":{" HDR ",\"events\":[{\"type\":\"EXPIRE\",\"kv\":{}}]}}"},
                {WATCH, "{\"result\":{" HDR ",\"events\":[{\"type\":3,\"kv\":{}}]}}"},
                {WATCH, "{\"result\":{" HDR ",\"canceled\":\"true\"}}"},
                {WATCH, "{\"result\":{" HDR "}}\n{\"result\":{" HDR "}}"},
        };
        size_t i;

        for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int r = run_parser(bad[i].p, bad[i].text, strlen(bad[i].text));
                if (r != -EBADMSG)
                        fail_msg("answer %zu (%s) gave %d, not -EBADMSG", i, bad[i].text, r);
        }
        /* A NUL inside, and a length past the bound, before any parsing. */
        assert_int_equal(etcd_parse_grant("{}\0{}", 5, &(struct etcd_lease){0}), -EBADMSG);
        assert_int_equal(etcd_parse_object(grant_ok, ETCD_ANSWER_MAX + 1, &(json_object *){NULL}),
                         -EBADMSG);
        /* An error message in the watch stream is an error, not garbage. */
        assert_int_equal(etcd_parse_watch_message("{\"error\":{\"grpc_code\":14}}", 26), -EIO);
}

static void test_deep_nesting_refused(void **state) {
        char text[4096];
        size_t i, n = 0;

        n += (size_t) snprintf(text, sizeof(text), "{" HDR ",\"x\":");
        for (i = 0; i < 1000; i++)
                text[n++] = '[';
        for (i = 0; i < 1000; i++)
                text[n++] = ']';
        n += (size_t) snprintf(text + n, sizeof(text) - n, ",\"ID\":\"1\",\"TTL\":\"1\"}");
        assert_int_equal(etcd_parse_grant(text, n, &(struct etcd_lease){0}), -EBADMSG);
}

static void test_base64(void **state) {
        unsigned char out[ETCD_VALUE_MAX];
        char enc[ETCD_VALUE_MAX / 3 * 4 + 8];

        etcd_base64_encode("node-a", 6, enc);
        assert_string_equal(enc, "bm9kZS1h");
        assert_int_equal(etcd_base64_decode("bm9kZS1h", 8, out, sizeof(out)), 6);
        assert_memory_equal(out, "node-a", 6);
        assert_int_equal(etcd_base64_decode("bm9kZQ==", 8, out, sizeof(out)), 4);
        assert_int_equal(etcd_base64_decode("bm9kZS0=", 8, out, sizeof(out)), 5);
        assert_int_equal(etcd_base64_decode("", 0, out, sizeof(out)), 0);
        assert_int_equal(etcd_base64_decode("bm9kZS1", 7, out, sizeof(out)), -EBADMSG);
        assert_int_equal(etcd_base64_decode("bm9k ZS1", 8, out, sizeof(out)), -EBADMSG);
        assert_int_equal(etcd_base64_decode("bm==ZS1h", 8, out, sizeof(out)), -EBADMSG);
        assert_int_equal(etcd_base64_decode("====", 4, out, sizeof(out)), -EBADMSG);
        assert_int_equal(etcd_base64_decode("bm9kZS1h", 8, out, 5), -EBADMSG); /* too long */
}

/* Mutations of the real answers (flipped, dropped, duplicated bytes,
 * truncations): any result but 0/1 must be -EBADMSG (or the watch's
 * -ESTALE/-EIO), and what is accepted must be sane. ASan does the rest. */
static void test_mutated_answers(void **state) {
        static const struct {
                enum parser p;
                const char *text;
        } seeds[] = {
                {GRANT, grant_ok},         {KEEPALIVE, keepalive_ok}, {RANGE, range_held},
                {ACQUIRE, acquire_taken},  {ACQUIRE, acquire_held},   {RELEASE, release_ok},
                {ERROR, error_answer},     {WATCH, watch_deleted},    {WATCH, watch_canceled},
        };
        static const char alphabet[] = "{}[]\",:0123456789-eE.\\ \ntruefalsnul=+/ABCxyz\x80\xff";
        char buf[2048];
        unsigned seed = 12345;
        size_t i, len, pos;
        int iter, r, accepted = 0;

        for (iter = 0; iter < 60000; iter++) {
                const char *src = seeds[iter % (sizeof(seeds) / sizeof(seeds[0]))].text;
                enum parser p = seeds[iter % (sizeof(seeds) / sizeof(seeds[0]))].p;
                int edits = 1 + (int) (rand_r(&seed) % 4);

                len = strlen(src);
                memcpy(buf, src, len);
                for (i = 0; i < (size_t) edits && len > 1; i++) {
                        pos = (size_t) rand_r(&seed) % len;
                        switch (rand_r(&seed) % 4) {
                        case 0: /* replace */
                                buf[pos] = alphabet[(size_t) rand_r(&seed) % (sizeof(alphabet) - 1)];
                                break;
                        case 1: /* delete */
                                memmove(buf + pos, buf + pos + 1, len - pos - 1);
                                len--;
                                break;
                        case 2: /* duplicate */
                                if (len < sizeof(buf) - 1) {
                                        memmove(buf + pos + 1, buf + pos, len - pos);
                                        len++;
                                }
                                break;
                        default: /* truncate */
                                len = pos + 1;
                        }
                }
                buf[len] = '\0';
                r = run_parser(p, buf, len);
                if (r == 0 || r == 1) {
                        accepted++;
                        continue;
                }
                if (!(r == -EBADMSG || (p == WATCH && (r == -ESTALE || r == -EIO))))
                        fail_msg("mutation %d of parser %d gave %d: %.*s", iter, (int) p, r, (int) len, buf);
        }
        printf("%d mutations accepted as well-formed of 60000\n", accepted);
        /* Not everything may pass: most mutations break the answer. */
        assert_true(accepted < 30000);
}

/* Every parser that fills a struct writes all of it on success: a struct
 * filled with 0xa5 first reads only what the answer says (and 0 for what
 * it does not). */
#define PATTERN(x) memset(&(x), 0xa5, sizeof(x))

static void assert_holder(const struct etcd_holder *h, bool held, int64_t revision) {
        assert_int_equal(h->held, held);
        assert_string_equal(h->value, held ? "node-a" : "");
        assert_int_equal(h->create_revision, held ? 5 : 0);
        assert_int_equal(h->mod_revision, held ? 6 : 0);
        assert_true(h->lease == (held ? INT64_C(5736919831009302536) : 0));
        assert_int_equal(h->revision, revision);
}

static void test_pattern_filled(void **state) {
        struct etcd_lease l;
        struct etcd_holder h;
        json_object *obj, *kvs;
        bool ok;

        PATTERN(l);
        assert_int_equal(etcd_parse_grant(grant_ok, strlen(grant_ok), &l), 0);
        assert_true(l.id == INT64_C(5736919831009302534) && l.ttl_sec == 10 && l.sent_ms == 0);
        PATTERN(l);
        assert_int_equal(etcd_parse_keepalive(keepalive_ok, strlen(keepalive_ok), 42, &l), 0);
        assert_true(l.id == 42 && l.ttl_sec == 5 && l.sent_ms == 0);
        PATTERN(l);
        assert_int_equal(etcd_parse_keepalive(keepalive_gone, strlen(keepalive_gone), 42, &l), 0);
        assert_true(l.id == 42 && l.ttl_sec == 0 && l.sent_ms == 0);

        PATTERN(h);
        assert_int_equal(etcd_parse_range(range_held, strlen(range_held), &h), 0);
        assert_holder(&h, true, 7);
        PATTERN(h);
        assert_int_equal(etcd_parse_range(range_absent, strlen(range_absent), &h), 0);
        assert_holder(&h, false, 7);
        PATTERN(h);
        PATTERN(ok);
        assert_int_equal(etcd_parse_acquire(acquire_taken, strlen(acquire_taken), &ok, &h), 0);
        assert_true(ok);
        assert_holder(&h, true, 7);
        PATTERN(h);
        PATTERN(ok);
        assert_int_equal(etcd_parse_acquire(acquire_held, strlen(acquire_held), &ok, &h), 0);
        assert_false(ok);
        assert_holder(&h, true, 7);

        assert_int_equal(etcd_parse_object(range_held, strlen(range_held), &obj), 0);
        assert_true(json_object_object_get_ex(obj, "kvs", &kvs));
        PATTERN(h);
        assert_int_equal(etcd_parse_kv(json_object_array_get_idx(kvs, 0), &h), 0);
        assert_holder(&h, true, 0);
        json_object_put(obj);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_real_answers),
                cmocka_unit_test(test_pattern_filled),
                cmocka_unit_test(test_garbage_answers),
                cmocka_unit_test(test_deep_nesting_refused),
                cmocka_unit_test(test_base64),
                cmocka_unit_test(test_mutated_answers),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
