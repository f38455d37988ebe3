/* tools/heron_bench_run.c - running the comparison: every run whose log is
 * short of its budget, each in a child process, shared out over mpirun's
 * ranks by claim files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heron_bench.h"
#include "ranks.h"

/* ---- Files --------------------------------------------------------------- */

/* Lines holding a measurement (non-blank) in a log, 0 when it is absent;
 * with last_elapsed, also the "elapsed" of the last such line (0 when it
 * has none), read in the same pass. */
static int log_lines(const char *path, double *last_elapsed) {
  if (last_elapsed)
    *last_elapsed = 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  char *line = NULL, *last = NULL;
  size_t cap = 0, lastcap = 0;
  ssize_t len;
  int n = 0;
  while ((len = getline(&line, &cap, f)) > 0) {
    if (strspn(line, " \r\t\n") == (size_t)len)
      continue;
    n++;
    /* Keep the line by swapping buffers: the next one reads into the
     * other. */
    char *t = last;
    size_t tc = lastcap;
    last = line, lastcap = cap;
    line = t, cap = tc;
  }
  free(line);
  fclose(f);
  if (last && last_elapsed) {
    json_t *o = json_loads(last, 0, NULL);
    json_t *e = o ? json_object_get(o, "elapsed") : NULL;
    if (json_is_number(e))
      *last_elapsed = json_number_value(e);
    json_decref(o);
  }
  free(last);
  return n;
}

/* ---- Spaces of the community's formats ----------------------------------
 * A T1/T4 task is scored by the methodology of Willemsen et al. (FGCS 2024;
 * tools/bench_score.h) against its whole recorded space, and its runs get
 * that methodology's budget: the simulated seconds random search needs to
 * reach the cutoff, plus the margin, unless --time-limit is given. */

typedef struct task_budget {
  int scored;     /* a T1/T4 task */
  double seconds; /* the run's time limit */
  int trials;     /* the whole space: time is the budget */
} task_budget;

/* The baseline of T1 task t; 0, or -1 when the space cannot be read
 * (said). */
int task_baseline(const heron_task *t, bench_score_baseline *b) {
  double *obj = NULL, *cost = NULL;
  int n = 0;
  heron_error err;
  heron_error_clear(&err);
  int rc = heron_task_recorded_space(t, &obj, &cost, &n, &err);
  if (rc == HERON_OK) {
    bench_score_space sp = {.n = (size_t)n, .objective = obj, .cost = cost};
    bench_score_settings st;
    bench_score_settings_default(&st);
    rc = bench_score_baseline_init(b, &sp, &st, &err);
  }
  heron_free(obj);
  heron_free(cost);
  if (rc != HERON_OK) {
    cli_report(rc, &err, "the recorded space of %s", heron_task_key(t));
    return -1;
  }
  return 0;
}

static void task_budget_of(const settings *s, const heron_task *t,
                           task_budget *bud) {
  memset(bud, 0, sizeof *bud);
  bench_score_baseline b;
  memset(&b, 0, sizeof b);
  if (strncmp(heron_task_key(t), "t1/", 3) != 0 || task_baseline(t, &b) != 0)
    return;
  bud->scored = 1;
  bud->seconds = s->o.time_limit_s > 0 ? s->o.time_limit_s : b.budget_seconds;
  bud->trials = (int)b.n;
  bench_score_baseline_free(&b);
}

/* Where a scored task's T1 and T4 files are recorded for the report:
 * DIR/spaces/<task>.json, absolute paths, so --report-only finds them. */
static void record_space(const settings *s, const suite_task *st) {
  const char *dir = cli_printf("%s/spaces", s->out);
  if (cli_make_dirs(dir) != 0)
    return;
  char a1[PATH_MAX], a4[PATH_MAX];
  if (!realpath(st->args.t1, a1) || !realpath(st->args.t4, a4))
    return;
  json_t *o = json_pack("{s:s, s:s}", "t1", a1, "t4", a4);
  if (o)
    json_dump_file(o, cli_printf("%s/%s.json", dir, st->name), JSON_INDENT(1));
  json_decref(o);
}

/* ---- Running ------------------------------------------------------------- */

/* Runs one (task, strategy, seed) in a child process (cli_tune_in_child)
 * and fills *rep; returns 0 when the child reported. */
static int run_one(const settings *s, const heron_task *t, int strat,
                   uint64_t seed, const char *log, const char *name, int resume,
                   const task_budget *bud, cli_tune_report *rep) {
  heron_tune_options o = s->o;
  if (bud->scored) {
    o.trials = bud->trials;
    o.time_limit_s = bud->seconds;
  }
  o.strategy = s->strategies[strat];
  o.strategy_params = s->sparams[strat];
  o.n_strategy_params = s->nsparams[strat];
  o.model = s->models[strat];
  o.model_params = s->mparams[strat];
  o.n_model_params = s->nmparams[strat];
  o.seed = seed;
  o.log_path = log;
  o.resume_path = resume ? log : NULL;
  o.verbose = 0;
  o.progress = NULL;
  return cli_tune_in_child(
      t, &o, s->verbose ? cli_printf("  [%s] ", name) : NULL, rep);
}

