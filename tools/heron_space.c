/* tools/heron_space.c - heron-space: look at a task's search space.
 *
 *     heron-space --op gemm --describe
 *     heron-space --op gemm --shape 1024,1024,1024 --dump
 *     heron-space --op gemm --shape 1024,1024,1024 --count --sample 100000
 *     heron-space --op gemm --shape 256,256,256 --source --config-json '{...}'
 *
 * Every action works through the public space API only, so what this tool
 * shows is what a strategy plugin sees.  Actions run in the order describe,
 * dump, count, sample, source, whatever the order of the flags.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "timing.h"

enum {
  OPT_DESCRIBE = CLI_OPT_TASK_END,
  OPT_DUMP,
  OPT_COUNT,
  OPT_COUNT_LIMIT,
  OPT_SAMPLE,
  OPT_PRINT,
  OPT_SOURCE,
  OPT_CONFIG_JSON,
  OPT_SEED,
  OPT_HELP,
  OPT_VERSION
};

static cli_option options[] = {
    CLI_TASK_OPTIONS("operator (see the list below)",
                     "the op's dimensions in order (--describe shows them)"),
    {OPT_DESCRIBE, "describe", NULL,
     "print the op's dimension names and order and, with --shape, the "
     "task's template",
     ""},
    {OPT_DUMP, "dump", NULL,
     "print every variable (knob or auxiliary, domain) and every constraint",
     ""},
    {OPT_COUNT, "count", NULL,
     "count the valid configs (exact up to --count-limit, else an estimate)",
     ""},
    {OPT_COUNT_LIMIT, "count-limit", "N",
     "largest count that is enumerated exactly", "1e6"},
    {OPT_SAMPLE, "sample", "N",
     "draw N random valid configs (by --sampler), time the sampler, check "
     "every sample",
     ""},
    {OPT_PRINT, "print", NULL,
     "with --sample: print the samples on stdout, one JSON object of knob "
     "values (knob name -> value) a line; the report goes to stderr",
     ""},
    {OPT_SOURCE, "source", NULL,
     "print the kernel source of a random config (or of --config-json)", ""},
    {OPT_CONFIG_JSON, "config-json", "JSON",
     "with --source: a partial config {\"knob\": value, ...}, completed by "
     "the solver",
     ""},
    {OPT_SEED, "seed", "N", "random seed of --count, --sample and --source",
     "1"},
    {OPT_HELP, "help", NULL, "print this help and exit", ""},
    {OPT_VERSION, "version", NULL, "print the version and exit", ""},
    {0, NULL, NULL, NULL, ""}};

typedef struct space_args {
  cli_task_args task;
  int describe, dump, count, source, print;
  long long sample;
  double setup_s; /* building the task (counting for --sampler uniform) */
  double count_limit;
  uint64_t seed;
  const char *config_json;
} space_args;

static void usage(FILE *out) {
  fprintf(out,
          "Usage: heron-space --op NAME [--shape D1,D2,...] ACTION...\n"
          "\n"
          "Shows the constrained search space of a task, as strategies see "
          "it.  Give at\n"
          "least one action (--describe, --dump, --count, --sample N, "
          "--source); they run\n"
          "in that order.  Every action but --describe needs --shape.\n"
          "\n"
          "Options (--flag VALUE and --flag=VALUE both work):\n");
  cli_print_options(out, options);
  fprintf(out, "\nOperators:\n");
  for (int i = 0; i < heron_op_count(); i++) {
    const char *op = heron_op_name(i);
    const char *summary = heron_op_summary(op);
    char dims[256];
    fprintf(out, "  %-6s  ", op);
    cli_print_wrapped(out,
                      cli_printf("%s (--shape %s)", summary ? summary : "",
                                 cli_op_dims_text(op, dims, sizeof dims)),
                      10, 10);
  }
  fprintf(out, "\n"
               "--sample runs on one core (heron_space_sample is "
               "single-threaded) and checks\n"
               "each sample with a checker independent of the solver: it "
               "evaluates every\n"
               "constraint from its raw operands (heron_space_constraint_get) "
               "and checks that\n"
               "every variable lies in its domain.\n"
               "\n"
               "Exit status: 0 done; 1 the library failed or a sample was not "
               "valid; 2 a\n"
               "usage error.\n");
}

