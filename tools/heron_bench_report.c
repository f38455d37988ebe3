/* tools/heron_bench_report.c - the report of a comparison: runs.csv,
 * summary.md, report.html (heron_bench_html.c) and the convergence plots
 * (gnuplot). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heron_bench.h"

/* ---- Report -------------------------------------------------------------- */

static void write_csv(FILE *f, const logrun *runs, int n) {
  fprintf(f, "task,strategy,model,seed,trial,status,gflops,best_gflops_so_far,"
             "elapsed_s,simulated\n");
  for (int i = 0; i < n; i++) {
    const logrun *lr = &runs[i];
    for (int k = 0; k < lr->n; k++) {
      const rec *r = &lr->r[k];
      fprintf(f, "%s,%s,%s,%llu,%d,%s,%.9g,%.9g,%.6f,%d\n", lr->task,
              lr->strategy, lr->model, (unsigned long long)lr->seed, r->trial,
              r->status, r->gflops, r->best, r->elapsed, r->simulated);
    }
  }
}

/* Names the runs of a task with fewer trials than its longest run: the
 * partial log of an interrupted or failed run (resumed by the same command
 * again), or a search that ran out of candidates.  Their figures are those
 * of the trials they have. */
static void write_short_runs(FILE *f, const logrun *runs, int lo, int hi) {
  int most = 0, nshort = 0;
  for (int i = lo; i < hi; i++)
    most = runs[i].n > most ? runs[i].n : most;
  for (int i = lo; i < hi; i++) {
    if (runs[i].n == most)
      continue;
    if (!nshort++)
      fprintf(f, "Runs with fewer trials than the task's longest (%d): ", most);
    else
      fprintf(f, ", ");
    fprintf(f, "%s seed %llu (%d)", runs[i].label,
            (unsigned long long)runs[i].seed, runs[i].n);
  }
  if (nshort)
    fprintf(f, ". Interrupted, failed or out of candidates; their figures "
               "are those of the trials they have.\n\n");
}

int label_end(const logrun *runs, int a, int hi) {
  int b = a;
  while (b < hi && !strcmp(runs[b].label, runs[a].label))
    b++;
  return b;
}

double task_top(const logrun *runs, int lo, int hi) {
  double top = 0;
  for (int i = lo; i < hi; i++)
    if (runs[i].best > top)
      top = runs[i].best;
  return top;
}

void label_stats_of(const logrun *runs, int a, int b, double top,
                    label_stats *st) {
  double target = 0.95 * top;
  int ns = b - a;
  memset(st, 0, sizeof *st);
  st->seeds = ns;
  st->min = INFINITY;
  double *tt = calloc((size_t)ns, sizeof *tt);
  double *ts = calloc((size_t)ns, sizeof *ts);
  if (!tt || !ts) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  double sum = 0;
  for (int i = a; i < b; i++) {
    const logrun *lr = &runs[i];
    sum += lr->best;
    st->min = fmin(st->min, lr->best);
    st->max = fmax(st->max, lr->best);
    st->trials += lr->n;
    for (int k = 0; k < lr->n; k++)
      st->fails += !lr->r[k].ok;
    for (int k = 0; k < lr->n; k++)
      if (top > 0 && lr->r[k].best >= target) {
        tt[st->reached] = lr->r[k].trial;
        ts[st->reached] = lr->r[k].elapsed;
        st->reached++;
        break;
      }
  }
  st->mean = sum / ns;
  double var = 0;
  for (int i = a; i < b; i++)
    var += (runs[i].best - st->mean) * (runs[i].best - st->mean);
  st->sd = ns > 1 ? sqrt(var / (ns - 1)) : 0;
  st->med_trials = st->reached ? cli_median(tt, st->reached) : NAN;
  st->med_time = st->reached ? cli_median(ts, st->reached) : NAN;
  free(tt);
  free(ts);
}

