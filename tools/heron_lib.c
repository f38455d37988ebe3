/* tools/heron_lib.c - heron-lib: tuned kernels as a library a program
 * links.
 *
 *     heron-lib --name mylib --out out/mylib --suite configs/suites/models.json
 *     heron-lib --name mylib --out out/mylib --log runs/gemm.jsonl --no-tune
 *
 * From a suite (each task tuned when it has no log yet, its log in
 * OUT/logs/ and resumed by the next run) and from logs given with --log
 * (read, never written), the best kernel of each task goes into
 * OUT/lib/libNAME.a and OUT/lib/libNAME.so, with OUT/include/NAME.h, a
 * pkg-config file, a CMake package and OUT/share/NAME/kernels.json, which
 * traces every kernel to its log record.  Exit status: 0 when the library
 * was built, 1 when tuning, compiling or writing failed, 2 for usage
 * errors (a bad flag, a suite or log that cannot be used), 128 + the
 * signal when stopped (the logs kept, to resume).
 *
 * This file holds the flags, the tasks and their kernels; the library's
 * files are written by heron_lib_write.c and built by heron_lib_build.c
 * (heron_lib.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heron_lib.h"
#include "suite.h"

enum {
  OPT_NAME = CLI_OPT_MEASURE_END,
  OPT_OUT,
  OPT_SUITE,
  OPT_TASKS,
  OPT_LOG,
  OPT_NO_TUNE,
  OPT_FALLBACK,
  OPT_STRATEGY,
  OPT_PARAM,
  OPT_MODEL,
  OPT_MODEL_PARAM,
  OPT_TRIALS,
  OPT_SEED,
  OPT_BATCH,
  OPT_JOBS,
  OPT_QUIET,
  OPT_CUDA_IMAGE,
  OPT_HELP
};

static cli_option options[] = {
    {OPT_NAME, "name", "NAME",
     "the library's name: a C identifier, the prefix of every function "
     "(NAME_sgemm) and the file names (libNAME.so, NAME.h)",
     ""},
    {OPT_OUT, "out", "DIR",
     "where the library goes: include/, lib/, share/, src/, and logs/ for "
     "the tasks tuned here",
     ""},
    {OPT_SUITE, "suite", "FILE",
     "the tasks (configs/suites/*.json): each gets its --log's kernel, or is "
     "tuned into DIR/logs/ (resumed when that log exists)",
     ""},
    {OPT_TASKS, "tasks", "A,B,...", "only these tasks of the suite", "all"},
    {OPT_LOG, "log", "FILE",
     "a tuning log (heron-search --log) whose best kernel goes into the "
     "library; repeatable.  Read, never written",
     ""},
    {OPT_NO_TUNE, "no-tune", NULL,
     "build from the logs alone: a task without a log is an error", ""},
    {OPT_FALLBACK, "fallback", "none|cblas|onednn",
     "what NAME_sgemm and NAME_sgemv do for a shape no kernel was tuned "
     "for: return NAME_ENOTUNED, or call that library (loaded when first "
     "needed)",
     "none"},
    {OPT_STRATEGY, "strategy", "NAME|PATH", "search strategy of the tuning",
     "genetic"},
    {OPT_PARAM, "param", "KEY=VALUE", "strategy parameter; repeatable", ""},
    {OPT_MODEL, "model", "NAME|PATH", "cost-model plugin", "none"},
    {OPT_MODEL_PARAM, "model-param", "KEY=VALUE",
     "cost-model parameter; repeatable", ""},
    {OPT_TRIALS, "trials", "N", "trials per task, resumed ones included",
     "100"},
    {OPT_SEED, "seed", "N", "random seed of the strategy", ""},
    {OPT_BATCH, "batch", "N", "configs measured per round", ""},
    {CLI_OPT_DTYPE, "dtype", "TYPE",
     "element type of the suite's tasks: fp32, int8 or bf16 (cpu), fp16 "
     "(cuda)",
     "the suite's"},
    {CLI_OPT_TARGET, "target", "NAME",
     "target of the suite's tasks: cpu, amx, or cuda (tuned on this "
     "machine's GPU)",
     "the suite's, else cpu"},
    {CLI_OPT_SM, "sm", "N",
     "cuda: compute capability x 10 the cubins are built for (90 for "
     "H100/H200); the tasks of logs too",
     "--hw's, else the GPU's, else 80"},
    {CLI_OPT_HW, "hw", "NAME|FILE",
     "hardware description the kernels are generated for (configs/hw/)",
     "this machine"},
    {CLI_OPT_EPILOGUE, "epilogue", "LIST",
     "fused epilogue of the suite's tasks that name none: bias, relu or "
     "bias,relu",
     "none"},
    CLI_MEASURE_OPTIONS,
    {OPT_JOBS, "jobs", "N", "parallel compiles of the library", "one per core"},
    {OPT_QUIET, "quiet", NULL, "no progress lines, only errors and the table",
     ""},
    {OPT_CUDA_IMAGE, "cuda-image", "cubin|host",
     "what a cuda kernel's launcher embeds: its cubin (NVRTC), or, as a test "
     "aid, its CPU emulation as a host shared object that only the tests' "
     "fake driver (HERON_LIBCUDA) can load",
     "cubin"},
    {OPT_HELP, "help", NULL, "show this help", ""},
    {0, NULL, NULL, NULL, ""}};

static void usage(void) {
  printf("Usage: heron-lib --name NAME --out DIR [--suite FILE] [--log "
         "FILE]...\n"
         "                 [--no-tune] [--fallback none|cblas|onednn] "
         "[--strategy S --trials N ...]\n\n");
  cli_print_wrapped(
      stdout,
      "Builds the best kernels of tuned tasks into a library a program links "
      "(cpu target: fp32, int8, bf16; cuda: fp16 on the Tensor Cores).  "
      "DIR/include/NAME.h declares one "
      "function per kernel, named after its op, type and shape "
      "(NAME_gemm_f32_384x768x3072), and per op one function that takes the "
      "shape at run time and calls the kernel tuned for it (NAME_sgemm, "
      "NAME_sgemv, NAME_c2d_f32, ...), returning NAME_ENOTUNED for another "
      "shape.  DIR/lib holds libNAME.a, libNAME.so (exporting the header's "
      "names only), libNAME_blas.so (a BLAS shim for LD_PRELOAD: its "
      "cblas_sgemm, cblas_sgemv, sgemm_ and sgemv_ run the tuned kernels "
      "where they match), pkgconfig/NAME.pc and cmake/NAME/; "
      "DIR/share/NAME/kernels.json traces each kernel to its log record.  "
      "A cuda kernel's function takes device pointers and the caller's "
      "stream; its cubin, built by NVRTC for the task's SM, is embedded in "
      "the library and loaded once through the driver API (libcuda.so.1, "
      "opened at run time).  "
      "Tasks of --suite without a --log are tuned first, each into "
      "DIR/logs/, resumed by the next run; the same logs give the same "
      "library, byte for byte.",
      0, 0);
  printf("\nOptions (--flag VALUE and --flag=VALUE both work):\n");
  cli_print_options(stdout, options);
  printf("\nExit status: 0 built, 1 a tuning, compile or write failure, 2 a "
         "usage error,\n130/143 stopped by SIGINT/SIGTERM (logs kept).\n"
         "Manual: docs/tools/heron-lib.md\n");
}

/* ---- Names --------------------------------------------------------------- */

