/* SPDX-License-Identifier: MIT */
/*
 * A hostile local user races the coordinator's unix socket creation, run as
 * root: while root binds the socket again and again, the user keeps swapping
 * the socket's path for a symlink to a root-owned 0600 file. Whatever root
 * does, that file's mode never changes.
 *
 *   1. a directory owned by the hostile user: listen_unix() refuses it;
 *   2. a sticky world-writable directory (like /tmp), raced the same way:
 *      the socket may be created or refused, the file keeps its mode;
 *   3. a trusted directory: the socket is created, mode 0666 (any local
 *      user may connect; SO_PEERCRED decides who is served).
 *
 * Needs root (it plays both users); exits 77 (skipped) otherwise.
 */
#include "coordinator_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "soft_check.h"

#define HOSTILE_UID 65534
#define RACE_SECONDS 4.0

static char base[] = "/tmp/sdlive-adv-sock-XXXXXX";
static char secret[256];

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static unsigned mode_of(const char *path) {
        struct stat st;
        return lstat(path, &st) == 0 ? (unsigned) (st.st_mode & 07777) : 0xffffu;
}

/* The hostile user: swaps dir/name for a link to the secret, forever. */
static pid_t start_attacker(const char *dir, const char *name) {
        char link[512], target[512];
        pid_t pid = fork();

        if (pid != 0)
                return pid;
        if (setresgid(HOSTILE_UID, HOSTILE_UID, HOSTILE_UID) < 0 ||
            setresuid(HOSTILE_UID, HOSTILE_UID, HOSTILE_UID) < 0)
                _exit(3);
        snprintf(link, sizeof(link), "%s/.swap-%d", dir, (int) getpid());
        snprintf(target, sizeof(target), "%s/%s", dir, name);
        for (;;) {
                (void) unlink(link);
                if (symlink(secret, link) == 0)
                        (void) rename(link, target);
        }
}

/* Root binds the socket as often as it can for RACE_SECONDS. Returns how
 * many binds succeeded; *refused counts the refusals. */
static unsigned race(const char *path, unsigned *refused, int *last_error) {
        double end = now() + RACE_SECONDS;
        unsigned ok = 0;
        int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY | O_CLOEXEC);

        /* Each refusal is logged: keep the log of the race out of the output. */
        fflush(stderr);
        if (null >= 0)
                dup2(null, STDERR_FILENO);
        *refused = 0;
        while (now() < end) {
                int fd = listen_unix(path);
                if (fd >= 0) {
                        ok++;
                        close(fd);
                } else {
                        ++*refused;
                        *last_error = -fd;
                }
                if (mode_of(secret) != 0600)
                        break;
        }
        if (saved >= 0) {
                dup2(saved, STDERR_FILENO);
                close(saved);
        }
        if (null >= 0)
                close(null);
        return ok;
}

static void stop(pid_t pid) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

static void hostile_directory(void) {
        char dir[256], path[512];
        unsigned refused, ok;
        int error = 0;
        pid_t pid;

        snprintf(dir, sizeof(dir), "%s/hostile", base);
        snprintf(path, sizeof(path), "%s/coordinator.sock", dir);
        if (mkdir(dir, 0755) < 0 || chown(dir, HOSTILE_UID, HOSTILE_UID) < 0) {
                CHECK(0, "cannot prepare %s: %s", dir, strerror(errno));
                return;
        }
        pid = start_attacker(dir, "coordinator.sock");
        ok = race(path, &refused, &error);
        stop(pid);
        printf("hostile directory: %u binds, %u refused (last: %s); secret mode %04o\n", ok, refused,
               strerror(error), mode_of(secret));
        CHECK(mode_of(secret) == 0600, "the root-owned file became mode %04o", mode_of(secret));
        CHECK(ok == 0 && error == EPERM, "a directory owned by another user was used");
        chmod(secret, 0600);
}

static void sticky_directory(void) {
        char dir[256], path[512];
        unsigned refused, ok;
        int error = 0;
        pid_t pid;

        snprintf(dir, sizeof(dir), "%s/sticky", base);
        snprintf(path, sizeof(path), "%s/coordinator.sock", dir);
        if (mkdir(dir, 0755) < 0 || chmod(dir, 01777) < 0) {
                CHECK(0, "cannot prepare %s: %s", dir, strerror(errno));
                return;
        }
        pid = start_attacker(dir, "coordinator.sock");
        ok = race(path, &refused, &error);
        stop(pid);
        printf("sticky directory: %u binds, %u refused (last: %s); secret mode %04o\n", ok, refused,
               strerror(error), mode_of(secret));
        CHECK(mode_of(secret) == 0600, "the root-owned file became mode %04o", mode_of(secret));
        chmod(secret, 0600);
}

static void trusted_directory(void) {
        char dir[256], path[512];
        struct stat st;
        int fd;

        snprintf(dir, sizeof(dir), "%s/trusted", base);
        snprintf(path, sizeof(path), "%s/coordinator.sock", dir);
        CHECK(mkdir(dir, 0755) == 0, "mkdir %s: %s", dir, strerror(errno));
        fd = listen_unix(path);
        CHECK(fd >= 0, "listen_unix(%s): %s", path, strerror(-fd));
        CHECK(lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0666,
              "the socket is not a 0666 socket (mode %04o)", (unsigned) (st.st_mode & 07777));
        /* A second leader on this host replaces its own stale socket. */
        if (fd >= 0)
                close(fd);
        fd = listen_unix(path);
        CHECK(fd >= 0, "listen_unix over a stale socket: %s", strerror(-fd));
        if (fd >= 0)
                close(fd);
        /* Anything else at the path stays. */
        unlink(path);
        CHECK(symlink(secret, path) == 0, "symlink: %s", strerror(errno));
        fd = listen_unix(path);
        CHECK(fd < 0, "listen_unix replaced a symlink");
        CHECK(mode_of(secret) == 0600, "the root-owned file became mode %04o", mode_of(secret));
        if (fd >= 0)
                close(fd);
        printf("trusted directory: socket mode %04o, a symlink in its place left alone\n",
               (unsigned) (st.st_mode & 07777));
}

int main(void) {
        char cmd[600];
        int fd;

        if (geteuid() != 0) {
                printf("SKIP: needs root to play both users\n");
                return 77;
        }
        if (!mkdtemp(base)) {
                perror("mkdtemp");
                return 1;
        }
        chmod(base, 0755);
        snprintf(secret, sizeof(secret), "%s/secret", base);
        fd = open(secret, O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd < 0) {
                perror(secret);
                return 1;
        }
        close(fd);
        chmod(secret, 0600);

        hostile_directory();
        sticky_directory();
        trusted_directory();

        snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", base);
        if (system(cmd) != 0)
                fprintf(stderr, "cannot remove %s\n", base);
        printf("%s\n", check_failures ? "FAILED" : "passed");
        return check_failures ? 1 : 0;
}
