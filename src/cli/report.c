/*
 * report.c - `heapscope report`: a one-page, self-contained HTML report.
 *
 *   1 dump       summary, type/class histograms (SVG bars), top allocation
 *                sites (file:line:class), top retainers (dominator tree) and
 *                an interactive icicle of the top of the dominator tree
 *   2 or 3 dumps the above for the last dump, plus the diff (new in B since
 *                A, still alive in C) grouped by file:line:class and the leak
 *                suspects (holders of the leaked set) with their root paths
 *   2+ dumps     the timeline plot and the growth ranking (memsize by --by)
 *
 * No external assets: CSS, the small script and the SVGs are inline; the
 * dominator-tree top is embedded as a JSON blob (nodes whose retained size
 * is >= 0.1% of the reachable memsize, at most MAX_TREE_NODES).  All text
 * taken from dumps is HTML-escaped (invalid UTF-8 -> U+FFFD) or, in the
 * JSON blob, \u-escaped so that it cannot close the <script> element.
 * String values are never loaded (HSCOPE_LOAD_VALUES is not set).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opts.h"
#include "report.h"

#define EXIT_BAD_INPUT HSCOPE_CLI_EXIT_BAD_INPUT
#define EXIT_USAGE HSCOPE_CLI_EXIT_USAGE


#define MAX_TREE_NODES 3000
#define MAX_PATH_SHOWN 12

static const char *prog = "heapscope";

static const char usage_report[] =
    "usage: heapscope report [--out FILE] [--top N] [--by KEY] [--order RULE]\n"
    "                        [--no-class-edges] [--no-index] [--keep-dumper]\n"
    "                        [load options] DUMP [DUMP...]\n"
    "\n"
    "Write one self-contained HTML page (no external assets; opens from disk in\n"
    "any browser) about the dumps:\n"
    "  1 dump     summary, type and class histograms, top allocation sites\n"
    "             (file:line:class), top retainers and an interactive dominator\n"
    "             tree (click to zoom)\n"
    "  2-3 dumps  also the diff (objects new in B since A and still alive in C)\n"
    "             and the leak suspects with their paths from the roots\n"
    "  2+ dumps   also the timeline plot and the growth ranking\n"
    "The single-dump sections describe the last dump (the command-line order\n"
    "for 2 or 3 dumps, the time order otherwise).  Warnings (damaged dumps;\n"
    "dumps that cannot be one process's series: repeated, of different\n"
    "processes, out of order) go to stderr and onto the page.\n"
    "\n"
    "Options:\n"
    "  -o, --out FILE    where to write (default report.html; - for stdout)\n"
    "  --top N           rows per table (default 30)\n"
    "  --by KEY          timeline grouping: type, class (default), file,\n"
    "                    file:line, file:line:class, method, generation, gem\n"
    "  --order RULE      timeline order: auto (default), name, mtime, given\n"
    "  --no-class-edges  dominator tree without the object -> class edges\n"
    "  --no-index        parse the dump even if a fresh DUMP.hsx exists\n"
    "  --keep-dumper     keep the objects the dumper itself allocated in the\n"
    "                    histograms, allocation sites, diff and timeline\n"
    "                    (default: left out and counted)\n"
    "  --threads N       parser threads, 1-64 (default: one per core, at most 8;\n"
    "                    1 for files under 32 MiB, 2 MiB gzip)\n"
    "  -v, --verbose     accepted for symmetry with the other commands; no effect\n";

/* ------------------------------------------------------------------ */
/* output helpers                                                     */
/* ------------------------------------------------------------------ */

static void esc(FILE *f, const char *s);

/* Length of the valid UTF-8 sequence at s (1-4) or 0; code point in *cp. */
static int
u8seq(const unsigned char *s, unsigned *cp)
{
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    int n;
    unsigned v, min;
    if ((c & 0xE0) == 0xC0) {
        n = 2; v = c & 0x1F; min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3; v = c & 0x0F; min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4; v = c & 0x07; min = 0x10000;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

/* HTML/XML text: & < > " ' escaped, invalid UTF-8 and control bytes as
 * U+FFFD.  (The library's writers have their own; this page moves into
 * the library with issue 20's HTML report.) */
static void
esc(FILE *f, const char *s)
{
    static const char *const named[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&#39;" };
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        unsigned cp;
        int l = u8seq(p, &cp);
        const char *e = !l || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
                                cp == 0xFFFE || cp == 0xFFFF
                            ? "\xef\xbf\xbd" : NULL;
        const char *hit = l && cp && cp < 0x80 ? strchr("&<>\"'", (int)cp) : NULL;
        if (!e && hit)
            e = named[hit - "&<>\"'"];
        if (e)
            fputs(e, f);
        else
            fwrite(p, 1, (size_t)l, f);
        p += l ? l : 1;
    }
}

/* JSON string safe inside <script>: < > & and controls as \u00XX, invalid
 * UTF-8 as \ufffd, U+2028/2029 escaped. */
static void
js_str(FILE *f, const char *s)
{
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        unsigned cp;
        int l = u8seq(p, &cp);
        if (!l) {
            fputs("\\ufffd", f);
            p++;
            continue;
        }
        if (cp == '"' || cp == '\\') {
            fputc('\\', f);
            fputc((int)cp, f);
        } else if (cp < 0x20 || cp == '<' || cp == '>' || cp == '&' || cp == '\'' ||
                   cp == 0x2028 || cp == 0x2029) {
            fprintf(f, "\\u%04x", cp);
        } else {
            fwrite(p, 1, (size_t)l, f);
        }
        p += l;
    }
    fputc('"', f);
}

static void
td_bytes(FILE *f, uint64_t v)
{
    char b[32];
    hscope_cli_human_bytes((double)v, b, sizeof(b));
    fprintf(f, "<td class=\"n\" data-v=\"%llu\">%s</td>", (unsigned long long)v, b);
}

static void
td_count(FILE *f, uint64_t v)
{
    char b[32];
    hscope_cli_grouped(v, b, sizeof(b));
    fprintf(f, "<td class=\"n\" data-v=\"%llu\">%s</td>", (unsigned long long)v, b);
}

static void
td_pct(FILE *f, uint64_t v, uint64_t total)
{
    double p = total ? 100.0 * (double)v / (double)total : 0;
    fprintf(f, "<td class=\"n\" data-v=\"%.4f\">%.1f%%</td>", p, p);
}

static void
td_text(FILE *f, const char *s, const char *cls)
{
    if (cls)
        fprintf(f, "<td class=\"%s\">", cls);
    else
        fputs("<td>", f);
    esc(f, s);
    fputs("</td>", f);
}

static void
td_addr(FILE *f, uint64_t a)
{
    fprintf(f, "<td class=\"mono\">0x%llx</td>", (unsigned long long)a);
}

static void
human(uint64_t v, char *b, size_t n)
{
    hscope_cli_human_bytes((double)v, b, n);
}

/* Copy an SVG document (written by the library into a memory stream)
 * into the page, without its XML declaration. */
static void
embed_svg(FILE *f, const char *buf, size_t len)
{
    const char *p = buf;
    if (strncmp(p, "<?xml", 5) == 0) {
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + len;
    }
    fputs("<div class=\"chart\">", f);
    fwrite(p, 1, len - (size_t)(p - buf), f);
    fputs("</div>\n", f);
}

/* The SVG of a tally (its bars) or of a timeline, into the page. */
static int
embed_chart(FILE *f, const hscope_tally_t *t, const hscope_timeline_t *tl)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return -1;
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    hscope_error err = HSCOPE_ERROR_INIT;
    ro.format = HSCOPE_FORMAT_SVG;
    hscope_status st = t ? hscope_tally_write(t, &ro, hscope_cli_write_file, m, &err)
                         : hscope_timeline_write(tl, &ro, hscope_cli_write_file, m, &err);
    int rc = fclose(m) != 0 || st != HSCOPE_OK ? -1 : 0;
    if (rc == 0 && buf)
        embed_svg(f, buf, len);
    free(buf);
    return rc;
}