static void parse_args(int argc, char **argv, space_args *a) {
  cli_parser p;
  const char *val;
  const cli_option *o;
  int id;
  cli_parser_init(&p, options, argc, argv);
  while ((id = cli_next(&p, &val, &o)) != 0) {
    const char *flag = cli_printf("--%s", o->name);
    if (cli_task_flag(&a->task, id, val))
      continue;
    switch (id) {
    case OPT_DESCRIBE:
      a->describe = 1;
      break;
    case OPT_DUMP:
      a->dump = 1;
      break;
    case OPT_COUNT:
      a->count = 1;
      break;
    case OPT_COUNT_LIMIT:
      a->count_limit = cli_double(flag, val, 1, 1e300);
      break;
    case OPT_SAMPLE:
      a->sample = cli_int(flag, val, 1, INT_MAX);
      break;
    case OPT_PRINT:
      a->print = 1;
      break;
    case OPT_SOURCE:
      a->source = 1;
      break;
    case OPT_CONFIG_JSON:
      a->config_json = val;
      break;
    case OPT_SEED:
      a->seed = cli_u64(flag, val);
      break;
    case OPT_HELP:
      usage(stdout);
      exit(CLI_EXIT_OK);
    case OPT_VERSION:
      printf("heron-space (Heron-C) %s\n", HERON_VERSION_STRING);
      exit(CLI_EXIT_OK);
    default:
      break;
    }
  }
}

/* ---- --describe ---------------------------------------------------------- */

static void describe_op(const char *op) {
  const char *const *names;
  int n = 0;
  const char *summary = heron_op_summary(op);
  heron_op_dims(op, &names, &n, NULL);
  printf("op %s: %s\n", op, summary ? summary : "");
  printf("dimensions (--shape order):");
  for (int i = 0; i < n; i++)
    printf(" %s", names[i]);
  printf("\n");
}

static void describe_task(const heron_task *t) {
  const heron_space *sp = heron_task_space(t);
  heron_error err;
  char *text = NULL;
  printf("task %s: %.6g FLOP per run\n", heron_task_key(t),
         heron_task_flops(t));
  printf("space: %d variables (%d knobs), %d constraints\n",
         heron_space_nvars(sp), heron_space_nknobs(sp),
         heron_space_nconstraints(sp));
  heron_error_clear(&err);
  int rc = heron_task_describe(t, &text, &err);
  if (rc != HERON_OK)
    cli_die(CLI_EXIT_FAILURE, rc, &err, "--describe");
  fputs(text, stdout);
  if (text[0] && text[strlen(text) - 1] != '\n')
    fputc('\n', stdout);
  heron_free(text);
}

/* ---- --t1 with --t4 ------------------------------------------------------ */

/* The T1 restrictions must admit exactly the configs the T4 file measured:
 * says so, or lists the differences.  0 when the sets are equal. */
static int compare_t4(const heron_task *t) {
  long long both = 0, only_space = 0, only_file = 0;
  char *report = NULL;
  heron_error err;
  heron_error_clear(&err);
  int rc = heron_task_compare_recorded(t, &both, &only_space, &only_file,
                                       &report, &err);
  if (rc != HERON_OK)
    cli_die(CLI_EXIT_FAILURE, rc, &err,
            "comparing the T1 space with its T4 file");
  if (only_space == 0 && only_file == 0)
    printf("T4 file: the same %lld configs as the T1 space\n", both);
  else
    printf("T4 file: differs from the T1 space: %lld configs in both, %lld in "
           "the space only, %lld in the T4 file only\n%s",
           both, only_space, only_file, report ? report : "");
  heron_free(report);
  return only_space == 0 && only_file == 0 ? 0 : -1;
}

/* ---- --dump -------------------------------------------------------------- */