static int c_identifier(const char *s) {
  if (!s[0] || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
    return 0;
  for (const char *c = s; *c; c++)
    if (!isalnum((unsigned char)*c) && *c != '_')
      return 0;
  return 1;
}

/* "f32" for fp32: the type's short form in function names. */
static const char *dtype_short(const char *dtype) {
  return !strcmp(dtype, "fp32")   ? "f32"
         : !strcmp(dtype, "int8") ? "i8"
         : !strcmp(dtype, "fp16") ? "f16"
                                  : dtype;
}

/* The epilogue in a name: "bias,relu" -> "_bias_relu". */
static const char *epilogue_suffix(const char *epi) {
  if (!epi[0])
    return "";
  char *s = cli_printf("_%s", epi);
  for (char *c = s; *c; c++)
    if (*c == ',')
      *c = '_';
  return s;
}

/* The kernel's function and its family's dispatching function. */
static void name_kernel(const lib_settings *s, lib_kernel *k) {
  const int64_t *shape;
  int n = heron_task_shape(k->task, &shape);
  const char *op = heron_task_op(k->task);
  const char *dt = dtype_short(heron_task_dtype(k->task));
  const char *epi = epilogue_suffix(heron_task_epilogue(k->task));
  char *dims = cli_strdup("");
  for (int i = 0; i < n; i++)
    dims = cli_printf("%s%s%lld", dims, i ? "x" : "", (long long)shape[i]);
  k->fn = cli_printf("%s_%s_%s_%s%s", s->name, op, dt, dims, epi);
  if (!strcmp(dt, "f32") && !epi[0] && !strcmp(op, "gemm"))
    k->family = cli_printf("%s_sgemm", s->name);
  else if (!strcmp(dt, "f16") && !epi[0] && !strcmp(op, "gemm"))
    k->family = cli_printf("%s_hgemm", s->name);
  else if (!strcmp(dt, "f32") && !epi[0] && !strcmp(op, "gemv"))
    k->family = cli_printf("%s_sgemv", s->name);
  else
    k->family = cli_printf("%s_%s_%s%s", s->name, op, dt, epi);
}

/* ---- Logs ---------------------------------------------------------------- */

/* The longest log line read (a line bomb is refused, not grown into). */
enum { LINE_MAX_BYTES = 1 << 20 };

/* Calls fn(o, lineno, ctx) for each record of the log; returns the number
 * of records.  A file that is not a plain JSON Lines log (gzip, a folder,
 * a FIFO, an over-long line) is a usage error naming it. */
static int each_record(const char *path,
                       int (*fn)(json_t *o, int lineno, void *ctx), void *ctx) {
  struct stat st;
  if (stat(path, &st) != 0)
    cli_usage("--log %s: %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    cli_usage("--log %s: not a regular file", path);
  FILE *f = fopen(path, "rb");
  if (!f)
    cli_usage("--log %s: %s", path, strerror(errno));
  char *line = malloc(LINE_MAX_BYTES + 2);
  if (!line) {
    fclose(f);
    cli_usage("--log %s: out of memory", path);
  }
  int lineno = 0, n = 0, stop = 0;
  while (!stop && fgets(line, LINE_MAX_BYTES + 2, f)) {
    lineno++;
    size_t len = strlen(line);
    if (lineno == 1 && len >= 2 && (unsigned char)line[0] == 0x1f &&
        (unsigned char)line[1] == 0x8b)
      cli_usage("--log %s: a gzip file; give it decompressed (gunzip -k)",
                path);
    if (len > LINE_MAX_BYTES)
      cli_usage("--log %s:%d: a line longer than %d bytes is no log record",
                path, lineno, LINE_MAX_BYTES);
    if (line[strspn(line, " \t\r\n")] == '\0')
      continue;
    json_error_t jerr;
    json_t *o = json_loads(line, 0, &jerr);
    if (!json_is_object(o)) {
      json_decref(o);
      /* An unterminated last line is the trace of a killed writer. */
      if (len && line[len - 1] != '\n')
        break;
      cli_usage("--log %s:%d: not a JSON object (%s)", path, lineno, jerr.text);
    }
    n++;
    stop = fn(o, lineno, ctx);
    json_decref(o);
  }
  free(line);
  fclose(f);
  return n;
}

static int first_task(json_t *o, int lineno, void *ctx) {
  const char *task = json_string_value(json_object_get(o, "task"));
  if (!task)
    cli_usage("--log: record %d has no \"task\"", lineno);
  *(const char **)ctx = cli_strdup(task);
  return 1;
}

/* The ISA level word of a hardware name ("avx2" of "..., avx2 by
 * HERON_CPU_ISA"), or NULL when the name has none (a description file). */
static const char *isa_level(const char *hardware) {
  char model[256], isa[96];
  if (cli_hardware_split(hardware, model, sizeof model, isa, sizeof isa))
    return NULL;
  isa[strcspn(isa, " ,")] = '\0';
  return cli_strdup(isa);
}

typedef struct isa_check {
  const char *path, *want_name, *want;
  int unnamed; /* records that name no hardware */
  int cuda;    /* a GPU's log: the model must be the task's */
} isa_check;

/* A GPU's model: its hardware name up to " (" ("NVIDIA H200" of "NVIDIA
 * H200 (driver 580.159.04)" and of "NVIDIA H200 (no GPU here)"). */
static size_t gpu_model_len(const char *hardware) {
  const char *p = strstr(hardware, " (");
  return p ? (size_t)(p - hardware) : strlen(hardware);
}

static int check_record_isa(json_t *o, int lineno, void *ctx) {
  isa_check *c = ctx;
  const char *hw = json_string_value(json_object_get(o, "hardware"));
  if (!hw) {
    c->unnamed++;
    return 0;
  }
  size_t n = gpu_model_len(hw);
  if (c->cuda &&
      (n != gpu_model_len(c->want_name) || strncmp(hw, c->want_name, n)))
    cli_usage("--log %s:%d was measured on %s, but the library is built for "
              "%s: its cubin would be built for the wrong GPU (give --hw of "
              "the GPU the log was measured on)",
              c->path, lineno, hw, c->want_name);
  if (c->cuda)
    return 0;
  const char *got = isa_level(hw);
  if (c->want && got && strcmp(got, c->want))
    cli_usage("--log %s:%d was measured on %s, but the library is built for "
              "%s: a kernel tuned for %s is the wrong kernel for %s (tune "
              "here, or build the library where the log was measured)",
              c->path, lineno, hw, c->want_name, got, c->want);
  return 0;
}

/* Refuses a log measured on a machine of another ISA level than the
 * kernel's task; warns once when its records name no machine (logs of
 * versions before "hardware" was written). */
static void check_log_machine(const lib_settings *s, const lib_kernel *k) {
  isa_check c = {k->log, k->hardware, k->cuda ? NULL : isa_level(k->hardware),
                 0, k->cuda};
  int n = each_record(k->log, check_record_isa, &c);
  if (c.unnamed && !s->quiet)
    fprintf(stderr,
            "%s: note: %s: %d of its %d records name no machine; taken as "
            "measured on %s\n",
            cli_prog(), k->log, c.unnamed, n, k->hardware);
}

/* ---- Tasks --------------------------------------------------------------- */

static lib_kernel *add_kernel(lib_settings *s) {
  lib_kernel *grown = realloc(s->k, (size_t)(s->nk + 1) * sizeof *grown);
  if (!grown) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  s->k = grown;
  lib_kernel *k = &s->k[s->nk++];
  memset(k, 0, sizeof *k);
  return k;
}

/* Creates k's task from k->args, or exits naming `who`. */
static void make_task(lib_kernel *k, const char *who) {
  heron_error err;
  heron_error_clear(&err);
  int rc = cli_try_task(&k->args, &k->task, &err);
  if (rc)
    cli_usage("%s: %s: %s", who, heron_err_name(rc), err.text);
  const char *target = heron_task_target(k->task);
  if (strcmp(target, "cpu") && strcmp(target, "amx") && strcmp(target, "cuda"))
    cli_usage("%s: target %s: heron-lib builds cpu, amx and cuda kernels", who,
              target);
  k->cuda = !strcmp(target, "cuda");
  if (heron_task_prepack(k->task)[0])
    cli_usage("%s: task %s takes %s prepacked: a library's functions take "
              "the tensors as they are (tune it without --prepack)",
              who, heron_task_key(k->task), heron_task_prepack(k->task));
  k->key = heron_task_key(k->task);
  char hw[256];
  cli_task_hardware(k->task, hw, sizeof hw);
  k->hardware = cli_strdup(hw);
}

static void collect(lib_settings *s) {
  for (int i = 0; i < s->nlogs; i++) {
    const char *key = NULL;
    if (each_record(s->logs[i], first_task, &key) == 0 || !key)
      cli_usage("--log %s: no record", s->logs[i]);
    lib_kernel *k = add_kernel(s);
    if (cli_task_args_of_key(key, &k->args))
      cli_usage("--log %s: task '%s' is not an op's task (op/shape/dtype/"
                "target)",
                s->logs[i], key);
    k->args.hw = s->task.hw;
    k->args.sm = s->task.sm;
    k->log = s->logs[i];
    k->user_log = 1;
    make_task(k, cli_printf("--log %s", s->logs[i]));
    if (strcmp(k->key, key))
      cli_usage("--log %s: its task %s is %s here", s->logs[i], key, k->key);
    for (int j = 0; j < s->nk - 1; j++)
      if (!strcmp(s->k[j].key, k->key))
        cli_usage("--log %s and --log %s both hold task %s: give one log "
                  "per task",
                  s->k[j].log, k->log, k->key);
  }
  if (s->suite) {
    int n = 0;
    cli_suite_task *st =
        cli_suite_load("--suite", s->suite, &s->task, s->tasks, &n);
    for (int i = 0; i < n; i++) {
      if (st[i].args.t1)
        cli_usage("--suite %s: task %s is a T1 space: it has no kernel to "
                  "put in a library",
                  s->suite, st[i].name);
      lib_kernel tmp = {0};
      tmp.args = st[i].args;
      if (!tmp.args.epilogue)
        tmp.args.epilogue = s->task.epilogue;
      make_task(&tmp, cli_printf("--suite %s: task %s", s->suite, st[i].name));
      lib_kernel *same = NULL;
      for (int j = 0; j < s->nk; j++)
        if (!strcmp(s->k[j].key, tmp.key))
          same = &s->k[j];
      if (same && same->task_name)
        cli_usage("--suite %s: tasks %s and %s are the same task (%s)",
                  s->suite, same->task_name, st[i].name, tmp.key);
      if (same) {
        /* The suite's task whose log was given. */
        heron_task_free(tmp.task);
        same->task_name = st[i].name;
        continue;
      }
      lib_kernel *k = add_kernel(s);
      *k = tmp;
      k->task_name = st[i].name;
    }
    free(st);
  }
  for (int i = 0; i < s->nk; i++) {
    name_kernel(s, &s->k[i]);
    for (int j = 0; j < i; j++)
      if (!strcmp(s->k[j].fn, s->k[i].fn))
        cli_usage("tasks %s and %s would both be function %s", s->k[j].key,
                  s->k[i].key, s->k[i].fn);
    if (!s->k[i].log)
      s->k[i].log = cli_printf("%s/logs/%s.jsonl", s->out, s->k[i].fn);
  }
}

/* ---- Tuning and the best kernel ------------------------------------------ */

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = NULL;
  size_t len = 0, cap = 0;
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (len + got + 1 > cap) {
      cap = (len + got + 1) * 2;
      char *g = realloc(buf, cap);
      if (!g) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = g;
    }
    memcpy(buf + len, chunk, got);
    len += got;
  }
  fclose(f);
  if (!buf)
    buf = calloc(1, 1);
  else
    buf[len] = '\0';
  return buf;
}

