/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_SUPERVISION_H
#define SDLIVE_EXAMPLE_SUPERVISION_H

#include <stdint.h>

#include <sdlive.h>

/*
 * Creates the daemon's sdlive handle with the given SDLIVE_* flags and logs
 * how the process is supervised: not at all, by systemd without a watchdog,
 * or with the watchdog armed (WatchdogSec and pet interval), and why when the
 * environment is malformed. Ignores SIGPIPE first, as systemd's services
 * do, so that a write to a closed peer is an error, not the daemon's death,
 * wherever it runs. Returns 0 or -errno (logged).
 */
int supervision_start(sdlive **ret, uint32_t flags);

#endif
