/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_TEST_PG_SERVER_URL_H
#define SDLIVE_TEST_PG_SERVER_URL_H

/*
 * pg_server_url(script, state, url, size): the "postgresql:CONNINFO" store
 * URL of the throwaway server that tests/store/pg-server.sh started with
 * the state directory `state`, as the script prints it ("SCRIPT url
 * STATE"). 0, or -errno when the script cannot run, -EIO when it fails or
 * prints nothing.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static inline int pg_server_url(const char *script, const char *state, char *url, size_t size) {
        char cmd[1024];
        FILE *f;
        bool ok;

        snprintf(cmd, sizeof cmd, "'%s' url '%s'", script, state);
        f = popen(cmd, "r");
        if (!f)
                return -errno;
        ok = fgets(url, (int) size, f) != NULL;
        if (pclose(f) != 0 || !ok)
                return -EIO;
        url[strcspn(url, "\n")] = '\0';
        return 0;
}

#endif