/* Removes the emit folder (its files, then itself). */
static void remove_emit(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      unlink(cli_printf("%s/%s", dir, e->d_name));
  closedir(d);
  rmdir(dir);
}

/* Tunes k (or only reads its log) in a child and takes the best kernel
 * from the emitted folder. */
static void best_kernel(const lib_settings *s, lib_kernel *k, int i) {
  struct stat st;
  int have_log = stat(k->log, &st) == 0;
  if (!have_log && (k->user_log || s->no_tune))
    cli_usage("task %s (%s) has no log %s: give its --log, or leave out "
              "--no-tune to tune it",
              k->task_name ? k->task_name : k->key, k->key, k->log);
  if (have_log)
    check_log_machine(s, k);
  const char *emit = cli_printf("%s/.work/%s", s->out, k->fn);
  remove_emit(emit);
  heron_tune_options o = s->o;
  o.emit_dir = emit;
  o.progress = s->quiet ? NULL : stderr;
  o.verbose = 0;
  const char *label = k->task_name ? k->task_name : k->key;
  if (k->user_log || s->no_tune) {
    /* The log's best, nothing measured: a budget its records fill.  A cuda
     * task's meter needs a GPU to open unless it emulates, and nothing is
     * run either way. */
    o.trials = 1;
    o.resume_path = k->log;
    o.log_path = NULL;
    o.progress = NULL;
    o.measure.emulate = k->cuda;
  } else {
    if (cli_make_dirs(cli_printf("%s/logs", s->out)) != 0)
      cli_usage("--out %s: cannot create its logs folder", s->out);
    o.log_path = k->log;
    o.resume_path = have_log ? k->log : NULL;
  }
  if (!s->quiet)
    fprintf(stderr, "[%d/%d] %s: %s %s\n", i + 1, s->nk, label,
            o.log_path ? "tuning into" : "reading", k->log);
  cli_tune_report rep;
  int bad = cli_tune_in_child(
      k->task, &o, s->quiet ? NULL : cli_printf("  [%s] ", label), &rep);
  if (cli_stop_signal()) {
    fprintf(stderr,
            "%s: stopped by %s; the logs are kept: the same command "
            "resumes them\n",
            cli_prog(), cli_signal_name(cli_stop_signal()));
    exit(cli_stop_status(cli_stop_signal()));
  }
  if (bad || rep.rc != HERON_OK)
    cli_die(CLI_EXIT_FAILURE, rep.rc, &rep.err, "task %s (log %s)", label,
            k->log);
  char *cfg = read_text(cli_printf("%s/config.json", emit));
  k->source =
      read_text(cli_printf("%s/%s", emit, k->cuda ? "kernel.cu" : "kernel.c"));
  if (!cfg || !k->source) {
    free(cfg);
    cli_usage("task %s: log %s has no successful measurement: no kernel to "
              "build",
              label, k->log);
  }
  json_error_t jerr;
  json_t *c = json_loads(cfg, 0, &jerr);
  free(cfg);
  if (!json_is_object(c)) {
    fprintf(stderr, "%s: %s/config.json: %s\n", cli_prog(), emit, jerr.text);
    exit(CLI_EXIT_FAILURE);
  }
  k->config = json_incref(json_object_get(c, "config"));
  k->trial = (int)json_integer_value(json_object_get(c, "trial"));
  k->seconds = json_number_value(json_object_get(c, "seconds"));
  k->gflops = json_number_value(json_object_get(c, "gflops"));
  json_decref(c);
  remove_emit(emit);
  /* A cuda kernel's C file is its launcher, built as the library's own
   * code is. */
  char *flags = cli_strdup(k->cuda ? "-O2 -fPIC" : heron_task_cflags(k->task));
  char *sh = strstr(flags, " -shared");
  if (sh)
    memmove(sh, sh + strlen(" -shared"), strlen(sh + strlen(" -shared")) + 1);
  k->cflags = flags;
}

