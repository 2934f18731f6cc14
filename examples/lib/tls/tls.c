/* SPDX-License-Identifier: MIT */
#include "tls.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "monotonic.h"

/* Credential files are small; anything larger is refused. */
#define CREDENTIAL_MAX (256 * 1024)

/* The last OpenSSL error as text (or fallback), clearing the queue. */
static const char *ssl_reason(char *buf, size_t size, const char *fallback) {
        unsigned long e = ERR_peek_last_error();

        if (e)
                ERR_error_string_n(e, buf, size);
        else
                snprintf(buf, size, "%s", fallback);
        ERR_clear_error();
        return buf;
}

/* why = "<name>: no usable <what>: <OpenSSL's reason>". */
static void not_usable(const char *name, const char *what, char *why, size_t size) {
        char reason[256];

        snprintf(why, size, "%s: no usable %s: %s", name, what, ssl_reason(reason, sizeof(reason), "not PEM"));
}

int tls_credential_path(const char *name, char *buf, size_t size) {
        const char *dir = getenv("CREDENTIALS_DIRECTORY");
        int n;

        if (!name || !*name)
                return -EINVAL;
        if (name[0] == '/')
                n = snprintf(buf, size, "%s", name);
        else if (!dir || dir[0] != '/')
                return -EINVAL;
        else
                n = snprintf(buf, size, "%s/%s", dir, name);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

/* Reads a credential through a descriptor that was checked: a regular file
 * (never a link), owned by us or root, not writable by group or others,
 * and for a secret not readable by them either. Returns a memory BIO. */
static BIO *read_credential(const char *name, bool secret, char *why, size_t size) {
        char path[4096];
        struct stat st;
        BIO *bio = NULL;
        char *data = NULL;
        ssize_t n;
        int fd;

        if (tls_credential_path(name, path, sizeof(path)) < 0) {
                snprintf(why, size, "%s: a relative name needs $CREDENTIALS_DIRECTORY (LoadCredential=)", name);
                return NULL;
        }
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                snprintf(why, size, "%s: %s", path, strerror(errno));
                return NULL;
        }
        if (fstat(fd, &st) < 0)
                snprintf(why, size, "%s: %s", path, strerror(errno));
        else if (!S_ISREG(st.st_mode))
                snprintf(why, size, "%s: not a regular file", path);
        else if (st.st_uid != geteuid() && st.st_uid != 0)
                snprintf(why, size, "%s: owned by uid %u, neither us nor root", path, (unsigned) st.st_uid);
        else if (st.st_mode & (S_IWGRP | S_IWOTH))
                snprintf(why, size, "%s: writable by group or others (mode %04o)", path,
                         (unsigned) (st.st_mode & 07777));
        else if (secret && (st.st_mode & (S_IRGRP | S_IROTH)))
                snprintf(why, size, "%s: a private key readable by group or others (mode %04o): chmod 600",
                         path, (unsigned) (st.st_mode & 07777));
        else if (st.st_size <= 0 || st.st_size > CREDENTIAL_MAX)
                snprintf(why, size, "%s: size %lld, expected 1 to %d bytes", path, (long long) st.st_size,
                         CREDENTIAL_MAX);
        else if (!(data = malloc((size_t) st.st_size)))
                snprintf(why, size, "out of memory");
        else if ((n = pread(fd, data, (size_t) st.st_size, 0)) != st.st_size)
                snprintf(why, size, "%s: short read", path);
        else if (!(bio = BIO_new(BIO_s_mem())) || BIO_write(bio, data, (int) n) != (int) n) {
                snprintf(why, size, "out of memory");
                BIO_free(bio);
                bio = NULL;
        }
        if (data) {
                explicit_bzero(data, (size_t) st.st_size);
                free(data);
        }
        close(fd);
        return bio;
}

/* Installs the certificate (then its chain) from the PEM in bio. */
static int use_certificate(SSL_CTX *ctx, BIO *bio, const char *name, char *why, size_t size) {
        X509 *cert = PEM_read_bio_X509_AUX(bio, NULL, NULL, NULL), *extra;
        int r = -EINVAL;

        if (!cert || SSL_CTX_use_certificate(ctx, cert) != 1) {
                not_usable(name, "certificate", why, size);
                goto out;
        }
        while ((extra = PEM_read_bio_X509(bio, NULL, NULL, NULL)))
                if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {
                        X509_free(extra);
                        snprintf(why, size, "%s: bad chain certificate", name);
                        goto out;
                }
        ERR_clear_error(); /* the end of the PEM stream */
        r = 0;
out:
        X509_free(cert);
        return r;
}

