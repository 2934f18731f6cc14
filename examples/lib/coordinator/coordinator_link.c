/* SPDX-License-Identifier: MIT */
#include "coordinator_link.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "address.h"
#include "frame.h"
#include "frame_reader.h"
#include "log.h"
#include "stream.h"
#include "tls.h"

#define CONNECT_TIMEOUT_MS 1000
#define SEND_TIMEOUT_MS 1000
/* HEARTBEATs passed by in one receive call: only a hostile coordinator
 * sends more in a row, and it must not hold the worker's loop. */
#define HEARTBEATS_PER_RECEIVE 64
/* RESULTs sent together are encoded here: a write of whole frames each
 * time it fills (a RESULT frame takes at most a few hundred bytes). */
#define RESULTS_BUFFER_SIZE 8192

struct coordinator_link {
        sdlive *d;
        coordinator_link_config cfg;
        size_t current; /* index of the address in use or tried last */
        int fd;
        struct stream st; /* fd, through TLS over TCP */
        sdlive_peer *peer;
        frame_decoder *dec;
        struct frame_reader reader; /* the frames read, in the clear */
        uint64_t heartbeat_seq;
};

int coordinator_link_new(coordinator_link **ret, sdlive *d, const coordinator_link_config *cfg) {
        coordinator_link *l;

        if (!ret || !d || !cfg || cfg->n_addresses == 0 ||
            cfg->n_addresses > COORDINATOR_LINK_ADDRESSES_MAX || !cfg->identity || !*cfg->identity)
                return -EINVAL;
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->d = d;
        l->cfg = *cfg;
        l->fd = -1;
        *ret = l;
        return 0;
}

coordinator_link *coordinator_link_free(coordinator_link *l) {
        if (!l)
                return NULL;
        tls_close(l->st.ssl);
        if (l->fd >= 0)
                close(l->fd);
        sdlive_peer_free(l->peer);
        frame_decoder_free(l->dec);
        free(l);
        return NULL;
}

/* Completes a non-blocking connect within CONNECT_TIMEOUT_MS. */
static int finish_connect(int fd, const struct sockaddr *sa, socklen_t len) {
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        socklen_t size = sizeof(int);
        int err = 0, r;

        if (connect(fd, sa, len) == 0)
                return 0;
        if (errno != EINPROGRESS && errno != EAGAIN)
                return -errno;
        do
                r = poll(&p, 1, CONNECT_TIMEOUT_MS);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return -errno;
        if (r == 0)
                return -ETIMEDOUT;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &size) < 0)
                return -errno;
        return -err;
}

