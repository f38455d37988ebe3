/* tools/heron_bench_html.c - report.html: the comparison on one page that
 * needs nothing beside it.  No network and no other file: the style, the
 * data (one JSON object) and the script that draws the convergence charts
 * from it are inline.  What it holds, per task: the table summary.md has
 * (best GFLOP/s over seeds, trials and time to 95% of the best), the
 * methodology's score with its 95% interval where the task is a recorded
 * space (and over all such tasks at the top), best so far against trials
 * and against time (one line per strategy, the mean over seeds with a
 * min..max band), the share of trials that failed (per strategy, by
 * status) and the best configs (their knob values, who found them).
 *
 * Everything from the logs (task, strategy and status names, config keys
 * and values) is HTML-escaped in the tables; in the JSON data '<', '>' and
 * '&' are written as \u escapes, so no string can end the script element.
 * The page depends on the logs alone (no date, no path), so --report-only
 * writes it again byte for byte. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heron_bench.h"

/* At most this many points per line of a chart: a step line of 20 seeds'
 * elapsed times would otherwise carry every one of them. */
enum { CHART_POINTS = 400 };

static void *html_alloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  return p;
}

/* s as HTML text or attribute value. */
static void put_text(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&':
      fputs("&amp;", f);
      break;
    case '<':
      fputs("&lt;", f);
      break;
    case '>':
      fputs("&gt;", f);
      break;
    case '"':
      fputs("&quot;", f);
      break;
    case '\'':
      fputs("&#39;", f);
      break;
    default:
      fputc(*s, f);
    }
  }
}

/* ---- The style and the script -------------------------------------------- */