/* "TYPE Class" (CLASS/MODULE: "CLASS Name"). */
static const char *
obj_label(const hscope_heap_t *h, hscope_id id, char *buf, size_t n)
{
    snprintf(buf, n, "%s %s", hscope_heap_type_name(h, hscope_heap_object_type(h, id)),
             hscope_heap_object_label(h, id));
    return buf;
}

static const char *
obj_site(const hscope_heap_t *h, hscope_id id, char *buf, size_t n)
{
    const char *file = hscope_heap_object_file(h, id);
    if (!file) {
        buf[0] = '\0';
        return buf;
    }
    snprintf(buf, n, "%s:%u", file, hscope_heap_object_line(h, id));
    return buf;
}

/* Each line of a warning text as a visible warning of the page. */
static void
warn_block(FILE *f, const char *text)
{
    while (text && *text) {
        const char *nl = strchr(text, '\n');
        size_t n = nl ? (size_t)(nl - text) : strlen(text);
        char *line = strndup(text, n);
        if (line) {
            fputs("<p class=\"warn\">Warning: ", f);
            esc(f, line);
            fputs("</p>\n", f);
            free(line);
        }
        text += n + (nl != NULL);
    }
}

/* The dumper's objects a section's tallies left out, said on the page. */
static void
dumper_note(FILE *f, uint64_t n)
{
    if (n)
        fprintf(f, "<p class=\"muted\">Left out: %llu object%s allocated by the dumper "
                   "itself (<code>--keep-dumper</code> keeps them).</p>\n",
                (unsigned long long)n, n == 1 ? "" : "s");
}

/* ------------------------------------------------------------------ */
/* page frame                                                         */
/* ------------------------------------------------------------------ */

static const char page_css[] =
    ":root{--bg:#ffffff;--fg:#1b1f24;--muted:#5b636d;--line:#d8dde3;--card:#f5f7f9;"
    "--accent:#1f6feb;--warn:#b35900;--bad:#c62828;--ok:#2e7d32}\n"
    "@media (prefers-color-scheme: dark){:root{--bg:#0f1217;--fg:#e3e7ec;--muted:#9aa4af;"
    "--line:#2c333b;--card:#171c22;--accent:#58a6ff;--warn:#f0a040;--bad:#ff6b6b;--ok:#5fd35f}}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;padding:0 24px 48px;background:var(--bg);color:var(--fg);"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\n"
    "header{padding:18px 0 8px;border-bottom:1px solid var(--line)}\n"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;padding-top:8px;"
    "border-top:1px solid var(--line)}h3{font-size:15px;margin:18px 0 6px}\n"
    "nav a{margin-right:14px;color:var(--accent);text-decoration:none}\n"
    ".muted{color:var(--muted)}.warn{color:var(--warn)}.bad{color:var(--bad)}\n"
    ".mono,code{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace;"
    "font-size:12.5px}\n"
    ".cards{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}\n"
    ".card{background:var(--card);border:1px solid var(--line);border-radius:8px;"
    "padding:8px 14px;min-width:150px}\n"
    ".card .v{font-size:20px;font-weight:600}.card .k{color:var(--muted);font-size:12px}\n"
    "table{border-collapse:collapse;margin:6px 0 12px;max-width:100%}\n"
    "th,td{padding:3px 10px;border-bottom:1px solid var(--line);text-align:left;"
    "vertical-align:top}\n"
    "th{background:var(--card);position:sticky;top:0}\n"
    "table.sortable th{cursor:pointer;user-select:none}\n"
    "table.sortable th:after{content:' \\2195';color:var(--muted);font-size:11px}\n"
    "table.sortable th.asc:after{content:' \\25B2'}table.sortable th.desc:after{content:' \\25BC'}\n"
    "td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "td.key{max-width:640px;overflow-wrap:anywhere}\n"
    ".chart{margin:8px 0;overflow-x:auto}.chart svg{max-width:100%;height:auto;"
    "border-radius:6px;border:1px solid var(--line)}\n"
    "#icicle{width:100%;height:auto;display:block;background:var(--card);"
    "border:1px solid var(--line);border-radius:6px}\n"
    "#icicle rect{stroke:var(--bg);stroke-width:1;cursor:pointer}\n"
    "#icicle text{font-size:11px;pointer-events:none;fill:#111}\n"
    "#icicle-info{min-height:2.8em;margin:6px 0}\n"
    "ol.path{margin:4px 0;padding-left:22px}ol.path li{margin:0}\n"
    "details{margin:6px 0}summary{cursor:pointer;color:var(--accent)}\n";

/* Sortable tables, icicle, and the data-ok marker (set on <body> once the
 * script ran; window.onerror sets it to 0). */
