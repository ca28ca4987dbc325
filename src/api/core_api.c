/*
 * core_api.c - the exported helpers every caller needs first: error and
 * option initialisers, status and skip reason names, the version.  The
 * bodies are in core/ (the layers below use them too).
 */
#include "../core/core.h"

HSCOPE_API void
hscope_error_init(hscope_error *err)
{
    hscope__error_init(err);
}

HSCOPE_API const char *
hscope_status_name(hscope_status st)
{
    return hscope__status_name(st);
}

HSCOPE_API uint32_t
hscope_version_number(void)
{
    return HSCOPE_VERSION_NUMBER;
}

HSCOPE_API const char *
hscope_version_string(void)
{
    return HSCOPE_VERSION_STRING;
}

HSCOPE_API void
hscope_load_options_init(hscope_load_options *o)
{
    hscope__load_options_init(o);
}

HSCOPE_API void
hscope_load_stats_init(hscope_load_stats *s)
{
    hscope__load_stats_init(s);
}

HSCOPE_API const char *
hscope_skip_reason_name(int32_t reason)
{
    return hscope__skip_reason_name(reason);
}