/* One task's table: runs[lo, hi) are its runs, sorted by label and seed. */
static void write_task_summary(FILE *f, const logrun *runs, int lo, int hi) {
  double top = task_top(runs, lo, hi);
  fprintf(f, "## %s\n\n", runs[lo].task);
  fprintf(
      f, "Best any strategy found: %.3f GFLOP/s; 95%% of it: %.3f GFLOP/s.\n\n",
      top, 0.95 * top);
  int nuniform = 0;
  for (int i = lo; i < hi; i++)
    nuniform += !strcmp(runs[i].sampler, "uniform");
  fprintf(f, "Sampler of the random draws (--sampler): %s.\n\n",
          nuniform == hi - lo ? "uniform"
          : nuniform          ? cli_printf("uniform in %d of %d runs, heron in "
                                                    "the others",
                                           nuniform, hi - lo)
                              : "heron");
  fprintf(f, "| strategy | seeds | best GFLOP/s mean | min | max | stddev | "
             "median trials to 95%% | median time to 95%% (s) | seeds "
             "reaching 95%% | failure share |\n");
  fprintf(f, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
             "---: |\n");
  for (int a = lo; a < hi;) {
    int b = label_end(runs, a, hi);
    label_stats st;
    label_stats_of(runs, a, b, top, &st);
    fprintf(f, "| %s | %d | %.3f | %.3f | %.3f | %.3f | ", runs[a].label,
            st.seeds, st.mean, st.min, st.max, st.sd);
    if (st.reached)
      fprintf(f, "%.1f | %.2f | ", st.med_trials, st.med_time);
    else
      fprintf(f, "- | - | ");
    fprintf(f, "%d/%d | %.1f%% |\n", st.reached, st.seeds,
            st.trials ? 100.0 * st.fails / st.trials : 0.0);
    a = b;
  }
  fprintf(f, "\n");
  write_short_runs(f, runs, lo, hi);
}

void conv_series_free(conv_series *cs) {
  free(cs->x);
  free(cs->mean);
  free(cs->lo);
  free(cs->hi);
  memset(cs, 0, sizeof *cs);
}

void conv_series_of(const logrun *runs, int a, int b, int by_time,
                    int max_points, conv_series *cs) {
  /* The x values: trials 1..max, or every elapsed time any seed has. */
  int nx = 0;
  for (int i = a; i < b; i++)
    nx += runs[i].n;
  double *xs = calloc((size_t)nx + 1, sizeof *xs);
  if (!xs) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  int m = 0;
  for (int i = a; i < b; i++)
    for (int k = 0; k < runs[i].n; k++)
      xs[m++] = by_time ? runs[i].r[k].elapsed : runs[i].r[k].trial;
  qsort(xs, (size_t)m, sizeof *xs, cli_cmp_double);
  int u = 0;
  for (int j = 0; j < m; j++)
    if (j == 0 || xs[j] != xs[j - 1])
      xs[u++] = xs[j];
  if (max_points > 1 && u > max_points) {
    double x0 = xs[0], x1 = xs[u - 1];
    for (int j = 0; j < max_points; j++)
      xs[j] = j == max_points - 1 ? x1 : x0 + (x1 - x0) * j / (max_points - 1);
    if (!by_time) /* trials stay whole */
      for (int j = 0; j < max_points; j++)
        xs[j] = floor(xs[j]);
    u = max_points;
  }
  cs->n = u;
  cs->x = xs;
  cs->mean = calloc((size_t)u + 1, sizeof *cs->mean);
  cs->lo = calloc((size_t)u + 1, sizeof *cs->lo);
  cs->hi = calloc((size_t)u + 1, sizeof *cs->hi);
  if (!cs->mean || !cs->lo || !cs->hi) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  for (int j = 0; j < u; j++) {
    double sum = 0, mn = INFINITY, mx = 0;
    for (int i = a; i < b; i++) {
      double v = by_time ? best_at_time(&runs[i], xs[j])
                         : best_at_trial(&runs[i], (int)xs[j]);
      sum += v;
      mn = fmin(mn, v);
      mx = fmax(mx, v);
    }
    cs->mean[j] = sum / (b - a);
    cs->lo[j] = mn;
    cs->hi[j] = mx;
  }
}

/* Writes the convergence data of one task: per strategy (gnuplot index
 * blocks, in label order) x, mean, min, max of the best so far over
 * seeds. */
