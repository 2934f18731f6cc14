/* SPDX-License-Identifier: MIT */
/*
 * netdelay: latency, jitter and loss in user space, for kernels without the
 * netem qdisc. It binds one NFQUEUE queue (the test's iptables rule sends
 * packets there with `-j NFQUEUE --queue-num N --queue-bypass`), holds each
 * packet for delay ± jitter (uniform, seeded) and then accepts it, or drops
 * it with the given probability. Every decision comes from one seeded
 * generator, so a run replays with the same seed.
 *
 *   netdelay --queue N --delay-ms D [--jitter-ms J] [--loss PERCENT] [--seed S]
 *
 * At most HELD_MAX packets are held at once; beyond that a packet is
 * dropped (counted), so a flood cannot make us spend memory. SIGTERM and
 * SIGINT accept every held packet, print the counts and exit 0.
 */

#include <errno.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libnetfilter_queue/libnetfilter_queue.h>

#define HELD_MAX 8192
#define QUEUE_MAXLEN 8192

struct held {
        uint64_t due_usec;
        uint32_t id;
};

static struct {
        struct nfq_q_handle *qh;
        struct held heap[HELD_MAX]; /* min-heap on due_usec */
        size_t n;
        uint64_t delay_usec, jitter_usec, rng;
        double loss;
        uint64_t seen, dropped, overflow, delayed_total_usec;
} g;

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
        (void) sig;
        stop = 1;
}

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* xorshift64*: small, seeded, good enough for a nemesis. */
static uint64_t next_random(void) {
        g.rng ^= g.rng >> 12;
        g.rng ^= g.rng << 25;
        g.rng ^= g.rng >> 27;
        return g.rng * 2685821657736338717ULL;
}

static double uniform01(void) {
        return (double) (next_random() >> 11) / (double) (1ULL << 53);
}

static void heap_push(struct held h) {
        size_t i = g.n++;

        while (i > 0 && g.heap[(i - 1) / 2].due_usec > h.due_usec) {
                g.heap[i] = g.heap[(i - 1) / 2];
                i = (i - 1) / 2;
        }
        g.heap[i] = h;
}

static struct held heap_pop(void) {
        struct held top = g.heap[0], last = g.heap[--g.n];
        size_t i = 0;

        for (;;) {
                size_t c = 2 * i + 1;
                if (c >= g.n)
                        break;
                if (c + 1 < g.n && g.heap[c + 1].due_usec < g.heap[c].due_usec)
                        c++;
                if (g.heap[c].due_usec >= last.due_usec)
                        break;
                g.heap[i] = g.heap[c];
                i = c;
        }
        if (g.n)
                g.heap[i] = last;
        return top;
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa, void *data) {
        struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
        uint64_t delay = g.delay_usec;
        uint32_t id;

        (void) msg;
        (void) data;
        if (!ph)
                return 0;
        id = ntohl(ph->packet_id);
        g.seen++;
        if (g.loss > 0 && uniform01() < g.loss) {
                g.dropped++;
                return nfq_set_verdict(qh, id, NF_DROP, 0, NULL);
        }
        if (g.jitter_usec) {
                double offset = (uniform01() * 2.0 - 1.0) * (double) g.jitter_usec;
                delay = (double) delay + offset < 0 ? 0 : (uint64_t) ((double) delay + offset);
        }
        if (g.n == HELD_MAX) {
                g.overflow++;
                return nfq_set_verdict(qh, id, NF_DROP, 0, NULL);
        }
        g.delayed_total_usec += delay;
        heap_push((struct held) { .due_usec = now_usec() + delay, .id = id });
        return 0;
}

static void release_due(bool all) {
        uint64_t now = now_usec();

        while (g.n && (all || g.heap[0].due_usec <= now)) {
                struct held h = heap_pop();
                nfq_set_verdict(g.qh, h.id, NF_ACCEPT, 0, NULL);
        }
}

static int parse_u64(const char *s, uint64_t max, uint64_t *ret) {
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-' || v > max)
                return -1;
        *ret = v;
        return 0;
}