static const char page_js[] =
    "(function(){'use strict';\n"
    "var B=document.body;\n"
    "window.onerror=function(m){B.setAttribute('data-ok','0');B.setAttribute('data-err',String(m));};\n"
    "function hb(v){var u=['B','KB','MB','GB','TB'],i=0;while(v>=1024&&i<4){v/=1024;i++;}"
    "return i?v.toFixed(1)+' '+u[i]:Math.round(v)+' B';}\n"
    "function gr(v){return String(v).replace(/\\B(?=(\\d{3})+(?!\\d))/g,',');}\n"
    /* sortable tables */
    "Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),function(t){\n"
    " Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th){\n"
    "  th.addEventListener('click',function(){\n"
    "   var ci=th.cellIndex,asc=!th.classList.contains('asc'),tb=t.tBodies[0];\n"
    "   Array.prototype.forEach.call(t.tHead.rows[0].cells,function(o){o.classList.remove('asc','desc');});\n"
    "   th.classList.add(asc?'asc':'desc');\n"
    "   var rows=Array.prototype.slice.call(tb.rows);\n"
    "   rows.sort(function(a,b){var x=a.cells[ci],y=b.cells[ci];if(!x||!y)return 0;\n"
    "    var xv=x.getAttribute('data-v'),yv=y.getAttribute('data-v'),r;\n"
    "    if(xv!==null&&yv!==null)r=parseFloat(xv)-parseFloat(yv);\n"
    "    else r=x.textContent.localeCompare(y.textContent);\n"
    "    return asc?r:-r;});\n"
    "   rows.forEach(function(r){tb.appendChild(r);});\n"
    "  });\n"
    " });\n"
    "});\n"
    /* icicle */
    "var el=document.getElementById('domtree-data');\n"
    "if(el){\n"
    " var D=JSON.parse(el.textContent),N=D.nodes,K=N.map(function(){return [];}),i;\n"
    " for(i=1;i<N.length;i++)K[N[i][0]].push(i);\n"
    " K.forEach(function(k){k.sort(function(a,b){return N[b][1]-N[a][1];});});\n"
    " var S=document.getElementById('icicle'),info=document.getElementById('icicle-info'),NS='http://www.w3.org/2000/svg';\n"
    " var W=1200,RH=24,MAXD=16;\n"
    " function hue(s){var h=0;for(var j=0;j<s.length;j++)h=(h*31+s.charCodeAt(j))%360;return h;}\n"
    " function desc(n){var s=N[n][4];if(N[n][5])s+=' '+N[n][5];if(N[n][6])s+=' ('+N[n][6]+')';\n"
    "  return s+': retains '+hb(N[n][1])+' in '+gr(N[n][2])+' objects'+(N[n][3]?', self '+hb(N[n][3]):'')+"
    "(N[0][1]?', '+(100*N[n][1]/N[0][1]).toFixed(1)+'% of reachable':'');}\n"
    " function show(n){info.textContent='';var p=[],q=n;while(q>0){p.unshift(q);q=N[q][0];}p.unshift(0);\n"
    "  p.forEach(function(a,j){var s=document.createElement('a');s.href='#dominators';s.textContent=N[a][4]+(N[a][5]?' '+N[a][5]:'');\n"
    "   s.addEventListener('click',function(e){e.preventDefault();draw(a);});if(j)info.appendChild(document.createTextNode(' \\u203a '));info.appendChild(s);});\n"
    "  var d=document.createElement('div');d.className='muted';d.textContent=desc(n);info.appendChild(d);}\n"
    " function draw(r){while(S.firstChild)S.removeChild(S.firstChild);var md=0;\n"
    "  function lay(n,x,w,d){if(d>md)md=d;var g=document.createElementNS(NS,'g'),R=document.createElementNS(NS,'rect');\n"
    "   R.setAttribute('x',x.toFixed(2));R.setAttribute('y',d*RH);R.setAttribute('width',Math.max(w-0.5,0.5).toFixed(2));R.setAttribute('height',RH-1);\n"
    "   R.setAttribute('fill',n===0?'#9aa4af':N[n][0]===0&&!N[n][5]?'#b0bec5':'hsl('+hue(N[n][4])+',62%,'+(d%2?72:64)+'%)');\n"
    "   var T=document.createElementNS(NS,'title');T.textContent=desc(n);R.appendChild(T);g.appendChild(R);\n"
    "   R.addEventListener('click',function(){if(n===r&&n!==0)draw(N[n][0]);else draw(n);});\n"
    "   if(w>60){var X=document.createElementNS(NS,'text');X.setAttribute('x',(x+4).toFixed(2));X.setAttribute('y',d*RH+16);\n"
    "    var lab=N[n][4]+' '+hb(N[n][1]),mx=Math.floor((w-8)/6.4);X.textContent=lab.length>mx?lab.slice(0,Math.max(mx-1,1))+'\\u2026':lab;g.appendChild(X);}\n"
    "   S.appendChild(g);\n"
    "   if(d>=MAXD||!N[n][1])return;var cx=x;K[n].forEach(function(k){var kw=w*N[k][1]/N[n][1];if(kw>=0.5)lay(k,cx,kw,d+1);cx+=kw;});}\n"
    "  lay(r,0,W,0);S.setAttribute('viewBox','0 0 '+W+' '+((md+1)*RH));show(r);}\n"
    " draw(0);\n"
    "}\n"
    "B.setAttribute('data-ok','1');\n"
    "})();\n";

static void
page_head(FILE *f, char **paths, int np)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"color-scheme\" content=\"light dark\">\n"
          "<meta name=\"generator\" content=\"heapscope ", f);
    esc(f, hscope_version_string());
    fputs("\">\n<title>heapscope report: ", f);
    esc(f, hscope_cli_basename(paths[np - 1]));
    if (np > 1)
        fprintf(f, " (+%d)", np - 1);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", page_css);
}

/* ------------------------------------------------------------------ */
/* sections                                                           */
/* ------------------------------------------------------------------ */

static void
card(FILE *f, const char *id, const char *k, const char *v, uint64_t raw)
{
    fprintf(f, "<div class=\"card\"><div class=\"v\"");
    if (id)
        fprintf(f, " id=\"%s\" data-v=\"%llu\"", id, (unsigned long long)raw);
    fputs(">", f);
    esc(f, v);
    fputs("</div><div class=\"k\">", f);
    esc(f, k);
    fputs("</div></div>\n", f);
}

static void
card_count(FILE *f, const char *id, const char *k, uint64_t v)
{
    char b[32];
    hscope_cli_grouped(v, b, sizeof(b));
    card(f, id, k, b, v);
}

static void
card_bytes(FILE *f, const char *id, const char *k, uint64_t v)
{
    char b[32];
    human(v, b, sizeof(b));
    card(f, id, k, b, v);
}

static void
sec_summary(FILE *f, hscope_heap_t *h, hscope_domtree_t *t, const char *path)
{
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    hscope_heap_stats(h, &s);
    uint64_t rn = 0, rm = 0, un = 0, um = 0;
    if (t)
        hscope_domtree_totals(t, &rn, &rm, &un, &um);
    fputs("<section id=\"summary\"><h2>Summary</h2>\n<p class=\"muted\">Dump <code>", f);
    esc(f, path);
    fputs("</code>", f);
    if (s.from_index)
        fputs(" (opened from its saved index)", f);
    fputs("</p>\n<div class=\"cards\">\n", f);
    card_count(f, "sum-objects", "objects", s.objects);
    card_bytes(f, "sum-memsize", "total memsize", s.total_memsize);
    card_count(f, "sum-references", "references", s.references);
    card_bytes(f, NULL, "input size", s.input_bytes);
    if (t) {
        card_bytes(f, "sum-reachable", "reachable from roots", rm);
        char b[64], c[32];
        human(um, b, sizeof(b));
        hscope_cli_grouped(un, c, sizeof(c));
        size_t l = strlen(b);
        snprintf(b + l, sizeof(b) - l, " (%s obj)", c);
        card(f, "sum-unreachable", "unreachable (garbage)", b, un);
    }
    card_count(f, NULL, "root categories", hscope_heap_root_category_count(h));
    if (s.shapes)
        card_count(f, NULL, "shapes", s.shapes);
    if (s.free_slots)
        card_count(f, NULL, "free slots", s.free_slots);
    fputs("</div>\n", f);
    if (s.skipped_lines || s.dangling_references || s.truncated || s.duplicate_addresses) {
        fputs("<p class=\"warn\">", f);
        if (s.skipped_lines)
            fprintf(f, "%llu malformed lines skipped. ", (unsigned long long)s.skipped_lines);
        if (s.dangling_references)
            fprintf(f, "%llu references to addresses not in the dump. ",
                    (unsigned long long)s.dangling_references);
        if (s.duplicate_addresses)
            fprintf(f, "%llu duplicate addresses. ", (unsigned long long)s.duplicate_addresses);
        if (s.truncated)
            fputs("The dump is truncated. ", f);
        fputs("</p>\n", f);
    }
    /* roots */
    uint32_t nc = hscope_heap_root_category_count(h);
    if (nc) {
        fputs("<details><summary>ROOT categories</summary>\n<table class=\"sortable\"><thead><tr>"
              "<th>category</th><th>records</th><th>targets</th></tr></thead><tbody>\n", f);
        for (uint32_t c = 0; c < nc; c++) {
            const hscope_id *tg;
            uint64_t n = 0, nd = 0;
            hscope_heap_root_targets(h, c, &tg, &n, &nd);
            fputs("<tr>", f);
            td_text(f, hscope_heap_root_category_name(h, c), NULL);
            td_count(f, hscope_heap_root_category_records(h, c));
            td_count(f, n);
            fputs("</tr>\n", f);
        }
        fputs("</tbody></table></details>\n", f);
    }
    fputs("</section>\n", f);
}

