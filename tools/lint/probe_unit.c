/* SPDX-License-Identifier: MIT */
#include "probe_unit.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef SDLIVE_LINT_PROBE_OPTIONS
#include "config.h"
#endif

bool probe_unit_is_probe(const char *path) {
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

        return strcmp(base, "sdlive-probe") == 0;
}

/* The first line of text, without the log's "<N>" priority and the
 * program's "sdlive-probe: " prefix. */
static void first_line(const char *text, char *out, size_t size) {
        size_t len;

        if (text[0] == '<' && strchr(text, '>'))
                text = strchr(text, '>') + 1;
        if (!strncmp(text, "sdlive-probe: ", 14))
                text += 14;
        len = strcspn(text, "\n");
        /* The parser's pointer to its help, which the unit's author does
         * not run. */
        if (len >= 13 && !strncmp(text + len - 13, " (see --help)", 13))
                len -= 13;
        snprintf(out, size, "%.*s", (int) len, text);
}

#ifdef SDLIVE_LINT_PROBE_OPTIONS
/* In the child: parse, report on fd, end. The parser itself writes its one
 * error line to stderr, which is fd too, and exits 2. */
static _Noreturn void check_in_child(char *const *argv, int argc, int fd) {
        static struct probe_config c;
        char **copy = calloc((size_t) argc + 1, sizeof(*copy));
        int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

        if (!copy || devnull < 0 || dup2(fd, STDERR_FILENO) < 0 || dup2(devnull, STDOUT_FILENO) < 0 ||
            dup2(devnull, STDIN_FILENO) < 0)
                _exit(1);
        memcpy(copy, argv, (size_t) argc * sizeof(*copy));
        program_invocation_short_name = (char *) "sdlive-probe";
        optind = 0; /* getopt() starts afresh: the linter's own options were parsed with it */
        probe_config_check(argc, copy, &c);
        dprintf(fd, "ok %" PRIu64 " %" PRIu64 " %u\n", probe_config_detection_bound(&c),
                c.startup_grace_usec, (unsigned) c.n_probes);
        _exit(0);
}
#endif

void probe_unit_read(char *const *argv, int argc, struct probe_unit *out) {
        memset(out, 0, sizeof(*out));
        out->state = PROBE_UNIT_UNCHECKED;
#ifndef SDLIVE_LINT_PROBE_OPTIONS
        (void) argv;
        (void) argc;
        snprintf(out->message, sizeof(out->message), "this sdlive-lint was built without sdlive-probe (no libcurl)");
#else
        char text[2048];
        size_t len = 0;
        int fds[2], status;
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0) {
                snprintf(out->message, sizeof(out->message), "pipe: %s", strerror(errno));
                return;
        }
        fflush(NULL);
        pid = fork();
        if (pid < 0) {
                snprintf(out->message, sizeof(out->message), "fork: %s", strerror(errno));
                close(fds[0]);
                close(fds[1]);
                return;
        }
        if (pid == 0) {
                close(fds[0]);
                check_in_child(argv, argc, fds[1]);
        }
        close(fds[1]);
        for (;;) {
                ssize_t n = read(fds[0], text + len, sizeof(text) - 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t) n;
                if (len == sizeof(text) - 1)
                        break; /* the rest is not read: one line is what counts */
        }
        text[len] = '\0';
        close(fds[0]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        /* The verdict is the last line: anything the parser logged before it. */
        const char *ok = strncmp(text, "ok ", 3) == 0 ? text : strstr(text, "\nok ");
        if (ok && *ok == '\n')
                ok++;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && ok &&
            sscanf(ok, "ok %" SCNu64 " %" SCNu64 " %u", &out->bound_usec, &out->startup_grace_usec,
                   &out->n_probes) == 3) {
                out->state = PROBE_UNIT_OK;
                /* Accepted, so a "--" and a word after it are there. */
                for (int i = 1; i + 1 < argc; i++)
                        if (!strcmp(argv[i], "--")) {
                                out->command_at = i + 1;
                                break;
                        }
                return;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
                out->state = PROBE_UNIT_REFUSED;
                first_line(text, out->message, sizeof(out->message));
                return;
        }
        /* --help or --version on the command line, or the parser's own
         * failure (out of memory): sdlive-probe would not run the daemon. */
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
                out->state = PROBE_UNIT_REFUSED;
                snprintf(out->message, sizeof(out->message), "it would print its help or version and exit");
                return;
        }
        snprintf(out->message, sizeof(out->message), "its option parser ended with status %d",
                 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
#endif
}
