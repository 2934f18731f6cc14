/* SPDX-License-Identifier: MIT */
/*
 * sdlive-worker: a periodic daemon. Its main loop waits for work while
 * petting (sdlive_wait_fd), hands each unit of work to the job-executor
 * thread (executor.c, a progress loop) and reports the results. Work comes
 * from a timer (timer.c), or with --coordinator from the cluster's job
 * coordinator (jobmode.c, its options in jobmode_cli.c; built without the
 * cluster platform, there is no job mode). This file holds the options and
 * the set-up.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <sdlive.h>

#include "cli.h"
#include "duration.h"
#include "executor.h"
#include "fault.h"
#include "job.h"
#include "jobmode_cli.h"
#include "log.h"
#include "monitor.h"
#include "supervision.h"
#include "timer.h"

/* Ranges of the options (docs/daemons.md). */
#define INTERVAL_MAX_USEC (UINT64_C(7) * 24 * 3600 * SDLIVE_USEC_PER_SEC)
#define WINDOW_MAX_USEC (UINT64_C(24) * 3600 * SDLIVE_USEC_PER_SEC)

/* How long a stopping worker waits for the job in progress. */
#define EXECUTOR_STOP_TIMEOUT_USEC (200 * SDLIVE_USEC_PER_MSEC)

typedef struct worker_options {
        uint64_t interval_usec;
        uint64_t executor_max_silence_usec;
        bool progress_check;
        bool trigger_on_stall;
        const char *wedge_file;
        const char *hang_executor_file;
} worker_options;

static void usage(void) {
        printf("Usage: %s [OPTION]...\n"
               "Run one short job per interval on a job-executor thread, petting the\n"
               "systemd watchdog from the main loop while the executor keeps moving.\n"
               "\n"
               "  --interval DUR               time between jobs (default 5s; up to 7d)\n"
               "  --executor-max-silence DUR   longest a job may run before keepalives are\n"
               "                               withheld (default 10s; up to 1d)\n"
               "  --no-progress-check          do not register the executor as a progress\n"
               "                               loop: a hung executor then goes unnoticed\n"
               "  --trigger-on-stall           send WATCHDOG=trigger as soon as the executor\n"
               "                               stalls instead of waiting out WatchdogSec\n"
               "  --wedge-file PATH            fault injection: when PATH exists the main loop\n"
               "                               hangs forever without petting (also\n"
               "                               $SDLIVE_WEDGE_FILE; off by default)\n"
               "  --hang-executor-file PATH    fault injection: when PATH exists the executor\n"
               "                               hangs in its next job while the main loop goes\n"
               "                               on petting (also $SDLIVE_HANG_EXECUTOR_FILE)\n"
               "\n",
               program_invocation_short_name);
        jobmode_cli_usage();
        cli_usage_help_version(29);
        printf(CLI_USAGE_DURATIONS_AND_EXIT);
}

enum {
        OPT_INTERVAL = 0x100,
        OPT_EXECUTOR_MAX_SILENCE,
        OPT_NO_PROGRESS_CHECK,
        OPT_TRIGGER_ON_STALL,
        OPT_WEDGE_FILE,
        OPT_HANG_EXECUTOR_FILE,
};

static const struct cli_option options[] = {
        { "interval", true, OPT_INTERVAL },
        { "executor-max-silence", true, OPT_EXECUTOR_MAX_SILENCE },
        { "no-progress-check", false, OPT_NO_PROGRESS_CHECK },
        { "trigger-on-stall", false, OPT_TRIGGER_ON_STALL },
        { "wedge-file", true, OPT_WEDGE_FILE },
        { "hang-executor-file", true, OPT_HANG_EXECUTOR_FILE },
};
#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static void set_option(int id, const char *option, const char *value, void *userdata) {
        worker_options *o = userdata;

        switch (id) {
        case OPT_INTERVAL:
                o->interval_usec = cli_duration_range(option, value, 1, INTERVAL_MAX_USEC);
                break;
        case OPT_EXECUTOR_MAX_SILENCE:
                o->executor_max_silence_usec = cli_duration_range(option, value, 1, WINDOW_MAX_USEC);
                break;
        case OPT_NO_PROGRESS_CHECK:
                o->progress_check = false;
                break;
        case OPT_TRIGGER_ON_STALL:
                o->trigger_on_stall = true;
                break;
        case OPT_WEDGE_FILE:
                o->wedge_file = cli_path(option, value);
                break;
        case OPT_HANG_EXECUTOR_FILE:
                o->hang_executor_file = cli_path(option, value);
                break;
        default:
                jobmode_cli_option(id, option, value);
                break;
        }
}

