/* SPDX-License-Identifier: MIT */
/*
 * sdlive-cleaner: keeps a blob directory tidy. Each pass walks the whole tree
 * and deletes expired blobs, stale .partial uploads and empty directories;
 * between passes it idles. A pass may take far longer than WatchdogSec: it
 * pets inside the per-entry loop, so only a pass that stops moving gets the
 * daemon killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sdlive.h>

#include "cli.h"
#include "duration.h"
#include "fault.h"
#include "log.h"
#include "monitor.h"
#include "pass.h"
#include "populate.h"
#include "supervision.h"

/* Ranges of the options (docs/daemons.md). */
#define AGE_MAX_USEC (UINT64_C(3650) * 24 * 3600 * SDLIVE_USEC_PER_SEC)
#define PASS_INTERVAL_MAX_USEC (UINT64_C(7) * 24 * 3600 * SDLIVE_USEC_PER_SEC)
#define RATE_MAX 1000000
#define POPULATE_MAX 10000000

typedef struct cleaner_options {
        const char *blob_dir;      /* NULL: $STATE_DIRECTORY/blobs */
        char *blob_dir_default;    /* owns blob_dir when it was derived */
        uint64_t max_age_usec;
        uint64_t partial_max_age_usec;
        uint64_t pass_interval_usec;
        uint64_t max_rate;
        uint64_t populate;
        bool populate_set;
        bool once;
        const char *wedge_file;
} cleaner_options;

static void usage(void) {
        printf("Usage: %s [OPTION]...\n"
               "Delete expired blobs, stale .partial files and empty directories from a\n"
               "blob directory, one pass at a time, petting the systemd watchdog per entry.\n"
               "\n"
               "  --blob-dir DIR          the blob directory (default: $STATE_DIRECTORY/blobs,\n"
               "                          created when missing; a DIR given here must exist)\n"
               "  --max-age DUR           delete blobs older than this (default 7d; up to\n"
               "                          3650d)\n"
               "  --partial-max-age DUR   delete *.partial files older than this (default 1h;\n"
               "                          up to 3650d)\n"
               "  --pass-interval DUR     idle time between passes (default 60s; up to 7d)\n"
               "  --max-rate N            examine at most N entries per second (default 0:\n"
               "                          unlimited; up to 1000000); the pacing sleeps pet\n"
               "  --once                  run one pass and exit (1 if entries failed)\n"
               "  --populate N            create N fresh test blobs under DIR/populated and exit\n"
               "                          (up to 10000000)\n"
               "  --wedge-file PATH       fault injection: when PATH exists, the pass or the\n"
               "                          main loop hangs forever without petting (also\n"
               "                          $SDLIVE_WEDGE_FILE; off by default)\n",
               program_invocation_short_name);
        cli_usage_help_version(24);
        printf(CLI_USAGE_DURATIONS_AND_EXIT);
}

enum {
        OPT_BLOB_DIR = 0x100,
        OPT_MAX_AGE,
        OPT_PARTIAL_MAX_AGE,
        OPT_PASS_INTERVAL,
        OPT_MAX_RATE,
        OPT_ONCE,
        OPT_POPULATE,
        OPT_WEDGE_FILE,
};

static const struct cli_option options[] = {
        { "blob-dir", true, OPT_BLOB_DIR },
        { "max-age", true, OPT_MAX_AGE },
        { "partial-max-age", true, OPT_PARTIAL_MAX_AGE },
        { "pass-interval", true, OPT_PASS_INTERVAL },
        { "max-rate", true, OPT_MAX_RATE },
        { "once", false, OPT_ONCE },
        { "populate", true, OPT_POPULATE },
        { "wedge-file", true, OPT_WEDGE_FILE },
};

