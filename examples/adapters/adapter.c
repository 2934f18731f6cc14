/* SPDX-License-Identifier: MIT */
#include "adapter.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "log.h"
#include "supervision.h"

#define JOB_STEPS 256
#define JOB_BYTES 4096

static const char *usage_loop;
static const char *usage_worker;

static void usage(void) {
        printf("Usage: %s [OPTION]...\n"
               "Reference daemon: sdlive in a %s event loop. Reports READY=1, pets the\n"
               "watchdog from the loop, updates STATUS= every second and stops cleanly on\n"
               "SIGTERM/SIGINT.%s\n"
               "\n"
               "  -h, --help       show this help and exit\n"
               "  -V, --version    show the version and exit\n"
               "\n"
               "Fault injection (off unless set):\n"
               "  SDLIVE_WEDGE_FILE=PATH          once PATH exists, the event loop hangs\n"
               "                                  without petting; other threads run on\n"
               "  SDLIVE_HANG_EXECUTOR_FILE=PATH  once PATH exists, the worker thread hangs\n"
               "                                  in its next job (adapters with a worker)\n"
               "\n"
               "Exit status: 0 success or stopped by SIGTERM/SIGINT, 1 failure, 2 bad usage.\n",
               program_invocation_short_name, usage_loop, usage_worker);
}

int adapter_start(adapter *a, int argc, char **argv, const char *loop_name, const char *worker_text) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        int c, r;

        usage_loop = loop_name;
        usage_worker = worker_text;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hV", options, NULL)) >= 0)
                cli_common_option(c, argc, argv, usage);
        cli_no_operands(argc, argv);

        r = supervision_start(&a->sd, SDLIVE_UNSET_WATCHDOG_ENV);
        if (r < 0)
                return r;
        fault_switch_init(&a->wedge, "event loop", NULL, "SDLIVE_WEDGE_FILE");
        fault_switch_init(&a->hang, "worker thread", NULL, "SDLIVE_HANG_EXECUTOR_FILE");
        return 0;
}

int adapter_worker_register(adapter *a, sdlive_progress **ret) {
        int r = sdlive_progress_register(a->sd, "worker", ADAPTER_WORKER_MAX_SILENCE_USEC, ret);

        if (r < 0) {
                log_error("sdlive_progress_register: %s", strerror(-r));
                return r;
        }
        sdlive_progress_park(*ret);
        return 0;
}

uint32_t adapter_job_run(const adapter *a, sdlive_progress *p) {
        unsigned char block[JOB_BYTES];
        uint32_t hash = 2166136261u;

        fault_switch_check(&a->hang);
        for (unsigned step = 0; step < JOB_STEPS; step++) {
                for (size_t i = 0; i < sizeof(block); i++) {
                        block[i] = (unsigned char) (hash >> (i % 4 * 8));
                        hash = (hash ^ block[i]) * 16777619u;
                }
                sdlive_progress_beat(p);
        }
        sdlive_progress_park(p);
        return hash;
}

void adapter_finish(adapter *a) {
        a->sd = sdlive_free(a->sd);
}
