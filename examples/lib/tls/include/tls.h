/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_TLS_H
#define SDLIVE_EXAMPLE_TLS_H

/*
 * TLS 1.3 with certificates on both sides for the job link over TCP
 * (docs/jobs.md, "Transport and trust"), on OpenSSL. The coordinator is
 * the TLS server and demands a client certificate; the worker is the
 * client and checks the coordinator's certificate against the address it
 * dialled. Both trust only the CA file they are given, never the system
 * store.
 *
 * Files are read once, at startup, through descriptors opened without
 * following links: a relative name is looked up in $CREDENTIALS_DIRECTORY
 * (systemd's LoadCredential=); every file must be a regular file owned by
 * us or root and not writable by others, and the private key must not be
 * readable or writable by group or others.
 */

#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

struct tls_files {
        const char *cert; /* our certificate, PEM, chain after it */
        const char *key;  /* our private key, PEM */
        const char *ca;   /* the CA certificate(s) we trust for the peer, PEM */
};

/* An SSL_CTX for the coordinator (server) or the worker (client). 0 with
 * *ret set, or -errno with a one-line reason in why (a file refused, a key
 * that does not match the certificate, ...). */
int tls_context_new(const struct tls_files *files, bool server, SSL_CTX **ret, char *why, size_t size);

/* The path a name given on the command line stands for: itself when
 * absolute, else $CREDENTIALS_DIRECTORY/name. -EINVAL for a relative name
 * without $CREDENTIALS_DIRECTORY, -ENAMETOOLONG. */
int tls_credential_path(const char *name, char *buf, size_t size);

/* The handshake on a connected non-blocking socket, waiting at most
 * timeout_ms (and returning early with -ECANCELED once stop_fd, if >= 0,
 * is readable). A client verifies the peer's name against host (a DNS name
 * or an IP literal). 0 with *ret set (the SSL owns nothing: the caller
 * still closes fd), or -errno with a reason in why. */
int tls_handshake(SSL_CTX *ctx, int fd, bool server, const char *host, int timeout_ms, int stop_fd,
                  SSL **ret, char *why, size_t size);

/* True when name is exactly one of the DNS names of the peer certificate's
 * subjectAltName, or, when it has none, its subject common name. */
bool tls_peer_is(SSL *ssl, const char *name);

/* The peer certificate's first DNS name (else common name) into buf, ""
 * when there is none. Returns buf. */
char *tls_peer_name(SSL *ssl, char *buf, size_t size);

/* The same for our own certificate in ctx. */
char *tls_own_name(SSL_CTX *ctx, char *buf, size_t size);

/* Best-effort close_notify (never waits), then frees. Accepts NULL. */
void tls_close(SSL *ssl);

#endif
