/* SPDX-License-Identifier: MIT */
#include "probes.h"

bool probe_run(const struct probe_spec *p, char *error, size_t size) {
        switch (p->kind) {
        case PROBE_HTTP:
                return probe_run_http(p, error, size);
        case PROBE_TCP:
        case PROBE_UNIX:
                return probe_run_connect(p, error, size);
        case PROBE_EXEC:
                return probe_run_exec(p, error, size);
        case PROBE_FILE_AGE:
                return probe_run_file_age(p, error, size);
        }
        return false;
}
