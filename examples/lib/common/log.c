/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LOG_LINE_MAX 2048

void daemon_log(const char *priority, const char *format, ...) {
        char line[LOG_LINE_MAX];
        int saved_errno = errno;
        size_t prefix = strlen(priority);
        size_t len;
        va_list ap;

        if (prefix > 8)
                prefix = 8;
        memcpy(line, priority, prefix);

        va_start(ap, format);
        int n = vsnprintf(line + prefix, sizeof(line) - prefix - 1, format, ap);
        va_end(ap);
        if (n < 0)
                n = 0;
        len = prefix + (size_t) n;
        if (len > sizeof(line) - 2)
                len = sizeof(line) - 2;

        for (size_t i = prefix; i < len; i++)
                if ((unsigned char) line[i] < 0x20 || line[i] == 0x7f)
                        line[i] = ' ';
        line[len++] = '\n';

        /* Best effort: a log line that cannot be written is dropped. */
        for (size_t off = 0; off < len;) {
                ssize_t w = write(STDERR_FILENO, line + off, len - off);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        break;
                off += (size_t) w;
        }
        errno = saved_errno;
}
