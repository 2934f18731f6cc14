/* SPDX-License-Identifier: MIT */
/*
 * The coordinator's listeners: the unix socket replaces a stale socket
 * file and checks its peers' credentials (a foreign uid is refused when
 * run as root), and TCP in the clear serves loopback only when allowed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "coordinator_fixture.h"

static void unix_listener_checks_credentials(void **state) {
        struct fixture *f = *state;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct coordinator_config cfg = config(f);
        struct coordinator *c;
        frame_decoder *dec;
        frame a;
        int fd, status;
        pid_t pid;

        coordinator_stop(f->c);
        assert_int_equal(chmod(f->dir, 0755), 0); /* reachable for the stranger below */
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/coordinator.sock", f->dir);
        /* A stale socket file from an earlier leader is replaced. */
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        close(fd);
        cfg.unix_path = sa.sun_path;
        assert_int_equal(coordinator_start(&c, f->d, &cfg), 0);
        f->c = c;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_int_equal(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(fd, "local");
        expect_assign(fd, dec, &a);
        frame_decoder_free(dec);
        close(fd);

        if (geteuid() != 0) {
                print_message("not root: cannot try a foreign uid\n");
                return;
        }
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                /* No cmocka in the child: it must only _exit(). */
                frame_decoder *d2;
                frame g;
                if (setgid(65534) < 0 || setuid(65534) < 0)
                        _exit(3);
                fd = socket(AF_UNIX, SOCK_STREAM, 0);
                if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                        _exit(4);
                frame h = { .type = FRAME_HELLO,
                            .hello = { .protocol = FRAME_PROTOCOL_VERSION, .identity = "stranger" } };
                (void) frame_send(fd, &h, 1000); /* may already be refused */
                if (frame_decoder_new(&d2) < 0)
                        _exit(6);
                /* Refused: closed (or reset, our HELLO unread) without a frame. */
                int r = frame_recv(fd, d2, &g, 2000);
                _exit(r == 0 || r == -ECONNRESET ? 0 : 5);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

static void tcp_listener_serves_loopback(void **state) {
        struct fixture *f = *state;
        struct coordinator_config cfg = config(f);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        char address[32];
        struct coordinator *c = NULL;
        frame_decoder *dec;
        frame a;
        int fd, r = -EADDRINUSE;

        coordinator_stop(f->c);
        f->c = NULL;
        cfg.tcp_insecure = true; /* loopback in the clear */
        /* No port-0 query in the API: try a few ports until one is free. */
        for (int i = 0; i < 20 && r == -EADDRINUSE; i++) {
                sa.sin_port = htons((uint16_t) (20000 + (getpid() * 7 + i * 131) % 40000));
                snprintf(address, sizeof(address), "127.0.0.1:%u", ntohs(sa.sin_port));
                cfg.tcp_address = address;
                r = coordinator_start(&c, f->d, &cfg);
        }
        assert_int_equal(r, 0);
        f->c = c;
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_int_equal(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(fd, "remote");
        expect_assign(fd, dec, &a);
        frame_decoder_free(dec);
        close(fd);

        /* A bad address is refused at start. */
        cfg.tcp_address = "no-port";
        assert_true(coordinator_start(&c, f->d, &cfg) < 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(unix_listener_checks_credentials, setup, teardown),
                cmocka_unit_test_setup_teardown(tcp_listener_serves_loopback, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
