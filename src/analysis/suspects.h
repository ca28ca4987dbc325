/*
 * suspects.h - diff + dominator tree + holders + paths (suspects.c).
 */
#ifndef HSCOPE_ANALYSIS_SUSPECTS_H
#define HSCOPE_ANALYSIS_SUSPECTS_H

#include "../model/model.h"

/* suspects.c: the suspects handle (exported through api/analysis_api.c). */
hscope_status hscope__suspects_compute(hscope_suspects_t **out, hscope_diff_t *diff,
                                       const hscope_dom_options *opts, hscope_error *err);
void hscope__suspects_free(hscope_suspects_t *s);
/* The memory the handle holds (hscope_suspects_memory()). */
uint64_t hscope__suspects_memory(const hscope_suspects_t *s);
hscope_diff_t *hscope__suspects_diff(const hscope_suspects_t *s);
hscope_domtree_t *hscope__suspects_domtree(const hscope_suspects_t *s);
const hscope_holders_t *hscope__suspects_holders(const hscope_suspects_t *s);
const hscope_paths_t *hscope__suspects_paths(const hscope_suspects_t *s);
uint64_t hscope__suspects_path(const hscope_suspects_t *s, uint64_t i, hscope_id *out,
                               uint64_t max, int32_t *root_category);
/* Holder i of the suspects and its allocation sites (the bodies of
 * hscope_suspects_get() and hscope_suspects_site_get(), without the size
 * checks: every field of *out is written). */
hscope_status hscope__suspects_get(const hscope_suspects_t *s, uint64_t i, hscope_suspect *out);
hscope_status hscope__suspects_site_get(const hscope_suspects_t *s, uint64_t i, uint64_t j,
                                        hscope_suspect_site *out);
/* A Ruby VM table (HSCOPE_VM_TABLE_*) or HSCOPE_VM_TABLE_NONE, and its
 * name and reason ("" for none). */
int32_t hscope__vm_table_kind(const hscope_heap_t *h, hscope_id id);
const char *hscope__vm_table_name(int32_t kind);
const char *hscope__vm_table_reason(int32_t kind);

#endif