static const char *kind_name(int kind) {
  switch (kind) {
  case HERON_C_PROD:
    return "PROD";
  case HERON_C_SUM:
    return "SUM";
  case HERON_C_EQ:
    return "EQ";
  case HERON_C_NE:
    return "NE";
  case HERON_C_LE:
    return "LE";
  case HERON_C_LT:
    return "LT";
  case HERON_C_IN:
    return "IN";
  case HERON_C_SELECT:
    return "SELECT";
  case HERON_C_EXPR:
    return "EXPR";
  default:
    return "?";
  }
}

static void dump_space(const heron_space *sp) {
  int nv = heron_space_nvars(sp), nc = heron_space_nconstraints(sp);
  printf("variables: %d (%d knobs)\n", nv, heron_space_nknobs(sp));
  for (int v = 0; v < nv; v++) {
    int64_t lo = 0, hi = 0;
    const int64_t *vals = NULL;
    int nvals = 0;
    heron_space_var_domain(sp, v, &lo, &hi, &vals, &nvals);
    printf("  %4d %-4s %-28s ", v,
           heron_space_var_is_knob(sp, v) == 1 ? "knob" : "aux",
           heron_space_var_name(sp, v));
    if (vals) {
      printf("{");
      for (int i = 0; i < nvals; i++)
        printf("%s%" PRId64, i ? ", " : "", vals[i]);
      printf("}\n");
    } else {
      printf("[%" PRId64 ", %" PRId64 "]\n", lo, hi);
    }
  }
  printf("constraints: %d\n", nc);
  char small[256];
  for (int c = 0; c < nc; c++) {
    int need = heron_space_constraint_str(sp, c, small, sizeof small);
    const char *text = small;
    char *big = NULL;
    if (need >= (int)sizeof small) {
      big = malloc((size_t)need + 1);
      if (big && heron_space_constraint_str(sp, c, big, (size_t)need + 1) >= 0)
        text = big;
    }
    printf("  %4d %-6s %s\n", c, kind_name(heron_space_constraint_kind(sp, c)),
           need < 0 ? "(unprintable)" : text);
    free(big);
  }
}

/* ---- --count ------------------------------------------------------------- */

static void count_space(const heron_space *sp, double limit, uint64_t seed) {
  heron_rng rng;
  heron_error err;
  double count = 0;
  int exact = 0;
  heron_rng_seed(&rng, seed);
  heron_error_clear(&err);
  int rc = heron_space_count(sp, &rng, limit, &count, &exact, &err);
  if (rc != HERON_OK)
    cli_die(CLI_EXIT_FAILURE, rc, &err, "--count");
  if (exact)
    printf("valid configs: %.0f (exact)\n", count);
  else
    printf("valid configs: about %.3g (estimate: more than --count-limit "
           "%g)\n",
           count, limit);
}

/* ---- --sample ------------------------------------------------------------ */

/* 1 when every variable's value lies in its declared domain.  This check
 * reads only the domains, never the constraints, so it does not share a
 * mistake with the solver's own checker. */
static int in_domains(const heron_space *sp, const int64_t *cfg, int *bad) {
  int nv = heron_space_nvars(sp);
  for (int v = 0; v < nv; v++) {
    int64_t lo = 0, hi = 0;
    const int64_t *vals = NULL;
    int nvals = 0;
    heron_space_var_domain(sp, v, &lo, &hi, &vals, &nvals);
    int ok = cfg[v] >= lo && cfg[v] <= hi;
    if (ok && vals) {
      int l = 0, h = nvals - 1;
      ok = 0;
      while (l <= h) {
        int mid = (l + h) / 2;
        if (vals[mid] == cfg[v]) {
          ok = 1;
          break;
        }
        if (vals[mid] < cfg[v])
          l = mid + 1;
        else
          h = mid - 1;
      }
    }
    if (!ok) {
      *bad = v;
      return 0;
    }
  }
  return 1;
}

/* Multiplies with saturation far beyond int64_t, so the checker cannot
 * overflow where the solver's own arithmetic might. */
static __int128 mul_sat(__int128 a, __int128 b) {
  const __int128 lim = (__int128)1 << 100;
  if (a > lim || a < -lim || b > lim || b < -lim)
    return (a < 0) != (b < 0) ? -lim : lim;
  __int128 p = a * b;
  return p > lim ? lim : (p < -lim ? -lim : p);
}