/* ---- main ---------------------------------------------------------------- */

static int by_fn(const void *a, const void *b) {
  return strcmp(((const lib_kernel *)a)->fn, ((const lib_kernel *)b)->fn);
}

static void parse(lib_settings *s, int argc, char **argv) {
  heron_tune_options_init(&s->o);
  s->o.strategy = "genetic";
  s->o.trials = 100;
  cli_measure_defaults(options, &s->o.measure);
  cli_set_default(options, "seed", "%llu", (unsigned long long)s->o.seed);
  cli_set_default(options, "batch", "%d", s->o.batch);
  heron_param *sp = calloc((size_t)argc, sizeof *sp);
  heron_param *mp = calloc((size_t)argc, sizeof *mp);
  s->logs = calloc((size_t)argc, sizeof *s->logs);
  if (!sp || !mp || !s->logs) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  int nsp = 0, nmp = 0;
  const char *fallback = "none";
  cli_parser p;
  cli_parser_init(&p, options, argc, argv);
  const char *val;
  const cli_option *opt;
  int id;
  while ((id = cli_next(&p, &val, &opt)) != 0) {
    const char *flag = cli_printf("--%s", opt->name);
    if (cli_measure_flag(&s->o.measure, id, flag, val))
      continue;
    switch (id) {
    case OPT_HELP:
      usage();
      exit(CLI_EXIT_OK);
    case OPT_NAME:
      s->name = val;
      break;
    case OPT_OUT:
      s->out = val;
      break;
    case OPT_SUITE:
      s->suite = val;
      break;
    case OPT_TASKS:
      s->tasks = val;
      break;
    case OPT_LOG:
      s->logs[s->nlogs++] = val;
      break;
    case OPT_NO_TUNE:
      s->no_tune = 1;
      break;
    case OPT_FALLBACK:
      fallback = val;
      break;
    case OPT_STRATEGY:
      s->o.strategy = val;
      break;
    case OPT_PARAM:
      sp[nsp++] = cli_param(flag, val);
      break;
    case OPT_MODEL:
      s->o.model = val;
      break;
    case OPT_MODEL_PARAM:
      mp[nmp++] = cli_param(flag, val);
      break;
    case OPT_TRIALS:
      s->o.trials = (int)cli_int(flag, val, 1, 1000000);
      break;
    case OPT_SEED:
      s->o.seed = cli_u64(flag, val);
      break;
    case OPT_BATCH:
      s->o.batch = (int)cli_int(flag, val, 1, 4096);
      break;
    case OPT_JOBS:
      s->jobs = (int)cli_int(flag, val, 1, 1024);
      break;
    case OPT_QUIET:
      s->quiet = 1;
      break;
    case OPT_CUDA_IMAGE:
      if (strcmp(val, "cubin") && strcmp(val, "host"))
        cli_usage("--cuda-image: '%s' is not one of cubin, host", val);
      s->host_image = !strcmp(val, "host");
      break;
    default:
      cli_task_flag(&s->task, id, val);
    }
  }
  s->o.strategy_params = sp;
  s->o.n_strategy_params = nsp;
  s->o.model_params = mp;
  s->o.n_model_params = nmp;
  if (nmp && !s->o.model)
    cli_usage("--model-param needs --model");
  if (!s->name)
    cli_usage("--name is required (the library's name: a C identifier)");
  if (!c_identifier(s->name) || strlen(s->name) > LIB_NAME_MAX ||
      strstr(s->name, "__"))
    cli_usage("--name: '%s' is not a library name: a C identifier of 1 to %d "
              "letters, digits or '_', not beginning with a digit, without "
              "\"__\"",
              s->name, LIB_NAME_MAX);
  if (!s->out || !s->out[0])
    cli_usage("--out is required (the folder the library goes into)");
  if (!s->suite && !s->nlogs)
    cli_usage("give --suite FILE, --log FILE, or both");
  if (s->tasks && !s->suite)
    cli_usage("--tasks selects tasks of --suite, which is not given");
  if (!strcmp(fallback, "none"))
    s->fallback = FALLBACK_NONE;
  else if (!strcmp(fallback, "cblas"))
    s->fallback = FALLBACK_CBLAS;
  else if (!strcmp(fallback, "onednn"))
    s->fallback = FALLBACK_ONEDNN;
  else
    cli_usage("--fallback: '%s' is not one of none, cblas, onednn", fallback);
  if (s->task.dtype && strcmp(s->task.dtype, "fp32") &&
      strcmp(s->task.dtype, "int8") && strcmp(s->task.dtype, "bf16") &&
      strcmp(s->task.dtype, "fp16"))
    cli_usage("--dtype: '%s': a library's kernels are fp32, int8, bf16 "
              "(cpu) or fp16 (cuda)",
              s->task.dtype);
  if (!s->jobs) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    s->jobs = n > 0 ? (int)n : 1;
  }
  const char *cc = getenv("CC");
  s->cc = s->o.measure.cc ? s->o.measure.cc : cc && *cc ? cc : "cc";
}

