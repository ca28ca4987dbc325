/*
 * diff_api.c - hscope_diff_files(): load the last dump, stream the others.
 */
#include <string.h>

#include "../analysis/analysis.h"

HSCOPE_API hscope_status
hscope_diff_files(hscope_diff_t **out, const char *path_a, const char *path_b,
                  const char *path_c, const hscope_load_options *load,
                  const hscope_diff_options *opts, hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st;
    hscope_heap_t *target = NULL;
    if (!out || !path_a || !path_b) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "out, path_a and path_b are required");
        goto done;
    }
    *out = NULL;
    hscope_load_options lopts;
    if ((st = hscope__read_load_options(load, &lopts, &err)) != HSCOPE_OK)
        goto done;
    load = &lopts;
    const char *tpath = path_c ? path_c : path_b;
    if ((st = hscope__heap_open_file(&target, tpath, load, &err)) != HSCOPE_OK)
        goto done;
    hscope__diff_base ba = { NULL, path_a, load }, bb = { NULL, path_b, load };
    const char *names[3] = { path_a, path_b, path_c ? path_c : "" };
    if (!path_c)
        names[1] = path_b;
    st = hscope__diff_run(out, target, tpath, &ba, path_c ? &bb : NULL, names, opts, &err);
done:
    hscope__heap_release(target); /* the diff holds its own reference */
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}
