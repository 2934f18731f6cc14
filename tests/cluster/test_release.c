/* SPDX-License-Identifier: MIT */
/* Releasing a dead leader's lease (--release-after-death) against a real
 * SQLite store: it releases exactly the recorded (lease, holder,
 * generation) of this run and nothing else — not another member's lease,
 * not a newer generation of our own, not with a record of another run, not
 * run without an invocation id, not while the recorded leader process
 * lives — leaves the lease to expire when the store cannot be reached, and
 * refuses records it cannot trust (symlink, foreign owner, writable by
 * others, not a regular file, oversized, malformed, in a directory another
 * user can write). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cluster_test_util.h"
#include "lease_record.h"
#include "release_after_death.h"

#define MSEC 1000u
#define TTL (60 * 1000 * MSEC)
#define INVOCATION "0123456789abcdef0123456789abcdef"
/* The pid and start lines of a record, where the values do not matter. */
#define PROCESS "pid=1\nstart=1\n"

typedef struct fixture {
        struct temp_store t;
        struct store *s;
        char record[192];
        struct release_config c;
        uint64_t generation;
} fixture;

static int setup(void **state) {
        fixture *f = calloc(1, sizeof(*f));
        char *path;

        assert_non_null(f);
        temp_store_create(&f->t);
        f->s = temp_store_open(&f->t);
        assert_int_equal(lease_record_path(f->t.dir, "a", &path), 0);
        snprintf(f->record, sizeof(f->record), "%s", path);
        free(path);
        f->c = (struct release_config) {
                .store_url = f->t.url,
                .lease = "cluster",
                .node = "a",
                .record_path = f->record,
                .invocation = INVOCATION,
        };
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;
        char tmp[200];

        unlink(f->record);
        snprintf(tmp, sizeof(tmp), "%s.tmp", f->record);
        unlink(tmp);
        store_close(f->s);
        temp_store_remove(&f->t);
        free(f);
        return 0;
}

static void write_text(const char *path, const char *text);

/* The pid and start time of a child that reported them and exited; reaped
 * unless keep_zombie. */