int main(int argc, char **argv) {
  cli_set_prog("heron-lib");
  lib_settings s;
  memset(&s, 0, sizeof s);
  parse(&s, argc, argv);
  s.o.stop = cli_stop_on_signals();
  if (cli_make_dirs(s.out) != 0)
    cli_usage("--out %s: cannot create the folder: %s", s.out, strerror(errno));
  collect(&s);
  if (s.nk == 0)
    cli_usage("no task to build: --tasks selected none");
  for (int i = 0; i < s.nk; i++)
    best_kernel(&s, &s.k[i], i);
  /* The order of the function names, so the order of the flags does not
   * change the library. */
  qsort(s.k, (size_t)s.nk, sizeof *s.k, by_fn);
  s.machine = s.k[0].hardware;
  lib_build_images(&s);
  lib_write_files(&s);
  lib_build(&s);
  printf("library %s: %d kernel%s in %s\n", s.name, s.nk, s.nk == 1 ? "" : "s",
         s.out);
  for (int i = 0; i < s.nk; i++)
    printf("  %-48s %9.2f GFLOP/s  trial %d of %s\n", s.k[i].fn, s.k[i].gflops,
           s.k[i].trial, s.k[i].log);
  printf("include %s/include/%s.h\nlink    -L%s/lib -l%s (pkg-config: "
         "PKG_CONFIG_PATH=%s/lib/pkgconfig pkg-config --cflags --libs %s)\n",
         s.out, s.name, s.out, s.name, s.out, s.name);
  for (int i = 0; i < s.nk; i++) {
    heron_task_free(s.k[i].task);
    free(s.k[i].source);
    json_decref(s.k[i].config);
    heron_cuda_image_free(&s.k[i].image);
    free(s.k[i].embed);
  }
  free(s.k);
  free((void *)s.o.strategy_params);
  free((void *)s.o.model_params);
  free(s.logs);
  cli_free_all();
  return CLI_EXIT_OK;
}