/* Evaluates constraint c from its raw operands with this tool's own
 * arithmetic: the independent checker of --sample, sharing no code with
 * the solver's heron_space_violations. */
static int holds(const heron_space *sp, int c, const int64_t *cfg) {
  int kind = 0, z = 0, nx = 0, cond = -1, nvals = 0;
  const int *xs = NULL;
  const int64_t *vals = NULL;
  if (heron_space_constraint_get(sp, c, &kind, &z, &xs, &nx, &cond, &vals,
                                 &nvals) != HERON_OK)
    return 0;
  if (cond >= 0 && cfg[cond] == 0)
    return 1;
  __int128 acc;
  switch (kind) {
  case HERON_C_PROD:
    acc = 1;
    for (int i = 0; i < nx; i++)
      acc = mul_sat(acc, cfg[xs[i]]);
    return acc == cfg[z];
  case HERON_C_SUM:
    acc = 0;
    for (int i = 0; i < nx; i++)
      acc += cfg[xs[i]];
    return acc == cfg[z];
  case HERON_C_EQ:
    return cfg[z] == cfg[xs[0]];
  case HERON_C_NE:
    return cfg[z] != cfg[xs[0]];
  case HERON_C_LE:
    return cfg[z] <= cfg[xs[0]];
  case HERON_C_LT:
    return cfg[z] < cfg[xs[0]];
  case HERON_C_IN:
    for (int i = 0; i < nvals; i++)
      if (vals[i] == cfg[z])
        return 1;
    return 0;
  case HERON_C_SELECT: {
    int64_t sel = cfg[xs[0]];
    return sel >= 0 && sel < nx - 1 && cfg[z] == cfg[xs[1 + sel]];
  }
  }
  return 0;
}

/* The number of constraints cfg violates, by the independent checker; the
 * first violated one goes to *which. */
static int violations(const heron_space *sp, const int64_t *cfg, int *which) {
  int n = 0, nc = heron_space_nconstraints(sp);
  /* A restriction written as an expression (a T1 file's) has no operands
   * this tool could evaluate on its own: those are checked by the
   * library's evaluator, the others independently. */
  int *lib = malloc((size_t)(nc > 0 ? nc : 1) * sizeof *lib);
  int nlib = lib ? heron_space_violations(sp, cfg, lib, nc) : 0;
  for (int c = 0; c < nc; c++) {
    int ok;
    if (heron_space_constraint_kind(sp, c) == HERON_C_EXPR) {
      ok = 1;
      for (int i = 0; i < nlib && i < nc; i++)
        ok &= lib[i] != c;
    } else {
      ok = holds(sp, c, cfg);
    }
    if (!ok && n++ == 0)
      *which = c;
  }
  free(lib);
  return n;
}

static int cmp_key(const void *a, const void *b) {
  return strcmp((const char *)a, (const char *)b);
}

/* This process's CPU time in seconds. */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Prints sample cfg as one JSON object of knob values. */
static void print_sample(const heron_space *sp, const int64_t *cfg) {
  json_t *o = json_object();
  for (int i = 0; i < heron_space_nknobs(sp); i++) {
    int v = heron_space_knob(sp, i);
    json_object_set_new(o, heron_space_var_name(sp, v),
                        json_integer((json_int_t)cfg[v]));
  }
  char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  if (line)
    puts(line);
  free(line);
}

/* Says how the samples are drawn (heron_space_sampler). */
static void print_sampler(FILE *out, const heron_space *sp, double setup_s) {
  int exact = 0;
  double count = -1;
  heron_sampler m = heron_space_sampler(sp, &exact, &count);
  if (m == HERON_SAMPLER_HERON)
    fprintf(out, "sampler: heron (knob by knob through the constraint "
                 "solver; not uniform over the valid configs)\n");
  else if (exact)
    fprintf(out,
            "sampler: uniform, exact: every one of the %.0f valid configs "
            "equally likely (space counted in %.3f s)\n",
            count, setup_s);
  else
    fprintf(out, "sampler: uniform, not exact: the space is too large to "
                 "count, values are weighed by estimated counts (close to "
                 "uniform)\n");
}