/* Installs the private key from the PEM in bio; it must match the
 * certificate installed before. */
static int use_key(SSL_CTX *ctx, BIO *bio, const char *name, char *why, size_t size) {
        EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
        int r = -EINVAL;

        if (!key || SSL_CTX_use_PrivateKey(ctx, key) != 1)
                not_usable(name, "private key", why, size);
        else if (SSL_CTX_check_private_key(ctx) != 1)
                snprintf(why, size, "%s: the key does not match the certificate", name);
        else
                r = 0;
        EVP_PKEY_free(key);
        return r;
}

/* Trusts every certificate of the PEM in bio (at least one). */
static int use_ca(SSL_CTX *ctx, BIO *bio, const char *name, char *why, size_t size) {
        X509_STORE *store = SSL_CTX_get_cert_store(ctx);
        unsigned count = 0;
        X509 *cert;

        while ((cert = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
                int ok = X509_STORE_add_cert(store, cert) == 1;
                X509_free(cert);
                if (!ok) {
                        snprintf(why, size, "%s: cannot add certificate %u", name, count + 1);
                        return -EINVAL;
                }
                count++;
        }
        ERR_clear_error();
        if (count == 0) {
                snprintf(why, size, "%s: no PEM certificate in it", name);
                return -EINVAL;
        }
        return 0;
}

/* Reads the credential name (secret: a private key) and hands its PEM to
 * use. 0, or -EINVAL with the reason in why. */
static int load_pem(SSL_CTX *ctx, const char *name, bool secret,
                    int (*use)(SSL_CTX *ctx, BIO *bio, const char *name, char *why, size_t size),
                    char *why, size_t size) {
        BIO *bio = read_credential(name, secret, why, size);
        int r;

        if (!bio)
                return -EINVAL;
        r = use(ctx, bio, name, why, size);
        BIO_free(bio);
        return r;
}

int tls_context_new(const struct tls_files *files, bool server, SSL_CTX **ret, char *why, size_t size) {
        SSL_CTX *ctx;

        *ret = NULL;
        if (!files->cert || !files->key || !files->ca) {
                snprintf(why, size, "a certificate, its key and a CA file are all needed");
                return -EINVAL;
        }
        ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
        if (!ctx) {
                snprintf(why, size, "cannot create a TLS context");
                return -ENOMEM;
        }
        SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
        /* An abrupt close is an end of stream: the frames carry their own
         * lengths, and a cut inside one is caught by the decoder. */
        SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_TICKET);
        SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | (server ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), NULL);
        SSL_CTX_set_verify_depth(ctx, 4);
        if (load_pem(ctx, files->cert, false, use_certificate, why, size) < 0 ||
            load_pem(ctx, files->key, true, use_key, why, size) < 0 ||
            load_pem(ctx, files->ca, false, use_ca, why, size) < 0) {
                SSL_CTX_free(ctx);
                return -EINVAL;
        }
        *ret = ctx;
        return 0;
}

/* Tells the client's SSL which name the server must prove. */
static int expect_host(SSL *ssl, const char *host) {
        X509_VERIFY_PARAM *param = SSL_get0_param(ssl);

        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        if (X509_VERIFY_PARAM_set1_ip_asc(param, host) == 1)
                return 0;
        ERR_clear_error();
        if (SSL_set1_host(ssl, host) != 1 || SSL_set_tlsext_host_name(ssl, host) != 1)
                return -EINVAL;
        return 0;
}