/* The worker's options and the job mode's, in one table. */
static void parse_options(int argc, char **argv, worker_options *o) {
        struct cli_option all[N_OPTIONS + jobmode_cli_n_options];

        memcpy(all, options, sizeof(options));
        if (jobmode_cli_n_options > 0)
                memcpy(all + N_OPTIONS, jobmode_cli_options, jobmode_cli_n_options * sizeof(all[0]));
        cli_parse(argc, argv, all, N_OPTIONS + jobmode_cli_n_options, usage, set_option, o);
}

int main(int argc, char **argv) {
        worker_options o = {
                .interval_usec = 5 * SDLIVE_USEC_PER_SEC,
                .executor_max_silence_usec = 10 * SDLIVE_USEC_PER_SEC,
                .progress_check = true,
        };
        char interval[DURATION_FORMAT_MAX], silence[DURATION_FORMAT_MAX];
        fault_switch wedge, hang;
        sdlive *d = NULL;
        executor *e = NULL;
        monitor *m = NULL;
        int status = EXIT_FAILURE;

        parse_options(argc, argv, &o);
        if (jobmode_cli_prepare() < 0)
                return EXIT_FAILURE;
        fault_switch_init(&wedge, "worker main loop", o.wedge_file, "SDLIVE_WEDGE_FILE");
        fault_switch_init(&hang, "job executor", o.hang_executor_file, "SDLIVE_HANG_EXECUTOR_FILE");

        if (supervision_start(&d, SDLIVE_HANDLE_SIGNALS |
                                    (o.trigger_on_stall ? SDLIVE_TRIGGER_ON_STALL : 0)) < 0)
                goto out;
        if (executor_start(&e, d, jobmode_cli_enabled() ? job_run : job_checksum,
                           o.progress_check ? o.executor_max_silence_usec : 0, &hang) < 0)
                goto out;
        if (monitor_start(&m, d) < 0) {
                executor_stop(e, EXECUTOR_STOP_TIMEOUT_USEC);
                goto out;
        }

        duration_format(interval, sizeof(interval), o.interval_usec);
        duration_format(silence, sizeof(silence), o.executor_max_silence_usec);
        if (jobmode_cli_enabled())
                jobmode_cli_log(o.progress_check);
        else if (o.progress_check)
                log_info("one job every %s; executor registered as progress loop (max silence %s)",
                         interval, silence);
        else
                log_info("one job every %s; executor NOT registered as a progress loop", interval);
        sdlive_notify_status(d, "waiting for the first job");
        sdlive_notify_ready(d);

        if (jobmode_cli_enabled())
                status = jobmode_cli_run(d, e, &wedge);
        else
                status = timer_run(d, e, &wedge, o.interval_usec);

        if (sdlive_stopping(d) > 0) {
                log_info("stop requested, exiting");
                sdlive_notify_stopping(d);
        }
        m = monitor_stop(m);
        if (executor_stop(e, EXECUTOR_STOP_TIMEOUT_USEC) < 0) {
                /* The hung thread may still hold the handle: leave both to exit(). */
                log_warning("executor is hung in a job; exiting without waiting for it");
                return status;
        }
out:
        sdlive_free(d);
        jobmode_cli_free();
        return status;
}
