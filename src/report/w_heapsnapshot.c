/*
 * w_heapsnapshot.c - a loaded heap as a V8 heap snapshot (.heapsnapshot),
 * the format of Chrome DevTools' Memory panel and of memlab
 * (docs/HEAPSNAPSHOT.md has the whole mapping).
 *
 * Node 0 is the synthetic root "(roots)", nodes 1..C one synthetic node
 * per ROOT category ("(vm)", ...), then one node per object in dump
 * order.  Edges: root -> category (property, the category's name),
 * category -> target (element, position), object -> reference (element,
 * position among the object's references), object -> class (internal,
 * "class": Ruby marks it, and heapscope's dominator tree counts it).  So
 * a V8 dominator tree is heapscope's own.
 *
 * Streamed: the counts the header needs come from the model (objects,
 * references, categories, resolved classes); nodes and edges are written
 * from the columns as they are, with nothing held but one counter per
 * allocation site.  The string table is the heap's interner (every
 * class name, file and method once), then the few names of the
 * snapshot's own that the heap does not have, so it needs no table of
 * its own.
 */
#include <stdio.h>
#include <string.h>

#include "../model/model.h"
#include "jsonw.h"
#include "out.h"
#include "rowcur.h"
#include "writers.h"

/* node_fields, node_types */
#define NODE_FIELDS 7
enum { NT_HIDDEN = 0, NT_OBJECT = 3, NT_CLOSURE = 5, NT_SYNTHETIC = 9 };
/* edge_types */
enum { ET_ELEMENT = 1, ET_PROPERTY = 2, ET_INTERNAL = 3 };

/* The string table is the heap's interned strings (string k at index k,
 * 0 the empty string), then those of the snapshot's own names that the
 * heap does not have: each string once. */
enum { S_ROOTS, S_CLASS, S_ROOT_FN, S_NO_METHOD, FIXED };
static const char *const fixed_strings[FIXED] = { "(roots)", "class", "(root)", "(no method)" };

/* Largest node count whose to_node (index * NODE_FIELDS) fits 32 bits:
 * DevTools and memlab read the arrays as Uint32Array. */
#define MAX_NODES (UINT32_MAX / NODE_FIELDS)

typedef struct snap {
    const hscope_heap_t *h;
    hscope__out *o;
    uint32_t ncat;
    uint64_t nodes, edges;
    uint64_t *site_count, *site_size; /* per site: objects, memsize */
    uint32_t *sx;             /* index of fixed string k, then of category
                                 c's node name "(NAME)" (FIXED + c) */
    char **names;             /* those strings (FIXED + ncat) */
    uint32_t nextra;          /* strings after the interned ones */
    char line[160];
    size_t len;
} snap;

static void
num(snap *s, uint64_t v)
{
    char b[24];
    char *p = hscope__u64_digits(b + sizeof(b), v);
    if (s->len)
        s->line[s->len++] = ',';
    memcpy(s->line + s->len, p, (size_t)(b + sizeof(b) - p));
    s->len += (size_t)(b + sizeof(b) - p);
}

/* The buffered numbers, after `sep` (",\n" between records, V8's layout). */
static void
flush(snap *s, const char *sep)
{
    hscope__out_puts(s->o, sep);
    hscope__out_write(s->o, s->line, s->len);
    s->len = 0;
}

/* Odd ids from the address: the same object has the same id in every
 * dump of a process (memlab's baseline/target/final diff works by id);
 * unique within any 16 GiB window of addresses (Ruby's slots are 8-byte
 * aligned; a 32-bit dump's 4).  Synthetic nodes have even ids (0 is the
 * root, as memlab expects); 1 also means "root" to memlab, so it is
 * never an object's. */
static uint32_t
object_id(uint64_t addr)
{
    uint32_t id = (uint32_t)(addr >> 2) | 1u;
    return id == 1u ? UINT32_MAX : id;
}

static uint32_t
node_type(int t)
{
    switch (t) {
    case HSCOPE_TYPE_CLASS:
    case HSCOPE_TYPE_MODULE:
        return NT_CLOSURE;
    case HSCOPE_TYPE_ICLASS:
    case HSCOPE_TYPE_IMEMO:
    case HSCOPE_TYPE_NODE:
        return NT_HIDDEN;
    default:
        return NT_OBJECT;
    }
}