static int connect_unix(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        r = finish_connect(fd, (struct sockaddr *) &sa, sizeof(sa));
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

static int connect_tcp(const struct address *address) {
        struct addrinfo *ai = NULL;
        int fd, r;

        r = address_resolve(address, false, &ai);
        if (r < 0)
                return r;
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
                r = -errno;
                freeaddrinfo(ai);
                return r;
        }
        r = finish_connect(fd, ai->ai_addr, ai->ai_addrlen);
        freeaddrinfo(ai);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

/* The handshake's bound: the configured one (at most INT_MAX ms) or the
 * default. */
static int handshake_timeout_ms(const coordinator_link *l) {
        uint64_t ms = l->cfg.handshake_timeout_usec / 1000;

        if (l->cfg.handshake_timeout_usec == 0)
                return COORDINATOR_LINK_HANDSHAKE_DEFAULT_MS;
        return ms == 0 ? 1 : ms > INT_MAX ? INT_MAX : (int) ms;
}

/* Connects to one configured address, through TLS over TCP: the fd, and
 * *ret_ssl (NULL in the clear). -EINVAL when it does not parse, -EPERM
 * when TCP in the clear is not allowed there. */
static int connect_address(const coordinator_link *l, const char *text, SSL **ret_ssl) {
        struct address address;
        char why[256];
        int fd, r = address_parse(text, ADDRESS_ALLOW_UNIX | ADDRESS_ALLOW_TCP, &address, NULL);

        *ret_ssl = NULL;
        if (r < 0)
                return r;
        if (address.kind == ADDRESS_UNIX)
                return connect_unix(address.path);
        if (!l->cfg.tls && (!l->cfg.tcp_insecure || !address_is_loopback(&address))) {
                log_error("refusing TCP in the clear to %s: %s", text,
                          l->cfg.tcp_insecure ? "not a loopback address" : "no TLS certificates given");
                return -EPERM;
        }
        fd = connect_tcp(&address);
        if (fd < 0 || !l->cfg.tls)
                return fd;
        r = tls_handshake(l->cfg.tls, fd, false, address.host, handshake_timeout_ms(l), -1, ret_ssl, why,
                          sizeof(why));
        if (r < 0) {
                log_warning("coordinator at %s: %s", text, why);
                close(fd);
                return r;
        }
        return fd;
}

static int open_session(coordinator_link *l, int fd, SSL *ssl) {
        frame hello = { .type = FRAME_HELLO,
                        .hello = { .protocol = FRAME_PROTOCOL_VERSION, .identity = l->cfg.identity } };
        int r;

        sdlive_peer_free(l->peer);
        l->peer = NULL;
        frame_decoder_free(l->dec);
        l->dec = NULL;
        r = sdlive_peer_new(l->d, l->cfg.timeout_usec, l->cfg.heartbeat_usec, &l->peer);
        if (r >= 0)
                r = frame_decoder_new(&l->dec);
        l->st = (struct stream) { .fd = fd, .ssl = ssl };
        l->reader.at = l->reader.len = 0;
        if (r >= 0)
                r = stream_send_frame(&l->st, &hello, SEND_TIMEOUT_MS);
        if (r < 0)
                return r;
        sdlive_peer_sent(l->peer);
        l->fd = fd;
        return 0;
}

int coordinator_link_connect(coordinator_link *l) {
        int r = -ENOTCONN;

        if (l->fd >= 0)
                return 0;
        for (size_t i = 0; i < l->cfg.n_addresses; i++) {
                size_t at = (l->current + i) % l->cfg.n_addresses;
                const char *address = l->cfg.addresses[at];
                SSL *ssl;
                int fd = connect_address(l, address, &ssl);
                if (fd < 0) {
                        r = fd;
                        continue;
                }
                r = open_session(l, fd, ssl);
                if (r < 0) {
                        tls_close(ssl);
                        l->st.ssl = NULL;
                        close(fd);
                        continue;
                }
                l->current = at;
                log_info("connected to the coordinator at %s", address);
                return 0;
        }
        return r;
}

int coordinator_link_fd(const coordinator_link *l) {
        return l->fd;
}

const char *coordinator_link_address(const coordinator_link *l) {
        return l->cfg.addresses[l->current];
}

void coordinator_link_close(coordinator_link *l, const char *reason) {
        if (l->fd < 0)
                return;
        log_notice("connection to the coordinator at %s ended: %s", coordinator_link_address(l), reason);
        tls_close(l->st.ssl);
        l->st.ssl = NULL;
        close(l->fd);
        l->fd = -1;
        l->reader.at = l->reader.len = 0; /* what was read of it is gone with it */
        /* Try the other addresses first next time: a stopped leader's socket
         * still accepts connections, and only the elected one answers. */
        l->current = (l->current + 1) % l->cfg.n_addresses;
}

static int fail(coordinator_link *l, int r, const char *what) {
        char reason[256];

        if (r == 0)
                snprintf(reason, sizeof(reason), "closed by the coordinator");
        else if (r < -4095 && l->dec)
                snprintf(reason, sizeof(reason), "%s: %s (%s)", what, frame_strerror(r),
                         frame_decoder_reason(l->dec));
        else
                snprintf(reason, sizeof(reason), "%s: %s", what, frame_strerror(r));
        coordinator_link_close(l, reason);
        return r < 0 ? r : -ECONNRESET;
}

int coordinator_link_receive(coordinator_link *l, coordinator_assign *ret) {
        unsigned heartbeats = 0;
        frame f;
        int r;

        if (l->fd < 0)
                return -ENOTCONN;
again:
        if (heartbeats++ == HEARTBEATS_PER_RECEIVE)
                return 0;
        r = frame_reader_next(&l->reader, &l->st, l->dec, &f);
        if (r == -EAGAIN)
                return 0;
        if (r <= 0)
                return fail(l, r, "receiving");
        sdlive_peer_received(l->peer);
        switch (f.type) {
        case FRAME_HEARTBEAT:
                goto again;
        case FRAME_ASSIGN:
                if (f.assign.payload_len >= sizeof(ret->payload)) {
                        coordinator_link_close(l, "ASSIGN payload too long for this worker");
                        return -EMSGSIZE;
                }
                *ret = (coordinator_assign) {
                        .run = f.assign.run,
                        .job = f.assign.job,
                        .attempt = f.assign.attempt,
                };
                memcpy(ret->token, f.assign.token, sizeof(ret->token));
                if (f.assign.payload_len)
                        memcpy(ret->payload, f.assign.payload, f.assign.payload_len);
                ret->payload[f.assign.payload_len] = '\0';
                return 1;
        default:
                coordinator_link_close(l, "unexpected frame from the coordinator");
                return -EBADMSG;
        }
}

static int send_frame(coordinator_link *l, const frame *f) {
        int r;

        if (l->fd < 0)
                return -ENOTCONN;
        r = stream_send_frame(&l->st, f, SEND_TIMEOUT_MS);
        if (r < 0)
                return fail(l, r, "sending");
        sdlive_peer_sent(l->peer);
        return 0;
}

int coordinator_link_send_result(coordinator_link *l, const coordinator_assign *a, int32_t outcome,
                                 const char *text) {
        frame f = { .type = FRAME_RESULT,
                    .result = { .run = a->run, .job = a->job, .attempt = a->attempt, .outcome = outcome,
                                .text = text } };

        memcpy(f.result.token, a->token, sizeof(f.result.token));
        return send_frame(l, &f);
}

int coordinator_link_send_results(coordinator_link *l, const coordinator_link_result *results, size_t n) {
        uint8_t buf[RESULTS_BUFFER_SIZE];
        size_t used = 0;
        int r = 0;

        if (l->fd < 0)
                return -ENOTCONN;
        for (size_t i = 0; i <= n && r >= 0; i++) {
                frame f = { .type = FRAME_RESULT };
                int size = 0;

                if (i < n) {
                        const coordinator_assign *a = results[i].a;
                        f.result.run = a->run;
                        f.result.job = a->job;
                        f.result.attempt = a->attempt;
                        f.result.outcome = results[i].outcome;
                        f.result.text = results[i].text;
                        memcpy(f.result.token, a->token, sizeof(f.result.token));
                        size = frame_encoded_size(&f);
                        if (size < 0) {
                                r = size;
                                break;
                        }
                }
                /* Only whole frames go out; the last write takes the rest. */
                if (used && (i == n || used + (size_t) size > sizeof(buf))) {
                        r = stream_send(&l->st, buf, used, SEND_TIMEOUT_MS);
                        used = 0;
                }
                if (i < n && r >= 0) {
                        r = frame_encode(&f, buf + used, sizeof(buf) - used);
                        used += r > 0 ? (size_t) r : 0;
                }
        }
        if (r < 0)
                return fail(l, r, "sending");
        if (n)
                sdlive_peer_sent(l->peer);
        return 0;
}

int coordinator_link_heartbeat_due(const coordinator_link *l) {
        return l->fd >= 0 && sdlive_peer_heartbeat_due(l->peer) > 0;
}

int coordinator_link_heartbeat(coordinator_link *l) {
        frame f = { .type = FRAME_HEARTBEAT, .heartbeat = { .has_seq = true, .seq = ++l->heartbeat_seq } };

        return send_frame(l, &f);
}

int coordinator_link_expired(const coordinator_link *l) {
        return l->fd >= 0 && sdlive_peer_expired(l->peer) > 0;
}

uint64_t coordinator_link_wait_usec(const coordinator_link *l) {
        if (l->fd < 0)
                return UINT64_MAX;
        /* Frames already read wait for no socket event. */
        if (frame_reader_buffered(&l->reader))
                return 0;
        return (uint64_t) sdlive_peer_poll_timeout(l->peer) * SDLIVE_USEC_PER_MSEC;
}
