/*
 * leak_diff.c - the heapleak report with libheapscope: objects allocated
 * between dump A and dump B that are still alive in dump C, grouped by
 * allocation site, with a few addresses to look up with `heapscope show`.
 *
 *   cc leak_diff.c $(pkg-config --cflags --libs heapscope) -o leak_diff
 *   ./leak_diff heap_1.json heap_2.json heap_3.json
 *
 * The recipe: dump after warm-up (A), after running the suspect code (B),
 * and after running it again (C).  What B added and C still holds is
 * what the code leaks.
 */
#include <stdio.h>
#include <string.h>

#include <heapscope/heapscope.h>

int
main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s A B C\n", argv[0]);
        return 2;
    }

    /* hscope_diff_files keeps only C in memory and streams A and B past
     * it, so three multi-gigabyte dumps cost about as much as one. */
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_diff_t *diff = NULL;
    if (hscope_diff_files(&diff, argv[1], argv[2], argv[3], NULL, NULL, &err) != HSCOPE_OK) {
        fprintf(stderr, "diff: %s\n", err.message);
        return 1;
    }

    printf("leaked: %llu objects, %llu bytes\n",
           (unsigned long long)hscope_diff_count(diff),
           (unsigned long long)hscope_diff_memsize(diff));

    /* Say plainly when the dumps cannot support an exact answer (no
     * allocation tracing, partial dumps, compaction), and when the dumps
     * cannot be one process's series (repeated, other processes, out of
     * order). */
    for (const char *w = hscope_diff_warning_text(diff); *w;) { /* one line each */
        size_t len = strcspn(w, "\n");
        printf("warning: %.*s\n", (int)len, w);
        w += len + (w[len] == '\n');
    }

    /* Group the leaked objects; rows of a diff tally list their members. */
    hscope_tally_options opts = HSCOPE_TALLY_OPTIONS_INIT;
    opts.top = 10;
    hscope_tally_t *groups = NULL;
    if (hscope_diff_tally(&groups, diff, "file:line:class", &opts, &err) != HSCOPE_OK) {
        fprintf(stderr, "group: %s\n", err.message);
        hscope_diff_free(diff);
        return 1;
    }
    hscope_heap_t *c = hscope_diff_heap(diff); /* ids refer to dump C */
    for (uint64_t i = 0; i < hscope_tally_row_count(groups); i++) {
        const hscope_id *ids;
        uint64_t n;
        hscope_tally_row_objects(groups, i, &ids, &n);
        printf("%8llu  %s\n         e.g.",
               (unsigned long long)hscope_tally_row_count_of(groups, i),
               hscope_tally_row_key(groups, i));
        for (uint64_t k = 0; k < n && k < 3; k++)
            printf(" 0x%llx", (unsigned long long)hscope_heap_object_address(c, ids[k]));
        printf("\n");
    }

    hscope_tally_free(groups);
    hscope_diff_free(diff);
    return 0;
}