static int
tally_of(hscope_tally_t **out, hscope_heap_t *h, const char *key, uint32_t sort,
         uint64_t top, uint32_t flags)
{
    hscope_tally_options o = HSCOPE_TALLY_OPTIONS_INIT;
    o.sort = sort;
    o.top = top;
    o.flags = flags;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_tally_compute(out, h, key, &o, &err) != HSCOPE_OK) {
        fprintf(stderr, "%s: report: tally by %s: %s\n", prog, key, err.message);
        return -1;
    }
    return 0;
}

static int
sec_histograms(FILE *f, hscope_heap_t *h, uint64_t top, uint32_t tflags)
{
    hscope_tally_t *ty = NULL, *cl = NULL;
    if (tally_of(&ty, h, "type", HSCOPE_SORT_MEMSIZE, 0, tflags) != 0 ||
        tally_of(&cl, h, "class", HSCOPE_SORT_MEMSIZE, top < 25 ? top : 25, tflags) != 0) {
        hscope_tally_free(ty);
        return -1;
    }
    fputs("<section id=\"histograms\"><h2>What is on the heap</h2>\n", f);
    dumper_note(f, hscope_tally_excluded(ty));
    embed_chart(f, ty, NULL);
    embed_chart(f, cl, NULL);
    fputs("</section>\n", f);
    hscope_tally_free(ty);
    hscope_tally_free(cl);
    return 0;
}

static void
tally_table(FILE *f, hscope_tally_t *t, const char *keyname, const char *id)
{
    uint64_t tc = 0, tm = 0;
    hscope_tally_totals(t, &tc, &tm);
    fprintf(f, "<table class=\"sortable\" id=\"%s\"><thead><tr><th>#</th><th>", id);
    esc(f, keyname);
    fputs("</th><th>objects</th><th>% objects</th><th>memsize</th><th>% memsize</th>"
          "</tr></thead><tbody>\n", f);
    for (uint64_t i = 0; i < hscope_tally_row_count(t); i++) {
        fprintf(f, "<tr><td class=\"n\" data-v=\"%llu\">%llu</td>", (unsigned long long)i + 1,
                (unsigned long long)i + 1);
        td_text(f, hscope_tally_row_key(t, i), "key mono");
        td_count(f, hscope_tally_row_count_of(t, i));
        td_pct(f, hscope_tally_row_count_of(t, i), tc);
        td_bytes(f, hscope_tally_row_memsize(t, i));
        td_pct(f, hscope_tally_row_memsize(t, i), tm);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
}

static int
sec_sites(FILE *f, hscope_heap_t *h, uint64_t top, uint32_t tflags)
{
    hscope_tally_t *t = NULL;
    if (tally_of(&t, h, "file:line:class", HSCOPE_SORT_MEMSIZE, top, tflags) != 0)
        return -1;
    fprintf(f, "<section id=\"sites\"><h2>Where it was allocated</h2>\n"
               "<p class=\"muted\">Live objects by allocation site <code>file:line:class</code> "
               "(bleak_house style), top %llu of %llu sites by memsize. Objects without "
               "allocation tracing show as <code>(none):0</code>.</p>\n",
            (unsigned long long)hscope_tally_row_count(t),
            (unsigned long long)hscope_tally_group_count(t));
    dumper_note(f, hscope_tally_excluded(t));
    tally_table(f, t, "file:line:class", "sites-table");
    fputs("</section>\n", f);
    hscope_tally_free(t);
    return 0;
}

static void
sec_retainers(FILE *f, hscope_heap_t *h, hscope_domtree_t *t, uint64_t top)
{
    uint64_t rn = 0, rm = 0, un = 0, um = 0;
    hscope_domtree_totals(t, &rn, &rm, &un, &um);
    hscope_id *ids = malloc((top ? top : 1) * sizeof(hscope_id));
    uint64_t n = ids ? hscope_domtree_top(t, ids, top ? top : 1) : 0;
    fputs("<section id=\"retainers\"><h2>What keeps memory alive</h2>\n"
          "<p class=\"muted\">Objects with the largest retained size (what would be freed "
          "if the object went away), from the dominator tree. Nested retainers both "
          "appear: a retainer's size includes what it dominates.</p>\n"
          "<table class=\"sortable\" id=\"retainers-table\"><thead><tr><th>#</th><th>address</th>"
          "<th>object</th><th>allocated at</th><th>self</th><th>retained</th>"
          "<th>% reachable</th><th>retained objects</th></tr></thead><tbody>\n", f);
    char lb[512], sb[1024];
    for (uint64_t i = 0; i < n; i++) {
        hscope_id id = ids[i];
        fprintf(f, "<tr><td class=\"n\" data-v=\"%llu\">%llu</td>", (unsigned long long)i + 1,
                (unsigned long long)i + 1);
        td_addr(f, hscope_heap_object_address(h, id));
        td_text(f, obj_label(h, id, lb, sizeof(lb)), "key");
        td_text(f, obj_site(h, id, sb, sizeof(sb)), "key mono");
        td_bytes(f, hscope_heap_object_memsize(h, id));
        td_bytes(f, hscope_domtree_retained(t, id));
        td_pct(f, hscope_domtree_retained(t, id), rm);
        td_count(f, hscope_domtree_retained_count(t, id));
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n</section>\n", f);
    free(ids);
}

/* --- dominator tree top as JSON ------------------------------------ */

typedef struct tnode {
    int32_t parent;
    int32_t cat;      /* -2 object, -1 all roots, >= 0 root category */
    hscope_id id;
    uint64_t ret, cnt;
} tnode;

typedef struct cand {
    uint64_t ret;
    hscope_id id;
    int32_t parent;
} cand;

typedef struct pq {
    cand *a;
    size_t n, cap;
} pq;

static int
pq_less(const cand *x, const cand *y)
{
    if (x->ret != y->ret)
        return x->ret < y->ret;
    return x->id > y->id;
}

static int
pq_push(pq *q, cand c)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 256;
        cand *a = realloc(q->a, cap * sizeof(cand));
        if (!a)
            return -1;
        q->a = a;
        q->cap = cap;
    }
    size_t i = q->n++;
    q->a[i] = c;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!pq_less(&q->a[p], &q->a[i]))
            break;
        cand t = q->a[p];
        q->a[p] = q->a[i];
        q->a[i] = t;
        i = p;
    }
    return 0;
}

