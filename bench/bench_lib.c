/* bench/bench_lib.c - the kernels of a library heron-lib built, called
 * through the library, against the same kernels as heron-search builds and
 * times them, in the same run, interleaved (tools/timing.h): the kernel's
 * source compiled alone into a shared object with the flags it was tuned
 * with and called here, and the kernel's config measured by heron-search's
 * own harness (a heron_measurer: built, run in its isolated worker,
 * checked, timed).  Each ratio is the median over the rounds of the
 * library's repeat against the other's beside it (with its quartiles): it
 * says what the library's functions cost on top of the kernel (its
 * dispatch and call counting), and whether a kernel called through the
 * library runs at the speed heron-search measured.  The speed recorded in
 * each kernel's log is printed beside them.
 *
 *   bench_lib --lib DIR --name NAME [--reps 15] [--min-ms 50] [--threads N]
 *
 * Reads DIR/share/NAME/kernels.json, calls DIR/lib/libNAME.so's functions
 * by name and compiles DIR/src/NAME_k<i>.c into a temporary folder.
 * Every output is checked against the other's (the same kernel must give
 * the same numbers); heron-search's measurement checks its own against the
 * op's reference.  tools/bench_lib.sh builds a library of models.json's
 * BERT and GPT-2 GEMMs and runs this and the numpy comparison. */
#include <dlfcn.h>
#include <jansson.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "timing.h"

enum { OPT_LIB = 1, OPT_NAME, OPT_REPS, OPT_MIN_MS, OPT_THREADS, OPT_HELP };

static cli_option options[] = {
    {OPT_LIB, "lib", "DIR", "the folder heron-lib wrote (its --out)", ""},
    {OPT_NAME, "name", "NAME", "the library's name (its --name)", ""},
    {OPT_REPS, "reps", "N", "timed repeats of each runner", "15"},
    {OPT_MIN_MS, "min-ms", "MS", "grow the calls per repeat to this long",
     "50"},
    {OPT_THREADS, "threads", "N", "OpenMP threads of the kernels",
     "OMP_NUM_THREADS or one per core"},
    {OPT_HELP, "help", NULL, "show this help", ""},
    {0, NULL, NULL, NULL, ""}};

typedef struct call_ctx {
  void *fn; /* the library's function, or the kernel */
  int kernel;
  int nbuf;
  void *bufs[8];
} call_ctx;

static void call(void *self) {
  call_ctx *c = self;
  if (c->kernel) {
    ((void (*)(void *const *))c->fn)(c->bufs);
    return;
  }
  void **b = c->bufs;
  if (c->nbuf == 3)
    ((int (*)(void *, void *, void *))c->fn)(b[0], b[1], b[2]);
  else
    ((int (*)(void *, void *, void *, void *))c->fn)(b[0], b[1], b[2], b[3]);
}

/* Compiles src (the kernel's file in DIR/src) into tmp/k.so with flags. */
static void *load_kernel(const char *src, const char *flags, const char *tmp,
                         int i) {
  const char *cc = getenv("CC");
  const char *so = cli_printf("%s/k%d.so", tmp, i);
  const char *cmd =
      cli_printf("%s %s -o %s %s", cc && *cc ? cc : "cc", flags, so, src);
  if (system(cmd) != 0) {
    fprintf(stderr, "bench_lib: cannot build %s: %s\n", src, cmd);
    return NULL;
  }
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    fprintf(stderr, "bench_lib: %s\n", dlerror());
  return h;
}

/* The kernel as heron-search measures it: its config through a
 * heron_measurer (built, run in the isolated worker, checked and timed by
 * the harness that tuned it).  Timed by its own clock: each call of
 * measure_timed is one measurement, whose median seconds per call stand
 * for `number` calls. */
typedef struct measured {
  heron_measurer *m;
  int64_t *cfg;
  const char *what; /* the task, for messages */
} measured;

static double measure_timed(void *self, long long number) {
  measured *ms = self;
  heron_measurement out;
  char *why = NULL;
  int env = 0;
  heron_error err;
  heron_error_clear(&err);
  if (heron_measurer_run(ms->m, ms->cfg, 1, &out, &why, &env, &err) !=
          HERON_OK ||
      out.status != HERON_MEAS_OK) {
    fprintf(stderr, "bench_lib: %s: heron-search's measurement: %s\n", ms->what,
            why ? why : err.text);
    free(why);
    return -1;
  }
  free(why);
  return out.seconds * (double)number;
}

/* Opens ms for task t and the knob values of `config` (an object, the
 * log's), completed as heron-space --config-json completes them; returns
 * 0, or 1 after a message. */
