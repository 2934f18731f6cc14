/* SPDX-License-Identifier: MIT */
/*
 * acceptor-ping: test client for sdlive-acceptor (built, not installed).
 * Usage: acceptor-ping SOCKET [REQUEST]   (REQUEST defaults to "ping")
 * Sends one request line, prints the one-line answer, exits 0 when an
 * answer arrived within 2 s, 1 otherwise.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char request[256], answer[256];
        size_t used = 0;
        int fd;

        if (argc < 2 || argc > 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "usage: acceptor-ping SOCKET [REQUEST]\n");
                return 2;
        }
        strcpy(sa.sun_path, argv[1]);
        snprintf(request, sizeof(request), "%s\n", argc == 3 ? argv[2] : "ping");

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ||
            send(fd, request, strlen(request), MSG_NOSIGNAL) != (ssize_t) strlen(request)) {
                fprintf(stderr, "acceptor-ping: %s: %s\n", argv[1], strerror(errno));
                return 1;
        }
        while (used < sizeof(answer) - 1 && !memchr(answer, '\n', used)) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                if (poll(&p, 1, 2000) <= 0)
                        break;
                ssize_t n = recv(fd, answer + used, sizeof(answer) - 1 - used, 0);
                if (n <= 0)
                        break;
                used += (size_t) n;
        }
        close(fd);
        if (!memchr(answer, '\n', used)) {
                fprintf(stderr, "acceptor-ping: no answer\n");
                return 1;
        }
        fwrite(answer, 1, used, stdout);
        return 0;
}
