/* SPDX-License-Identifier: MIT */
/* sdlive-probe's option checks, apart from the command line (cli.sh runs
 * the program with bad ones). */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"

static void settings_in_range(void **state) {
        struct probe_settings s = PROBE_SETTINGS_DEFAULT;

        assert_null(probe_settings_problem(&s));
        s.timeout_usec = s.period_usec;
        assert_null(probe_settings_problem(&s));
}

static void period_below_timeout(void **state) {
        struct probe_settings s = PROBE_SETTINGS_DEFAULT;

        s.period_usec = 500000;
        s.timeout_usec = 500001;
        assert_non_null(strstr(probe_settings_problem(&s), "longer than the period"));
}

static void thresholds_of_zero(void **state) {
        struct probe_settings s = PROBE_SETTINGS_DEFAULT;

        s.failure_threshold = 0;
        assert_non_null(strstr(probe_settings_problem(&s), "--failure-threshold"));
        s = PROBE_SETTINGS_DEFAULT;
        s.success_threshold = 0;
        assert_non_null(strstr(probe_settings_problem(&s), "--success-threshold"));
}

static void urls(void **state) {
        assert_null(probe_url_problem("http://127.0.0.1:8080/healthz"));
        assert_null(probe_url_problem("https://[::1]/"));
        assert_null(probe_url_problem("HTTP://localhost/x?y=1"));
        assert_non_null(probe_url_problem("ftp://127.0.0.1/"));
        assert_non_null(probe_url_problem("file:///etc/passwd"));
        assert_non_null(probe_url_problem("gopher://127.0.0.1/"));
        assert_non_null(probe_url_problem("127.0.0.1:8080"));
        assert_non_null(probe_url_problem("http://"));
        assert_non_null(probe_url_problem("http://a b/"));
        assert_non_null(probe_url_problem("http://a/\nx"));
        assert_non_null(probe_url_problem(""));
}

static void status_ranges(void **state) {
        unsigned lo = 1, hi = 1;

        assert_int_equal(probe_parse_status_range("200-299", &lo, &hi), 0);
        assert_int_equal(lo, 200);
        assert_int_equal(hi, 299);
        assert_int_equal(probe_parse_status_range("204", &lo, &hi), 0);
        assert_int_equal(lo, 204);
        assert_int_equal(hi, 204);
        lo = hi = 1;
        const char *bad[] = { "", "99", "600", "200-", "-299", "299-200", "2000", "200-2999", "20x", " 200",
                              "200-299-300", "+200" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(probe_parse_status_range(bad[i], &lo, &hi), -EINVAL);
                assert_int_equal(lo, 1);
                assert_int_equal(hi, 1);
        }
}

static void commands(void **state) {
        char path[PATH_MAX];

        assert_int_equal(probe_find_command("/bin/sh", path, sizeof(path)), 0);
        assert_string_equal(path, "/bin/sh");
        setenv("PATH", "/nonexistent:/bin", 1);
        assert_int_equal(probe_find_command("sh", path, sizeof(path)), 0);
        assert_string_equal(path, "/bin/sh");
        assert_int_equal(probe_find_command("sdlive-no-such-command", path, sizeof(path)), -ENOENT);
        assert_int_equal(probe_find_command("/nonexistent/x", path, sizeof(path)), -ENOENT);
        /* A directory, a file that is not executable. */
        assert_int_equal(probe_find_command("/tmp", path, sizeof(path)), -EACCES);
        char plain[] = "/tmp/sdlive-probe-test-XXXXXX";
        int fd = mkstemp(plain);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(probe_find_command(plain, path, sizeof(path)), -EACCES);
        unlink(plain);
        assert_int_equal(probe_find_command("", path, sizeof(path)), -ENOENT);
        assert_int_equal(probe_find_command("/bin/sh", path, 4), -ENAMETOOLONG);
}

static void words(void **state) {
        char *argv[PROBE_EXEC_ARGS_MAX + 1];
        char many[4 * (PROBE_EXEC_ARGS_MAX + 1) + 1] = "";

        assert_int_equal(probe_split_words("  check  -q  x ", argv), 0);
        assert_string_equal(argv[0], "check");
        assert_string_equal(argv[1], "-q");
        assert_string_equal(argv[2], "x");
        assert_null(argv[3]);
        for (int i = 0; i < 3; i++)
                free(argv[i]);
        assert_int_equal(probe_split_words("   ", argv), -EINVAL);
        for (int i = 0; i <= PROBE_EXEC_ARGS_MAX; i++)
                strcat(many, "ab ");
        assert_int_equal(probe_split_words(many, argv), -EINVAL);
}

static void detection_bound(void **state) {
        struct probe_config c = { .n_probes = 2 };

        c.probes[0].s = PROBE_SETTINGS_DEFAULT; /* 1 s x 3 + 1 s */
        c.probes[1].s = PROBE_SETTINGS_DEFAULT;
        c.probes[1].s.period_usec = 200000;
        c.probes[1].s.timeout_usec = 100000;
        c.probes[1].s.failure_threshold = 5;    /* 1.1 s */
        assert_int_equal(probe_config_detection_bound(&c), 4000000);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(settings_in_range), cmocka_unit_test(period_below_timeout),
                cmocka_unit_test(thresholds_of_zero), cmocka_unit_test(urls),
                cmocka_unit_test(status_ranges), cmocka_unit_test(commands),
                cmocka_unit_test(words), cmocka_unit_test(detection_bound),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
