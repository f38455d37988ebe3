/* tools/cli.h - command-line helpers shared by the heron-* tools.
 *
 * The tools are thin: they parse arguments, call libheron and print.  These
 * helpers give them one way to do each of those jobs, so every tool answers
 * the same way (README.md, "Tools"; docs/architecture.md):
 *
 *  - long options as "--flag value" or "--flag=value", described by one
 *    table that also produces --help, so the help text cannot drift from
 *    what the parser accepts;
 *  - strict number parsing: the whole text must be a number in range;
 *  - usage errors name the flag, the value and what was expected, go to
 *    stderr as "<prog>: --trials: '0' is not a positive integer" and exit
 *    with status 2;
 *  - library failures print "<prog>: HERON_EIO: <text>" and exit with
 *    status 1.
 *
 * The tools use only the public headers include/heron/.  The functions that
 * exit never return; the process's memory is then the kernel's to reclaim.
 */
#ifndef HERON_TOOLS_CLI_H
#define HERON_TOOLS_CLI_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "heron/heron.h"

/* Exit statuses of every tool. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAILURE = 1, CLI_EXIT_USAGE = 2 };

#if defined(__GNUC__)
#define CLI_NORETURN __attribute__((noreturn))
#else
#define CLI_NORETURN
#endif

/* One long option.  A table of them ends with an entry whose name is NULL. */
typedef struct cli_option {
  int id;              /* what cli_next returns for it; > 0 */
  const char *name;    /* without the dashes: "trials" */
  const char *metavar; /* placeholder of the value ("N"); NULL: takes none */
  const char *help;    /* one line for --help */
  char def[48];        /* default shown by --help; "" for none.  Tools fill
                          it at run time from the library's own defaults. */
} cli_option;

/* Iterates over argv[1..argc) against a table. */
typedef struct cli_parser {
  const cli_option *opts;
  int argc;
  char **argv;
  int i;
} cli_parser;

/* Sets the program name used as the prefix of every message ("heron-search").
 * The string must outlive the process's use of these helpers. */
void cli_set_prog(const char *prog);
const char *cli_prog(void);

void cli_parser_init(cli_parser *p, const cli_option *opts, int argc,
                     char **argv);

/* Returns the id of the next option and stores its value in *value (NULL for
 * options without one) and its table entry in *opt (may be NULL); returns 0
 * when argv is exhausted.  Exits with status 2 on an unknown option, a
 * positional argument, a missing value, or a value given to an option that
 * takes none.  "-h" is read as "--help" when the table has "help". */
int cli_next(cli_parser *p, const char **value, const cli_option **opt);

/* Prints the table as --help lines: "  --trials N   help (default: 200)". */
void cli_print_options(FILE *out, const cli_option *opts);

/* Prints `text` from column `col` on (the caller has printed that much of
 * the line), wrapped at word boundaries so that no line passes column 79;
 * continuation lines start at column `indent`.  Ends with a newline. */
void cli_print_wrapped(FILE *out, const char *text, int col, int indent);

/* Prints "<prog>: <message>" to stderr and exits with status 2. */
CLI_NORETURN void cli_usage(const char *fmt, ...) HERON_PRINTF(1, 2);

/* Prints "<prog>: <context>: HERON_XXX: <err text>" (context may be NULL;
 * the code's heron_strerror stands in for an empty text) to stderr and exits
 * with `status`. */
CLI_NORETURN void cli_die(int status, int code, const heron_error *err,
                          const char *context_fmt, ...) HERON_PRINTF(4, 5);

/* Prints the same line as cli_die without exiting. */
void cli_report(int code, const heron_error *err, const char *context_fmt, ...)
    HERON_PRINTF(3, 4);

/* Strict parsers: the whole of `text` must be a number (no blanks, no
 * trailing characters) within [lo, hi], else a usage error such as
 * "--trials: 'abc' is not a positive integer" (exit 2).  `flag` is the flag
 * as the user wrote it, "--trials". */
long long cli_int(const char *flag, const char *text, long long lo,
                  long long hi);
