/* SPDX-License-Identifier: MIT */
#include "fake_etcd.h"

#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

void fake_read_request(int fd, char *path, size_t size) {
        char buf[8192];
        size_t len = 0;
        char *end, *cl;
        ssize_t n;
        long body = 0;

        path[0] = '\0';
        while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
                len += (size_t) n;
                buf[len] = '\0';
                if ((end = strstr(buf, "\r\n\r\n"))) {
                        cl = strcasestr(buf, "Content-Length:");
                        body = cl ? strtol(cl + 15, NULL, 10) : 0;
                        if ((long) (len - (size_t) (end + 4 - buf)) >= body)
                                break;
                }
        }
        if (len > 5 && strncmp(buf, "POST ", 5) == 0)
                snprintf(path, size, "%.*s", (int) strcspn(buf + 5, " \r\n"), buf + 5);
}

static void send_all(struct fake *f, int fd, const char *p, size_t n) {
        while (n > 0 && !f->stop) {
                size_t chunk = f->trickle_ms > 0 ? 1 : n;
                ssize_t w = send(fd, p, chunk, MSG_NOSIGNAL);

                if (w <= 0)
                        return;
                p += w;
                n -= (size_t) w;
                if (f->trickle_ms > 0)
                        usleep((useconds_t) f->trickle_ms * 1000);
        }
}

static const char *body_for(const struct fake *f, const char *path) {
        for (const struct fake_route *r = f->routes; r && r->path; r++)
                if (strncmp(path, r->path, strlen(r->path)) == 0)
                        return r->body;
        return f->body;
}

static void flood(struct fake *f, int fd, char *chunk) {
        size_t n = strlen(f->flood), k;

        for (k = 0; k + n <= FAKE_BIG; k += n)
                memcpy(chunk + k, f->flood, n);
        while (!f->stop && send(fd, chunk, k, MSG_NOSIGNAL) > 0)
                ;
}

static void *serve(void *arg) {
        struct fake *f = arg;
        char *big = malloc(FAKE_BIG);

        assert_non_null(big);
        while (!f->stop) {
                struct pollfd p = {f->listen_fd, POLLIN, 0};
                const char *body;
                char path[128];
                int fd;

                if (poll(&p, 1, 50) <= 0)
                        continue;
                fd = accept(f->listen_fd, NULL, NULL);
                if (fd < 0)
                        continue;
                fake_read_request(fd, path, sizeof(path));
                f->requests++;
                send_all(f, fd, f->head, strlen(f->head));
                if ((body = body_for(f, path))) {
                        send_all(f, fd, body, strlen(body));
                } else {
                        memset(big, f->body_fill, FAKE_BIG);
                        send_all(f, fd, big, FAKE_BIG);
                }
                if (f->flood)
                        flood(f, fd, big);
                for (int waited = 0; waited < f->hold_ms && !f->stop; waited += 20)
                        usleep(20000);
                close(fd);
        }
        free(big);
        return NULL;
}

void fake_start(struct fake *f) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t alen = sizeof(a);

        f->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(f->listen_fd >= 0);
        assert_int_equal(bind(f->listen_fd, (struct sockaddr *) &a, sizeof(a)), 0);
        assert_int_equal(listen(f->listen_fd, 8), 0);
        assert_int_equal(getsockname(f->listen_fd, (struct sockaddr *) &a, &alen), 0);
        f->port = ntohs(a.sin_port);
        snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d", f->port);
        assert_int_equal(pthread_create(&f->thread, NULL, serve, f), 0);
}

void fake_stop(struct fake *f) {
        f->stop = true;
        pthread_join(f->thread, NULL);
        close(f->listen_fd);
}