static int
has_class_edge(const hscope_heap_t *h, uint32_t i)
{
    return h->cls[i] < HSCOPE__CLS_UNKNOWN;
}

static void
header(snap *s, uint64_t nfun)
{
    hscope__out *o = s->o;
    hscope__out_puts(o, "{\"snapshot\":{\"meta\":{"
        "\"node_fields\":[\"type\",\"name\",\"id\",\"self_size\",\"edge_count\","
        "\"trace_node_id\",\"detachedness\"],"
        "\"node_types\":[[\"hidden\",\"array\",\"string\",\"object\",\"code\",\"closure\","
        "\"regexp\",\"number\",\"native\",\"synthetic\",\"concatenated string\","
        "\"sliced string\",\"symbol\",\"bigint\",\"object shape\"],"
        "\"string\",\"number\",\"number\",\"number\",\"number\",\"number\"],"
        "\"edge_fields\":[\"type\",\"name_or_index\",\"to_node\"],"
        "\"edge_types\":[[\"context\",\"element\",\"property\",\"internal\",\"hidden\","
        "\"shortcut\",\"weak\"],\"string_or_number\",\"node\"],"
        "\"trace_function_info_fields\":[\"function_id\",\"name\",\"script_name\","
        "\"script_id\",\"line\",\"column\"],"
        "\"trace_node_fields\":[\"id\",\"function_info_index\",\"count\",\"size\","
        "\"children\"],"
        "\"sample_fields\":[\"timestamp_us\",\"last_assigned_id\"],"
        "\"location_fields\":[\"object_index\",\"script_id\",\"line\",\"column\"]},");
    hscope__out_printf(o, "\"node_count\":%llu,\"edge_count\":%llu,\"trace_function_count\":%llu},\n",
                       (unsigned long long)s->nodes, (unsigned long long)s->edges,
                       (unsigned long long)nfun);
}

static void
nodes(snap *s)
{
    const hscope_heap_t *h = s->h;
    hscope__out_puts(s->o, "\"nodes\":[");
    num(s, NT_SYNTHETIC);
    num(s, s->sx[S_ROOTS]);
    num(s, 0);
    num(s, 0);
    num(s, s->ncat);
    num(s, 0);
    num(s, 0);
    flush(s, "");
    for (uint32_t c = 0; c < s->ncat; c++) {
        num(s, NT_SYNTHETIC);
        num(s, s->sx[FIXED + c]);
        num(s, 2 + 2 * (uint64_t)c);
        num(s, 0);
        num(s, h->cat_start[c + 1] - h->cat_start[c]);
        num(s, 0);
        num(s, 0);
        flush(s, ",\n");
    }
    int traced = h->nsites > 1;
    /* the objects' records formatted in place (rowcur.h): the same bytes
     * as num() and flush(), without a call per number */
    hscope__cur k = { s->o, NULL, NULL, NULL };
    hscope__cur_open(&k, HSCOPE__ROW_ROOM); /* never NULL: a buffer is 8 KiB or more */
    for (uint32_t i = 0; i < h->n; i++) {
        uint64_t mem = hscope__memsize(h, i);
        uint32_t site = h->site[i];
        if ((size_t)(k.end - k.p) < HSCOPE__ROW_ROOM) { /* a record is at most 148 bytes */
            hscope__cur_close(&k);
            hscope__cur_open(&k, HSCOPE__ROW_ROOM);
        }
        char *p = k.p;
        p[0] = ',';
        p[1] = '\n';
        p = hscope__put_u64(p + 2, node_type(h->type[i]));
        *p++ = ',';
        p = hscope__put_u64(p, hscope__object_label(h, i));
        *p++ = ',';
        p = hscope__put_u64(p, object_id(h->addr[i]));
        *p++ = ',';
        p = hscope__put_u64(p, mem < UINT32_MAX ? mem : UINT32_MAX);
        *p++ = ',';
        p = hscope__put_u64(p, h->edge_start[i + 1] - h->edge_start[i] +
                                   (uint64_t)has_class_edge(h, i));
        *p++ = ',';
        p = hscope__put_u64(p, traced && site ? (uint64_t)site + 1 : 0);
        memcpy(p, ",0", 2);
        k.p = p + 2;
        s->site_count[site]++;
        s->site_size[site] += mem;
    }
    hscope__cur_close(&k);
    hscope__out_puts(s->o, "],\n");
}

