/* SPDX-License-Identifier: MIT */
/*
 * jobs-flood: a real sdlive-cluster leader (watchdog armed through a
 * private NOTIFY_SOCKET, WATCHDOG_USEC 2 s) creating a 300,000-job run and
 * serving one real sdlive-worker, while FLOOD_HELLO peers say HELLO and
 * heartbeat on its socket and then FLOOD_CONNECT connections arrive at
 * once. Printed and checked: the leader's keepalive (WATCHDOG=1) gaps stay
 * well under the watchdog timeout, its descriptors on the database file do
 * not grow with the peers, the real worker is served all along, and the
 * lease is never lost (generation 1 throughout).
 *
 *   jobs-flood --cluster BIN --worker BIN [--store postgresql:CONNINFO]
 *
 * On PostgreSQL the leader's store connections are counted in
 * pg_stat_activity (application_name sdlive, through psql), not as
 * descriptors on a file.
 * Exit status 0 when every check passed, 1 otherwise, 2 bad usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "store.h"

#define WATCHDOG_USEC 2000000
#define RUN_JOBS 300000
#define FLOOD_HELLO 300
#define FLOOD_CONNECT 1000
#define FLOOD_MS 4000
/* Keepalives are due every WATCHDOG_USEC / 6; a gap of half the timeout
 * leaves the watchdog far from firing. */
#define GAP_MAX_MS (WATCHDOG_USEC / 2000)

static char dir[64], db[96], url[512], sock[100], notify_path[100];
static const char *pg_url; /* NULL: SQLite */
static int notify_fd = -1;
static int64_t last_keepalive, max_gap, keepalives;
static bool ready, failed;

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void fail(const char *what) {
        printf("FAIL: %s\n", what);
        failed = true;
}