static void usage(void) {
        fprintf(stderr, "usage: netdelay --queue N --delay-ms D [--jitter-ms J] [--loss PERCENT] [--seed S]\n");
        exit(2);
}

int main(int argc, char **argv) {
        uint64_t queue = UINT64_MAX, delay_ms = UINT64_MAX, jitter_ms = 0, seed = 1;
        struct nfq_handle *h;
        char buf[65536] __attribute__((aligned));
        int fd;

        /* Options come in pairs: NAME VALUE. */
        for (int i = 1; i < argc; i += 2) {
                const char *v = i + 1 < argc ? argv[i + 1] : NULL;
                uint64_t pct;
                if (!v)
                        usage();
                if (!strcmp(argv[i], "--queue") && parse_u64(v, 65535, &queue) == 0)
                        ;
                else if (!strcmp(argv[i], "--delay-ms") && parse_u64(v, 60000, &delay_ms) == 0)
                        ;
                else if (!strcmp(argv[i], "--jitter-ms") && parse_u64(v, 60000, &jitter_ms) == 0)
                        ;
                else if (!strcmp(argv[i], "--loss") && parse_u64(v, 100, &pct) == 0)
                        g.loss = (double) pct / 100.0;
                else if (!strcmp(argv[i], "--seed") && parse_u64(v, UINT64_MAX, &seed) == 0)
                        ;
                else
                        usage();
        }
        if (queue == UINT64_MAX || delay_ms == UINT64_MAX || jitter_ms > delay_ms)
                usage();
        g.delay_usec = delay_ms * 1000;
        g.jitter_usec = jitter_ms * 1000;
        g.rng = seed ? seed : 0x9e3779b97f4a7c15ULL;

        h = nfq_open();
        if (!h) {
                fprintf(stderr, "netdelay: nfq_open: %s\n", strerror(errno));
                return 1;
        }
        g.qh = nfq_create_queue(h, (uint16_t) queue, on_packet, NULL);
        if (!g.qh) {
                fprintf(stderr, "netdelay: cannot bind queue %" PRIu64 ": %s\n", queue, strerror(errno));
                return 1;
        }
        if (nfq_set_mode(g.qh, NFQNL_COPY_META, 0) < 0 || nfq_set_queue_maxlen(g.qh, QUEUE_MAXLEN) < 0) {
                fprintf(stderr, "netdelay: cannot configure queue: %s\n", strerror(errno));
                return 1;
        }
        fd = nfq_fd(h);
        nfnl_rcvbufsiz(nfq_nfnlh(h), 8 * 1024 * 1024);
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
        printf("netdelay: queue %" PRIu64 " delay %" PRIu64 " ms jitter %" PRIu64 " ms loss %.1f %% seed %" PRIu64 "\n",
               queue, delay_ms, jitter_ms, g.loss * 100.0, seed);
        fflush(stdout);

        while (!stop) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int timeout = -1;
                if (g.n) {
                        uint64_t now = now_usec();
                        uint64_t wait = g.heap[0].due_usec > now ? g.heap[0].due_usec - now : 0;
                        timeout = (int) ((wait + 999) / 1000);
                }
                if (poll(&p, 1, timeout) < 0 && errno != EINTR) {
                        fprintf(stderr, "netdelay: poll: %s\n", strerror(errno));
                        break;
                }
                if (p.revents & POLLIN) {
                        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
                        if (n > 0)
                                nfq_handle_packet(h, buf, (int) n);
                        else if (n < 0 && errno == ENOBUFS)
                                fprintf(stderr, "netdelay: the kernel dropped packets (ENOBUFS)\n");
                }
                release_due(false);
        }
        release_due(true);
        printf("netdelay: packets %" PRIu64 " dropped %" PRIu64 " overflow %" PRIu64 " mean delay %.1f ms\n",
               g.seen, g.dropped, g.overflow,
               g.seen > g.dropped ? (double) g.delayed_total_usec / 1000.0 / (double) (g.seen - g.dropped) : 0.0);
        nfq_destroy_queue(g.qh);
        nfq_close(h);
        return 0;
}
