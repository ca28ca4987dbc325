/*
 * replay.c - main() for running a libFuzzer target without libFuzzer (any
 * compiler): calls LLVMFuzzerTestOneInput() once on every file named on
 * the command line and on every regular file in the directories named
 * (not recursive, in name order).  Each input runs in a child process,
 * so one that crashes (or abort()s on an invariant) does not hide the
 * others: all of them run, the failing ones are listed at the end, and
 * the exit status is 1 if any failed or if no input was found.  Set
 * REPLAY_NO_FORK=1 to run everything in this process (for a debugger).
 *
 *   fuzz_parse_replay tests/fuzz/corpus/fuzz_parse [more dirs or files]
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Under UBSan every report must fail the input, as it does under
 * scripts/fuzz.sh (an UBSAN_OPTIONS in the environment still wins). */
const char *__ubsan_default_options(void);
const char *
__ubsan_default_options(void)
{
    return "halt_on_error=1:print_stacktrace=1";
}

static int
run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fprintf(stderr, "replay: out of memory reading %s\n", path);
            fclose(f);
            return -1;
        }
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap)
            break;
        cap *= 2;
        uint8_t *nb = realloc(buf, cap);
        if (!nb)
            free(buf);
        buf = nb;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: read error on %s\n", path);
        free(buf);
        return -1;
    }
    /* An exact-size copy, so that AddressSanitizer sees reads past the
     * end of the input as libFuzzer would. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    if (len)
        memcpy(exact, buf, len);
    free(buf);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    int failed = 0;
    const char *nf = getenv("REPLAY_NO_FORK");
    if (nf && nf[0] == '1') {
        LLVMFuzzerTestOneInput(exact, len);
    } else {
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "replay: fork: %s\n", strerror(errno));
            failed = 1;
        } else if (pid == 0) {
            LLVMFuzzerTestOneInput(exact, len);
            fflush(NULL);
            _exit(0);
        } else {
            int ws = 0;
            while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
            }
            if (!(WIFEXITED(ws) && WEXITSTATUS(ws) == 0)) {
                failed = 1;
                if (WIFSIGNALED(ws))
                    fprintf(stderr, "replay: FAILED %s (signal %d)\n", path, WTERMSIG(ws));
                else
                    fprintf(stderr, "replay: FAILED %s (exit %d)\n", path, WEXITSTATUS(ws));
            }
        }
    }
    free(exact);
    return failed ? 1 : 0;
}

static char **failures;
static size_t nfailures;

/* Run one file; remember it if it failed.  -1: not run (I/O error). */
static int
run_one(const char *path)
{
    int rc = run_file(path);
    if (rc > 0) {
        char **nf = realloc(failures, (nfailures + 1) * sizeof(*failures));
        if (nf) {
            failures = nf;
            failures[nfailures] = strdup(path);
            if (failures[nfailures])
                nfailures++;
        }
    }
    return rc < 0 ? -1 : 0;
}

static int
cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
run_dir(const char *dir, unsigned long *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof(*names));
            if (!nn)
                break;
            names = nn;
        }
        names[n] = strdup(e->d_name);
        if (names[n])
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(*names), cmp_names);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        size_t pl = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(pl);
        struct stat sb;
        if (path) {
            snprintf(path, pl, "%s/%s", dir, names[i]);
            if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
                if (run_one(path) != 0)
                    rc = -1;
                else
                    (*count)++;
            }
            free(path);
        } else {
            rc = -1;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int
main(int argc, char **argv)
{
    unsigned long count = 0;
    int rc = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            rc = 1;
        } else if (S_ISDIR(sb.st_mode)) {
            if (run_dir(argv[i], &count) != 0)
                rc = 1;
        } else if (run_one(argv[i]) != 0) {
            rc = 1;
        } else {
            count++;
        }
    }
    if (count == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        return 1;
    }
    if (nfailures) {
        fprintf(stderr, "replay: %lu inputs, %zu FAILED:\n", count, nfailures);
        for (size_t i = 0; i < nfailures; i++)
            fprintf(stderr, "  %s\n", failures[i]);
        rc = 1;
    } else {
        fprintf(stderr, "replay: %lu inputs, %s\n", count, rc ? "with I/O errors" : "all passed");
    }
    for (size_t i = 0; i < nfailures; i++)
        free(failures[i]);
    free(failures);
    return rc;
}
