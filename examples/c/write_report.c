/*
 * write_report.c - the library's reports through an output sink: the
 * JSON tally of a dump (by file:line:class, the 20 largest groups, the
 * dumper's own objects left out) and the text summary, the same bytes as
 * `heapscope tally --json DUMP` and `heapscope summary DUMP` print.
 *
 *   cc write_report.c $(pkg-config --cflags --libs heapscope) -o write_report
 *   ./write_report heap.json.gz > report.txt
 *
 * A writer (hscope_tally_write, hscope_heap_write_summary, ...) hands its
 * output to a write function in pieces: here fwrite to a FILE *, the
 * user data.  A write function could as well append to a buffer, send to
 * a socket or compress; it returns non-zero to stop the writer, which
 * then returns HSCOPE_ERR_IO.
 */
#include <stdio.h>

#include <heapscope/heapscope.h>

static int32_t
write_file(void *user_data, const char *data, uint64_t len)
{
    return fwrite(data, 1, (size_t)len, (FILE *)user_data) == (size_t)len ? 0 : 1;
}

int
main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DUMP\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_heap_t *heap = NULL;
    hscope_tally_t *tally = NULL;
    int rc = 1;
    if (hscope_heap_open_file(&heap, path, NULL, &err) != HSCOPE_OK)
        goto fail;

    /* The tally, as `heapscope tally` makes it by default. */
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    to.top = 20;
    to.flags = HSCOPE_TALLY_SKIP_DUMPER | HSCOPE_TALLY_SKIP_TRACER;
    if (hscope_tally_compute(&tally, heap, "file:line:class", &to, &err) != HSCOPE_OK)
        goto fail;

    /* How to write it: JSON; the dump's name as the reports print it. */
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = HSCOPE_FORMAT_JSON;
    ro.top = 20;
    ro.dump_names = &path;
    ro.dump_name_count = 1;
    if (hscope_tally_write(tally, &ro, write_file, stdout, &err) != HSCOPE_OK)
        goto fail;

    /* The summary as text, 100 columns wide (the default width); the
     * warnings, if any, come first as "warning: ..." lines. */
    ro.format = HSCOPE_FORMAT_TEXT;
    if (hscope_heap_write_summary(heap, &ro, write_file, stdout, &err) != HSCOPE_OK)
        goto fail;
    rc = fflush(stdout) == 0 ? 0 : 1;
    if (rc)
        fprintf(stderr, "%s: cannot write the output\n", path);
    goto done;
fail:
    fprintf(stderr, "%s: %s\n", path, err.message);
done:
    hscope_tally_free(tally);
    hscope_heap_free(heap);
    return rc;
}
