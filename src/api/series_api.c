/*
 * series_api.c - the exported fingerprints and series checks
 * (analysis/series.c).
 */
#include "../model/model.h"
#include "../analysis/series.h"

HSCOPE_API hscope_status
hscope_heap_fingerprint(hscope_fingerprint_t **out, const hscope_heap_t *heap,
                        const char *path, hscope_error *uerr)
{
    return hscope__heap_fingerprint(out, heap, path, uerr);
}

HSCOPE_API hscope_status
hscope_fingerprint_copy(hscope_fingerprint_t **out, const hscope_fingerprint_t *fp,
                        hscope_error *uerr)
{
    return hscope__fingerprint_copy(out, fp, uerr);
}

HSCOPE_API void
hscope_fingerprint_free(hscope_fingerprint_t *fp)
{
    hscope__fingerprint_free(fp);
}

HSCOPE_API uint32_t
hscope_series_check(const hscope_fingerprint_t *const *fps, const char *const *names,
                    uint64_t count, char *text, uint64_t text_size)
{
    return hscope__series_check(fps, names, count, text, text_size);
}