static void child_process(struct lease_record *r, bool keep_zombie) {
        struct lease_record child = { 0 };
        int fds[2], status;
        pid_t pid;

        assert_int_equal(pipe(fds), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                bool ok = lease_record_this_process(&child) == 0 &&
                          write(fds[1], &child, sizeof(child)) == (ssize_t) sizeof(child);
                _exit(ok ? 0 : 1);
        }
        close(fds[1]);
        assert_int_equal(read(fds[0], &child, sizeof(child)), sizeof(child));
        close(fds[0]);
        if (keep_zombie)
                while (waitid(P_PID, (id_t) pid, &(siginfo_t) { 0 }, WEXITED | WNOWAIT) < 0)
                        assert_int_equal(errno, EINTR);
        else {
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        assert_int_equal(child.pid, pid);
        r->pid = child.pid;
        r->start_time = child.start_time;
}

/* a acquires the lease and records it, as a leader does; the leader
 * process is gone by the time the step runs. */
static void a_leads_and_records(fixture *f) {
        struct lease_record r = { .lease = "cluster", .holder = "a", .invocation = INVOCATION };

        assert_int_equal(store_lease_acquire(f->s, "cluster", "a", TTL, &f->generation), 0);
        r.generation = f->generation;
        child_process(&r, false);
        assert_int_equal(lease_record_write(f->record, &r), 0);
}

static void expect_holder(fixture *f, const char *holder, uint64_t generation) {
        struct store_lease_info info;

        assert_int_equal(store_lease_read(f->s, "cluster", &info), 0);
        assert_true(info.held);
        assert_string_equal(info.holder, holder);
        assert_int_equal(info.generation, generation);
}

static void releases_our_dead_leaders_lease(void **state) {
        fixture *f = *state;
        struct store_lease_info info;
        uint64_t next;

        a_leads_and_records(f);
        assert_int_equal(release_after_death(&f->c), RELEASE_DONE);
        assert_int_equal(store_lease_read(f->s, "cluster", &info), 0);
        assert_false(info.held);
        assert_int_equal(access(f->record, F_OK), -1);
        assert_int_equal(store_lease_acquire(f->s, "cluster", "b", TTL, &next), 0);
        /* Run again (a clean stop had released it): nothing to do. */
        assert_int_equal(release_after_death(&f->c), RELEASE_NOTHING);
        expect_holder(f, "b", next);
}

static void refuses_another_members_lease(void **state) {
        fixture *f = *state;
        uint64_t b;

        a_leads_and_records(f);
        /* a's lease ran out or was released; b took it. */
        assert_int_equal(store_lease_release(f->s, "cluster", "a", f->generation), 0);
        assert_int_equal(store_lease_acquire(f->s, "cluster", "b", TTL, &b), 0);
        assert_int_equal(release_after_death(&f->c), RELEASE_NOTHING);
        expect_holder(f, "b", b);
        /* A record naming b (b's own lease, exactly) is not ours to act on. */
        assert_int_equal(lease_record_write(f->record, &(struct lease_record) {
                .lease = "cluster", .holder = "b", .generation = b, .invocation = INVOCATION, .pid = 1,
                .start_time = 1 }), 0);
        assert_int_equal(release_after_death(&f->c), RELEASE_REFUSED);
        expect_holder(f, "b", b);
}

static void refuses_a_newer_generation_of_our_own(void **state) {
        fixture *f = *state;
        uint64_t newer;

        a_leads_and_records(f);
        assert_int_equal(store_lease_release(f->s, "cluster", "a", f->generation), 0);
        assert_int_equal(store_lease_acquire(f->s, "cluster", "a", TTL, &newer), 0);
        assert_true(newer > f->generation);
        assert_int_equal(release_after_death(&f->c), RELEASE_NOTHING);
        expect_holder(f, "a", newer);
}

static void refuses_a_record_of_another_run(void **state) {
        fixture *f = *state;

        a_leads_and_records(f);
        f->c.invocation = "fedcba9876543210fedcba9876543210";
        assert_int_equal(release_after_death(&f->c), RELEASE_NOTHING);
        f->c.invocation = "";
        assert_int_equal(release_after_death(&f->c), RELEASE_REFUSED);
        expect_holder(f, "a", f->generation);
}

/* Run by hand, outside a unit: no invocation id, and a leader started by
 * hand recorded none either ("-"). Empty must not match empty. */
static void refuses_to_run_without_an_invocation(void **state) {
        fixture *f = *state;
        struct lease_record r = { .lease = "cluster", .holder = "a" };

        assert_int_equal(store_lease_acquire(f->s, "cluster", "a", TTL, &f->generation), 0);
        r.generation = f->generation;
        child_process(&r, false);
        assert_int_equal(lease_record_write(f->record, &r), 0);
        f->c.invocation = "";
        assert_int_equal(release_after_death(&f->c), RELEASE_REFUSED);
        expect_holder(f, "a", f->generation);
        assert_int_equal(access(f->record, F_OK), 0);
}

/* The record's leader is this very process, alive: nothing is released,
 * whatever invocation id the step was given. A record whose pid now
 * belongs to another process (another start time), or to a zombie, names
 * a leader that is gone. */
static void refuses_while_its_leader_lives(void **state) {
        fixture *f = *state;
        struct lease_record r = { .lease = "cluster", .holder = "a", .invocation = INVOCATION };

        assert_int_equal(store_lease_acquire(f->s, "cluster", "a", TTL, &f->generation), 0);
        r.generation = f->generation;
        assert_int_equal(lease_record_this_process(&r), 0);
        assert_int_equal(r.pid, getpid());
        assert_int_equal(lease_record_process_gone(&r), 0);
        assert_int_equal(lease_record_write(f->record, &r), 0);
        assert_int_equal(release_after_death(&f->c), RELEASE_REFUSED);
        expect_holder(f, "a", f->generation);

        r.start_time++;
        assert_int_equal(lease_record_process_gone(&r), 1);
        child_process(&r, true);
        assert_int_equal(lease_record_process_gone(&r), 1); /* a zombie */
        assert_int_equal(waitpid(r.pid, NULL, 0), r.pid);
        assert_int_equal(lease_record_write(f->record, &r), 0);
        assert_int_equal(release_after_death(&f->c), RELEASE_DONE);
}

/* A record directory another user could write — sticky like /tmp, or
 * group-writable — is refused for every use: there, a name of ours could
 * be created by someone else first (the temporary file, to keep the
 * record from being written). */
static void refuses_a_directory_others_can_write(void **state) {
        fixture *f = *state;
        static const mode_t shared[] = { 01777, 0770 };
        struct lease_record r;
        char why[512], tmp[200];

        a_leads_and_records(f);
        assert_int_equal(lease_record_read(f->record, &r), 0);
        assert_int_equal(lease_record_check(f->record, why, sizeof(why)), 0);
        for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++) {
                assert_int_equal(chmod(f->t.dir, shared[i]), 0);
                assert_int_equal(lease_record_check(f->record, why, sizeof(why)), -EPERM);
                assert_non_null(strstr(why, "writable by"));
                assert_int_equal(lease_record_read(f->record, &r), -EPERM);
                assert_int_equal(lease_record_write(f->record, &r), -EPERM);
                assert_int_equal(release_after_death(&f->c), RELEASE_REFUSED);
                expect_holder(f, "a", f->generation);
        }
        assert_int_equal(chmod(f->t.dir, 0700), 0);
        /* In a private directory a temporary file left by anyone is
         * replaced (only root can put another user's file there). */
        snprintf(tmp, sizeof(tmp), "%s.tmp", f->record);
        write_text(tmp, "planted");
        if (geteuid() == 0) {
                assert_int_equal(chown(tmp, 65534, 65534), 0);
                assert_int_equal(chmod(tmp, 0400), 0);
        }
        assert_int_equal(lease_record_write(f->record, &r), 0);
        assert_int_equal(access(tmp, F_OK), -1);
        assert_int_equal(release_after_death(&f->c), RELEASE_DONE);
}

