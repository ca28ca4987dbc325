/*
 * html_report.c - the library's HTML report and a JSON tally through an
 * output sink: the page `heapscope report` writes (one dump: what is on
 * the heap and what holds it; two or three: also what leaked and what
 * holds the leak; two or more: what grows; always: what could shrink),
 * into a file, and the JSON tally of the last dump (by file:line:class,
 * the 20 largest groups, the dumper's own objects left out) on stdout, as
 * `heapscope tally --json` prints it.
 *
 *   cc html_report.c $(pkg-config --cflags --libs heapscope) -o html_report
 *   ./html_report report.html heap_1.json heap_2.json heap_3.json > tally.json
 *
 * hscope_report_html() loads the dumps, runs the analyses and writes the
 * page through the write function in pieces; nothing is written when a
 * dump cannot be read.  (hscope_html_report_compute() and _write() are
 * the same in two steps, for a caller that wants the diff, timeline or
 * heap of the report before writing it.)
 */
#include <stdio.h>

#include <heapscope/heapscope.h>

/* The sink: fwrite to the FILE * given as user data; non-zero stops the
 * writer (which then returns HSCOPE_ERR_IO). */
static int32_t
write_file(void *user_data, const char *data, uint64_t len)
{
    return fwrite(data, 1, (size_t)len, (FILE *)user_data) == (size_t)len ? 0 : 1;
}

/* The page into the file `out`: 30 rows per table, as the CLI. */
static hscope_status
write_page(const char *out, const char *const *dumps, uint64_t n, hscope_error *err)
{
    FILE *f = fopen(out, "wb");
    if (!f) {
        perror(out);
        return HSCOPE_ERR_IO;
    }
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = HSCOPE_FORMAT_HTML;
    ro.top = 30;
    hscope_status st = hscope_report_html(dumps, n, NULL, NULL, &ro, write_file, f, err);
    if (fclose(f) != 0 && st == HSCOPE_OK) {
        perror(out);
        st = HSCOPE_ERR_IO;
    }
    return st;
}

/* The JSON tally of `path` on stdout. */
static hscope_status
write_tally(const char *path, hscope_error *err)
{
    hscope_heap_t *heap = NULL;
    hscope_tally_t *tally = NULL;
    hscope_status st = hscope_heap_open_file(&heap, path, NULL, err);
    if (st == HSCOPE_OK) {
        hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
        to.top = 20;
        to.flags = HSCOPE_TALLY_SKIP_DUMPER | HSCOPE_TALLY_SKIP_TRACER;
        st = hscope_tally_compute(&tally, heap, "file:line:class", &to, err);
    }
    if (st == HSCOPE_OK) {
        hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
        ro.format = HSCOPE_FORMAT_JSON;
        ro.top = 20;
        ro.dump_names = &path;
        ro.dump_name_count = 1;
        st = hscope_tally_write(tally, &ro, write_file, stdout, err);
    }
    hscope_tally_free(tally);
    hscope_heap_free(heap);
    return st;
}

int
main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s OUT.html DUMP [DUMP...]\n", argv[0]);
        return 2;
    }
    const char *const *dumps = (const char *const *)argv + 2;
    uint64_t n = (uint64_t)argc - 2;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (write_page(argv[1], dumps, n, &err) != HSCOPE_OK ||
        write_tally(dumps[n - 1], &err) != HSCOPE_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], err.message[0] ? err.message : "write failed");
        return 1;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