/* Draws n samples (timed), then checks them (untimed); with `print` writes
 * them to stdout and the report to stderr.  Returns the exit status: 1
 * when a draw failed or a sample is not valid. */
static int sample_space(const heron_space *sp, long long n, uint64_t seed,
                        int print, double setup_s) {
  int nv = heron_space_nvars(sp);
  int64_t *cfgs = malloc((size_t)n * (size_t)nv * sizeof *cfgs);
  char(*keys)[17] = malloc((size_t)n * sizeof *keys);
  if (!cfgs || !keys) {
    fprintf(stderr, "%s: --sample: out of memory for %lld samples\n",
            cli_prog(), n);
    exit(CLI_EXIT_FAILURE);
  }
  heron_rng rng;
  heron_error err;
  heron_rng_seed(&rng, seed);
  heron_error_clear(&err);
  long long got = 0, failed = 0;
  int first_rc = HERON_OK;
  double t0 = cli_now(), c0 = cpu_now();
  for (long long i = 0; i < n; i++) {
    int rc = heron_space_sample(sp, &rng, cfgs + got * nv, &err);
    if (rc == HERON_OK)
      got++;
    else if (failed++ == 0)
      first_rc = rc;
  }
  double dt = cli_now() - t0, dc = cpu_now() - c0;

  long long satisfy = 0, in_domain = 0;
  int reported = 0;
  for (long long i = 0; i < got; i++) {
    const int64_t *cfg = cfgs + i * nv;
    int which = -1, bad = -1;
    int nviol = violations(sp, cfg, &which);
    if (nviol == 0)
      satisfy++;
    if (in_domains(sp, cfg, &bad))
      in_domain++;
    if ((nviol != 0 || bad >= 0) && reported++ < 3) {
      char text[256] = "";
      if (which >= 0)
        heron_space_constraint_str(sp, which, text, sizeof text);
      fprintf(stderr, "%s: sample %lld is not valid:%s%s%s%s\n", cli_prog(),
              i + 1, nviol ? " violates " : "", nviol ? text : "",
              bad >= 0 ? " variable out of its domain: " : "",
              bad >= 0 ? heron_space_var_name(sp, bad) : "");
    }
    heron_space_key(sp, cfg, keys[i], sizeof keys[i]);
  }
  qsort(keys, (size_t)got, sizeof *keys, cmp_key);
  long long distinct = got ? 1 : 0;
  for (long long i = 1; i < got; i++)
    distinct += strcmp(keys[i], keys[i - 1]) != 0;

  FILE *rep = print ? stderr : stdout;
  for (long long i = 0; print && i < got; i++)
    print_sample(sp, cfgs + i * nv);
  print_sampler(rep, sp, setup_s);
  fprintf(rep,
          "%lld samples in %.3f s: %.0f samples/s on one core; checked: "
          "%lld/%lld satisfy every constraint\n",
          got, dt, dt > 0 ? (double)got / dt : 0.0, satisfy, got);
  fprintf(rep,
          "domains: %lld/%lld samples have every variable in its domain; "
          "%lld distinct configs (by knob key)\n",
          in_domain, got, distinct);
  /* What a busy machine cannot slow down: the samples per second of this
   * process's own CPU time. */
  fprintf(rep, "cpu time: %.3f s, %.0f samples/s of CPU time\n", dc,
          dc > 0 ? (double)got / dc : 0.0);
  if (failed)
    cli_report(first_rc, &err, "--sample: %lld of %lld draws failed", failed,
               n);
  free(cfgs);
  free(keys);
  return failed || satisfy != got || in_domain != got ? CLI_EXIT_FAILURE
                                                      : CLI_EXIT_OK;
}

/* ---- --source ------------------------------------------------------------ */

/* Reads --config-json into a partial config: named variables set, the rest
 * HERON_UNSET. */
static void partial_from_json(const heron_space *sp, const char *text,
                              int64_t *partial) {
  json_error_t jerr;
  json_t *root = json_loads(text, 0, &jerr);
  if (!root)
    cli_usage("--config-json: not JSON (column %d: %s)", jerr.column,
              jerr.text);
  if (!json_is_object(root))
    cli_usage("--config-json: expected an object {\"knob\": value, ...}");
  const char *k;
  int rc = cli_config_from_json(sp, root, partial, &k);
  if (rc == 1)
    cli_usage("--config-json: '%s' is not a variable of this space "
              "(heron-space --dump lists them)",
              k);
  if (rc == 2)
    cli_usage("--config-json: '%s' must be an integer", k);
  json_decref(root);
}