/* The database's write lock is held elsewhere: the step gives up within its
 * lock timeout and the lease is left to expire. */
static void unreachable_store_leaves_the_lease(void **state) {
        fixture *f = *state;
        uint64_t started, took;
        sqlite3 *db;

        a_leads_and_records(f);
        assert_int_equal(sqlite3_open(f->t.path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
        f->c.lock_timeout_usec = 200 * MSEC;
        started = monotonic_usec();
        assert_int_equal(release_after_death(&f->c), RELEASE_UNREACHABLE);
        took = monotonic_usec() - started;
        assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        assert_true(took < 2000 * MSEC);
        expect_holder(f, "a", f->generation);
        /* The record stays for a retry. */
        assert_int_equal(access(f->record, F_OK), 0);

        f->c.store_url = "postgresql:host=/nonexistent-sdlive-dir port=1 connect_timeout=1";
        assert_true(release_after_death(&f->c) != RELEASE_DONE);
        expect_holder(f, "a", f->generation);
}

static void write_text(const char *path, const char *text) {
        FILE *fp = fopen(path, "w");

        assert_non_null(fp);
        assert_int_equal(fputs(text, fp) >= 0, 1);
        assert_int_equal(fclose(fp), 0);
        assert_int_equal(chmod(path, 0600), 0);
}

/* Copies tmpl into out with "@G" replaced by the generation. */
static void fill(char *out, size_t size, const char *tmpl, uint64_t generation) {
        const char *at = strstr(tmpl, "@G");

        if (!at) {
                snprintf(out, size, "%s", tmpl);
                return;
        }
        snprintf(out, size, "%.*s%llu%s", (int) (at - tmpl), tmpl, (unsigned long long) generation, at + 2);
}

/* Every record below would name a's live lease if it were trusted. */
static void refuses_untrusted_records(void **state) {
        fixture *f = *state;
        char good[LEASE_RECORD_SIZE_MAX], text[2 * LEASE_RECORD_SIZE_MAX], target[200];
        struct lease_record r;
        static const char *const malformed[] = {
                "",
                /* The format before records named their process. */
                "sdlive-lease-record 1\nlease=cluster\nholder=a\ngeneration=@G\ninvocation=" INVOCATION "\n",
                "sdlive-lease-record 3\nlease=cluster\nholder=a\ngeneration=@G\ninvocation=" INVOCATION "\n" PROCESS,
                "sdlive-lease-record 2\nholder=a\nlease=cluster\ngeneration=@G\ninvocation=" INVOCATION "\n" PROCESS,
                "sdlive-lease-record 2\nlease=cluster\nholder=a\ngeneration=0@G\ninvocation=" INVOCATION "\n" PROCESS,
                "sdlive-lease-record 2\nlease=cluster\nholder=a\ngeneration=@G\ninvocation=" INVOCATION "\n" PROCESS "x=1\n",
                "sdlive-lease-record 2\nlease=cluster\nholder=a b\ngeneration=@G\ninvocation=" INVOCATION "\n" PROCESS,
                "sdlive-lease-record 2\nlease=cluster\nholder=a\ngeneration=@G99999999999999999999\ninvocation=-\n" PROCESS,
                "sdlive-lease-record 2\nlease=cluster\nholder=a\ngeneration=@G\ninvocation=0123\n" PROCESS,
                "sdlive-lease-record 2\nlease=cluster\nholder=a\ngeneration=@G\ninvocation=" INVOCATION "\npid=0\nstart=1\n",
                "sdlive-lease-record 2\nlease=cluster\nholder=a\ngeneration=@G\ninvocation=" INVOCATION "\npid=99999999999\nstart=1\n",
                "sdlive-lease-record 2\nlease=cluster\nholder=a\ngeneration=@G\ninvocation=" INVOCATION "\npid=1\n",
                "sdlive-lease-record 2\nlease=cluster\nholder=a\ngeneration=@G\ninvocation=" INVOCATION "\npid=1\nstart=01\n",
                ("sdlive-lease-record 2\nlease=cluster\nholder=a\ngeneration=@G\ninvocation=" INVOCATION "\npid=1\nstart=1"),
        };

        a_leads_and_records(f);
        assert_int_equal(lease_record_read(f->record, &r), 0);
        snprintf(good, sizeof(good), "sdlive-lease-record 2\nlease=cluster\nholder=a\ngeneration=%llu\n"
                 "invocation=" INVOCATION "\npid=%d\nstart=%llu\n", (unsigned long long) f->generation,
                 (int) r.pid, (unsigned long long) r.start_time);

        for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
                fill(text, sizeof(text), malformed[i], f->generation);
                write_text(f->record, text);
                assert_int_equal(lease_record_read(f->record, &r), -EBADMSG);
                assert_int_equal(release_after_death(&f->c), RELEASE_REFUSED);
        }
        /* Oversized: the good record padded past the limit. */
        memset(text, '\n', sizeof(text) - 1);
        text[sizeof(text) - 1] = '\0';
        memcpy(text, good, strlen(good));
        write_text(f->record, text);
        assert_int_equal(lease_record_read(f->record, &r), -EFBIG);
        /* Writable by others. */
        write_text(f->record, good);
        assert_int_equal(chmod(f->record, 0620), 0);
        assert_int_equal(lease_record_read(f->record, &r), -EPERM);
        assert_int_equal(release_after_death(&f->c), RELEASE_REFUSED);
        /* Owned by someone else (only root can arrange that). */
        if (geteuid() == 0) {
                assert_int_equal(chmod(f->record, 0600), 0);
                assert_int_equal(chown(f->record, 65534, 65534), 0);
                assert_int_equal(lease_record_read(f->record, &r), -EPERM);
                assert_int_equal(release_after_death(&f->c), RELEASE_REFUSED);
        }
        /* A symlink to a good record. */
        unlink(f->record);
        snprintf(target, sizeof(target), "%s/target", f->t.dir);
        write_text(target, good);
        assert_int_equal(symlink(target, f->record), 0);
        assert_int_equal(lease_record_read(f->record, &r), -EPERM);
        assert_int_equal(release_after_death(&f->c), RELEASE_REFUSED);
        unlink(f->record);
        /* A FIFO: refused without blocking. */
        assert_int_equal(mkfifo(f->record, 0600), 0);
        assert_int_equal(lease_record_read(f->record, &r), -EPERM);
        unlink(f->record);
        unlink(target);

        expect_holder(f, "a", f->generation);
        /* The good record, for contrast, is acted on. */
        write_text(f->record, good);
        assert_int_equal(release_after_death(&f->c), RELEASE_DONE);
}

/* A record read writes every field over what an uninitialised struct
 * holds; a record refused leaves the struct as it was, although its
 * first lines parsed. */
static void record_read_fills_all_or_nothing(void **state) {
        fixture *f = *state;
        struct lease_record r, before;
        char text[LEASE_RECORD_SIZE_MAX];
        int pid;

        a_leads_and_records(f);
        memset(&r, 0xa5, sizeof(r));
        assert_int_equal(lease_record_read(f->record, &r), 0);
        assert_non_null(memchr(r.lease, '\0', sizeof(r.lease)));
        assert_string_equal(r.lease, "cluster");
        assert_non_null(memchr(r.holder, '\0', sizeof(r.holder)));
        assert_string_equal(r.holder, "a");
        assert_int_equal(r.generation, f->generation);
        assert_non_null(memchr(r.invocation, '\0', sizeof(r.invocation)));
        assert_string_equal(r.invocation, INVOCATION);
        assert_true(r.pid > 1);
        assert_true(r.start_time > 0 && r.start_time < UINT64_C(0xa5a5a5a5a5a5a5a5));
        pid = (int) r.pid;

        /* Malformed only on its last line. */
        snprintf(text, sizeof(text), "sdlive-lease-record 2\nlease=cluster\nholder=a\ngeneration=%llu\n"
                 "invocation=" INVOCATION "\npid=%d\nstart=01\n", (unsigned long long) f->generation, pid);
        write_text(f->record, text);
        memset(&r, 0xa5, sizeof(r));
        memcpy(&before, &r, sizeof(r));
        assert_int_equal(lease_record_read(f->record, &r), -EBADMSG);
        assert_memory_equal(&r, &before, sizeof(r));
}

/* Writing never follows a symlink planted at the temporary path, and
 * replaces a symlink planted at the record path. */
static void writing_follows_no_symlink(void **state) {
        fixture *f = *state;
        char tmp[200], target[200];
        struct lease_record r = { .lease = "cluster", .holder = "a", .generation = 3, .pid = 1, .start_time = 1 },
                            back;
        struct stat st;

        snprintf(tmp, sizeof(tmp), "%s.tmp", f->record);
        snprintf(target, sizeof(target), "%s/target", f->t.dir);
        write_text(target, "keep");
        assert_int_equal(symlink(target, tmp), 0);
        assert_int_equal(symlink(target, f->record), 0);
        assert_int_equal(lease_record_write(f->record, &r), 0);
        assert_int_equal(lstat(f->record, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_int_equal(lease_record_read(f->record, &back), 0);
        assert_int_equal(back.generation, 3);
        assert_string_equal(back.invocation, "");
        assert_int_equal(lstat(target, &st), 0);
        assert_int_equal(st.st_size, 4);
        unlink(target);
}

/* A record path that names something else — a FIFO here, as a device
 * such as /dev/null would be — or a file that is not a lease record is
 * neither replaced nor removed. */
static void leaves_what_is_not_a_record_alone(void **state) {
        fixture *f = *state;
        struct lease_record r = { .lease = "cluster", .holder = "a", .generation = 3, .pid = 1, .start_time = 1 };
        struct stat st;
        char text[16] = "";
        FILE *in;

        assert_int_equal(mkfifo(f->record, 0600), 0);
        assert_int_equal(lease_record_write(f->record, &r), -EEXIST);
        assert_int_not_equal(lease_record_remove(f->record, 3), 0);
        assert_int_equal(lstat(f->record, &st), 0);
        assert_true(S_ISFIFO(st.st_mode));
        unlink(f->record);

        write_text(f->record, "not a record\n");
        assert_int_equal(lease_record_write(f->record, &r), -EEXIST);
        assert_int_not_equal(lease_record_remove(f->record, 3), 0);
        in = fopen(f->record, "r");
        assert_non_null(in);
        assert_non_null(fgets(text, sizeof(text), in));
        fclose(in);
        assert_string_equal(text, "not a record\n");

        /* A record of ours is replaced, and removed for its generation. */
        unlink(f->record);
        assert_int_equal(lease_record_write(f->record, &r), 0);
        r.generation = 4;
        assert_int_equal(lease_record_write(f->record, &r), 0);
        assert_int_equal(lease_record_remove(f->record, 4), 0);
        assert_int_equal(lstat(f->record, &st), -1);
}

static void record_path_rejects_names_that_are_not_file_names(void **state) {
        char *p = NULL;

        (void) state;
        assert_int_equal(lease_record_path("/d", "../x", &p), -EINVAL);
        assert_int_equal(lease_record_path("/d", "a/b", &p), -EINVAL);
        assert_int_equal(lease_record_path("/d", ".hidden", &p), -EINVAL);
        assert_int_equal(lease_record_path("/d", "", &p), -EINVAL);
        assert_int_equal(lease_record_path("/d", "node-1.example:a@b_c", &p), 0);
        assert_string_equal(p, "/d/node-1.example:a@b_c.lease");
        free(p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(releases_our_dead_leaders_lease, setup, teardown),
                cmocka_unit_test_setup_teardown(refuses_another_members_lease, setup, teardown),
                cmocka_unit_test_setup_teardown(refuses_a_newer_generation_of_our_own, setup, teardown),
                cmocka_unit_test_setup_teardown(refuses_a_record_of_another_run, setup, teardown),
                cmocka_unit_test_setup_teardown(refuses_to_run_without_an_invocation, setup, teardown),
                cmocka_unit_test_setup_teardown(refuses_while_its_leader_lives, setup, teardown),
                cmocka_unit_test_setup_teardown(refuses_a_directory_others_can_write, setup, teardown),
                cmocka_unit_test_setup_teardown(unreachable_store_leaves_the_lease, setup, teardown),
                cmocka_unit_test_setup_teardown(refuses_untrusted_records, setup, teardown),
                cmocka_unit_test_setup_teardown(record_read_fills_all_or_nothing, setup, teardown),
                cmocka_unit_test_setup_teardown(writing_follows_no_symlink, setup, teardown),
                cmocka_unit_test_setup_teardown(leaves_what_is_not_a_record_alone, setup, teardown),
                cmocka_unit_test(record_path_rejects_names_that_are_not_file_names),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
