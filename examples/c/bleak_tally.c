/*
 * bleak_tally.c - the bleak_house report with libheapscope: the 20
 * allocation sites (file:line:class) holding the most live objects.
 *
 *   cc bleak_tally.c $(pkg-config --cflags --libs heapscope) -o bleak_tally
 *   ./bleak_tally heap.json.gz
 *
 * To get allocation sites into a dump, the Ruby process must trace
 * allocations before the objects are made:
 *
 *   require "objspace"
 *   ObjectSpace.trace_object_allocations_start
 *   ...
 *   File.open("heap.json", "w") { |f| ObjectSpace.dump_all(output: f) }
 */
#include <stdio.h>

#include <heapscope/heapscope.h>

int
main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DUMP\n", argv[0]);
        return 2;
    }

    /* Every call reports failure through a status and a caller-owned error
     * struct; nothing is printed by the library itself. */
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_heap_t *heap = NULL;
    if (hscope_heap_open_file(&heap, argv[1], NULL, &err) != HSCOPE_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], err.message);
        return 1;
    }

    /* Group live objects by bleak_house's key.  Objects allocated while
     * tracing was off land in "(none):0:CLASS". */
    hscope_tally_options opts = HSCOPE_TALLY_OPTIONS_INIT;
    opts.top = 20;
    opts.sort = HSCOPE_SORT_COUNT;
    hscope_tally_t *tally = NULL;
    if (hscope_tally_compute(&tally, heap, "file:line:class", &opts, &err) != HSCOPE_OK) {
        fprintf(stderr, "tally: %s\n", err.message);
        hscope_heap_free(heap);
        return 1;
    }

    printf("%llu objects, %llu distinct file:line:class sites; top %llu:\n",
           (unsigned long long)hscope_heap_object_count(heap),
           (unsigned long long)hscope_tally_group_count(tally),
           (unsigned long long)hscope_tally_row_count(tally));
    for (uint64_t i = 0; i < hscope_tally_row_count(tally); i++)
        printf("%10llu %12llu  %s\n",
               (unsigned long long)hscope_tally_row_count_of(tally, i),
               (unsigned long long)hscope_tally_row_memsize(tally, i),
               hscope_tally_row_key(tally, i));

    /* Free in any order: the tally keeps the heap alive until both go. */
    hscope_tally_free(tally);
    hscope_heap_free(heap);
    return 0;
}
