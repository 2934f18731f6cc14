/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_WORKER_JOBMODE_CLI_H
#define SDLIVE_WORKER_JOBMODE_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include <sdlive.h>

#include "cli.h"
#include "executor.h"
#include "fault.h"

/*
 * The worker's job mode as main.c sees it: its options (--coordinator,
 * the TLS files, ...), their set-up and its loop. Built with the cluster
 * platform, this is jobmode_cli.c (the loop itself is jobmode.c); built
 * without it, jobmode_none.c: no options, never enabled, and the worker
 * runs its timer alone. The worker has one job mode: the state is the
 * file's own.
 */

/* Option ids of the job mode, from this one up (main.c's are below). */
#define JOBMODE_OPTION_FIRST 0x200

/* The job mode's entries of the option table, and its lines of --help. */
extern const struct cli_option *const jobmode_cli_options;
extern const size_t jobmode_cli_n_options;
void jobmode_cli_usage(void);

/* One of the job mode's options (id from jobmode_cli_options); a bad value
 * exits 2, as every option does. */
void jobmode_cli_option(int id, const char *option, const char *value);

/* True when the worker serves a coordinator (--coordinator given). */
bool jobmode_cli_enabled(void);

/* After parsing: checks the transport (exits 2 on a refused combination),
 * loads the TLS credentials and picks the identity. 0 or -errno (logged). */
int jobmode_cli_prepare(void);

/* Logs what the job mode will do (executor_checked: the executor is a
 * progress loop). */
void jobmode_cli_log(bool executor_checked);

/* Runs the job mode's loop (jobmode_run()) until a stop; the exit status. */
int jobmode_cli_run(sdlive *d, executor *e, const fault_switch *wedge);

/* Frees what jobmode_cli_prepare() loaded. */
void jobmode_cli_free(void);

#endif