/* Takes every datagram the leader sent to its notify socket. */
static void drain_notify(bool count_gaps) {
        char buf[4096];
        ssize_t n;

        while ((n = recv(notify_fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
                buf[n] = '\0';
                if (strstr(buf, "READY=1"))
                        ready = true;
                if (strstr(buf, "WATCHDOG=1")) {
                        int64_t t = now_ms();
                        if (count_gaps && last_keepalive && t - last_keepalive > max_gap)
                                max_gap = t - last_keepalive;
                        last_keepalive = t;
                        keepalives += count_gaps;
                }
        }
}

static void sleep_draining(int ms, bool count_gaps) {
        for (int64_t until = now_ms() + ms; now_ms() < until;) {
                struct pollfd p = { .fd = notify_fd, .events = POLLIN };
                (void) poll(&p, 1, 10);
                drain_notify(count_gaps);
        }
}

static pid_t spawn(char *const argv[], bool notify) {
        char log[160];
        pid_t pid = fork();

        if (pid != 0)
                return pid;
        snprintf(log, sizeof(log), "%s/%s.log", dir, notify ? "cluster" : "worker");
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
                _exit(127);
        if (notify) {
                char usec[32];
                snprintf(usec, sizeof(usec), "%d", WATCHDOG_USEC);
                setenv("NOTIFY_SOCKET", notify_path, 1);
                setenv("WATCHDOG_USEC", usec, 1);
                unsetenv("WATCHDOG_PID");
        }
        execv(argv[0], argv);
        _exit(127);
}

/* PostgreSQL: sessions of the store (application_name sdlive), by psql. */
static int pg_sessions(void) {
        char cmd[768];
        int n = -1;
        FILE *p;

        snprintf(cmd, sizeof(cmd),
                 "$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)/psql '%s' -Atc "
                 "\"SELECT count(*) FROM pg_stat_activity WHERE application_name = 'sdlive'\" 2>/dev/null",
                 pg_url + strlen("postgresql:"));
        p = popen(cmd, "r");
        if (!p)
                return -1;
        if (fscanf(p, "%d", &n) != 1)
                n = -1;
        pclose(p);
        return n;
}

/* Descriptors of pid open on the database file itself (SQLite), or the
 * store's sessions (PostgreSQL: only the leader has any meanwhile). */
static int db_fds(pid_t pid) {
        char path[64], link[320], target[PATH_MAX];
        struct dirent *e;
        DIR *d;
        int n = 0;

        if (pg_url)
                return pg_sessions();
        snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
        d = opendir(path);
        if (!d)
                return -1;
        while ((e = readdir(d))) {
                ssize_t len;
                snprintf(link, sizeof(link), "%s/%s", path, e->d_name);
                len = readlink(link, target, sizeof(target) - 1);
                if (len <= 0)
                        continue;
                target[len] = '\0';
                n += strcmp(target, db) == 0;
        }
        closedir(d);
        return n;
}

static int connect_unix(bool nonblock) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
        if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

static void hello(int fd) {
        frame h = { .type = FRAME_HELLO, .hello = { .protocol = FRAME_PROTOCOL_VERSION, .identity = "flood" } };
        (void) frame_send(fd, &h, 0);
}

/* The store's word: done count of run 1 and the lease generation. */
static void read_store(uint32_t *done, uint64_t *generation, bool *held) {
        struct store_lease_info info = { 0 };
        struct store_run run = { 0 };
        struct store *s;

        *done = 0;
        *generation = 0;
        *held = false;
        if (store_open_readonly(url, &s) < 0)
                return;
        if (store_run_read(s, 1, &run) >= 0)
                *done = run.done_count;
        if (store_lease_read(s, "cluster", &info) >= 0) {
                *generation = info.generation;
                *held = info.held;
        }
        store_close(s);
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "cluster", required_argument, NULL, 'c' },
                { "worker", required_argument, NULL, 'w' },
                { "store", required_argument, NULL, 's' },
                {}
        };
        const char *cluster = NULL, *worker = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int flood[FLOOD_CONNECT], n_hello = 0, n_connect = 0, fds_before, fds_max = 0, c;
        uint32_t done_before, done_mid, done_after;
        uint64_t generation;
        struct rlimit rl;
        bool held;
        pid_t leader, real;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                if (c == 'c')
                        cluster = optarg;
                else if (c == 'w')
                        worker = optarg;
                else if (c == 's' && strncmp(optarg, "postgresql:", 11) == 0 && !strchr(optarg, '\''))
                        pg_url = optarg;
                else
                        return 2;
        }
        if (!cluster || !worker) {
                fprintf(stderr, "usage: jobs-flood --cluster BIN --worker BIN [--store postgresql:CONNINFO]\n");
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        signal(SIGPIPE, SIG_IGN);
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
        snprintf(dir, sizeof(dir), "/tmp/jobs-flood-XXXXXX");
        if (!mkdtemp(dir))
                return 1;
        snprintf(db, sizeof(db), "%s/store.db", dir);
        if (pg_url)
                snprintf(url, sizeof(url), "%s", pg_url);
        else
                snprintf(url, sizeof(url), "sqlite:%s", db);
        snprintf(sock, sizeof(sock), "%s/coordinator.sock", dir);
        snprintf(notify_path, sizeof(notify_path), "%s/notify", dir);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", notify_path);
        notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (notify_fd < 0 || bind(notify_fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                perror("notify socket");
                return 1;
        }

        char store_arg[600], sock_arg[160], run_arg[32];
        snprintf(store_arg, sizeof(store_arg), "--store=%s", url);
        snprintf(sock_arg, sizeof(sock_arg), "--coordinator-socket=%s", sock);
        snprintf(run_arg, sizeof(run_arg), "--job-run=%d", RUN_JOBS);
        char *cluster_argv[] = { (char *) cluster, store_arg, "--node=flood-a", "--lease=3s",
                                 "--maintenance-interval=1h", sock_arg, "--worker-timeout=10s",
                                 "--worker-heartbeat=1s", run_arg, NULL };
        leader = spawn(cluster_argv, true);
        for (int64_t until = now_ms() + 20000; (!ready || access(sock, F_OK) != 0) && now_ms() < until;)
                sleep_draining(20, false);
        if (!ready || access(sock, F_OK) != 0) {
                fail("the leader never became ready and listened on its socket");
                goto out;
        }

        char coord_arg[160];
        snprintf(coord_arg, sizeof(coord_arg), "--coordinator=%s", sock);
        char *worker_argv[] = { (char *) worker, coord_arg, "--identity=real", "--coordinator-timeout=10s",
                                "--heartbeat=1s", NULL };
        real = spawn(worker_argv, false);
        sleep_draining(1000, false);
        read_store(&done_before, &generation, &held);
        fds_before = db_fds(leader);

        /* The flood: peers that say HELLO and heartbeat, then a burst of
         * connections. Keepalive gaps are counted from here. */
        last_keepalive = 0;
        for (; n_hello < FLOOD_HELLO; n_hello++) {
                flood[n_hello] = connect_unix(false);
                if (flood[n_hello] >= 0)
                        hello(flood[n_hello]);
                drain_notify(true);
        }
        for (int64_t until = now_ms() + FLOOD_MS / 2; now_ms() < until;) {
                frame hb = { .type = FRAME_HEARTBEAT };
                for (int i = 0; i < n_hello; i++)
                        if (flood[i] >= 0)
                                (void) frame_send(flood[i], &hb, 0);
                int n = db_fds(leader);
                fds_max = n > fds_max ? n : fds_max;
                sleep_draining(250, true);
        }
        read_store(&done_mid, &generation, &held);
        for (int i = 0; i < n_hello; i++)
                if (flood[i] >= 0)
                        close(flood[i]);
        for (; n_connect < FLOOD_CONNECT; n_connect++) {
                flood[n_connect] = connect_unix(true);
                if (flood[n_connect] >= 0)
                        hello(flood[n_connect]);
                drain_notify(true);
        }
        for (int64_t until = now_ms() + FLOOD_MS / 2; now_ms() < until;) {
                int n = db_fds(leader);
                fds_max = n > fds_max ? n : fds_max;
                sleep_draining(250, true);
        }
        for (int i = 0; i < n_connect; i++)
                if (flood[i] >= 0)
                        close(flood[i]);
        sleep_draining(1000, true);
        read_store(&done_after, &generation, &held);

        printf("leader keepalives during the flood: %" PRId64 ", largest gap %" PRId64 " ms (pet interval "
               "%d ms, watchdog %d ms, bound %d ms)\n",
               keepalives, max_gap, WATCHDOG_USEC / 6000, WATCHDOG_USEC / 1000, GAP_MAX_MS);
        printf("leader %s: %d before, at most %d during %d HELLO peers and %d connections\n",
               pg_url ? "sessions in pg_stat_activity" : "descriptors on the database", fds_before, fds_max,
               FLOOD_HELLO, FLOOD_CONNECT);
        printf("real worker: %u jobs done before, %u half way, %u after the flood; lease generation %" PRIu64
               ", held %s\n", done_before, done_mid, done_after, generation, held ? "yes" : "no");
        if (keepalives < 2 || max_gap > GAP_MAX_MS)
                fail("the leader's keepalives stalled under the flood");
        if (fds_before <= 0 || fds_max > fds_before)
                fail("the leader's store connections grew with the peers");
        if (!(done_mid > done_before && done_after > done_mid))
                fail("the real worker was not served throughout the flood");
        if (generation != 1 || !held)
                fail("the leader lost its lease");
        kill(real, SIGTERM);
        waitpid(real, NULL, 0);
out:
        kill(leader, SIGTERM);
        waitpid(leader, NULL, 0);
        if (failed)
                printf("logs kept in %s\n", dir);
        else {
                char cmd[96];
                snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
                if (system(cmd) != 0)
                        printf("could not remove %s\n", dir);
        }
        return failed ? 1 : 0;
}