/* Prints how one run went, under its "[k/N] name" prefix. */
static void say_run(const settings *s, const char *at, int bad,
                    const cli_tune_report *rep) {
  const heron_tune_result *r = &rep->res;
  if (bad || rep->rc != HERON_OK) {
    fprintf(stderr, "%s: FAILED: %s: %s\n", at, heron_err_name(rep->rc),
            rep->err.text[0] ? rep->err.text : heron_strerror(rep->rc));
    return;
  }
  if (s->quiet && !r->stopped)
    return;
  const char *resumed =
      r->resumed ? cli_printf(" (%d resumed)", r->resumed) : "";
  const char *end =
      r->stopped ? cli_printf("; stopped by %s, its log is kept to resume",
                              cli_signal_name(r->stopped))
                 : "";
  if (r->best_trial > 0)
    fprintf(stderr,
            "%s: best %.1f GFLOP/s at trial %d, %.1f s, %d trials%s%s\n", at,
            r->best_gflops, r->best_trial, r->elapsed_s, r->trials, resumed,
            end);
  else
    fprintf(stderr, "%s: no trial succeeded, %.1f s, %d trials%s%s\n", at,
            r->elapsed_s, r->trials, resumed, end);
}

/* The claim file of a run under mpirun (see run_all). */
static const char *claim_path(const char *logdir, const char *task,
                              const char *label, uint64_t seed) {
  return cli_printf("%s/.claim-%s__%s__s%llu", logdir, task, label,
                    (unsigned long long)seed);
}

/* 1 when this rank won the run (made its claim file), 0 when another did. */
static int claim(const char *logdir, const char *task, const char *label,
                 uint64_t seed) {
  int fd = open(claim_path(logdir, task, label, seed),
                O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0 && errno != EEXIST)
    cli_usage("--out: cannot make a claim file in '%s': %s", logdir,
              strerror(errno));
  if (fd >= 0)
    close(fd);
  return fd >= 0;
}

/* Removes every claim file in logdir (those of an earlier job, and at the
 * end this job's). */
void clear_claims(const char *logdir) {
  DIR *d = opendir(logdir);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    if (!strncmp(e->d_name, ".claim-", 7))
      unlink(cli_printf("%s/%s", logdir, e->d_name));
  if (d)
    closedir(d);
}

/* Runs every run whose log is short of the budget, one at a time, until
 * all are done or a SIGINT / SIGTERM came (cli_stop_on_signals): the run
 * in flight then ends in order (its log kept, a valid partial one) and no
 * other starts. */
void run_all(const settings *s, tally *tl) {
  memset(tl, 0, sizeof *tl);
  tl->total = s->ntasks * s->nstrategies * s->nseeds;
  int k = 0;
  const char *logdir = cli_printf("%s/logs", s->out);
  int e = cli_make_dirs(logdir);
  if (e)
    cli_usage("--out: cannot make '%s': %s", logdir, strerror(e));
  /* Under mpirun the ranks take runs as they come free: a rank claims run
   * k by creating its claim file (O_EXCL, so one rank wins), and claims
   * left by an earlier job are cleared by rank 0 first. */
  int ranks = cli_mpi_size();
  if (ranks > 1) {
    if (cli_mpi_rank() == 0)
      clear_claims(logdir);
    cli_mpi_barrier();
  }
  for (int ti = 0; ti < s->ntasks && !tl->stopped; ti++) {
    const suite_task *st = &s->st[ti];
    heron_task *t = cli_make_task(&st->args);
    task_budget bud;
    task_budget_of(s, t, &bud);
    /* Under mpirun rank 0 alone records the spaces and writes the
     * report. */
    if (bud.scored && cli_mpi_rank() == 0) {
      record_space(s, st);
      if (!s->quiet)
        fprintf(stderr,
                "%s: scored by the methodology: each run gets %.1f simulated "
                "seconds%s\n",
                st->name, bud.seconds,
                s->o.time_limit_s > 0 ? " (--time-limit)"
                                      : " (the random-search cutoff + 10%)");
    }
    for (int si = 0; si < s->nstrategies && !tl->stopped; si++) {
      for (int di = 0; di < s->nseeds && !tl->stopped; di++) {
        uint64_t seed = s->seeds[di];
        const char *log = cli_printf("%s/%s__%s__s%llu.jsonl", logdir, st->name,
                                     s->labels[si], (unsigned long long)seed);
        const char *name = cli_printf("%s %s seed %llu", st->name,
                                      s->labels[si], (unsigned long long)seed);
        const char *at = cli_printf("[%d/%d] %s", ++k, tl->total, name);
        if (ranks > 1 && !claim(logdir, st->name, s->labels[si], seed))
          continue;
        double spent = 0;
        int have = log_lines(log, bud.scored ? &spent : NULL);
        /* A scored run ends at its time budget, a plain one at --trials. */
        if (bud.scored
                ? have > 0 && (have >= bud.trials || spent >= bud.seconds)
                : have >= s->o.trials) {
          tl->complete++;
          if (!s->quiet)
            fprintf(stderr, "%s: complete (%d trials in %s), skipped\n", at,
                    have, log);
          continue;
        }
        /* A signal between two runs starts no new one. */
        if ((tl->stopped = cli_stop_signal()) != 0)
          break;
        cli_tune_report rep;
        int bad = run_one(s, t, si, seed, log, name, have > 0, &bud, &rep);
        tl->stopped = cli_stop_signal();
        if (tl->stopped && (bad || rep.rc != HERON_OK)) {
          /* A run that could not end in order (it died of the signal):
           * what its log holds is kept and resumed like any other. */
          fprintf(stderr, "%s: interrupted by %s: %s\n", at,
                  cli_signal_name(tl->stopped),
                  rep.err.text[0] ? rep.err.text : heron_strerror(rep.rc));
          continue;
        }
        say_run(s, at, bad, &rep);
        if (bad || rep.rc != HERON_OK)
          tl->failed++;
        else if (!rep.res.stopped)
          tl->complete++;
      }
    }
    heron_task_free(t);
  }
}
