/*
 * export.h - CSV/JSON-lines tables and schema.sql (export.c).
 */
#ifndef HSCOPE_REPORT_EXPORT_H
#define HSCOPE_REPORT_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "../analysis/order.h"
#include "out.h"

typedef struct hscope__ex_dump {
    char *path;                 /* as given (a copy) */
    uint64_t id;                /* dump_id */
    int has_time;
    double time;
    hscope_load_stats stats;
    uint64_t skipped[HSCOPE_SKIP__COUNT];
} hscope__ex_dump;

#define HSCOPE__PATH_MAX 4096

struct hscope_export {
    hscope__mem mem;
    int32_t format;             /* HSCOPE_FORMAT_CSV or _JSONL */
    uint64_t first_id;
    char *dir;                  /* as given */
    char absdir[HSCOPE__PATH_MAX];
    hscope__order order;
    hscope__ex_dump *d;         /* time order */
    uint64_t nd;
    uint64_t objects, references;
};

hscope_status hscope__export_files(hscope_export_t **out, const char *const *paths,
                                   uint64_t n, const char *dir,
                                   const hscope_load_options *lo,
                                   const hscope_export_options *o, hscope_error *err);
void hscope__export_free(hscope_export_t *ex);
hscope_status hscope__export_write(const hscope_export_t *ex, const hscope__ropts *ro,
                                   hscope__out *o);

#endif