uint64_t cli_u64(const char *flag, const char *text);
double cli_double(const char *flag, const char *text, double lo, double hi);

/* The words the parsers use for a range: "a positive integer", "a
 * non-negative number", "an integer in [1, 64]".  Written into buf[cap]. */
const char *cli_int_range_text(long long lo, long long hi, char *buf,
                               size_t cap);
const char *cli_double_range_text(double lo, double hi, char *buf, size_t cap);

/* Splits "key=value" into a parameter whose strings live until
 * cli_free_all; a usage error when there is no '=' or the key is empty. */
heron_param cli_param(const char *flag, const char *text);

/* A copy of `s` (or of printf output) that lives until cli_free_all. */
char *cli_strdup(const char *s);
char *cli_printf(const char *fmt, ...) HERON_PRINTF(1, 2);

/* mkdir -p: creates every missing folder of `dir`.  Returns 0 or an errno
 * (ENOTDIR when a part of the path is a file). */
int cli_make_dirs(const char *dir);

/* Sets the "(default: ...)" text of option `name` in opts (printf-style),
 * so --help shows what the library really uses. */
void cli_set_default(cli_option *opts, const char *name, const char *fmt, ...)
    HERON_PRINTF(3, 4);

/* Sets the defaults of the measurement flags that have a number
 * (CLI_MEASURE_OPTIONS) from `d`, normally heron_tune_options_init's. */
void cli_measure_defaults(cli_option *opts, const heron_measure_options *d);

/* What a tuning run in a child process reports to its parent. */
typedef struct cli_tune_report {
  int rc; /* heron_tune's status */
  heron_tune_result res;
  heron_error err;
} cli_tune_report;

/* Runs heron_tune(t, o) in a forked child and fills *rep with its outcome.
 * A model may start an OpenMP pool and the tuner forks workers, so each
 * run gets a fresh process; the child dies with its parent, so a killed
 * tool leaves no run appending to a log.  When progress_prefix is not NULL
 * the child's progress goes to stderr with it in front of each line (over
 * o->progress); else o->progress is used as it is.  Returns 0 when the child
 * reported (rep->rc says how the run went), -1 when it did not: pipe or
 * fork failed, or the child died (its signal or exit status named in
 * rep->err, rep->rc a matching error code). */
int cli_tune_in_child(const heron_task *t, const heron_tune_options *o,
                      const char *progress_prefix, cli_tune_report *rep);

/* The tools' SIGINT / SIGTERM handling.  Installs handlers once and
 * returns the flag to give heron_tune (heron_tune_options.stop): the first
 * signal sets it to the signal's number and passes the signal on to the
 * run in flight of cli_tune_in_child, so both end in order (the round
 * finished or abandoned, the log written, the summary printed); a second
 * signal kills that run and ends the process at once with status 128 +
 * the signal.  A plugin call still blocked a moment after the first signal
 * does not hold the run: the plugin guard ends it with status 128 + the
 * signal and a message naming the call (core/plugin/guard.h).  Runs of
 * cli_tune_in_child are put in their own process group, so a Ctrl-C in the
 * terminal reaches them once, through here. */
const volatile sig_atomic_t *cli_stop_on_signals(void);

/* 0, or the number of the first SIGINT / SIGTERM received since
 * cli_stop_on_signals. */
int cli_stop_signal(void);

/* The exit status of a tool stopped by signal `sig`: 130 for SIGINT, 143
 * for SIGTERM (128 + sig). */
int cli_stop_status(int sig);

/* "SIGINT", "SIGTERM", or "signal N". */
const char *cli_signal_name(int sig);

/* The rule for a name from user text (a suite's task name, a plugin's name)
 * that becomes part of a file name: it can never be a path ('/'), a hidden
 * file or ".." (it begins with a letter or digit), never splits a log name
 * <task>__<label>__s<seed>.jsonl ("__") or a label <strategy>+<model>
 * ('+'), and needs no quoting in CSV, Markdown or gnuplot. */
