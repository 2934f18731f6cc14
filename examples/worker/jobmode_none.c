/* SPDX-License-Identifier: MIT */
/* The worker built without the cluster platform (jobmode_cli.h): no
 * job-mode options, never enabled; the worker runs its timer alone. */
#include "jobmode_cli.h"

#include <stdlib.h>

const struct cli_option *const jobmode_cli_options = NULL;
const size_t jobmode_cli_n_options = 0;

void jobmode_cli_usage(void) {
}

/* Never called: with no entries in the table, the parser refuses the job
 * mode's options as unknown. */
void jobmode_cli_option(int id, const char *option, const char *value) {
        (void) id, (void) value;
        cli_usage_error("%s: this build has no job mode", option);
}

bool jobmode_cli_enabled(void) {
        return false;
}

int jobmode_cli_prepare(void) {
        return 0;
}

void jobmode_cli_log(bool executor_checked) {
        (void) executor_checked;
}

int jobmode_cli_run(sdlive *d, executor *e, const fault_switch *wedge) {
        (void) d, (void) e, (void) wedge;
        return EXIT_FAILURE;
}

void jobmode_cli_free(void) {
}