static int open_measured(measured *ms, const heron_task *t, json_t *config,
                         int threads) {
  const heron_space *sp = heron_task_space(t);
  int nv = heron_space_nvars(sp);
  ms->what = heron_task_key(t);
  ms->cfg = malloc((size_t)nv * sizeof *ms->cfg);
  for (int v = 0; v < nv; v++)
    ms->cfg[v] = HERON_UNSET;
  const char *knob;
  if (cli_config_from_json(sp, config, ms->cfg, &knob) != 0) {
    fprintf(stderr, "bench_lib: %s: '%s' is not a knob of its space\n",
            ms->what, knob);
    return 1;
  }
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  heron_error err;
  heron_error_clear(&err);
  if (heron_space_validate(sp, &rng, ms->cfg, ms->cfg, &err) != HERON_OK) {
    fprintf(stderr, "bench_lib: %s: its config is not valid: %s\n", ms->what,
            err.text);
    return 1;
  }
  heron_tune_options to; /* for the measuring defaults heron-search uses */
  heron_tune_options_init(&to);
  to.measure.threads = threads;
  if (heron_measurer_open(t, &to.measure, 1, &ms->m, &err) != HERON_OK) {
    fprintf(stderr, "bench_lib: %s: cannot open a measurer: %s\n", ms->what,
            err.text);
    ms->m = NULL;
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  cli_set_prog("bench_lib");
  const char *dir = NULL, *name = NULL;
  int reps = 15, threads = 0;
  double min_ms = 50;
  cli_parser p;
  cli_parser_init(&p, options, argc, argv);
  const char *val;
  const cli_option *opt;
  int id;
  while ((id = cli_next(&p, &val, &opt)) != 0) {
    switch (id) {
    case OPT_LIB:
      dir = val;
      break;
    case OPT_NAME:
      name = val;
      break;
    case OPT_REPS:
      reps = (int)cli_int("--reps", val, 1, CLI_TIME_MAX_REPEATS);
      break;
    case OPT_MIN_MS:
      min_ms = cli_double("--min-ms", val, 0, 1e6);
      break;
    case OPT_THREADS:
      threads = (int)cli_int("--threads", val, 1, 4096);
      break;
    case OPT_HELP:
      printf("Usage: bench_lib --lib DIR --name NAME [options]\n\n");
      cli_print_wrapped(stdout,
                        "Times each kernel of a heron-lib library through "
                        "the library and as heron-search builds it, in the "
                        "same run, and prints the ratio.",
                        0, 0);
      printf("\nOptions:\n");
      cli_print_options(stdout, options);
      return 0;
    }
  }
  if (!dir || !name)
    cli_usage("--lib and --name are required");
  if (threads)
    omp_set_num_threads(threads);
  json_t *root =
      cli_json_load("--lib", cli_printf("%s/share/%s/kernels.json", dir, name));
  json_t *kernels = json_object_get(root, "kernels");
  size_t nk = json_array_size(kernels);
  char tmp[] = "/tmp/bench_lib.XXXXXX";
  if (!mkdtemp(tmp)) {
    perror("bench_lib: mkdtemp");
    return 1;
  }
  /* heron-search's own measurements go through the build cache (a copy of
   * the kernel's build instead of a compile each time) unless one is set. */
  setenv("HERON_BUILD_CACHE", cli_printf("%s/cache", tmp), 0);
  /* Each task, its config and its measurer, opened before the first
   * OpenMP call starts threads (a measurer forks its runner at open). */
  heron_task **tasks = calloc(nk ? nk : 1, sizeof *tasks);
  measured *ms = calloc(nk ? nk : 1, sizeof *ms);
  int rc = 0;
  for (size_t i = 0; i < nk; i++) {
    json_t *k = json_array_get(kernels, i);
    const char *key = json_string_value(json_object_get(k, "task"));
    cli_task_args a;
    if (!key || cli_task_args_of_key(key, &a)) {
      fprintf(stderr, "bench_lib: %s: not an op's task\n", key ? key : "?");
      rc = 1;
      continue;
    }
    tasks[i] = cli_make_task(&a);
    if (open_measured(&ms[i], tasks[i], json_object_get(k, "config"),
                      threads ? threads : omp_get_max_threads()) != 0)
      rc = 1;
  }
  void *lib = dlopen(cli_printf("%s/lib/lib%s.so", dir, name), RTLD_NOW);
  if (!lib)
    cli_usage("--lib %s: %s", dir, dlerror());
  printf("| kernel | library (ms) | kernel alone (ms) | heron-search (ms) | "
         "library / kernel alone | library / heron-search | recorded (ms) "
         "|\n| --- | --: | --: | --: | --: | --: | --: |\n");
  double logsum[2] = {0, 0};
  int n = 0;
  for (size_t i = 0; i < nk; i++) {
    json_t *k = json_array_get(kernels, i);
    const char *fn = json_string_value(json_object_get(k, "function"));
    const char *flags = json_string_value(json_object_get(k, "cflags"));
    double rec = json_number_value(json_object_get(k, "seconds"));
    heron_task *t = tasks[i];
    if (!t || !ms[i].m)
      continue;
    call_ctx lc = {dlsym(lib, fn), 0, heron_task_nbuffers(t), {0}};
    call_ctx kc = lc;
    void *kh = load_kernel(cli_printf("%s/src/%s_k%zu.c", dir, name, i),
                           cli_printf("%s -shared", flags), tmp, (int)i);
    kc.kernel = 1;
    kc.fn = kh ? dlsym(kh, cli_printf("%s__k%zu_kernel", name, i)) : NULL;
    if (!lc.fn || !kc.fn) {
      fprintf(stderr, "bench_lib: %s: not found\n", fn);
      rc = 1;
      continue;
    }
    size_t bytes[8];
    int out = 0;
    for (int b = 0; b < lc.nbuf; b++) {
      heron_task_buffer info;
      heron_task_buffer_info(t, b, &info, NULL);
      size_t e = 1;
      for (int d = 0; d < info.ndim; d++)
        e *= (size_t)info.dims[d];
      bytes[b] = e * (size_t)info.elem_bytes;
      lc.bufs[b] = aligned_alloc(64, (bytes[b] + 63) / 64 * 64);
      kc.bufs[b] = info.output ? aligned_alloc(64, (bytes[b] + 63) / 64 * 64)
                               : lc.bufs[b];
      if (info.output)
        out = b;
      unsigned char *c = lc.bufs[b];
      for (size_t x = 0; x < bytes[b]; x++)
        c[x] =
            info.elem_bytes == 4 && x % 4 == 3 ? 0x3e : (unsigned char)(x * 7);
    }
    cli_runner rs[3];
    memset(rs, 0, sizeof rs);
    snprintf(rs[0].name, sizeof rs[0].name, "library");
    rs[0].call = call;
    rs[0].self = &lc;
    snprintf(rs[1].name, sizeof rs[1].name, "kernel");
    rs[1].call = call;
    rs[1].self = &kc;
    snprintf(rs[2].name, sizeof rs[2].name, "heron-search");
    rs[2].timed = measure_timed;
    rs[2].self = &ms[i];
    /* Each side's idle OpenMP threads spin for a while after a call (this
     * process's after the library and the kernel, the measuring worker's
     * after heron-search's measurement): on several threads the next
     * runner waits for them to sleep, or it shares its cores with them. */
    for (int r = 0; r < 3; r++)
      rs[r].spins = 1;
    call(&lc);
    call(&kc);
    int same = !memcmp(lc.bufs[out], kc.bufs[out], bytes[out]);
    if (cli_time_runners(rs, 3, reps, min_ms * 1e-3, omp_get_max_threads()) !=
        0) {
      fprintf(stderr, "bench_lib: %s: heron-search's measurement failed\n", fn);
      rc = 1;
    } else {
      /* The library is runner 0, so the others' paired ratios are theirs
       * over the library's, round by round: the inverse (its quartiles
       * swapped) is the library's over theirs. */
      printf("| %s%s | %.4f | %.4f | %.4f | %.3f [%.3f, %.3f] | %.3f [%.3f, "
             "%.3f] | %.4f |\n",
             fn, same ? "" : " (OUTPUTS DIFFER)", rs[0].seconds * 1e3,
             rs[1].seconds * 1e3, rs[2].seconds * 1e3, 1 / rs[1].paired,
             1 / rs[1].paired_q3, 1 / rs[1].paired_q1, 1 / rs[2].paired,
             1 / rs[2].paired_q3, 1 / rs[2].paired_q1, rec * 1e3);
      logsum[0] -= log(rs[1].paired);
      logsum[1] -= log(rs[2].paired);
      n++;
    }
    rc |= !same;
    for (int b = 0; b < lc.nbuf; b++) {
      if (kc.bufs[b] != lc.bufs[b])
        free(kc.bufs[b]);
      free(lc.bufs[b]);
    }
  }
  if (n)
    printf("\ngeometric mean over %d kernels of the library's time (1.0: the "
           "library adds nothing): %.3f of the kernel alone, %.3f of "
           "heron-search's measurement\n",
           n, exp(logsum[0] / n), exp(logsum[1] / n));
  for (size_t i = 0; i < nk; i++) {
    if (ms[i].m)
      heron_measurer_close(ms[i].m);
    free(ms[i].cfg);
    if (tasks[i])
      heron_task_free(tasks[i]);
  }
  free(ms);
  free(tasks);
  json_decref(root);
  if (system(cli_printf("rm -rf %s", tmp)) != 0)
    fprintf(stderr, "bench_lib: could not remove %s\n", tmp);
  cli_free_all();
  return rc;
}