#define CLI_NAME_MAX_LEN 64
#define CLI_NAME_RULE                                                          \
  "1 to 64 letters, digits, '.', '_' or '-', beginning with a letter or a "    \
  "digit, without \"__\""

/* 1 when s[0, len) follows CLI_NAME_RULE. */
int cli_name_ok(const char *s, size_t len);

/* A buffer for a file path (PATH_MAX, 4096 bytes on Linux) and a little
 * more: a suffix, or a file name after a folder.  libheron's own is
 * HERON__PATH_BUF (core/util/util.h), which the tools do not include. */
#define CLI_PATH_BUF 4200

/* A JSON file a tool reads whole (--config, --suite): exits through
 * cli_usage, naming `flag` and the path, when it is missing, not a regular
 * file (a FIFO would block the read forever, a folder gives a misleading
 * parse error), larger than 64 MiB, or not valid JSON (line and column).
 * Duplicate keys are refused.  Returns the parsed value (json_decref it). */
json_t *cli_json_load(const char *flag, const char *path);

/* The first key of the JSON object `obj` that is not in the NULL-ended
 * list `keys`, or NULL when every key is known (a misspelt key would
 * otherwise fall back to a default silently). */
const char *cli_json_unknown_key(json_t *obj, const char *const *keys);

/* Sets the variables of sp named by the keys of the JSON object obj (a
 * log's "config") to their values in cfg, leaving the others as they are.
 * Returns 0, or 1 when a key is not a variable of sp, 2 when its value is
 * not an integer, with *bad the key. */
int cli_config_from_json(const heron_space *sp, json_t *obj, int64_t *cfg,
                         const char **bad);

/* Frees every string made by cli_strdup, cli_printf and cli_param. */
void cli_free_all(void);

/* ---- Tasks ---------------------------------------------------------------
 * Both tools build a task from the same task flags. */

/* The most --replay logs one task takes. */
#define CLI_MAX_REPLAY 64
typedef struct cli_task_args {
  const char *op;
  const char *shape;    /* "1024,1024,1024" */
  const char *dtype;    /* NULL: fp32 */
  const char *target;   /* NULL: cpu */
  const char *hw;       /* NULL: this machine */
  const char *epilogue; /* NULL: none; "bias,relu" */
  const char *sm;       /* NULL: the GPU's or the description's */
  const char *prepack;  /* NULL: none; "weight" */
  /* --replay LOG, repeatable: the logs of target replay.  A config file
   * may fill the list first; the first --replay flag then replaces it, as
   * flags override the file. */
  const char *replay[CLI_MAX_REPLAY];
  int nreplay;
  int replay_flagged; /* 1 once a --replay flag was read */
  const char *t1;     /* --t1 FILE: a space from a T1 input file */
  const char *t4;     /* --t4 FILE: its brute-forced T4 results */
  int sampler;        /* --sampler: a heron_sampler (0: heron) */
} cli_task_args;

/* The task flags have the same ids in both tools; each tool numbers
 * its own flags from CLI_OPT_TASK_END. */
enum {
  CLI_OPT_OP = 1,
  CLI_OPT_SHAPE,
  CLI_OPT_DTYPE,
  CLI_OPT_TARGET,
  CLI_OPT_HW,
  CLI_OPT_EPILOGUE,
  CLI_OPT_SM,
  CLI_OPT_REPLAY,
  CLI_OPT_PREPACK,
  CLI_OPT_T1,
  CLI_OPT_T4,
  CLI_OPT_SAMPLER,
  CLI_OPT_TASK_END
};

/* The task flags' entries of a tool's option table; only the help of --op
 * and --shape differs between the tools. */