static void
edge(snap *s, uint32_t type, uint64_t name_or_index, uint64_t to_node)
{
    num(s, type);
    num(s, name_or_index);
    num(s, to_node * NODE_FIELDS);
}

static void
edges(snap *s)
{
    const hscope_heap_t *h = s->h;
    uint64_t base = 1 + (uint64_t)s->ncat; /* node index of object 0 */
    const char *sep = "";
    hscope__out_puts(s->o, "\"edges\":[");
    for (uint32_t c = 0; c < s->ncat; c++) {
        edge(s, ET_PROPERTY, h->cat_name[c], 1 + (uint64_t)c);
        flush(s, sep);
        sep = ",\n";
    }
    for (uint32_t c = 0; c < s->ncat; c++) {
        for (uint64_t r = h->cat_start[c]; r < h->cat_start[c + 1]; r++) {
            edge(s, ET_ELEMENT, r - h->cat_start[c], base + h->root_targets[r]);
            flush(s, sep);
            sep = ",\n";
        }
    }
    /* the objects' references formatted in place, as the nodes */
    hscope__cur k = { s->o, NULL, NULL, NULL };
    hscope__cur_open(&k, HSCOPE__ROW_ROOM);
    size_t lead = *sep ? 0 : 2; /* no separator before the very first edge */
    for (uint32_t i = 0; i < h->n; i++) {
        for (uint64_t e = h->edge_start[i]; e <= h->edge_start[i + 1]; e++) {
            uint64_t name, to;
            if (e < h->edge_start[i + 1]) {
                name = e - h->edge_start[i];
                to = base + h->edges[e];
            } else if (has_class_edge(h, i)) {
                name = s->sx[S_CLASS];
                to = base + h->cls[i];
            } else {
                break;
            }
            if ((size_t)(k.end - k.p) < HSCOPE__ROW_ROOM) { /* at most 66 bytes */
                hscope__cur_close(&k);
                hscope__cur_open(&k, HSCOPE__ROW_ROOM);
            }
            char *p = k.p;
            p[0] = ',';
            p[1] = '\n';
            p += 2 - lead;
            lead = 0;
            *p++ = (char)('0' + (e < h->edge_start[i + 1] ? ET_ELEMENT : ET_INTERNAL));
            *p++ = ',';
            p = hscope__put_u64(p, name);
            *p++ = ',';
            k.p = hscope__put_u64(p, to * NODE_FIELDS);
        }
    }
    hscope__cur_close(&k);
    hscope__out_puts(s->o, "],\n");
}

/* One function per allocation site (index = site id; 0 is the tree's
 * root), one trace node per site under a root trace node (id 1; a site's
 * node id is site + 1): DevTools shows an object's site as its
 * "Allocation stack". */
static void
traces(snap *s)
{
    const hscope_heap_t *h = s->h;
    int traced = h->nsites > 1;
    hscope__out_puts(s->o, "\"trace_function_infos\":[");
    for (size_t k = 0; traced && k < h->nsites; k++) {
        num(s, k);
        if (k == 0) {
            num(s, s->sx[S_ROOT_FN]);
            num(s, 0);
            num(s, 0);
            num(s, 0);
        } else {
            num(s, h->site_method[k] ? h->site_method[k] : s->sx[S_NO_METHOD]);
            num(s, h->site_file[k]);
            num(s, h->site_file[k]);
            num(s, h->site_line[k]);
        }
        num(s, 0);
        flush(s, k ? ",\n" : "");
    }
    hscope__out_puts(s->o, "],\n\"trace_tree\":[");
    if (traced) {
        uint64_t cnt = 0, size = 0;
        for (size_t k = 1; k < h->nsites; k++) {
            cnt += s->site_count[k];
            size += s->site_size[k];
        }
        num(s, 1);
        num(s, 0);
        num(s, cnt);
        num(s, size);
        flush(s, "");
        hscope__out_puts(s->o, ",[");
        for (size_t k = 1; k < h->nsites; k++) {
            num(s, k + 1);
            num(s, k);
            num(s, s->site_count[k]);
            num(s, s->site_size[k]);
            flush(s, k > 1 ? ",\n" : "");
            hscope__out_puts(s->o, ",[]");
        }
        hscope__out_puts(s->o, "]");
    }
    hscope__out_puts(s->o, "],\n\"samples\":[],\n\"locations\":[],\n");
}

