/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_PROBE_PROBES_H
#define SDLIVE_PROBE_PROBES_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/*
 * One run of one probe, bounded by its timeout (plus the time to kill and
 * reap a command probe). true when it passed; otherwise error (size bytes)
 * says why, as raw text that may hold what a peer sent (an HTTP body):
 * escape it before printing. Callable from any one thread at a time per
 * probe; thread-safe across probes.
 */
bool probe_run(const struct probe_spec *p, char *error, size_t size);

bool probe_run_http(const struct probe_spec *p, char *error, size_t size);
bool probe_run_connect(const struct probe_spec *p, char *error, size_t size);
bool probe_run_exec(const struct probe_spec *p, char *error, size_t size);
bool probe_run_file_age(const struct probe_spec *p, char *error, size_t size);

/* The most of an HTTP body read (more fails the run) and kept for the error. */
#define PROBE_HTTP_BODY_MAX (64 * 1024)
#define PROBE_HTTP_BODY_KEEP 96

#endif