static void print_source(const heron_task *t, const char *config_json,
                         uint64_t seed) {
  const heron_space *sp = heron_task_space(t);
  int nv = heron_space_nvars(sp);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  if (!cfg)
    exit(CLI_EXIT_FAILURE);
  heron_rng rng;
  heron_error err;
  heron_rng_seed(&rng, seed);
  heron_error_clear(&err);
  int rc;
  if (config_json) {
    for (int v = 0; v < nv; v++)
      cfg[v] = HERON_UNSET;
    partial_from_json(sp, config_json, cfg);
    rc = heron_space_validate(sp, &rng, cfg, cfg, &err);
    if (rc != HERON_OK)
      cli_die(CLI_EXIT_USAGE, rc, &err,
              "--config-json: cannot be completed to a valid config");
  } else {
    rc = heron_space_sample(sp, &rng, cfg, &err);
    if (rc != HERON_OK)
      cli_die(CLI_EXIT_FAILURE, rc, &err, "--source");
  }
  char *src = NULL;
  rc = heron_task_source(t, cfg, &src, &err);
  if (rc != HERON_OK)
    cli_die(CLI_EXIT_FAILURE, rc, &err, "--source");
  /* The config goes with the source as a comment, so the output stays
   * compilable and says what it is: first for C, after the source for
   * CUDA, whose first line must stay the launch line that the NVRTC build
   * reads. */
  int cuda = heron_target_is_gpu(heron_task_target(t));
  if (cuda)
    fputs(src, stdout);
  printf("/* %s, config:", heron_task_key(t));
  for (int i = 0; i < heron_space_nknobs(sp); i++) {
    int v = heron_space_knob(sp, i);
    printf(" %s=%" PRId64, heron_space_var_name(sp, v), cfg[v]);
  }
  printf(" */\n");
  if (!cuda)
    fputs(src, stdout);
  heron_free(src);
  free(cfg);
}

int main(int argc, char **argv) {
  space_args a;
  memset(&a, 0, sizeof a);
  a.count_limit = 1e6;
  a.seed = 1;
  cli_set_prog("heron-space");
  parse_args(argc, argv, &a);

  if (!a.describe && !a.dump && !a.count && !a.sample && !a.source)
    cli_usage("nothing to do: give --describe, --dump, --count, --sample N or "
              "--source (see --help)");
  if (a.config_json && !a.source)
    cli_usage("--config-json: only used with --source");
  if (a.print && !a.sample)
    cli_usage("--print: only used with --sample N");
  cli_check_task(&a.task);
  if (a.describe && !a.task.t1)
    describe_op(a.task.op);
  /* --describe alone needs no shape: it is how one learns the shape's
   * dimension order in the first place. */
  if (!a.task.t1 && !a.task.shape && !a.dump && !a.count && !a.sample &&
      !a.source) {
    printf("(give --shape to see the task's template)\n");
    cli_free_all();
    return CLI_EXIT_OK;
  }
  double t0 = cli_now();
  heron_task *t = cli_make_task(&a.task);
  a.setup_s = cli_now() - t0;
  const heron_space *sp = heron_task_space(t);
  int status = CLI_EXIT_OK;
  if (a.describe)
    describe_task(t);
  if (a.dump)
    dump_space(sp);
  if (a.count)
    count_space(sp, a.count_limit, a.seed);
  if (a.count && a.task.t1 && a.task.t4 && compare_t4(t) != 0)
    status = CLI_EXIT_FAILURE;
  if (a.sample &&
      sample_space(sp, a.sample, a.seed, a.print, a.setup_s) != CLI_EXIT_OK)
    status = CLI_EXIT_FAILURE;
  if (a.source)
    print_source(t, a.config_json, a.seed);
  heron_task_free(t);
  cli_free_all();
  return status;
}