#define CLI_TASK_OPTIONS(op_help, shape_help)                                  \
  {CLI_OPT_OP, "op", "NAME", op_help, ""},                                     \
      {CLI_OPT_SHAPE, "shape", "D1,D2,...", shape_help, ""},                   \
      {CLI_OPT_DTYPE, "dtype", "TYPE",                                         \
       "element type: fp32, fp16, int8 or bf16",                               \
       "fp32 on cpu, fp16 on cuda, int8 on amx"},                              \
      {CLI_OPT_TARGET, "target", "NAME",                                       \
       "target: cpu, cuda (NVIDIA Tensor Cores, fp16), amx (Intel AMX tiles, " \
       "int8 or bf16), or replay (answers "                                    \
       "from recorded --replay logs, a surrogate model for the rest; no "      \
       "hardware)",                                                            \
       "cpu"},                                                                 \
      {CLI_OPT_REPLAY, "replay", "LOG",                                        \
       "target replay: a recorded log (.jsonl or .jsonl.gz) of the same op, "  \
       "shape and dtype; repeatable.  A LOG.hw.json beside the first is its "  \
       "hardware",                                                             \
       ""},                                                                    \
      {CLI_OPT_HW, "hw", "NAME|FILE",                                          \
       "hardware description in configs/hw/ (cpu-avx512, a100, h100, h200, "   \
       "rtx3080, ...) or a JSON file",                                         \
       "this machine / its GPU"},                                              \
      {CLI_OPT_EPILOGUE, "epilogue", "LIST",                                   \
       "fused epilogue after the op: bias, relu or bias,relu", "none"},        \
      {CLI_OPT_PREPACK, "prepack", "LIST",                                     \
       "inputs constant across calls (weight, B, ...): a config that packs "   \
       "one packs it once, untimed, ahead of the calls (cpu)",                 \
       "none"},                                                                \
      {CLI_OPT_T1, "t1", "FILE",                                               \
       "instead of --op and --shape: the space of a T1 input file (the "       \
       "auto-tuning community's format: parameters, values, restrictions)",    \
       ""},                                                                    \
      {CLI_OPT_T4, "t4", "FILE",                                               \
       "with --t1: its brute-forced T4 results (or Kernel Tuner cache) file, " \
       "plain or .gz; every config is answered from it (target replay)",       \
       ""},                                                                    \
      {CLI_OPT_SM, "sm", "N",                                                  \
       "cuda: compute capability x 10 to compile for (80 A100, 86 RTX 3080, "  \
       "90 H100/H200); without a GPU it also picks the description",           \
       "the GPU's, else 80"},                                                  \
      CLI_SAMPLER_OPTION

/* The --sampler entry (heron-bench lists the task flags itself). */
#define CLI_SAMPLER_OPTION                                                     \
  {                                                                            \
    CLI_OPT_SAMPLER, "sampler", "MODE",                                        \
        "how random configs are drawn: uniform (every valid config equally "   \
        "likely; exact where the space can be counted) or heron (knob by "     \
        "knob through the constraint solver, faster on huge spaces, biased)",  \
        "heron"                                                                \
  }

/* ---- Measurement flags ---------------------------------------------------
 * heron-search and heron-bench measure with the same eight flags (TVM's
 * names); their ids follow the task flags', and each tool numbers its own
 * flags from CLI_OPT_MEASURE_END. */
enum {
  CLI_OPT_NUMBER = CLI_OPT_TASK_END,
  CLI_OPT_REPEAT,
  CLI_OPT_MIN_REPEAT_MS,
  CLI_OPT_TIMEOUT,
  CLI_OPT_FLUSH_CACHE,
  CLI_OPT_BUILD_JOBS,
  CLI_OPT_THREADS,
  CLI_OPT_CC,
  CLI_OPT_MEASURE_END
};

/* The measurement flags' entries of a tool's option table (their defaults
 * are filled in from heron_tune_options_init by the tool). */