static cand
pq_pop(pq *q)
{
    cand top = q->a[0];
    q->a[0] = q->a[--q->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->n && pq_less(&q->a[m], &q->a[l]))
            m = l;
        if (r < q->n && pq_less(&q->a[m], &q->a[r]))
            m = r;
        if (m == i)
            break;
        cand t = q->a[m];
        q->a[m] = q->a[i];
        q->a[i] = t;
        i = m;
    }
    return top;
}

static void
sec_domtree(FILE *f, hscope_heap_t *h, hscope_domtree_t *t)
{
    uint64_t rn = 0, rm = 0, un = 0, um = 0;
    hscope_domtree_totals(t, &rn, &rm, &un, &um);
    uint64_t thr = rm / 1000;
    if (thr < 1)
        thr = 1;
    uint32_t nc = hscope_heap_root_category_count(h);
    tnode *nodes = calloc(MAX_TREE_NODES + nc + 2, sizeof(tnode));
    pq q = { NULL, 0, 0 };
    size_t nn = 0;
    uint64_t skipped_small = 0;
    int truncated = 0;
    if (!nodes)
        return;
    nodes[nn++] = (tnode){ -1, -1, HSCOPE_ID_NONE, rm, rn };
    /* root categories and the super-root's own children */
    for (uint32_t ci = 0; ci <= nc; ci++) {
        int32_t cat = ci < nc ? (int32_t)ci : -1;
        const hscope_id *k = NULL;
        uint64_t nk = 0;
        hscope_error err = HSCOPE_ERROR_INIT;
        if (hscope_domtree_children(t, HSCOPE_ID_NONE, cat, &k, &nk, &err) != HSCOPE_OK)
            continue;
        int32_t parent = 0;
        if (cat >= 0) {
            uint64_t sr = 0, sc = 0;
            for (uint64_t i = 0; i < nk; i++) {
                sr += hscope_domtree_retained(t, k[i]);
                sc += hscope_domtree_retained_count(t, k[i]);
            }
            if (sr < thr)
                continue;
            parent = (int32_t)nn;
            nodes[nn++] = (tnode){ 0, cat, HSCOPE_ID_NONE, sr, sc };
        }
        for (uint64_t i = 0; i < nk; i++) {
            uint64_t r = hscope_domtree_retained(t, k[i]);
            if (r >= thr)
                pq_push(&q, (cand){ r, k[i], parent });
        }
    }
    size_t maxn = MAX_TREE_NODES + nc + 1;
    while (q.n) {
        if (nn >= maxn) {
            truncated = 1;
            break;
        }
        cand c = pq_pop(&q);
        size_t me = nn;
        nodes[nn++] = (tnode){ c.parent, -2, c.id, c.ret, hscope_domtree_retained_count(t, c.id) };
        const hscope_id *k = NULL;
        uint64_t nk = 0;
        hscope_error err = HSCOPE_ERROR_INIT;
        if (hscope_domtree_children(t, c.id, -1, &k, &nk, &err) != HSCOPE_OK)
            continue;
        /* children above the global threshold, and (so that zooming in
         * shows something) those holding >= 1% of this node, down to
         * thr/64 */
        for (uint64_t i = 0; i < nk; i++) {
            uint64_t r = hscope_domtree_retained(t, k[i]);
            if (r >= thr || (r >= c.ret / 100 && r >= thr / 64 && r > 0))
                pq_push(&q, (cand){ r, k[i], (int32_t)me });
            else
                skipped_small++;
        }
    }
    char hb[32], tb[32];
    human(rm, hb, sizeof(hb));
    human(thr, tb, sizeof(tb));
    fprintf(f, "<section id=\"dominators\"><h2>Dominator tree</h2>\n"
               "<p class=\"muted\">Icicle of the dominator tree: each bar's width is its "
               "retained size; the bars below it are the objects it alone keeps alive. "
               "Click a bar to zoom in, click the top bar (or the path) to zoom out. "
               "Shown: %llu nodes: those retaining at least %s (0.1%% of the %s "
               "reachable), and below them children holding 1%% or more of their parent; "
               "the gaps are the node's own size and smaller children.</p>\n",
            (unsigned long long)nn, tb, hb);
    if (truncated)
        fprintf(f, "<p class=\"warn\">The tree was cut at the %d largest nodes.</p>\n",
                MAX_TREE_NODES);
    fputs("<div id=\"icicle-info\"></div>\n"
          "<svg id=\"icicle\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 1200 24\" "
          "font-family=\"system-ui, 'DejaVu Sans', sans-serif\" role=\"img\" "
          "aria-label=\"dominator tree icicle\"></svg>\n"
          "<script type=\"application/json\" id=\"domtree-data\">{\"total\":", f);
    fprintf(f, "%llu,\"threshold\":%llu,\"nodes\":[", (unsigned long long)rm,
            (unsigned long long)thr);
    char lb[512], sb[1024], ab[32];
    for (size_t i = 0; i < nn; i++) {
        tnode *n = &nodes[i];
        const char *label, *site = "";
        ab[0] = '\0';
        uint64_t self = 0;
        if (n->cat == -1) {
            label = "all roots";
        } else if (n->cat >= 0) {
            snprintf(lb, sizeof(lb), "root %s", hscope_heap_root_category_name(h, (uint32_t)n->cat));
            label = lb;
        } else {
            label = obj_label(h, n->id, lb, sizeof(lb));
            site = obj_site(h, n->id, sb, sizeof(sb));
            snprintf(ab, sizeof(ab), "0x%llx", (unsigned long long)hscope_heap_object_address(h, n->id));
            self = hscope_heap_object_memsize(h, n->id);
        }
        fprintf(f, "%s[%d,%llu,%llu,%llu,", i ? ",\n" : "", n->parent,
                (unsigned long long)n->ret, (unsigned long long)n->cnt, (unsigned long long)self);
        js_str(f, label);
        fputc(',', f);
        js_str(f, ab);
        fputc(',', f);
        js_str(f, site);
        fputc(']', f);
    }
    fputs("]}</script>\n</section>\n", f);
    (void)skipped_small;
    free(q.a);
    free(nodes);
}

/* --- diff and suspects --------------------------------------------- */

