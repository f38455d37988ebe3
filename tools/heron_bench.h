/* tools/heron_bench.h - what the files of heron-bench share (heron_bench.c
 * says what the tool does; each file says what it holds):
 *
 *   heron_bench.c         the command line, its checks, main
 *   heron_bench_suite.c   the suite file
 *   heron_bench_run.c     running the comparison (over MPI ranks too)
 *   heron_bench_logs.c    the logs read back
 *   heron_bench_report.c  runs.csv, summary.md, the plots
 *   heron_bench_html.c    report.html
 *   heron_bench_score.c   the score of runs on a recorded space
 *   heron_bench_t4.c      --export-t4
 */
#ifndef HERON_TOOLS_HERON_BENCH_H
#define HERON_TOOLS_HERON_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench_score.h"
#include "cli.h"
#include "suite.h"
#include "timing.h"

/* ---- The settings (heron_bench.c) ---------------------------------------- */

/* A task of the suite (tools/suite.h). */
typedef cli_suite_task suite_task;

/* One --param or --model-param: the plugin it is for and the parameter. */
typedef struct plugin_param {
  const char *plugin; /* as written before the ':' */
  heron_param p;
} plugin_param;

typedef struct settings {
  const char *suite_path;
  const char *tasks;
  const char *strategies_text, *models_text, *model;
  const char *seeds_text;
  const char *out;
  const char *export_t4, *t4_out;
  cli_task_args task; /* the flags given; the suite fills the rest */
  heron_tune_options o;
  int report_only, quiet, verbose;
  int allow_mixed; /* --allow-mixed */
  /* Derived. */
  const char **strategies, **models, **labels;
  int nstrategies;
  uint64_t *seeds;
  int nseeds;
  suite_task *st;
  int ntasks;
  plugin_param *pp; /* every --param and --model-param, in order */
  int *pp_model;    /* 1 for a --model-param */
  int npp;
  /* Per strategy: its own parameters and its model's, from pp. */
  heron_param **sparams, **mparams;
  int *nsparams, *nmparams;
} settings;

/* An array of n zeroed elements of `size` bytes that lives until exit
 * (freed by keep_free_all); exits when out of memory. */
void *keep_array(size_t n, size_t size);

/* Splits "a,b,c" into fresh strings; an empty item is a usage error. */
const char **split_list(const char *flag, const char *text, int *n);

/* ---- The suite (heron_bench_suite.c) ------------------------------------- */

/* Reads --suite into s->st, the tasks --tasks selects (a usage error, exit
 * 2, names whatever is wrong in the file). */
void load_suite(settings *s);

/* With several tasks replayed from several --replay logs: gives each task
 * the logs that recorded it. */
void replay_logs_per_task(settings *s);

/* ---- Running (heron_bench_run.c) ----------------------------------------- */

/* What run_all did. */
typedef struct tally {
  int total;    /* runs of the comparison */
  int complete; /* logs at their budget: run now or before */
  int failed;   /* runs that failed */
  int stopped;  /* the signal that stopped the comparison, or 0 */
} tally;

/* Runs every run whose log is short of its budget, until all are done or
 * a SIGINT / SIGTERM came. */
void run_all(const settings *s, tally *tl);

/* Removes every claim file in logdir (mpirun's ranks claim runs by them). */
void clear_claims(const char *logdir);

/* The random-search baseline of T1 task t; 0, or -1 when the space cannot
 * be read (said). */
int task_baseline(const heron_task *t, bench_score_baseline *b);

/* ---- The logs read back (heron_bench_logs.c) ----------------------------- */

typedef struct rec {
  int trial;
  int ok;
  const char *status;
  double gflops, best, elapsed;
  double seconds; /* the measured time; NaN for a failed trial */
  int simulated;
} rec;

/* The configs a run keeps for the report's best configs: its best distinct
 * ones measured ok. */
enum { TOP_CONFIGS = 5 };