static int write_plot_data(const char *path, const logrun *runs, int lo, int hi,
                           int by_time) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  int block = 0;
  for (int a = lo; a < hi;) {
    int b = label_end(runs, a, hi);
    fprintf(f, "%s# %s\n", block ? "\n\n" : "", runs[a].label);
    conv_series cs;
    conv_series_of(runs, a, b, by_time, 0, &cs);
    for (int j = 0; j < cs.n; j++)
      fprintf(f, "%.6g %.6g %.6g %.6g\n", cs.x[j], cs.mean[j], cs.lo[j],
              cs.hi[j]);
    conv_series_free(&cs);
    block++;
    a = b;
  }
  return fclose(f) == 0 ? 0 : -1;
}

/* gnuplot string literal in single quotes: a quote is doubled. */
const char *gp_quote(const char *s) {
  char *out = keep_array(2 * strlen(s) + 3, 1);
  char *o = out;
  *o++ = '\'';
  for (; *s; s++) {
    if (*s == '\'')
      *o++ = '\'';
    *o++ = *s;
  }
  *o++ = '\'';
  *o = '\0';
  return out;
}

static void gp_plot(FILE *g, const char *data, const char *out_base,
                    const char *title, const char *xlabel, const logrun *runs,
                    int lo, int hi) {
  static const char *colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                 "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  fprintf(g, "set title %s\nset xlabel %s\nset ylabel 'best GFLOP/s so far'\n",
          gp_quote(title), gp_quote(xlabel));
  fprintf(g,
          "set terminal svg size 800,500 noenhanced background rgb "
          "'white'\nset output %s\n",
          gp_quote(cli_printf("%s.svg", out_base)));
  fprintf(g, "plot ");
  int block = 0;
  for (int a = lo; a < hi;) {
    int b = label_end(runs, a, hi);
    const char *c = colors[block % 8];
    fprintf(g,
            "%s%s index %d using 1:3:4 with filledcurves fc rgb '%s' fs "
            "transparent solid 0.2 noborder notitle, \\\n  %s index %d using "
            "1:2 with lines lw 2 lc rgb '%s' title %s",
            block ? ", \\\n  " : "", gp_quote(data), block, c, gp_quote(data),
            block, c, gp_quote(runs[a].label));
    block++;
    a = b;
  }
  fprintf(g, "\n");
  /* pngcairo draws the translucent bands; plain png is the fallback of a
   * gnuplot built without cairo. */
  fprintf(g,
          "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
          "  set terminal pngcairo size 800,500 noenhanced\n"
          "} else {\n"
          "  set terminal png size 800,500 noenhanced\n"
          "}\n"
          "set output %s\nreplot\nunset output\n\n",
          gp_quote(cli_printf("%s.png", out_base)));
}

/* Is `prog` an executable file in a folder of $PATH? */
static int on_path(const char *prog) {
  const char *path = getenv("PATH");
  if (!path)
    return 0;
  for (const char *p = path; *p;) {
    size_t len = strcspn(p, ":");
    const char *full = cli_printf("%.*s/%s", (int)len, len ? p : ".", prog);
    if (access(full, X_OK) == 0)
      return 1;
    p += len + (p[len] == ':');
  }
  return 0;
}

