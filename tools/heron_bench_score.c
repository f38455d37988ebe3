/* tools/heron_bench_score.c - the report's score of runs on a recorded
 * space (the methodology of tools/bench_score.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heron_bench.h"

/* ---- The methodology's score ----------------------------------------------
 * Runs of tasks with a recorded space (DIR/spaces/<task>.json, written
 * when the comparison ran) are scored against it: the best-so-far over
 * simulated time, standardised between random search (0) and the optimum
 * (1) over the cutoff window (tools/bench_score.h). */

void scoring_free(scoring *sc) {
  bench_score_table_free(sc->all);
  for (int i = 0; i < sc->ntasks; i++)
    bench_score_table_free(sc->per[i]);
  free(sc->per);
  free(sc->task);
  memset(sc, 0, sizeof *sc);
}

/* Scores runs[lo, hi), the runs of one task, when its space is recorded;
 * 0, or -1 on failure (said). */
int score_task(const char *out, const logrun *runs, int lo, int hi,
               scoring *sc) {
  const char *task = runs[lo].task;
  const char *path = cli_printf("%s/spaces/%s.json", out, task);
  if (access(path, R_OK) != 0)
    return 0;
  json_t *o = json_load_file(path, 0, NULL);
  const char *t1 = json_string_value(json_object_get(o, "t1"));
  const char *t4 = json_string_value(json_object_get(o, "t4"));
  heron_task_spec spec = {.t1 = t1, .t4 = t4};
  heron_task *t = NULL;
  heron_error err;
  heron_error_clear(&err);
  int rc = t1 && t4 ? heron_task_create(&spec, &t, &err)
                    : heron_error_set(&err, HERON_EPARSE,
                                      "%s: no \"t1\" and \"t4\" paths", path);
  bench_score_baseline b;
  memset(&b, 0, sizeof b);
  if (rc != HERON_OK)
    cli_report(rc, &err, "scoring %s", task);
  int status = rc == HERON_OK && task_baseline(t, &b) == 0 ? 0 : -1;
  heron_task_free(t);
  json_decref(o);
  if (status)
    return -1;
  if (!sc->all)
    sc->all = bench_score_table_new(b.points);
  bench_score_table *mine = bench_score_table_new(b.points);
  sc->per = realloc(sc->per, (size_t)(sc->ntasks + 1) * sizeof *sc->per);
  sc->task = realloc(sc->task, (size_t)(sc->ntasks + 1) * sizeof *sc->task);
  if (!sc->all || !mine || !sc->per || !sc->task) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  sc->per[sc->ntasks] = mine;
  sc->task[sc->ntasks++] = task;
  sc->points = b.points;
  double *curve = malloc((size_t)b.points * sizeof *curve);
  for (int i = lo; i < hi && curve; i++) {
    const logrun *lr = &runs[i];
    bench_score_trial *tr =
        malloc((size_t)(lr->n > 0 ? lr->n : 1) * sizeof *tr);
    if (!tr)
      break;
    /* The log's order is the trials' (read_log sorts by trial); elapsed
     * can only grow along it, a resumed run continuing the clock. */
    double x = 0;
    for (int k = 0; k < lr->n; k++) {
      x = fmax(x, lr->r[k].elapsed);
      tr[k] = (bench_score_trial){.x = x, .objective = lr->r[k].seconds};
    }
    double score = 0;
    heron_error_clear(&err);
    rc = bench_score_run(&b, tr, (size_t)lr->n, curve, &score, &err);
    if (rc == HERON_OK)
      rc = bench_score_table_add(sc->all, task, lr->label, (long long)lr->seed,
                                 score, curve, &err);
    if (rc == HERON_OK)
      rc = bench_score_table_add(mine, task, lr->label, (long long)lr->seed,
                                 score, curve, &err);
    if (rc != HERON_OK) {
      cli_report(rc, &err, "scoring %s %s seed %llu", task, lr->label,
                 (unsigned long long)lr->seed);
      status = -1;
    }
    free(tr);
  }
  free(curve);
  bench_score_baseline_free(&b);
  return status;
}

/* The score section of summary.md. */
void write_score_section(FILE *f, const scoring *sc) {
  fprintf(f, "## Score (the methodology of Willemsen et al., FGCS 2024)\n\n"
             "Each run's best-so-far time against simulated seconds, "
             "standardised between the calculated\nrandom-search baseline (0) "
             "and the space's optimum (1) over the window from the\n50th to "
             "the 95th percentile cutoff, averaged over the window; per "
             "strategy the mean over\nspaces of the mean over seeds, with its "
             "95%% confidence interval (Student's t).\nSpaces: ");
  for (int i = 0; i < sc->ntasks; i++)
    fprintf(f, "%s%s", i ? ", " : "", sc->task[i]);
  fprintf(f, ".\n\n");
  bench_score_write_markdown(sc->all, f);
  for (int i = 0; sc->ntasks > 1 && i < sc->ntasks; i++) {
    fprintf(f, "\n### %s\n\n", sc->task[i]);
    bench_score_write_markdown(sc->per[i], f);
  }
  fprintf(f, "\n");
}

/* scores.csv, score_aggregates.csv and the standardised-curve plot;
 * 0 or -1 (said). */
int write_score_files(const char *out, const scoring *sc, FILE *g) {
  int status = 0;
  const char *runs_csv = cli_printf("%s/scores.csv", out);
  const char *agg_csv = cli_printf("%s/score_aggregates.csv", out);
  FILE *f = fopen(runs_csv, "w");
  if (!f || bench_score_write_runs_csv(sc->all, f) != HERON_OK)
    status = -1;
  if (f && fclose(f) != 0)
    status = -1;
  f = fopen(agg_csv, "w");
  if (!f || bench_score_write_aggregates_csv(sc->all, f) != HERON_OK)
    status = -1;
  if (f && fclose(f) != 0)
    status = -1;
  if (!g)
    return status;
  const char *dat = cli_printf("%s/plots/score.dat", out);
  f = fopen(dat, "w");
  if (!f || bench_score_write_gnuplot(sc->all, f, NULL) != HERON_OK)
    status = -1;
  if (f && fclose(f) != 0)
    status = -1;
  int na = bench_score_table_aggregates(sc->all, NULL, 0);
  bench_score_agg *ag = na > 0 ? calloc((size_t)na, sizeof *ag) : NULL;
  if (ag)
    bench_score_table_aggregates(sc->all, ag, na);
  fprintf(g,
          "set title 'standardised best-so-far over the cutoff window "
          "(0: random search, 1: optimum)'\nset xlabel 'fraction of the "
          "time budget'\nset ylabel 'score'\n"
          "set terminal svg size 800,500 noenhanced background rgb 'white'\n"
          "set output %s\nplot ",
          gp_quote(cli_printf("%s/plots/score.svg", out)));
  for (int i = 0; i < na && ag; i++)
    fprintf(g,
            "%s%s index %d using 1:3:4 with filledcurves fs transparent solid "
            "0.2 noborder notitle, \\\n  %s index %d using 1:2 with lines lw "
            "2 title %s",
            i ? ", \\\n  " : "", gp_quote(dat), i, gp_quote(dat), i,
            gp_quote(ag[i].strategy));
  fprintf(g, "\nunset output\n\n");
  free(ag);
  if (status)
    fprintf(stderr, "%s: cannot write the score files in '%s'\n", cli_prog(),
            out);
  return status;
}