int tls_handshake(SSL_CTX *ctx, int fd, bool server, const char *host, int timeout_ms, int stop_fd,
                  SSL **ret, char *why, size_t size) {
        int64_t deadline = monotonic_ms() + timeout_ms;
        char reason[256];
        SSL *ssl;

        *ret = NULL;
        ssl = SSL_new(ctx);
        if (!ssl || SSL_set_fd(ssl, fd) != 1 || (!server && (!host || expect_host(ssl, host) < 0))) {
                snprintf(why, size, "cannot set up TLS");
                SSL_free(ssl);
                return -ENOMEM;
        }
        for (;;) {
                int r = server ? SSL_accept(ssl) : SSL_connect(ssl);
                if (r == 1)
                        break;
                int e = SSL_get_error(ssl, r);
                struct pollfd p[2] = {
                        { .fd = fd, .events = e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN },
                        { .fd = stop_fd, .events = POLLIN },
                };
                if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
                        long v = SSL_get_verify_result(ssl);
                        if (v != X509_V_OK)
                                snprintf(why, size, "TLS handshake: certificate refused: %s",
                                         X509_verify_cert_error_string(v));
                        else
                                snprintf(why, size, "TLS handshake: %s",
                                         ssl_reason(reason, sizeof(reason),
                                                    e == SSL_ERROR_SYSCALL ? "connection closed" : "failed"));
                        ERR_clear_error();
                        SSL_free(ssl);
                        return -ECONNABORTED;
                }
                int64_t left = deadline - monotonic_ms();
                if (left <= 0 || (r = poll(p, stop_fd >= 0 ? 2 : 1, (int) left)) == 0) {
                        snprintf(why, size, "TLS handshake not done within %d ms", timeout_ms);
                        SSL_free(ssl);
                        return -ETIMEDOUT;
                }
                if (r < 0 && errno != EINTR) {
                        int saved = errno;
                        snprintf(why, size, "poll: %s", strerror(saved));
                        SSL_free(ssl);
                        return -saved;
                }
                if (r > 0 && stop_fd >= 0 && p[1].revents) {
                        snprintf(why, size, "stopping");
                        SSL_free(ssl);
                        return -ECANCELED;
                }
        }
        *ret = ssl;
        return 0;
}

/* Calls fn on each name the certificate stands for, until it returns
 * true: the DNS names of its subjectAltName, or its common name when it
 * has none. */
static bool each_name(X509 *cert, bool (*fn)(const char *name, size_t len, void *userdata), void *userdata) {
        GENERAL_NAMES *names;
        bool found = false, any_dns = false;

        if (!cert)
                return false;
        names = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
        for (int i = 0; names && i < sk_GENERAL_NAME_num(names) && !found; i++) {
                const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
                if (g->type != GEN_DNS)
                        continue;
                any_dns = true;
                found = fn((const char *) ASN1_STRING_get0_data(g->d.dNSName),
                           (size_t) ASN1_STRING_length(g->d.dNSName), userdata);
        }
        GENERAL_NAMES_free(names);
        if (any_dns || found)
                return found;
        X509_NAME *subject = X509_get_subject_name(cert);
        int at = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
        if (at < 0)
                return false;
        ASN1_STRING *cn = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at));
        return fn((const char *) ASN1_STRING_get0_data(cn), (size_t) ASN1_STRING_length(cn), userdata);
}

static bool equals(const char *name, size_t len, void *userdata) {
        const char *want = userdata;

        /* An embedded NUL never matches: len counts every byte. */
        return strlen(want) == len && memcmp(name, want, len) == 0;
}

bool tls_peer_is(SSL *ssl, const char *name) {
        return ssl && name && *name && each_name(SSL_get0_peer_certificate(ssl), equals, (void *) name);
}

struct copy {
        char *buf;
        size_t size;
};

static bool copy_first(const char *name, size_t len, void *userdata) {
        struct copy *c = userdata;

        if (len == 0 || len >= c->size || memchr(name, '\0', len))
                return false;
        memcpy(c->buf, name, len);
        c->buf[len] = '\0';
        return true;
}

static char *first_name(X509 *cert, char *buf, size_t size) {
        struct copy c = { buf, size };

        if (size)
                buf[0] = '\0';
        if (size)
                each_name(cert, copy_first, &c);
        return buf;
}

char *tls_peer_name(SSL *ssl, char *buf, size_t size) {
        return first_name(ssl ? SSL_get0_peer_certificate(ssl) : NULL, buf, size);
}

char *tls_own_name(SSL_CTX *ctx, char *buf, size_t size) {
        return first_name(SSL_CTX_get0_certificate(ctx), buf, size);
}

void tls_close(SSL *ssl) {
        if (!ssl)
                return;
        (void) SSL_shutdown(ssl);
        ERR_clear_error();
        SSL_free(ssl);
}