static int run_gnuplot(const char *script) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int wst = 0;
  if (pid < 0)
    return -1;
  /* A SIGINT handled by cli_stop_on_signals interrupts the wait. */
  while (waitpid(pid, &wst, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(wst) && WEXITSTATUS(wst) == 0 ? 0 : -1;
}

/* Rebuilds runs.csv, summary.md, report.html and the plots; returns 0 or
 * -1 (said). */
int report(const char *out, int quiet) {
  logrun *runs = NULL;
  int n = 0;
  int status = read_all_logs(out, &runs, &n);
  if (n == 0) {
    fprintf(stderr,
            "%s: no logs named <task>__<strategy>__s<seed>.jsonl in "
            "'%s/logs'\n",
            cli_prog(), out);
    free_logs(runs, n);
    return -1;
  }
  scoring sc;
  memset(&sc, 0, sizeof sc);
  for (int lo = 0; lo < n;) {
    int hi = lo;
    while (hi < n && !strcmp(runs[hi].task, runs[lo].task))
      hi++;
    if (score_task(out, runs, lo, hi, &sc) != 0)
      status = -1;
    lo = hi;
  }
  const char *csv = cli_printf("%s/runs.csv", out);
  const char *md = cli_printf("%s/summary.md", out);
  FILE *f = fopen(csv, "w");
  if (f) {
    write_csv(f, runs, n);
    if (fclose(f) != 0)
      f = NULL;
  }
  if (!f) {
    fprintf(stderr, "%s: cannot write '%s': %s\n", cli_prog(), csv,
            strerror(errno));
    status = -1;
  }
  f = fopen(md, "w");
  if (f) {
    fprintf(f, "# heron-bench summary\n\n"
               "Per task and strategy over seeds: the best GFLOP/s a run "
               "reached (mean, min, max,\nsample stddev), the median trial "
               "and elapsed time at which a run's best first\nreached 95%% "
               "of the best any strategy found on the task (over the seeds "
               "that\nreached it), and the share of trials that failed.\n\n");
    for (int lo = 0; lo < n;) {
      int hi = lo;
      while (hi < n && !strcmp(runs[hi].task, runs[lo].task))
        hi++;
      write_task_summary(f, runs, lo, hi);
      lo = hi;
    }
    if (sc.all)
      write_score_section(f, &sc);
    if (fclose(f) != 0)
      f = NULL;
  }
  if (!f) {
    fprintf(stderr, "%s: cannot write '%s': %s\n", cli_prog(), md,
            strerror(errno));
    status = -1;
  }

  if (write_html_report(out, runs, n, &sc) != 0)
    status = -1;

  /* Plots. */
  int plotted = 0;
  if (!on_path("gnuplot")) {
    fprintf(stderr,
            "%s: gnuplot is not on PATH; plots skipped (install "
            "gnuplot-nox, see tools/setup.sh)\n",
            cli_prog());
  } else {
    const char *pdir = cli_printf("%s/plots", out);
    const char *script = cli_printf("%s/plot.gp", out);
    int e = cli_make_dirs(pdir);
    FILE *g = e ? NULL : fopen(script, "w");
    if (!g) {
      fprintf(stderr, "%s: cannot write '%s': %s\n", cli_prog(), script,
              strerror(e ? e : errno));
      status = -1;
    } else {
      fprintf(g,
              "# written by heron-bench; run with: gnuplot %s\n"
              "set key bottom right\nset grid\n\n",
              script);
      for (int lo = 0; lo < n;) {
        int hi = lo;
        while (hi < n && !strcmp(runs[hi].task, runs[lo].task))
          hi++;
        const char *base = cli_printf("%s/%s", pdir, runs[lo].task);
        const char *dt = cli_printf("%s-trials.dat", base);
        const char *dx = cli_printf("%s-time.dat", base);
        if (write_plot_data(dt, runs, lo, hi, 0) ||
            write_plot_data(dx, runs, lo, hi, 1)) {
          fprintf(stderr, "%s: cannot write the plot data of %s in '%s'\n",
                  cli_prog(), runs[lo].task, pdir);
          status = -1;
        }
        gp_plot(g, dt, cli_printf("%s-trials", base),
                cli_printf("%s: best so far against trials (mean over seeds, "
                           "band min..max)",
                           runs[lo].task),
                "trial", runs, lo, hi);
        gp_plot(g, dx, cli_printf("%s-time", base),
                cli_printf("%s: best so far against time (mean over seeds, "
                           "band min..max)",
                           runs[lo].task),
                "elapsed seconds", runs, lo, hi);
        lo = hi;
      }
      if (sc.all && write_score_files(out, &sc, g) != 0)
        status = -1;
      if (fclose(g) != 0 || run_gnuplot(script) != 0) {
        fprintf(stderr, "%s: gnuplot failed on '%s'\n", cli_prog(), script);
        status = -1;
      } else {
        plotted = 1;
      }
    }
  }
  /* Without gnuplot the score's CSV files are still written. */
  if (sc.all && !plotted && !on_path("gnuplot") &&
      write_score_files(out, &sc, NULL) != 0)
    status = -1;
  if (!quiet && status == 0)
    fprintf(stderr,
            "%s: report of %d run%s in %s (runs.csv, summary.md, "
            "report.html%s%s)\n",
            cli_prog(), n, n == 1 ? "" : "s", out,
            sc.all ? ", scores.csv, score_aggregates.csv" : "",
            plotted ? ", plots/" : "");
  scoring_free(&sc);
  free_logs(runs, n);
  return status;
}
