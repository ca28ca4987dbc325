/*
 * consumer.c - an out-of-tree program built against the *installed*
 * libheapscope, the way a user would:
 *
 *   cc consumer.c $(pkg-config --cflags --libs heapscope) -o consumer
 *   ./consumer [--by KEY] [--diff-by KEY] [--top N] DUMP [DUMP2 [DUMP3]]
 *
 * Prints the tally of the last dump and, with two or three dumps, the diff,
 * in the same format as examples/ffi/ (tests/abi/check_examples.py checks
 * all three against the heapscope CLI).
 */
#include <heapscope/heapscope.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
print_rows(const hscope_tally_t *tally)
{
    printf("%10s %13s  %s\n", "count", "memsize", "key");
    for (uint64_t i = 0; i < hscope_tally_row_count(tally); i++)
        printf("%10llu %13llu  %s\n",
               (unsigned long long)hscope_tally_row_count_of(tally, i),
               (unsigned long long)hscope_tally_row_memsize(tally, i),
               hscope_tally_row_key(tally, i));
    printf("\n");
}

static int
fail(const char *what, hscope_status st, const hscope_error *err)
{
    fprintf(stderr, "%s: %s: %s\n", what, hscope_status_name(st), err->message);
    return 1;
}

static int
tally_dump(const char *path, const char *key, uint64_t top)
{
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_heap_t *heap = NULL;
    hscope_status st = hscope_heap_open_file(&heap, path, NULL, &err);
    if (st != HSCOPE_OK)
        return fail(path, st, &err);

    hscope_tally_options opts = HSCOPE_TALLY_OPTIONS_INIT;
    opts.sort = HSCOPE_SORT_COUNT;
    opts.top = top;
    hscope_tally_t *tally = NULL;
    st = hscope_tally_compute(&tally, heap, key, &opts, &err);
    hscope_heap_free(heap); /* the tally keeps the heap alive */
    if (st != HSCOPE_OK)
        return fail("tally", st, &err);

    uint64_t count = 0, memsize = 0;
    hscope_tally_totals(tally, &count, &memsize);
    printf("tally of %s by %s: %llu objects, %llu bytes in %llu groups\n", path, key,
           (unsigned long long)count, (unsigned long long)memsize,
           (unsigned long long)hscope_tally_group_count(tally));
    print_rows(tally);
    hscope_tally_free(tally);
    return 0;
}

static int
diff_dumps(char **paths, int n, const char *key, uint64_t top)
{
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_diff_t *diff = NULL;
    hscope_status st = hscope_diff_files(&diff, paths[0], paths[1], n > 2 ? paths[2] : NULL,
                                         NULL, NULL, &err);
    if (st != HSCOPE_OK)
        return fail("diff", st, &err);

    hscope_tally_options opts = HSCOPE_TALLY_OPTIONS_INIT;
    opts.top = top;
    hscope_tally_t *tally = NULL;
    st = hscope_diff_tally(&tally, diff, key, &opts, &err);
    if (st != HSCOPE_OK) {
        hscope_diff_free(diff);
        return fail("diff tally", st, &err);
    }
    printf("diff");
    for (int i = 0; i < n; i++)
        printf(" %s", paths[i]);
    printf(" by %s: %llu leaked objects, %llu bytes in %llu groups; "
           "%llu dumper objects left out, %llu reused addresses; snapshots",
           key, (unsigned long long)hscope_diff_count(diff),
           (unsigned long long)hscope_diff_memsize(diff),
           (unsigned long long)hscope_tally_group_count(tally),
           (unsigned long long)hscope_diff_excluded(diff),
           (unsigned long long)hscope_diff_reused_addresses(diff));
    for (int i = 0; i < n; i++)
        printf(" %llu", (unsigned long long)hscope_diff_snapshot_objects(diff, (uint32_t)i));
    printf("\n");
    for (const char *w = hscope_diff_warning_text(diff); *w;) { /* one line each */
        size_t len = strcspn(w, "\n");
        printf("warning: %.*s\n", (int)len, w);
        w += len + (w[len] == '\n');
    }
    print_rows(tally);
    hscope_tally_free(tally);
    hscope_diff_free(diff);
    return 0;
}

int
main(int argc, char **argv)
{
    const char *by = "type", *diff_by = "class";
    uint64_t top = 20;
    int i = 1;
    for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (strcmp(argv[i], "--by") == 0)
            by = argv[i + 1];
        else if (strcmp(argv[i], "--diff-by") == 0)
            diff_by = argv[i + 1];
        else if (strcmp(argv[i], "--top") == 0)
            top = strtoull(argv[i + 1], NULL, 10);
        else
            break;
    }
    int n = argc - i;
    if (n < 1 || n > 3) {
        fprintf(stderr, "usage: %s [--by KEY] [--diff-by KEY] [--top N] DUMP [DUMP2 [DUMP3]]\n",
                argv[0]);
        return 2;
    }
    printf("libheapscope %s (built against %s)\n", hscope_version_string(),
           HSCOPE_VERSION_STRING);
    if (tally_dump(argv[argc - 1], by, top) != 0)
        return 1;
    if (n > 1 && diff_dumps(argv + i, n, diff_by, top) != 0)
        return 1;
    return 0;
}
