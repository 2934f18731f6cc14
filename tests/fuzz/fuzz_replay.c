/* SPDX-License-Identifier: MIT */
/* Replays corpus files through the fuzz target without libFuzzer, so any
 * compiler's build (and its sanitizers) exercises the corpus.
 * Usage: fuzz-replay FILE-OR-DIR...  Fails when it finds no input at all. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_target.h"

static int replay_file(const char *path) {
        FILE *f = fopen(path, "rb");
        uint8_t *buf = NULL;
        long len;

        if (!f) {
                fprintf(stderr, "fuzz-replay: %s: %s\n", path, strerror(errno));
                return -1;
        }
        if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
            !(buf = malloc((size_t) len + 1)) || fread(buf, 1, (size_t) len, f) != (size_t) len) {
                fprintf(stderr, "fuzz-replay: cannot read %s\n", path);
                free(buf);
                fclose(f);
                return -1;
        }
        fclose(f);
        LLVMFuzzerTestOneInput(buf, (size_t) len);
        free(buf);
        return 1;
}

/* Returns the number of inputs replayed, or -1. */
static int replay_path(const char *path) {
        struct dirent *e;
        struct stat st;
        char child[4096];
        int count = 0, r;
        DIR *d;

        if (stat(path, &st) < 0) {
                fprintf(stderr, "fuzz-replay: %s: %s\n", path, strerror(errno));
                return -1;
        }
        if (!S_ISDIR(st.st_mode))
                return replay_file(path);
        d = opendir(path);
        if (!d)
                return -1;
        while ((e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
                if (stat(child, &st) < 0 || !S_ISREG(st.st_mode))
                        continue;
                r = replay_file(child);
                if (r < 0) {
                        closedir(d);
                        return -1;
                }
                count += r;
        }
        closedir(d);
        return count;
}

int main(int argc, char **argv) {
        int total = 0, r;

        for (int i = 1; i < argc; i++) {
                r = replay_path(argv[i]);
                if (r < 0)
                        return EXIT_FAILURE;
                total += r;
        }
        printf("fuzz-replay: %d inputs replayed\n", total);
        return total > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