static int
sec_diff(FILE *f, hscope_diff_t *d, char **paths, int np, uint64_t top)
{
    hscope_tally_options o = HSCOPE_TALLY_OPTIONS_INIT;
    o.sort = HSCOPE_SORT_MEMSIZE;
    o.top = top;
    hscope_tally_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_diff_tally(&t, d, "file:line:class", &o, &err) != HSCOPE_OK) {
        fprintf(stderr, "%s: report: diff: %s\n", prog, err.message);
        return -1;
    }
    fputs("<section id=\"diff\"><h2>What leaked</h2>\n<p class=\"muted\">", f);
    if (np == 3)
        fputs("Objects born between dump A and dump B and still alive in dump C "
              "(3-snapshot diff; an address reused by a new object is not a survivor).", f);
    else
        fputs("Objects present in dump B and absent from dump A (2-snapshot diff: "
              "includes short-lived objects; give three dumps for a leak hunt).", f);
    fputs("</p>\n<table><thead><tr><th>dump</th><th>file</th><th>objects</th></tr></thead><tbody>\n",
          f);
    for (int i = 0; i < np; i++) {
        fprintf(f, "<tr><td>%c</td>", 'A' + i);
        td_text(f, paths[i], "key mono");
        td_count(f, hscope_diff_snapshot_objects(d, (uint32_t)i));
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n<div class=\"cards\">\n", f);
    card_count(f, "leaked-count", "leaked objects", hscope_diff_count(d));
    card_bytes(f, "leaked-memsize", "leaked memsize", hscope_diff_memsize(d));
    card_count(f, NULL, "leak groups (file:line:class)", hscope_tally_group_count(t));
    card_count(f, NULL, "reused addresses", hscope_diff_reused_addresses(d));
    card_count(f, NULL, "dumper's own objects (left out)", hscope_diff_excluded(d));
    fputs("</div>\n", f);
    warn_block(f, hscope_diff_warning_text(d));
    fprintf(f, "<h3>Leaked objects by allocation site (top %llu of %llu)</h3>\n",
            (unsigned long long)hscope_tally_row_count(t),
            (unsigned long long)hscope_tally_group_count(t));
    tally_table(f, t, "file:line:class", "diff-table");
    fputs("</section>\n", f);
    hscope_tally_free(t);
    return 0;
}

static void
path_list(FILE *f, hscope_heap_t *h, const char *root, const hscope_id *p, uint64_t len)
{
    fputs("<ol class=\"path\"><li class=\"muted\">root ", f);
    esc(f, root ? root : "(unreachable)");
    fputs("</li>", f);
    char lb[512], sb[1024];
    for (uint64_t k = 0; k < len; k++) {
        if (len > MAX_PATH_SHOWN && k == 4) {
            fprintf(f, "<li class=\"muted\">&hellip; %llu more steps &hellip;</li>",
                    (unsigned long long)(len - MAX_PATH_SHOWN + 1));
            k = len - (MAX_PATH_SHOWN - 5);
        }
        fprintf(f, "<li><span class=\"mono\">0x%llx</span> ",
                (unsigned long long)hscope_heap_object_address(h, p[k]));
        esc(f, obj_label(h, p[k], lb, sizeof(lb)));
        obj_site(h, p[k], sb, sizeof(sb));
        if (*sb) {
            fputs(" <span class=\"muted mono\">", f);
            esc(f, sb);
            fputs("</span>", f);
        }
        fputs("</li>", f);
    }
    fputs("</ol>", f);
}

