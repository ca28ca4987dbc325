/*
 * records.c - a dump's records without a heap: the parser in sink mode,
 * each record handed to the caller's sink (the streamed tally, the diff's
 * bases, the waste analysis).  analysis/ reaches the parser only through
 * here.
 */
#include <string.h>

#include "../parse/parse.h"
#include "model.h"

hscope_status
hscope__heap_stream(hscope__builder *b, hscope__mem *mem, const char *path,
                    const hscope_load_options *lo, const hscope__stream_sinks *s,
                    uint64_t *input_bytes, int *gzip, hscope_error *err)
{
    hscope_load_options o;
    hscope_status st = hscope__read_load_options(lo, &o, err);
    memset(b, 0, sizeof(*b));
    if (st != HSCOPE_OK || (st = hscope__builder_init(b, mem, 0, 0, err)) != HSCOPE_OK)
        return st;
    b->sink = s->sink;
    b->sink_oid = s->sink_oid;
    b->slot_sink = s->slots;
    b->sink_ud = s->ud;
    b->sink_details = s->details;
    hscope__parse_opts po = hscope__parse_opts_of(&o);
    return hscope__parse_path(path, (o.flags & HSCOPE_LOAD_NO_GZIP) != 0, o.threads, b, &po,
                              input_bytes, gzip, err);
}

void
hscope__heap_stream_end(hscope__builder *b)
{
    hscope__builder_free(b);
}

const char *
hscope__stream_type_name(const hscope__builder *b, uint64_t code)
{
    return code < 32 ? hscope__fixed_type_name((int)code) : b->type_names[code & 255];
}