#define CLI_MEASURE_OPTIONS                                                    \
  {CLI_OPT_NUMBER, "number", "N", "runs averaged per repeat", ""},             \
      {CLI_OPT_REPEAT, "repeat", "N",                                          \
       "repeats per measurement; the median counts", ""},                      \
      {CLI_OPT_MIN_REPEAT_MS, "min-repeat-ms", "MS",                           \
       "grow --number until a repeat lasts this long", ""},                    \
      {CLI_OPT_TIMEOUT, "timeout", "SECONDS", "limit per build and per run",   \
       ""},                                                                    \
      {CLI_OPT_FLUSH_CACHE, "flush-cache", NULL,                               \
       "evict caches before each repeat", ""},                                 \
      {CLI_OPT_BUILD_JOBS, "build-jobs", "N",                                  \
       "parallel builds, 0 for one per core", ""},                             \
      {CLI_OPT_THREADS, "threads", "N", "kernel threads, 0 for one per core",  \
       ""},                                                                    \
  {                                                                            \
    CLI_OPT_CC, "cc", "COMPILER", "C compiler for the kernels", "$CC or cc"    \
  }

/* Stores the value of measurement flag `id` (spelled `flag` on the command
 * line, for errors) in *m, exiting with a usage error on a bad value.
 * Returns 1 when id is a measurement flag, 0 otherwise. */
int cli_measure_flag(heron_measure_options *m, int id, const char *flag,
                     const char *val);

/* Stores the value of task flag `id` in *a (--replay appends; more than
 * CLI_MAX_REPLAY logs is a usage error).  Returns 1 when id is a task
 * flag, 0 otherwise (the caller handles it). */
int cli_task_flag(cli_task_args *a, int id, const char *val);

/* Checks --op (a usage error listing the known ops when unknown or
 * missing); with --t1 instead, that no --op or --shape is given. */
void cli_check_op(const char *op);
void cli_check_task(const cli_task_args *a);

/* Creates the task, or exits: status 2 when the library rejects a value the
 * user gave (unknown op, target or hw, bad shape or dtype, a shape too large
 * for memory), status 1 on other failures.  Messages name the flag. */
heron_task *cli_make_task(const cli_task_args *a);

/* cli_make_task for a task of --op and --shape (not --t1) that returns the
 * library's status and error instead of exiting when heron_task_create
 * refuses it (a bad shape or dtype still exits, as there). */
int cli_try_task(const cli_task_args *a, heron_task **out, heron_error *err);

/* A task key as heron_task_key writes it ("op/shape/dtype/target", then
 * "/epilogue" and "/prepack=..." when the task has them; a log record's
 * "task") as task flags in *a, the rest of *a zeroed; its strings live
 * until cli_free_all.  Returns 0, or -1 when the key is not an op's task
 * (fewer than four parts, an empty op or shape). */
int cli_task_args_of_key(const char *key, cli_task_args *a);

/* The op's dimension names joined by ',' ("M,N,K") into buf. */
const char *cli_op_dims_text(const char *op, char *buf, size_t cap);

/* The hardware task t was built for, the "hardware: " line of
 * heron_task_describe (the CPU model and ISA level the library detected,
 * the --hw description's name, or the GPU), into out; "unknown hardware"
 * when the library does not describe it. */
void cli_task_hardware(const heron_task *t, char *out, size_t cap);

/* This machine's CPU as libheron detects it for the cpu target, whatever
 * --hw says: from the name the library gives a task built without a
 * description, "this machine (<model>, <ISA level>)", the model into
 * model[mcap] (cut short where the library cuts it to fit its name) and,
 * when isa is not NULL, the level into isa[icap] (HERON_CPU_ISA's cap
 * included: "avx2 by HERON_CPU_ISA").  Returns 0, or -1 with the library's
 * name whole in model (and "" in isa) when it has another form, or
 * "unknown CPU (<why>)" when no task could be made. */
int cli_detected_cpu(char *model, size_t mcap, char *isa, size_t icap);

/* Splits a hardware name of the library's form "this machine (<model>,
 * <ISA level>)" (a task's cli_task_hardware, a log record's "hardware")
 * into the model and the level, as cli_detected_cpu does; -1 with the
 * name whole in model and "" in isa for another form (a --hw
 * description's name, a GPU). */
int cli_hardware_split(const char *name, char *model, size_t mcap, char *isa,
                       size_t icap);

#endif /* HERON_TOOLS_CLI_H */