typedef struct top_config {
  char *config;  /* the log's "config" object as compact JSON (malloc'd) */
  double gflops; /* its best measurement in the run */
  int trial;     /* the trial that measured that */
} top_config;

typedef struct logrun {
  const char *task, *label, *strategy, *model;
  const char *sampler; /* how its random configs were drawn: "heron" or
                          "uniform" (--sampler; its log's "sampler") */
  uint64_t seed;
  rec *r;
  int n;
  double best;
  /* Its TOP_CONFIGS best distinct configs, best first (ties: the earlier
   * trial first). */
  top_config top[TOP_CONFIGS];
  int ntop;
} logrun;

/* Every log of out/logs, sorted by task, label and seed, into *runs_out
 * (free them with free_logs); 0, or -1 when one could not be read (said;
 * the others are there). */
int read_all_logs(const char *out, logrun **runs_out, int *n_out);
void free_logs(logrun *runs, int n);

/* The best a run had reached by trial t / by elapsed time x. */
double best_at_trial(const logrun *lr, int t);
double best_at_time(const logrun *lr, double x);

/* ---- The report (heron_bench_report.c) ----------------------------------- */

/* Rebuilds runs.csv, summary.md, report.html and the plots; returns 0 or
 * -1 (said). */
int report(const char *out, int quiet);

/* The end of the runs of runs[a]'s label in runs[a, hi) (sorted by task,
 * label and seed). */
int label_end(const logrun *runs, int a, int hi);

/* The best GFLOP/s any run of runs[lo, hi) reached. */
double task_top(const logrun *runs, int lo, int hi);

/* A strategy's figures on a task over its seeds, runs[a, b). */
typedef struct label_stats {
  int seeds, trials, fails;
  double mean, min, max, sd;   /* of each seed's best GFLOP/s */
  int reached;                 /* seeds whose best reached 95% of top */
  double med_trials, med_time; /* median trial / time of that; NaN: none */
} label_stats;

void label_stats_of(const logrun *runs, int a, int b, double top,
                    label_stats *st);

/* A strategy's best so far over its seeds, runs[a, b): the mean, min and
 * max at each x. */
typedef struct conv_series {
  int n;
  double *x, *mean, *lo, *hi;
} conv_series;

/* Against trials (by_time 0) or elapsed seconds; x is every value any
 * seed has, or, when there are more than max_points > 1 of them,
 * max_points evenly spaced over their range (whole trials). */
void conv_series_of(const logrun *runs, int a, int b, int by_time,
                    int max_points, conv_series *cs);
void conv_series_free(conv_series *cs);

/* A gnuplot string literal of s (kept until exit). */
const char *gp_quote(const char *s);

/* ---- The score (heron_bench_score.c) ------------------------------------- */

typedef struct scoring {
  bench_score_table *all;  /* every scored run */
  bench_score_table **per; /* one table per scored task */
  const char **task;
  int ntasks;
  int points;
} scoring;

void scoring_free(scoring *sc);

/* Scores runs[lo, hi), the runs of one task, when its space is recorded;
 * 0, or -1 on failure (said). */
int score_task(const char *out, const logrun *runs, int lo, int hi,
               scoring *sc);

/* The score section of summary.md; scores.csv, score_aggregates.csv and,
 * with g, the score plot into the gnuplot script g (0, or -1, said). */
void write_score_section(FILE *f, const scoring *sc);
int write_score_files(const char *out, const scoring *sc, FILE *g);

/* ---- report.html (heron_bench_html.c) ------------------------------------ */

/* Writes out/report.html, one self-contained page of the comparison from
 * runs[0, n) (sorted by task, label and seed) and their scores (sc->all
 * NULL: none); 0, or -1 (said). */
int write_html_report(const char *out, const logrun *runs, int n,
                      const scoring *sc);

/* ---- T4 export (heron_bench_t4.c) ---------------------------------------- */

/* Converts one heron log to the T4 results format; an exit status. */
int export_t4(const char *log, const char *out);

#endif /* HERON_TOOLS_HERON_BENCH_H */