static int
sec_suspects(FILE *f, hscope_diff_t *d, hscope_domtree_t *t, int nce, uint64_t top)
{
    hscope_heap_t *h = hscope_diff_heap(d);
    hscope_dom_options o = HSCOPE_DOM_OPTIONS_INIT;
    if (nce)
        o.flags |= HSCOPE_DOM_NO_CLASS_EDGES;
    hscope_paths_t *ps = NULL;
    hscope_holders_t *hs = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    int rc = -1;
    uint64_t n = hscope_heap_object_count(h);
    hscope_id *buf = malloc((n + 1) * sizeof(hscope_id));
    if (!buf || hscope_paths_compute(&ps, h, &o, &err) != HSCOPE_OK ||
        hscope_holders_compute(&hs, t, hscope_diff_objects(d), hscope_diff_count(d), &err) !=
            HSCOPE_OK) {
        fprintf(stderr, "%s: report: suspects: %s\n", prog, err.message[0] ? err.message : "out of memory");
        goto out;
    }
    uint64_t nh = hscope_holders_count(hs), shown = top && top < nh ? top : nh;
    fprintf(f, "<section id=\"suspects\"><h2>What holds the leak</h2>\n"
               "<p class=\"muted\">Leak suspects (as <code>heapscope suspects</code>): for each "
               "leaked object, the first object up its dominator chain that did not leak "
               "itself; holders ranked by the leaked memory they hold. Showing %llu of %llu "
               "holders, each with a shortest path from a GC root.</p>\n"
               "<table class=\"sortable\" id=\"suspects-table\"><thead><tr><th>#</th>"
               "<th>holder</th><th>object</th><th>allocated at</th><th>leaked objects</th>"
               "<th>leaked memsize</th><th>retained</th><th>path from root</th></tr></thead>"
               "<tbody>\n",
            (unsigned long long)shown, (unsigned long long)nh);
    char lb[512], sb[1024];
    for (uint64_t i = 0; i < shown; i++) {
        hscope_id hid;
        int32_t hcat = -1, pcat = -1;
        uint64_t cnt = 0, mem = 0;
        hscope_holders_get(hs, i, &hid, &hcat, &cnt, &mem);
        uint64_t len = hid != HSCOPE_ID_NONE ? hscope_paths_get(ps, hid, buf, n, &pcat) : 0;
        const char *rootname = hid == HSCOPE_ID_NONE
            ? (hcat >= 0 ? hscope_heap_root_category_name(h, (uint32_t)hcat) : "(several roots)")
            : len ? (pcat >= 0 ? hscope_heap_root_category_name(h, (uint32_t)pcat) : "(roots)") : NULL;
        fprintf(f, "<tr id=\"suspect-%llu\"", (unsigned long long)i + 1);
        if (hid != HSCOPE_ID_NONE)
            fprintf(f, " data-addr=\"0x%llx\"", (unsigned long long)hscope_heap_object_address(h, hid));
        fprintf(f, "><td class=\"n\" data-v=\"%llu\">%llu</td>", (unsigned long long)i + 1,
                (unsigned long long)i + 1);
        if (hid != HSCOPE_ID_NONE) {
            td_addr(f, hscope_heap_object_address(h, hid));
            td_text(f, obj_label(h, hid, lb, sizeof(lb)), "key");
            td_text(f, obj_site(h, hid, sb, sizeof(sb)), "key mono");
        } else {
            fputs("<td class=\"mono\">ROOT</td>", f);
            snprintf(lb, sizeof(lb), "root %s holds them directly", rootname);
            td_text(f, lb, "key");
            td_text(f, "", NULL);
        }
        td_count(f, cnt);
        td_bytes(f, mem);
        if (hid != HSCOPE_ID_NONE)
            td_bytes(f, hscope_domtree_retained(t, hid));
        else
            fputs("<td class=\"n\" data-v=\"0\"></td>", f);
        fputs("<td>", f);
        if (hid != HSCOPE_ID_NONE)
            path_list(f, h, rootname, buf, len);
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
    if (nh > shown)
        fprintf(f, "<p class=\"muted\">%llu more holders not shown (<code>heapscope suspects "
                   "--top 0</code> lists all).</p>\n", (unsigned long long)(nh - shown));
    fputs("</section>\n", f);
    rc = 0;
out:
    free(buf);
    hscope_holders_free(hs);
    hscope_paths_free(ps);
    return rc;
}

/* --- timeline ------------------------------------------------------ */

/* The growth ranking of a timeline (hscope_timeline_compute(): the same
 * fit, verdict and order as `heapscope timeline`).  With check_series: the
 * warnings of the dumps (damage, series checks) on stderr and the page (a
 * 2-3 dump report says them with its diff). */
static int
sec_timeline(FILE *f, const hscope_timeline_t *tl, uint64_t top, int check_series)
{
    uint64_t nd = hscope_timeline_dump_count(tl), ng = hscope_timeline_group_count(tl);
    const char *by = hscope_timeline_by(tl);
    if (check_series)
        hscope_cli_warn_timeline(tl);
    uint64_t excluded = 0;
    for (uint64_t i = 0; i < nd; i++)
        excluded += hscope_timeline_dump_excluded(tl, i);
    fputs("<section id=\"timeline\"><h2>What grows over time</h2>\n", f);
    fprintf(f, "<p class=\"muted\">%llu dumps, in time order (%s, %s). A group is "
               "<b>growing</b> when its memsize rises with R&sup2; &ge; 0.8 over 3+ dumps "
               "by at least 4 KB and 2%% of its mean (as <code>heapscope timeline</code>).</p>\n",
            (unsigned long long)nd, hscope_timeline_order(tl), hscope_timeline_order_source(tl));
    fputs("<details><summary>dumps</summary><table><thead><tr><th>#</th><th>file</th>"
          "</tr></thead><tbody>\n", f);
    for (uint64_t i = 0; i < nd; i++) {
        fprintf(f, "<tr><td class=\"n\">%llu</td>", (unsigned long long)i + 1);
        td_text(f, hscope_timeline_dump_path(tl, i), "key mono");
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></details>\n", f);
    if (check_series)
        warn_block(f, hscope_timeline_warning_text(tl));
    dumper_note(f, excluded);
    if (embed_chart(f, NULL, tl) != 0)
        return -1;
    uint64_t shown = top && top < ng ? top : ng;
    fprintf(f, "<h3>Growth ranking (top %llu of %llu groups by %s)</h3>\n",
            (unsigned long long)shown, (unsigned long long)ng, by);
    fputs("<table class=\"sortable\" id=\"growth-table\"><thead><tr><th>#</th><th>", f);
    esc(f, by);
    fputs("</th><th>growing</th><th>first</th><th>last</th><th>change</th>"
          "<th>slope / dump</th><th>R&sup2;</th><th>objects first</th><th>objects last</th>"
          "</tr></thead><tbody>\n", f);
    for (uint64_t i = 0; i < shown; i++) {
        const uint64_t *mem = hscope_timeline_group_series(tl, i, HSCOPE_METRIC_MEMSIZE);
        const uint64_t *cnt = hscope_timeline_group_series(tl, i, HSCOPE_METRIC_COUNT);
        int growing = hscope_timeline_group_growing(tl, i);
        int64_t slope_m = 0, r2_u = 0;
        hscope_timeline_group_fit(tl, i, &slope_m, NULL, &r2_u, NULL, NULL);
        double slope = nd < 2 ? 0 : (double)slope_m / 1e3, r2 = nd < 2 ? 0 : (double)r2_u / 1e6;
        fprintf(f, "<tr%s><td class=\"n\" data-v=\"%llu\">%llu</td>",
                growing ? " class=\"growing\"" : "", (unsigned long long)i + 1,
                (unsigned long long)i + 1);
        td_text(f, hscope_timeline_group_key(tl, i), "key mono");
        fprintf(f, "<td data-v=\"%d\"%s>%s</td>", growing, growing ? " class=\"bad\"" : "",
                growing ? "yes" : "no");
        td_bytes(f, mem[0]);
        td_bytes(f, mem[nd - 1]);
        char b[32];
        double ch_ = (double)mem[nd - 1] - (double)mem[0];
        hscope_cli_human_bytes(ch_, b, sizeof(b));
        fprintf(f, "<td class=\"n\" data-v=\"%.0f\">%s%s</td>", ch_, ch_ > 0 ? "+" : "", b);
        hscope_cli_human_bytes(slope, b, sizeof(b));
        fprintf(f, "<td class=\"n\" data-v=\"%.3f\">%s%s</td>", slope, slope > 0 ? "+" : "", b);
        fprintf(f, "<td class=\"n\" data-v=\"%.4f\">%.2f</td>", r2, r2);
        td_count(f, cnt[0]);
        td_count(f, cnt[nd - 1]);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n</section>\n", f);
    return 0;
}

/* The timeline of 2+ dumps: memsize by `by`, in time order. */
static hscope_timeline_t *
compute_timeline(char **paths, int np, const char *by, int32_t order, uint32_t tflags,
                 const hscope_load_options *lo, int *usage)
{
    hscope_timeline_options to = HSCOPE_TIMELINE_OPTIONS_INIT;
    to.by = by;
    to.order = order;
    to.metric = HSCOPE_METRIC_MEMSIZE;
    to.flags = tflags ? 0 : HSCOPE_TIMELINE_KEEP_DUMPER;
    hscope_timeline_t *tl = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_timeline_compute(&tl, (const char *const *)paths, (uint64_t)np, lo,
                                               &to, &err);
    if (st != HSCOPE_OK) {
        fprintf(stderr, "%s: report: %s%s\n", prog, st == HSCOPE_ERR_INVALID_ARG ? "--" : "",
                err.message);
        *usage = st == HSCOPE_ERR_INVALID_ARG && order;
    }
    return tl;
}

/* ------------------------------------------------------------------ */
/* the command                                                        */
/* ------------------------------------------------------------------ */

static hscope_heap_t *
load_main(const char *path, const hscope_load_options *lo, int no_index)
{
    hscope_load_options o = *lo;
    if (!no_index)
        o.flags |= HSCOPE_LOAD_USE_INDEX;
    hscope_heap_t *h = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_heap_open_file(&h, path, &o, &err) != HSCOPE_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, err.message);
        return NULL;
    }
    return h;
}

int
hscope_cli_report(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage_report))
        return 0;
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    const char *out = "report.html", *by = "class";
    int32_t order = HSCOPE_ORDER_AUTO;
    uint64_t top = 30;
    int nce = 0, no_index = 0, np = 0;
    uint32_t tflags = HSCOPE_TALLY_SKIP_DUMPER;
    char **paths = calloc((size_t)argc, sizeof(char *));
    if (!paths)
        return EXIT_BAD_INPUT;
    int only_files = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!only_files) {
            int r = hscope_cli_load_option(&lo, argc, argv, &i, usage_report);
            if (r < 0) {
                free(paths);
                return EXIT_USAGE;
            }
            if (r > 0)
                continue;
            if (strcmp(a, "--") == 0) {
                only_files = 1;
                continue;
            }
            if (strcmp(a, "--out") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "--by") == 0 ||
                strcmp(a, "--top") == 0 || strcmp(a, "--order") == 0 ||
                strcmp(a, "--threads") == 0) {
                if (i + 1 >= argc) {
                    free(paths);
                    return hscope_cli_usage_error(usage_report, "%s needs a value", a);
                }
                const char *v = argv[++i];
                if (strcmp(a, "--out") == 0 || strcmp(a, "-o") == 0) {
                    out = v;
                } else if (strcmp(a, "--by") == 0) {
                    if (!hscope_cli_valid_key(v)) {
                        free(paths);
                        return hscope_cli_usage_error(usage_report, "unknown --by key '%s'", v);
                    }
                    by = v;
                } else if (strcmp(a, "--top") == 0) {
                    if (hscope_cli_parse_size(v, &top) != 0) {
                        free(paths);
                        return hscope_cli_usage_error(usage_report, "--top needs a number, not '%s'", v);
                    }
                } else if (strcmp(a, "--order") == 0) {
                    static const char *const orders[] = { "auto", "name", "mtime", "given" };
                    for (order = 0; order < 4 && strcmp(v, orders[order]); order++)
                        ;
                    if (order == 4) {
                        free(paths);
                        return hscope_cli_usage_error(usage_report,
                                                      "--order: auto, name, mtime or given, not '%s'", v);
                    }
                } else {
                    uint64_t t;
                    if (hscope_cli_parse_size(v, &t) != 0 || t == 0 || t > 64) {
                        free(paths);
                        return hscope_cli_usage_error(usage_report,
                                                      "--threads needs a number from 1 to 64%s", "");
                    }
                    lo.threads = (uint32_t)t;
                }
                continue;
            }
            if (strcmp(a, "--no-class-edges") == 0) {
                nce = 1;
                continue;
            }
            if (strcmp(a, "--no-index") == 0) {
                no_index = 1;
                continue;
            }
            if (strcmp(a, "--keep-dumper") == 0) {
                tflags = 0;
                continue;
            }
            if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0)
                continue;
            if (a[0] == '-' && a[1]) {
                free(paths);
                return hscope_cli_usage_error(usage_report, "unknown option '%s'", a);
            }
        }
        paths[np++] = argv[i];
    }
    if (np == 0) {
        free(paths);
        return hscope_cli_usage_error(usage_report, "no DUMP given%s", "");
    }

    int rc = EXIT_BAD_INPUT;
    hscope_timeline_t *tl = NULL;
    hscope_diff_t *d = NULL;
    hscope_heap_t *h = NULL;
    hscope_domtree_t *t = NULL;
    FILE *f = NULL;
    char *html = NULL;
    size_t html_len = 0;
    const char *main_path = paths[np - 1];

    if (np >= 2) {
        int usage = 0;
        if (!(tl = compute_timeline(paths, np, by, order, tflags, &lo, &usage))) {
            rc = usage ? EXIT_USAGE : EXIT_BAD_INPUT;
            goto out;
        }
        if (np > 3)
            main_path = hscope_timeline_dump_path(tl, (uint64_t)np - 1);
    }
    hscope_error err = HSCOPE_ERROR_INIT;
    if (np == 2 || np == 3) {
        hscope_load_options dlo = lo;
        if (!no_index)
            dlo.flags |= HSCOPE_LOAD_USE_INDEX;
        hscope_diff_options dopt = HSCOPE_DIFF_OPTIONS_INIT;
        if (!tflags)
            dopt.flags |= HSCOPE_DIFF_KEEP_DUMPER;
        if (hscope_diff_files(&d, paths[0], paths[1], np == 3 ? paths[2] : NULL, &dlo, &dopt,
                              &err) != HSCOPE_OK) {
            fprintf(stderr, "%s: report: diff: %s\n", prog, err.message);
            goto out;
        }
        h = hscope_heap_ref(hscope_diff_heap(d));
        /* damage of every dump and the series checks, said once */
        hscope_cli_warn_text(hscope_diff_warning_text(d));
    } else {
        h = load_main(main_path, &lo, no_index);
        if (!h)
            goto out;
        if (np == 1) /* more dumps: the timeline's folds say it */
            hscope_cli_warn_heap_damage(main_path, h);
    }
    hscope_dom_options dop = HSCOPE_DOM_OPTIONS_INIT;
    if (nce)
        dop.flags |= HSCOPE_DOM_NO_CLASS_EDGES;
    if (hscope_domtree_compute(&t, h, &dop, &err) != HSCOPE_OK) {
        fprintf(stderr, "%s: report: dominators: %s\n", prog, err.message);
        goto out;
    }

    /* the page goes to memory first: no half-written file on failure */
    f = open_memstream(&html, &html_len);
    if (!f)
        goto out;
    page_head(f, paths, np);
    fputs("<header><h1>heapscope report</h1>\n<div class=\"muted\">", f);
    {
        char when[64];
        time_t now = time(NULL);
        struct tm tmv;
        gmtime_r(&now, &tmv);
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tmv);
        fprintf(f, "%d dump%s &middot; generated %s by heapscope ", np, np > 1 ? "s" : "", when);
        esc(f, hscope_version_string());
    }
    fputs("</div>\n<nav><a href=\"#summary\">summary</a><a href=\"#histograms\">histograms</a>"
          "<a href=\"#sites\">allocation sites</a><a href=\"#retainers\">retainers</a>"
          "<a href=\"#dominators\">dominator tree</a>", f);
    if (d)
        fputs("<a href=\"#diff\">leaked</a><a href=\"#suspects\">suspects</a>", f);
    if (np >= 2)
        fputs("<a href=\"#timeline\">timeline</a>", f);
    fputs("</nav></header>\n<main>\n", f);

    sec_summary(f, h, t, main_path);
    if (d) {
        if (sec_diff(f, d, paths, np, top) != 0 || sec_suspects(f, d, t, nce, top) != 0)
            goto out;
    }
    if (tl && sec_timeline(f, tl, top, np > 3) != 0)
        goto out;
    if (sec_histograms(f, h, top, tflags) != 0 || sec_sites(f, h, top, tflags) != 0)
        goto out;
    sec_retainers(f, h, t, top);
    sec_domtree(f, h, t);
    fprintf(f, "</main>\n<script>\n%s</script>\n</body>\n</html>\n", page_js);
    if (fclose(f) != 0) {
        f = NULL;
        fprintf(stderr, "%s: report: out of memory\n", prog);
        goto out;
    }
    f = NULL;
    {
        int to_stdout = strcmp(out, "-") == 0;
        FILE *o = to_stdout ? stdout : fopen(out, "wb");
        if (!o) {
            fprintf(stderr, "%s: report: cannot write %s: %s\n", prog, out, strerror(errno));
            goto out;
        }
        size_t w = fwrite(html, 1, html_len, o);
        int bad = w != html_len || ferror(o);
        if (to_stdout)
            bad |= fflush(o) != 0;
        else
            bad |= fclose(o) != 0;
        if (bad) {
            fprintf(stderr, "%s: report: write error on %s\n", prog, out);
            goto out;
        }
        if (!to_stdout) {
            char b[32];
            human(html_len, b, sizeof(b));
            fprintf(stderr, "%s: wrote %s (%s)\n", prog, out, b);
        }
    }
    rc = 0;
out:
    if (f)
        fclose(f);
    free(html);
    hscope_domtree_free(t);
    hscope_heap_free(h);
    hscope_diff_free(d);
    hscope_timeline_free(tl);
    free(paths);
    return rc;
}