static const char style[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;"
    "max-width:1100px;padding:0 16px;color:#222}\n"
    "h1{font-size:24px}h2{margin-top:40px;border-bottom:1px solid #ccc}\n"
    "h3{font-size:15px;margin:20px 0 6px}\n"
    "table{border-collapse:collapse;margin:6px 0 12px}\n"
    "th,td{border:1px solid #ddd;padding:3px 8px;vertical-align:top}\n"
    "th{background:#f4f4f4;text-align:left}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}\n"
    ".charts{display:flex;flex-wrap:wrap;gap:16px}\n"
    "figure.chart{margin:0;border:1px solid #ddd;padding:8px}\n"
    "figure.chart svg{display:block}\n"
    "ul.legend{list-style:none;padding:0;margin:4px 0 0;display:flex;"
    "flex-wrap:wrap;gap:4px 14px}\n"
    "ul.legend span{display:inline-block;width:12px;height:12px;"
    "margin-right:4px;vertical-align:-1px}\n"
    ".note{color:#555}div.wide{overflow-x:auto}\n"
    "table.configs td{white-space:nowrap}\n";

/* Draws every figure.chart from the JSON in #heron-data: a step line per
 * strategy (the mean over seeds) over its min..max band, with a legend.
 * Names go in as text nodes, never as markup. */
static const char script[] =
    "(function () {\n"
    "  'use strict';\n"
    "  var data = JSON.parse(document.getElementById('heron-data')"
    ".textContent);\n"
    "  var NS = 'http://www.w3.org/2000/svg';\n"
    "  var colors = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', "
    "'#9467bd',\n"
    "                '#8c564b', '#e377c2', '#17becf'];\n"
    "  var W = 520, H = 320, L = 64, R = 14, T = 12, B = 44;\n"
    "  function el(name, attrs, parent) {\n"
    "    var e = document.createElementNS(NS, name);\n"
    "    for (var k in attrs) e.setAttribute(k, attrs[k]);\n"
    "    if (parent) parent.appendChild(e);\n"
    "    return e;\n"
    "  }\n"
    "  function ticks(lo, hi, whole) {\n"
    "    var span = hi - lo, step = Math.pow(10, Math.floor(Math.log10(span "
    "/ 5)));\n"
    "    if (span / step > 25) step *= 5; else if (span / step > 10) step "
    "*= 2;\n"
    "    if (whole) step = Math.max(step, 1);\n"
    "    var out = [];\n"
    "    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v "
    "+= step)\n"
    "      out.push(Math.abs(v) < step * 1e-9 ? 0 : v);\n"
    "    return out;\n"
    "  }\n"
    "  function fmt(v) {\n"
    "    return Math.abs(v) >= 1e5 || (v !== 0 && Math.abs(v) < 1e-3)\n"
    "      ? v.toExponential(1) : String(+v.toPrecision(4));\n"
    "  }\n"
    "  function steps(xs, ys, sx, sy) {\n"
    "    var p = [];\n"
    "    for (var i = 0; i < xs.length; i++) {\n"
    "      if (i > 0) p.push(sx(xs[i]) + ',' + sy(ys[i - 1]));\n"
    "      p.push(sx(xs[i]) + ',' + sy(ys[i]));\n"
    "    }\n"
    "    return p;\n"
    "  }\n"
    "  function draw(fig) {\n"
    "    var task = data.tasks[+fig.getAttribute('data-task')];\n"
    "    var axis = fig.getAttribute('data-axis');\n"
    "    var lines = task[axis];\n"
    "    var x0 = Infinity, x1 = -Infinity, y1 = 0;\n"
    "    lines.forEach(function (s) {\n"
    "      s.x.forEach(function (v) { x0 = Math.min(x0, v); x1 = "
    "Math.max(x1, v); });\n"
    "      s.hi.forEach(function (v) { y1 = Math.max(y1, v); });\n"
    "    });\n"
    "    if (!(x1 > x0)) { x0 = isFinite(x0) ? x0 - 1 : 0; x1 = x0 + 2; }\n"
    "    if (!(y1 > 0)) y1 = 1;\n"
    "    y1 *= 1.05;\n"
    "    var sx = function (v) { return (L + (v - x0) / (x1 - x0) * (W - L - "
    "R)).toFixed(1); };\n"
    "    var sy = function (v) { return (H - B - v / y1 * (H - T - "
    "B)).toFixed(1); };\n"
    "    var svg = el('svg', {viewBox: '0 0 ' + W + ' ' + H, width: W, "
    "height: H,\n"
    "                         role: 'img', 'font-size': 11});\n"
    "    el('title', {}, svg).textContent = fig.getAttribute('data-title');\n"
    "    ticks(x0, x1, axis === 'trials').forEach(function (v) {\n"
    "      el('line', {x1: sx(v), x2: sx(v), y1: T, y2: H - B, stroke: "
    "'#eee'}, svg);\n"
    "      var t = el('text', {x: sx(v), y: H - B + 14, 'text-anchor': "
    "'middle'}, svg);\n"
    "      t.textContent = fmt(v);\n"
    "    });\n"
    "    ticks(0, y1, false).forEach(function (v) {\n"
    "      el('line', {x1: L, x2: W - R, y1: sy(v), y2: sy(v), stroke: "
    "'#eee'}, svg);\n"
    "      var t = el('text', {x: L - 4, y: +sy(v) + 4, 'text-anchor': "
    "'end'}, svg);\n"
    "      t.textContent = fmt(v);\n"
    "    });\n"
    "    el('rect', {x: L, y: T, width: W - L - R, height: H - T - B, fill: "
    "'none',\n"
    "               stroke: '#999'}, svg);\n"
    "    el('text', {x: (L + W - R) / 2, y: H - 8, 'text-anchor': "
    "'middle'}, svg)\n"
    "      .textContent = axis === 'time' ? 'elapsed seconds' : 'trial';\n"
    "    el('text', {x: 14, y: (T + H - B) / 2, 'text-anchor': 'middle',\n"
    "                transform: 'rotate(-90 14 ' + (T + H - B) / 2 + ')'}, "
    "svg)\n"
    "      .textContent = 'best GFLOP/s so far';\n"
    "    var legend = document.createElement('ul');\n"
    "    legend.className = 'legend';\n"
    "    lines.forEach(function (s, i) {\n"
    "      var c = colors[i % colors.length];\n"
    "      var hi = steps(s.x, s.hi, sx, sy), lo = steps(s.x, s.lo, sx, "
    "sy);\n"
    "      el('polygon', {points: hi.concat(lo.reverse()).join(' '), fill: "
    "c,\n"
    "                     'fill-opacity': 0.18, stroke: 'none'}, svg);\n"
    "      el('polyline', {points: steps(s.x, s.mean, sx, sy).join(' '), "
    "fill: 'none',\n"
    "                      stroke: c, 'stroke-width': 2}, svg)\n"
    "        .setAttribute('data-label', s.label);\n"
    "      var li = document.createElement('li');\n"
    "      var sw = document.createElement('span');\n"
    "      sw.style.background = c;\n"
    "      li.appendChild(sw);\n"
    "      li.appendChild(document.createTextNode(s.label));\n"
    "      legend.appendChild(li);\n"
    "    });\n"
    "    fig.insertBefore(svg, fig.firstChild);\n"
    "    fig.insertBefore(legend, svg.nextSibling);\n"
    "    fig.setAttribute('data-drawn', lines.length);\n"
    "  }\n"
    "  var figs = document.querySelectorAll('figure.chart');\n"
    "  for (var i = 0; i < figs.length; i++) draw(figs[i]);\n"
    "})();\n";

/* ---- Tables -------------------------------------------------------------- */

static void put_score_table(FILE *f, const bench_score_table *t) {
  int na = bench_score_table_aggregates(t, NULL, 0);
  bench_score_agg *ag = html_alloc((size_t)(na > 0 ? na : 1), sizeof *ag);
  if (na > 0)
    bench_score_table_aggregates(t, ag, na);
  fputs("<table class=\"score\"><tr><th>strategy</th><th>runs</th>"
        "<th>spaces</th><th>score &#177; 95% half-width</th>"
        "<th>95% interval</th></tr>\n",
        f);
  for (int i = 0; i < na; i++) {
    char buf[64];
    fputs("<tr><td>", f);
    put_text(f, ag[i].strategy);
    fprintf(f, "</td><td class=\"n\">%d</td><td class=\"n\">%d</td>",
            ag[i].runs, ag[i].spaces);
    fputs("<td class=\"n\">", f);
    put_text(f, bench_score_format(&ag[i], buf, sizeof buf));
    if (isfinite(ag[i].half_width))
      fprintf(f, "</td><td class=\"n\">[%.3f, %.3f]</td></tr>\n", ag[i].lo,
              ag[i].hi);
    else
      fputs("</td><td class=\"n\">n/a</td></tr>\n", f);
  }
  fputs("</table>\n", f);
  free(ag);
}

static void put_summary_table(FILE *f, const logrun *runs, int lo, int hi,
                              double top) {
  fprintf(f,
          "<p>Best any strategy found: %.3f GFLOP/s; 95%% of it: %.3f "
          "GFLOP/s.</p>\n",
          top, 0.95 * top);
  fputs("<table class=\"summary\"><tr><th>strategy</th><th>seeds</th>"
        "<th>best GFLOP/s mean</th><th>min</th><th>max</th><th>stddev</th>"
        "<th>median trials to 95%</th><th>median time to 95% (s)</th>"
        "<th>seeds reaching 95%</th></tr>\n",
        f);
  for (int a = lo; a < hi;) {
    int b = label_end(runs, a, hi);
    label_stats st;
    label_stats_of(runs, a, b, top, &st);
    fputs("<tr><td>", f);
    put_text(f, runs[a].label);
    fprintf(f,
            "</td><td class=\"n\">%d</td><td class=\"n\">%.3f</td>"
            "<td class=\"n\">%.3f</td><td class=\"n\">%.3f</td>"
            "<td class=\"n\">%.3f</td>",
            st.seeds, st.mean, st.min, st.max, st.sd);
    if (st.reached)
      fprintf(f, "<td class=\"n\">%.1f</td><td class=\"n\">%.2f</td>",
              st.med_trials, st.med_time);
    else
      fputs("<td class=\"n\">-</td><td class=\"n\">-</td>", f);
    fprintf(f, "<td class=\"n\">%d/%d</td></tr>\n", st.reached, st.seeds);
    a = b;
  }
  fputs("</table>\n", f);
}

typedef struct status_count {
  const char *status;
  int count;
} status_count;

static int cmp_status_count(const void *a, const void *b) {
  const status_count *x = a, *y = b;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return strcmp(x->status, y->status);
}

/* Per strategy: trials, failed ones, their share and their statuses. */
static void put_failure_table(FILE *f, const logrun *runs, int lo, int hi) {
  fputs("<table class=\"failures\"><tr><th>strategy</th><th>trials</th>"
        "<th>failed</th><th>failure share</th><th>by status</th></tr>\n",
        f);
  for (int a = lo; a < hi;) {
    int b = label_end(runs, a, hi);
    int trials = 0, fails = 0, nst = 0;
    for (int i = a; i < b; i++)
      trials += runs[i].n;
    status_count *sc = html_alloc((size_t)trials, sizeof *sc);
    for (int i = a; i < b; i++)
      for (int k = 0; k < runs[i].n; k++) {
        const rec *r = &runs[i].r[k];
        if (r->ok)
          continue;
        fails++;
        int j = 0;
        while (j < nst && strcmp(sc[j].status, r->status))
          j++;
        if (j == nst)
          sc[nst++] = (status_count){r->status, 0};
        sc[j].count++;
      }
    qsort(sc, (size_t)nst, sizeof *sc, cmp_status_count);
    fputs("<tr><td>", f);
    put_text(f, runs[a].label);
    fprintf(f,
            "</td><td class=\"n\">%d</td><td class=\"n\">%d</td>"
            "<td class=\"n\">%.1f%%</td><td>",
            trials, fails, trials ? 100.0 * fails / trials : 0.0);
    for (int j = 0; j < nst; j++) {
      fputs(j ? ", " : "", f);
      put_text(f, sc[j].status);
      fprintf(f, " %d", sc[j].count);
    }
    fputs(nst ? "</td></tr>\n" : "-</td></tr>\n", f);
    free(sc);
    a = b;
  }
  fputs("</table>\n", f);
}

/* A run's top config, for the task's best configs. */
typedef struct found {
  const top_config *c;
  int run; /* index into runs */
} found;

/* By config, then best measurement first (ties: the earlier run). */
static int cmp_found_config(const void *a, const void *b) {
  const found *x = a, *y = b;
  int c = strcmp(x->c->config, y->c->config);
  if (c)
    return c;
  if (x->c->gflops != y->c->gflops)
    return x->c->gflops > y->c->gflops ? -1 : 1;
  return x->run - y->run;
}

/* Best first (ties: the earlier run, then the earlier trial). */
static int cmp_found_best(const void *a, const void *b) {
  const found *x = a, *y = b;
  if (x->c->gflops != y->c->gflops)
    return x->c->gflops > y->c->gflops ? -1 : 1;
  if (x->run != y->run)
    return x->run - y->run;
  return x->c->trial - y->c->trial;
}

/* A knob's value as text: a string as it is, anything else as JSON. */
static void put_value(FILE *f, json_t *v) {
  if (json_is_string(v)) {
    put_text(f, json_string_value(v));
    return;
  }
  char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  put_text(f, s ? s : "-");
  free(s);
}

/* The task's TOP_CONFIGS best distinct configs over all its runs: their
 * GFLOP/s, knob values, the run that measured that best, and every
 * strategy whose runs found it (with how many of its seeds did). */
static void put_best_configs(FILE *f, const logrun *runs, int lo, int hi) {
  int nf = 0;
  for (int i = lo; i < hi; i++)
    nf += runs[i].ntop;
  if (!nf) {
    fputs("<p class=\"note\">No trial measured ok.</p>\n", f);
    return;
  }
  found *all = html_alloc((size_t)nf, sizeof *all);
  nf = 0;
  for (int i = lo; i < hi; i++)
    for (int k = 0; k < runs[i].ntop; k++)
      all[nf++] = (found){&runs[i].top[k], i};
  /* Groups of one config, its best measurement first; then the groups'
   * heads, best first. */
  qsort(all, (size_t)nf, sizeof *all, cmp_found_config);
  found *head = html_alloc((size_t)nf, sizeof *head);
  int *group = html_alloc((size_t)nf + 1, sizeof *group);
  int ng = 0;
  for (int i = 0; i < nf; i++)
    if (i == 0 || strcmp(all[i].c->config, all[i - 1].c->config)) {
      group[ng] = i;
      head[ng++] = all[i];
    }
  group[ng] = nf;
  found *order = html_alloc((size_t)ng, sizeof *order);
  memcpy(order, head, (size_t)ng * sizeof *order);
  qsort(order, (size_t)ng, sizeof *order, cmp_found_best);
  int shown = ng < TOP_CONFIGS ? ng : TOP_CONFIGS;
  json_t **cfg = html_alloc((size_t)shown, sizeof *cfg);
  json_t *keys = json_array(); /* the knobs in order of first appearance */
  for (int r = 0; r < shown; r++) {
    cfg[r] = json_loads(order[r].c->config, 0, NULL);
    const char *key;
    json_t *v;
    json_object_foreach(cfg[r], key, v) {
      size_t j, nk = json_array_size(keys);
      for (j = 0; j < nk; j++)
        if (!strcmp(json_string_value(json_array_get(keys, j)), key))
          break;
      if (j == nk)
        json_array_append_new(keys, json_string(key));
    }
  }
  fputs("<div class=\"wide\"><table class=\"configs\"><tr><th>#</th>"
        "<th>GFLOP/s</th>",
        f);
  size_t j;
  json_t *kv;
  json_array_foreach(keys, j, kv) {
    fputs("<th>", f);
    put_text(f, json_string_value(kv));
    fputs("</th>", f);
  }
  fputs("<th>best measured by</th><th>found by</th></tr>\n", f);
  for (int r = 0; r < shown; r++) {
    const logrun *best = &runs[order[r].run];
    fprintf(f, "<tr><td class=\"n\">%d</td><td class=\"n\">%.3f</td>", r + 1,
            order[r].c->gflops);
    json_array_foreach(keys, j, kv) {
      fputs("<td>", f);
      put_value(f, json_object_get(cfg[r], json_string_value(kv)));
      fputs("</td>", f);
    }
    fputs("<td>", f);
    put_text(f, best->label);
    fprintf(f, ", seed %llu, trial %d</td><td>", (unsigned long long)best->seed,
            order[r].c->trial);
    /* The runs that found it (its group), counted per strategy. */
    int g = 0;
    while (head[g].c != order[r].c)
      g++;
    int listed = 0;
    for (int a = lo; a < hi;) {
      int b = label_end(runs, a, hi), had = 0;
      for (int i = group[g]; i < group[g + 1]; i++)
        had += all[i].run >= a && all[i].run < b;
      if (had) {
        fputs(listed++ ? "; " : "", f);
        put_text(f, runs[a].label);
        fprintf(f, " (%d of %d seed%s)", had, b - a, b - a == 1 ? "" : "s");
      }
      a = b;
    }
    fputs("</td></tr>\n", f);
  }
  fputs("</table></div>\n", f);
  for (int r = 0; r < shown; r++)
    json_decref(cfg[r]);
  json_decref(keys);
  free(cfg);
  free(order);
  free(group);
  free(head);
  free(all);
}

/* ---- The data ------------------------------------------------------------ */

static json_t *num_array(const double *v, int n) {
  json_t *a = json_array();
  for (int i = 0; i < n; i++)
    json_array_append_new(a, isfinite(v[i]) ? json_real(v[i]) : json_null());
  return a;
}

/* {"name", "trials": [lines], "time": [lines]}, a line being {"label",
 * "x", "mean", "lo", "hi"}. */
static json_t *task_data(const logrun *runs, int lo, int hi) {
  json_t *t = json_object();
  json_object_set_new(t, "name", json_string(runs[lo].task));
  for (int by_time = 0; by_time < 2; by_time++) {
    json_t *lines = json_array();
    for (int a = lo; a < hi;) {
      int b = label_end(runs, a, hi);
      conv_series cs;
      conv_series_of(runs, a, b, by_time, CHART_POINTS, &cs);
      json_t *l = json_object();
      json_object_set_new(l, "label", json_string(runs[a].label));
      json_object_set_new(l, "x", num_array(cs.x, cs.n));
      json_object_set_new(l, "mean", num_array(cs.mean, cs.n));
      json_object_set_new(l, "lo", num_array(cs.lo, cs.n));
      json_object_set_new(l, "hi", num_array(cs.hi, cs.n));
      json_array_append_new(lines, l);
      conv_series_free(&cs);
      a = b;
    }
    json_object_set_new(t, by_time ? "time" : "trials", lines);
  }
  return t;
}

/* The JSON text with '<', '>' and '&' as \u escapes: they only occur in
 * strings, where the escape means the same, and "</script>" cannot. */
static void put_json(FILE *f, const json_t *data) {
  char *s = json_dumps(data, JSON_COMPACT | JSON_REAL_PRECISION(7));
  if (!s) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  for (const char *c = s; *c; c++) {
    if (*c == '<' || *c == '>' || *c == '&')
      fprintf(f, "\\u%04x", (unsigned)*c);
    else
      fputc(*c, f);
  }
  free(s);
}

/* ---- The page ------------------------------------------------------------ */

static void put_task(FILE *f, const logrun *runs, int lo, int hi, int index,
                     const scoring *sc) {
  const char *task = runs[lo].task;
  fputs("<section class=\"task\" id=\"task-", f);
  put_text(f, task);
  fputs("\" data-task=\"", f);
  put_text(f, task);
  fputs("\">\n<h2>", f);
  put_text(f, task);
  fputs("</h2>\n", f);
  put_summary_table(f, runs, lo, hi, task_top(runs, lo, hi));
  for (int i = 0; i < sc->ntasks; i++)
    if (!strcmp(sc->task[i], task)) {
      fputs("<h3>Score on this space</h3>\n", f);
      put_score_table(f, sc->per[i]);
    }
  fputs("<h3>Convergence</h3>\n<p class=\"note\">Best GFLOP/s so far, the "
        "mean over seeds with a min..max band.</p>\n<div class=\"charts\">\n",
        f);
  for (int by_time = 0; by_time < 2; by_time++) {
    fprintf(f,
            "<figure class=\"chart\" data-task=\"%d\" data-axis=\"%s\" "
            "data-title=\"",
            index, by_time ? "time" : "trials");
    put_text(f, task);
    fprintf(f,
            ": best so far against %s\"><figcaption>against %s"
            "</figcaption></figure>\n",
            by_time ? "time" : "trials", by_time ? "elapsed time" : "trials");
  }
  fputs("</div>\n<h3>Failures</h3>\n", f);
  put_failure_table(f, runs, lo, hi);
  fputs("<h3>Best configs</h3>\n", f);
  put_best_configs(f, runs, lo, hi);
  fputs("</section>\n", f);
}

static void put_page(FILE *f, const logrun *runs, int n, const scoring *sc) {
  int ntasks = 0, nlabels = 0;
  for (int i = 0; i < n; i++) {
    ntasks += i == 0 || strcmp(runs[i].task, runs[i - 1].task);
    int j = 0;
    while (j < i && strcmp(runs[j].label, runs[i].label))
      j++;
    nlabels += j == i;
  }
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
        "charset=\"utf-8\">\n<meta name=\"viewport\" "
        "content=\"width=device-width, initial-scale=1\">\n"
        "<title>heron-bench report</title>\n<style>\n",
        f);
  fputs(style, f);
  fputs("</style>\n</head>\n<body>\n<h1>heron-bench report</h1>\n", f);
  fprintf(f,
          "<p>%d run%s of %d strateg%s on %d task%s, written from the logs "
          "in logs/ (runs.csv holds every trial).</p>\n",
          n, n == 1 ? "" : "s", nlabels, nlabels == 1 ? "y" : "ies", ntasks,
          ntasks == 1 ? "" : "s");
  fputs("<noscript><p class=\"note\">The convergence charts are drawn by "
        "the page's script; the tables need none.</p></noscript>\n"
        "<nav><p>Tasks:",
        f);
  for (int lo = 0; lo < n;) {
    int hi = lo;
    while (hi < n && !strcmp(runs[hi].task, runs[lo].task))
      hi++;
    fputs(" <a href=\"#task-", f);
    put_text(f, runs[lo].task);
    fputs("\">", f);
    put_text(f, runs[lo].task);
    fputs("</a>", f);
    lo = hi;
  }
  fputs("</p></nav>\n", f);
  if (sc->all) {
    fputs("<section id=\"score\">\n<h2>Score (the methodology of Willemsen "
          "et al., FGCS 2024)</h2>\n<p class=\"note\">Each run's best-so-far "
          "time against simulated seconds, standardised between the "
          "calculated random-search baseline (0) and the space's optimum "
          "(1) over the cutoff window; per strategy the mean over spaces "
          "of the mean over seeds, with its 95% confidence interval "
          "(Student's t). Spaces:",
          f);
    for (int i = 0; i < sc->ntasks; i++) {
      fputs(i ? ", " : " ", f);
      put_text(f, sc->task[i]);
    }
    fputs(".</p>\n", f);
    put_score_table(f, sc->all);
    fputs("</section>\n", f);
  }
  json_t *data = json_object(), *tasks = json_array();
  int index = 0;
  for (int lo = 0; lo < n; index++) {
    int hi = lo;
    while (hi < n && !strcmp(runs[hi].task, runs[lo].task))
      hi++;
    put_task(f, runs, lo, hi, index, sc);
    json_array_append_new(tasks, task_data(runs, lo, hi));
    lo = hi;
  }
  json_object_set_new(data, "tasks", tasks);
  fputs("<script type=\"application/json\" id=\"heron-data\">", f);
  put_json(f, data);
  json_decref(data);
  fputs("</script>\n<script>\n", f);
  fputs(script, f);
  fputs("</script>\n</body>\n</html>\n", f);
}

int write_html_report(const char *out, const logrun *runs, int n,
                      const scoring *sc) {
  const char *path = cli_printf("%s/report.html", out);
  FILE *f = fopen(path, "w");
  if (f) {
    put_page(f, runs, n, sc);
    if (fclose(f) != 0)
      f = NULL;
  }
  if (!f) {
    fprintf(stderr, "%s: cannot write '%s': %s\n", cli_prog(), path,
            strerror(errno));
    return -1;
  }
  return 0;
}
