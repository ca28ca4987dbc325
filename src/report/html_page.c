/*
 * html_page.c - the frame of the HTML report (head with its CSS, header
 * and navigation, the page script) and the pieces every section uses:
 * table cells, cards, notes, object labels, embedded SVG charts.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "html.h"

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

void
hscope__html_td_bytes(hscope__out *o, uint64_t v)
{
    char b[32];
    hscope__fmt_bytes((double)v, b, sizeof(b));
    hscope__out_printf(o, "<td class=\"n\" data-v=\"%llu\">%s</td>", (unsigned long long)v, b);
}

void
hscope__html_td_count(hscope__out *o, uint64_t v)
{
    char b[32];
    hscope__fmt_count(v, b, sizeof(b));
    hscope__out_printf(o, "<td class=\"n\" data-v=\"%llu\">%s</td>", (unsigned long long)v, b);
}

void
hscope__html_td_pct(hscope__out *o, uint64_t v, uint64_t total)
{
    double p = hscope__pct(v, total);
    hscope__out_printf(o, "<td class=\"n\" data-v=\"%.4f\">%.1f%%</td>", p, p);
}

void
hscope__html_td_text(hscope__out *o, const char *s, const char *cls)
{
    if (cls)
        hscope__out_printf(o, "<td class=\"%s\">", cls);
    else
        hscope__out_puts(o, "<td>");
    hscope__xml_escape(o, s ? s : "");
    hscope__out_puts(o, "</td>");
}

void
hscope__html_td_addr(hscope__out *o, uint64_t a)
{
    hscope__out_printf(o, "<td class=\"mono\">0x%llx</td>", (unsigned long long)a);
}

void
hscope__html_td_rank(hscope__out *o, uint64_t i)
{
    hscope__out_printf(o, "<td class=\"n\" data-v=\"%llu\">%llu</td>", (unsigned long long)i + 1,
                       (unsigned long long)i + 1);
}

void
hscope__html_card(hscope__out *o, const char *id, const char *k, const char *v, uint64_t raw)
{
    hscope__out_puts(o, "<div class=\"card\"><div class=\"v\"");
    if (id)
        hscope__out_printf(o, " id=\"%s\" data-v=\"%llu\"", id, (unsigned long long)raw);
    hscope__out_puts(o, ">");
    hscope__xml_escape(o, v);
    hscope__out_puts(o, "</div><div class=\"k\">");
    hscope__xml_escape(o, k);
    hscope__out_puts(o, "</div></div>\n");
}

void
hscope__html_card_count(hscope__out *o, const char *id, const char *k, uint64_t v)
{
    char b[32];
    hscope__fmt_count(v, b, sizeof(b));
    hscope__html_card(o, id, k, b, v);
}

void
hscope__html_card_bytes(hscope__out *o, const char *id, const char *k, uint64_t v)
{
    char b[32];
    hscope__fmt_bytes((double)v, b, sizeof(b));
    hscope__html_card(o, id, k, b, v);
}

void
hscope__html_warn_block(hscope__out *o, const char *text)
{
    while (text && *text) {
        const char *nl = strchr(text, '\n');
        size_t n = nl ? (size_t)(nl - text) : strlen(text);
        char line[1024];
        snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1),
                 text);
        hscope__out_puts(o, "<p class=\"warn\">Warning: ");
        hscope__xml_escape(o, line);
        hscope__out_puts(o, "</p>\n");
        text += n + (nl != NULL);
    }
}

void
hscope__html_dumper_note(hscope__out *o, uint64_t n)
{
    char c[64];
    hscope__fmt_plural(n, "object", "objects", c, sizeof(c));
    if (n)
        hscope__out_printf(o, "<p class=\"muted\">Left out: %s allocated by the dumper "
                              "itself (<code>--keep-dumper</code> keeps them).</p>\n", c);
}

void
hscope__html_tracer_note(hscope__out *o, uint64_t n, uint64_t memsize)
{
    char b[32];
    if (!n)
        return;
    hscope__fmt_bytes((double)memsize, b, sizeof(b));
    hscope__out_printf(o, "<p class=\"muted\">Left out: the allocation tracer "
                          "(<code>trace_object_allocations</code>' table), %llu object%s, %s "
                          "(<code>--keep-tracer</code> keeps it).</p>\n",
                       (unsigned long long)n, n == 1 ? "" : "s", b);
}

const char *
hscope__html_obj_label(const hscope_heap_t *h, hscope_id id, char *buf, size_t n)
{
    snprintf(buf, n, "%s %s", hscope__heap_type_name(h, hscope__heap_object_type(h, id)),
             hscope__heap_object_label(h, id));
    return buf;
}

const char *
hscope__html_obj_site(const hscope_heap_t *h, hscope_id id, char *buf, size_t n)
{
    const char *file = hscope__heap_object_file(h, id);
    if (!file) {
        buf[0] = '\0';
        return buf;
    }
    snprintf(buf, n, "%s:%u", file, hscope__heap_object_line(h, id));
    return buf;
}

hscope_status
hscope__html_chart(hscope__html *x, const hscope_tally_t *t, const hscope_timeline_t *tl)
{
    hscope__membuf b = { (hscope__mem *)&x->r->mem, NULL, 0, 0, 0 };
    hscope__ropts ro;
    hscope_report_options in = HSCOPE_REPORT_OPTIONS_INIT;
    in.format = HSCOPE_FORMAT_SVG;
    hscope_status st = hscope__ropts_read(&in, HSCOPE__FMT(HSCOPE_FORMAT_SVG), &ro, x->err);
    if (st != HSCOPE_OK)
        return st;
    hscope__out svg;
    hscope__out_init(&svg, hscope__membuf_write, &b, x->err);
    st = t ? hscope__tally_write(t, &ro, &svg) : hscope__timeline_write(tl, &ro, &svg);
    hscope_status fst = hscope__out_finish(&svg);
    if (st == HSCOPE_OK)
        st = fst;
    if (st == HSCOPE_OK && b.data) {
        const char *p = b.data;
        if (strncmp(p, "<?xml", 5) == 0) {
            const char *nl = strchr(p, '\n');
            p = nl ? nl + 1 : p + b.len;
        }
        hscope__out_puts(x->o, "<div class=\"chart\">");
        hscope__out_write(x->o, p, b.len - (size_t)(p - b.data));
        hscope__out_puts(x->o, "</div>\n");
    }
    hscope__membuf_free(&b);
    return st;
}

static void
head_title(hscope__html *x)
{
    const hscope_html_report_t *r = x->r;
    if (r->title) {
        hscope__xml_escape(x->o, r->title);
        return;
    }
    hscope__out_puts(x->o, "heapscope report: ");
    hscope__xml_escape(x->o, hscope__basename(r->paths[r->np - 1]));
    if (r->np > 1)
        hscope__out_printf(x->o, " (+%llu)", (unsigned long long)(r->np - 1));
}

void
hscope__html_head(hscope__html *x)
{
    const hscope_html_report_t *r = x->r;
    hscope__out *o = x->o;
    hscope__out_puts(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                        "<meta name=\"color-scheme\" content=\"light dark\">\n"
                        "<meta name=\"generator\" content=\"heapscope ");
    hscope__xml_escape(o, HSCOPE_VERSION_STRING);
    hscope__out_puts(o, "\">\n<title>");
    head_title(x);
    hscope__out_printf(o, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", page_css);
    hscope__out_puts(o, "<header><h1>heapscope report</h1>\n<div class=\"muted\">");
    char when[64];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tmv);
    hscope__out_printf(o, "%llu dump%s &middot; generated %s by heapscope ",
                       (unsigned long long)r->np, r->np > 1 ? "s" : "", when);
    hscope__xml_escape(o, HSCOPE_VERSION_STRING);
    hscope__out_puts(o, "</div>\n<nav><a href=\"#summary\">summary</a><a href=\"#histograms\">"
                        "histograms</a><a href=\"#sites\">allocation sites</a><a href=\"#retainers\">"
                        "retainers</a><a href=\"#dominators\">dominator tree</a>");
    if (r->diff)
        hscope__out_puts(o, r->np == 3 ? "<a href=\"#diff\">leaked</a><a href=\"#suspects\">suspects</a>"
                                       : "<a href=\"#diff\">new since A</a>"
                                         "<a href=\"#suspects\">suspects</a>");
    if (r->np >= 2)
        hscope__out_puts(o, "<a href=\"#timeline\">timeline</a>");
    if (!(r->flags & HSCOPE_HTML_NO_WASTE))
        hscope__out_puts(o, "<a href=\"#waste\">waste</a>");
    hscope__out_puts(o, "</nav></header>\n<main>\n");
}

void
hscope__html_foot(hscope__html *x)
{
    hscope__out_printf(x->o, "</main>\n<script>\n%s</script>\n</body>\n</html>\n", page_js);
}
