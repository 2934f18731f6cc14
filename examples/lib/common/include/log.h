/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_LOG_H
#define SDLIVE_EXAMPLE_LOG_H

#include <systemd/sd-daemon.h>

/*
 * Logging for the reference daemons: one line on stderr per call, written with
 * a single write() so lines from different threads never interleave, led by
 * the "<N>" priority prefix (SD_ERR, SD_INFO, ... from sd-daemon.h) that
 * systemd turns into the journal priority. Control characters in the message
 * become spaces; long messages are cut. Never fails, never changes errno.
 */
void daemon_log(const char *priority, const char *format, ...)
        __attribute__((format(printf, 2, 3)));

#define log_error(...) daemon_log(SD_ERR, __VA_ARGS__)
#define log_warning(...) daemon_log(SD_WARNING, __VA_ARGS__)
#define log_notice(...) daemon_log(SD_NOTICE, __VA_ARGS__)
#define log_info(...) daemon_log(SD_INFO, __VA_ARGS__)
#define log_debug(...) daemon_log(SD_DEBUG, __VA_ARGS__)

#endif