static void set_option(int id, const char *option, const char *value, void *userdata) {
        cleaner_options *o = userdata;

        switch (id) {
        case OPT_BLOB_DIR:
                o->blob_dir = cli_path(option, value);
                break;
        case OPT_MAX_AGE:
                o->max_age_usec = cli_duration_range(option, value, 0, AGE_MAX_USEC);
                break;
        case OPT_PARTIAL_MAX_AGE:
                o->partial_max_age_usec = cli_duration_range(option, value, 0, AGE_MAX_USEC);
                break;
        case OPT_PASS_INTERVAL:
                o->pass_interval_usec = cli_duration_range(option, value, 0, PASS_INTERVAL_MAX_USEC);
                break;
        case OPT_MAX_RATE:
                o->max_rate = cli_number(option, value, 0, RATE_MAX);
                break;
        case OPT_ONCE:
                o->once = true;
                break;
        case OPT_POPULATE:
                o->populate = cli_number(option, value, 0, POPULATE_MAX);
                o->populate_set = true;
                break;
        case OPT_WEDGE_FILE:
                o->wedge_file = cli_path(option, value);
                break;
        }
}

/* Opens the blob directory: an explicit one must exist; the default one under
 * $STATE_DIRECTORY is created. Exits on failure. */
static int open_blob_dir(cleaner_options *o) {
        char *state_dir = NULL;
        int fd;

        if (o->blob_dir) {
                if (cli_require_dir("blob directory", o->blob_dir) < 0)
                        exit(EXIT_FAILURE);
        } else {
                state_dir = cli_systemd_dir("STATE_DIRECTORY");
                if (!state_dir)
                        cli_usage_error("no blob directory: pass --blob-dir or run with StateDirectory=");
                if (asprintf(&o->blob_dir_default, "%s/blobs", state_dir) < 0) {
                        log_error("out of memory");
                        exit(EXIT_FAILURE);
                }
                free(state_dir);
                o->blob_dir = o->blob_dir_default;
                if (mkdir(o->blob_dir, 0750) < 0 && errno != EEXIST) {
                        log_error("cannot create blob directory %s: %s", o->blob_dir, strerror(errno));
                        exit(EXIT_FAILURE);
                }
        }
        fd = open(o->blob_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                log_error("cannot open blob directory %s: %s", o->blob_dir, strerror(errno));
                exit(EXIT_FAILURE);
        }
        return fd;
}

int main(int argc, char **argv) {
        cleaner_options o = {
                .max_age_usec = 7 * 24 * 3600 * SDLIVE_USEC_PER_SEC,
                .partial_max_age_usec = 3600 * SDLIVE_USEC_PER_SEC,
                .pass_interval_usec = 60 * SDLIVE_USEC_PER_SEC,
        };
        char max_age[DURATION_FORMAT_MAX], partial_max_age[DURATION_FORMAT_MAX];
        fault_switch wedge;
        monitor *m = NULL;
        sdlive *d = NULL;
        int root_fd, status;

        cli_parse(argc, argv, options, sizeof(options) / sizeof(options[0]), usage, set_option, &o);
        root_fd = open_blob_dir(&o);

        if (o.populate_set) {
                log_info("creating %llu test blobs under %s/populated",
                         (unsigned long long) o.populate, o.blob_dir);
                status = populate_tree(root_fd, o.populate) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
                close(root_fd);
                free(o.blob_dir_default);
                return status;
        }

        fault_switch_init(&wedge, "cleaner main loop", o.wedge_file, "SDLIVE_WEDGE_FILE");
        if (supervision_start(&d, SDLIVE_HANDLE_SIGNALS) < 0)
                return EXIT_FAILURE;
        if (monitor_start(&m, d) < 0) {
                sdlive_free(d);
                return EXIT_FAILURE;
        }

        log_info("cleaning %s: blobs older than %s, partials older than %s%s", o.blob_dir,
                 duration_format(max_age, sizeof(max_age), o.max_age_usec),
                 duration_format(partial_max_age, sizeof(partial_max_age), o.partial_max_age_usec),
                 o.once ? ", one pass" : "");
        sdlive_notify_status(d, "starting first pass");
        sdlive_notify_ready(d);

        pass_config config = {
                .root_fd = root_fd,
                .max_age_usec = o.max_age_usec,
                .partial_max_age_usec = o.partial_max_age_usec,
                .max_rate = o.max_rate,
                .d = d,
                .wedge = &wedge,
        };
        status = pass_loop(&config, o.pass_interval_usec, o.once);

        if (sdlive_stopping(d) > 0) {
                log_info("stop requested, exiting");
                sdlive_notify_stopping(d);
        }
        m = monitor_stop(m);
        d = sdlive_free(d);
        close(root_fd);
        free(o.blob_dir_default);
        return status;
}
