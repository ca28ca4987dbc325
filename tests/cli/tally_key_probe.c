/*
 * tally_key_probe.c - the library's own verdict on tally keys, for
 * check_tally_keys.py: for each KEY, the status of hscope_tally_compute()
 * on the loaded DUMP and of hscope_tally_file() on the same file (two
 * entries of the library that take a key), one line "KEY<TAB>S1<TAB>S2".
 * Public header and shared library only, as a user's program.
 *
 *   tally_key_probe DUMP KEY...
 */
#include <stdio.h>

#include "heapscope/heapscope.h"

int
main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: tally_key_probe DUMP KEY...\n");
        return 2;
    }
    hscope_heap_t *h = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_heap_open_file(&h, argv[1], NULL, &err) != HSCOPE_OK) {
        fprintf(stderr, "tally_key_probe: %s: %s\n", argv[1], err.message);
        return 1;
    }
    for (int i = 2; i < argc; i++) {
        hscope_tally_t *t = NULL, *f = NULL;
        hscope_status s1 = hscope_tally_compute(&t, h, argv[i], NULL, NULL);
        hscope_status s2 = hscope_tally_file(&f, argv[1], argv[i], NULL, NULL, NULL);
        printf("%s\t%d\t%d\n", argv[i], (int)s1, (int)s2);
        hscope_tally_free(t);
        hscope_tally_free(f);
    }
    hscope_heap_free(h);
    return 0;
}