/* The index of each of the snapshot's own names: the heap's when it has
 * the string, else the next one after the interned strings. */
static hscope_status
own_strings(snap *s, hscope__mem *m, hscope_error *err)
{
    const hscope_heap_t *h = s->h;
    for (uint32_t k = 0; k < FIXED + s->ncat; k++) {
        const char *cat = k < FIXED ? fixed_strings[k]
                                    : hscope__intern_str(&h->strings, h->cat_name[k - FIXED]);
        size_t n = strlen(cat ? cat : "?") + 3;
        if (!(s->names[k] = hscope__malloc(m, n)))
            return hscope__nomem(err, n);
        snprintf(s->names[k], n, k < FIXED ? "%s" : "(%s)", cat ? cat : "?");
        uint32_t id = hscope__intern_find(&h->strings, s->names[k], strlen(s->names[k]));
        for (uint32_t j = 0; !id && j < k; j++)
            if (strcmp(s->names[j], s->names[k]) == 0)
                id = s->sx[j];
        s->sx[k] = id ? id : (uint32_t)h->strings.count + s->nextra++;
    }
    return HSCOPE_OK;
}

static void
strings(snap *s)
{
    const hscope_heap_t *h = s->h;
    hscope__json js;
    hscope__json_init(&js, s->o, 0);
    js.script_safe = 1; /* invalid UTF-8 as U+FFFD: a JSON reader takes it */
    hscope__out_puts(s->o, "\"strings\":[\"\"");
    for (size_t k = 1; k < h->strings.count; k++) {
        hscope__out_puts(s->o, ",\n");
        hscope__json_strn(&js, hscope__intern_str(&h->strings, (uint32_t)k),
                          hscope__intern_len(&h->strings, (uint32_t)k));
    }
    uint32_t next = (uint32_t)h->strings.count;
    for (uint32_t k = 0; k < FIXED + s->ncat; k++) {
        if (s->sx[k] != next)
            continue; /* the heap's, or a name met before */
        hscope__out_puts(s->o, ",\n");
        hscope__json_str(&js, s->names[k]);
        next++;
    }
    hscope__out_puts(s->o, "]}\n");
}

hscope_status
hscope__heapsnapshot_write(const hscope_heap_t *h, hscope__out *o, hscope_error *err)
{
    snap s;
    memset(&s, 0, sizeof(s));
    s.h = h;
    s.o = o;
    s.ncat = h->ncat;
    s.nodes = 1 + (uint64_t)h->ncat + h->n;
    s.edges = h->ncat + h->cat_start[h->ncat] + h->nedges;
    for (uint32_t i = 0; i < h->n; i++)
        s.edges += (uint64_t)has_class_edge(h, i);
    if (s.nodes > MAX_NODES)
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                            "heapsnapshot: %llu objects, more than the V8 format's %llu nodes",
                            (unsigned long long)h->n, (unsigned long long)MAX_NODES);
    hscope__mem *m = (hscope__mem *)&h->mem;
    size_t ns = h->nsites ? h->nsites : 1, nx = FIXED + (size_t)s.ncat;
    s.site_count = hscope__calloc(m, ns, sizeof(uint64_t));
    s.site_size = hscope__calloc(m, ns, sizeof(uint64_t));
    s.sx = hscope__calloc(m, nx, sizeof(*s.sx));
    s.names = hscope__calloc(m, nx, sizeof(*s.names));
    hscope_status st = HSCOPE_OK;
    if (!s.site_count || !s.site_size || !s.sx || !s.names)
        st = hscope__nomem(err, 2 * ns * sizeof(uint64_t) + nx * (sizeof(*s.sx) + sizeof(*s.names)));
    if (st == HSCOPE_OK)
        st = own_strings(&s, m, err);
    if (st == HSCOPE_OK) {
        header(&s, h->nsites > 1 ? h->nsites : 0);
        nodes(&s);
        edges(&s);
        traces(&s);
        strings(&s);
        st = o->status;
    }
    hscope__free(m, s.site_count);
    hscope__free(m, s.site_size);
    hscope__free(m, s.sx);
    for (size_t k = 0; s.names && k < nx; k++)
        hscope__free(m, s.names[k]);
    hscope__free(m, s.names);
    return st;
}
