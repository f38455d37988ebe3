/* tools/cli.c - command-line helpers shared by the heron-* tools. */
/* fopencookie for prefixed_stderr. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The tools are single-threaded programs; the program name and the list of
 * strings to free at exit are the only process-wide state, and both belong
 * to the tool, not to libheron. */
static const char *prog_name = "heron";
static char **kept;
static size_t nkept, capkept;

void cli_set_prog(const char *prog) { prog_name = prog; }

const char *cli_prog(void) { return prog_name; }

/* ---- Messages ------------------------------------------------------------ */

void cli_usage(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: ", prog_name);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(CLI_EXIT_USAGE);
}

static void vreport(int code, const heron_error *err, const char *fmt,
                    va_list ap) {
  const char *text = err && err->text[0] ? err->text : heron_strerror(code);
  /* heron_error holds 159 characters: a longer message (a long path in it)
   * keeps its head and its tail, the reason, around "..." (heron_error_set).
   * Say that its middle was left out rather than let the shortened text
   * pass for the whole message. */
  int cut = err && strlen(err->text) == sizeof err->text - 1 &&
            strstr(err->text, "...");
  fprintf(stderr, "%s: ", prog_name);
  if (fmt) {
    vfprintf(stderr, fmt, ap);
    fputs(": ", stderr);
  }
  fprintf(stderr, "%s: %s%s\n", heron_err_name(code), text,
          cut ? cli_printf(" [the library's message was shortened to %zu "
                           "characters: its middle is left out]",
                           sizeof err->text - 1)
              : "");
}

void cli_report(int code, const heron_error *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(code, err, fmt, ap);
  va_end(ap);
}

void cli_die(int status, int code, const heron_error *err, const char *fmt,
             ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(code, err, fmt, ap);
  va_end(ap);
  exit(status);
}

/* ---- Strings that live until exit ---------------------------------------- */

static char *keep(char *s) {
  if (!s) {
    fprintf(stderr, "%s: out of memory\n", prog_name);
    exit(CLI_EXIT_FAILURE);
  }
  if (nkept == capkept) {
    size_t cap = capkept ? 2 * capkept : 16;
    char **grown = realloc(kept, cap * sizeof *grown);
    if (!grown) {
      fprintf(stderr, "%s: out of memory\n", prog_name);
      exit(CLI_EXIT_FAILURE);
    }
    kept = grown;
    capkept = cap;
  }
  kept[nkept++] = s;
  return s;
}

char *cli_strdup(const char *s) { return keep(strdup(s)); }

char *cli_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = n < 0 ? NULL : malloc((size_t)n + 1);
  if (s) {
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  return keep(s);
}

void cli_free_all(void) {
  for (size_t i = 0; i < nkept; i++)
    free(kept[i]);
  free(kept);
  kept = NULL;
  nkept = capkept = 0;
}

/* ---- Option parsing ------------------------------------------------------ */

void cli_parser_init(cli_parser *p, const cli_option *opts, int argc,
                     char **argv) {
  p->opts = opts;
  p->argc = argc;
  p->argv = argv;
  p->i = 1;
}

static const cli_option *lookup(const cli_option *opts, const char *name,
                                size_t len) {
  for (const cli_option *o = opts; o->name; o++)
    if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
      return o;
  return NULL;
}

/* Finds an option by name in a table (NULL when absent). */
static cli_option *find_option(cli_option *opts, const char *name) {
  return (cli_option *)lookup(opts, name, strlen(name));
}

int cli_next(cli_parser *p, const char **value, const cli_option **opt) {
  *value = NULL;
  if (p->i >= p->argc)
    return 0;
  const char *arg = p->argv[p->i++];
  if (strcmp(arg, "-h") == 0 && lookup(p->opts, "help", 4))
    arg = "--help";
  if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
    cli_usage("unexpected argument '%s' (see --help)", arg);
  const char *name = arg + 2;
  const char *eq = strchr(name, '=');
  size_t len = eq ? (size_t)(eq - name) : strlen(name);
  const cli_option *o = lookup(p->opts, name, len);
  if (!o)
    cli_usage("unknown option '--%.*s' (see --help)", (int)len, name);
  if (!o->metavar) {
    if (eq)
      cli_usage("--%s takes no value, got '%s'", o->name, eq + 1);
  } else if (eq) {
    *value = eq + 1;
  } else {
    /* "--log --quiet" almost always means a forgotten value; taking the
     * next option as the file name would hide the mistake. */
    if (p->i >= p->argc)
      cli_usage("--%s needs a value (%s)", o->name, o->metavar);
    const char *next = p->argv[p->i];
    if (strncmp(next, "--", 2) == 0 && next[2] != '\0')
      cli_usage("--%s needs a value (%s), got the option '%s'", o->name,
                o->metavar, next);
    *value = next;
    p->i++;
  }
  if (opt)
    *opt = o;
  return o->id;
}

void cli_print_wrapped(FILE *out, const char *text, int col, int indent) {
  const char *w = text;
  while (*w) {
    while (*w == ' ')
      w++;
    int len = (int)strcspn(w, " ");
    if (len == 0)
      break;
    if (col > indent && col + 1 + len > 79) {
      fprintf(out, "\n%*s", indent, "");
      col = indent;
    } else if (col > indent) {
      fputc(' ', out);
      col++;
    }
    fprintf(out, "%.*s", len, w);
    col += len;
    w += len;
  }
  fputc('\n', out);
}

void cli_print_options(FILE *out, const cli_option *opts) {
  enum { HEAD = 24, INDENT = 2 + HEAD + 2 };
  for (const cli_option *o = opts; o->name; o++) {
    const char *head = cli_printf("--%s%s%s", o->name, o->metavar ? " " : "",
                                  o->metavar ? o->metavar : "");
    const char *text =
        o->def[0] ? cli_printf("%s (default: %s)", o->help, o->def) : o->help;
    if (strlen(head) > HEAD)
      fprintf(out, "  %s\n%*s", head, INDENT, "");
    else
      fprintf(out, "  %-*s  ", HEAD, head);
    cli_print_wrapped(out, text, INDENT, INDENT);
  }
}

/* ---- Numbers ------------------------------------------------------------- */

const char *cli_int_range_text(long long lo, long long hi, char *buf,
                               size_t cap) {
  if (lo == LLONG_MIN && hi == LLONG_MAX)
    snprintf(buf, cap, "an integer");
  else if (lo == 1 && hi >= INT_MAX)
    snprintf(buf, cap, "a positive integer");
  else if (lo == 0 && hi >= INT_MAX)
    snprintf(buf, cap, "a non-negative integer");
  else if (hi >= INT_MAX)
    snprintf(buf, cap, "an integer >= %lld", lo);
  else
    snprintf(buf, cap, "an integer in [%lld, %lld]", lo, hi);
  return buf;
}

const char *cli_double_range_text(double lo, double hi, char *buf, size_t cap) {
  int unbounded = isinf(hi);
  if (lo == 0 && unbounded)
    snprintf(buf, cap, "a non-negative number");
  else if (lo > 0 && lo < 1e-300 && unbounded)
    snprintf(buf, cap, "a positive number");
  else if (unbounded)
    snprintf(buf, cap, "a number >= %g", lo);
  else
    snprintf(buf, cap, "a number in [%g, %g]", lo, hi);
  return buf;
}

/* strtoll and friends skip leading blanks and accept a sign where we want
 * neither, so the text is checked to start like a number first. */
static int starts_numeric(const char *t, int allow_minus) {
  if (allow_minus && (*t == '-' || *t == '+'))
    t++;
  return isdigit((unsigned char)*t) ||
         (*t == '.' && isdigit((unsigned char)t[1]));
}

long long cli_int(const char *flag, const char *text, long long lo,
                  long long hi) {
  char what[64];
  char *end = NULL;
  errno = 0;
  long long v = 0;
  int ok = starts_numeric(text, 1) && (v = strtoll(text, &end, 10), 1) &&
           errno == 0 && end && *end == '\0' && v >= lo && v <= hi;
  if (!ok)
    cli_usage("%s: '%s' is not %s", flag, text,
              cli_int_range_text(lo, hi, what, sizeof what));
  return v;
}

uint64_t cli_u64(const char *flag, const char *text) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = 0;
  int ok = starts_numeric(text, 0) && (v = strtoull(text, &end, 10), 1) &&
           errno == 0 && end && *end == '\0';
  if (!ok)
    cli_usage("%s: '%s' is not a non-negative integer below 2^64", flag, text);
  return (uint64_t)v;
}

double cli_double(const char *flag, const char *text, double lo, double hi) {
  char what[64];
  char *end = NULL;
  errno = 0;
  double v = 0;
  int ok = starts_numeric(text, 1) && (v = strtod(text, &end), 1) &&
           errno == 0 && end && *end == '\0' && isfinite(v) && v >= lo &&
           v <= hi;
  if (!ok)
    cli_usage("%s: '%s' is not %s", flag, text,
              cli_double_range_text(lo, hi, what, sizeof what));
  return v;
}

heron_param cli_param(const char *flag, const char *text) {
  const char *eq = strchr(text, '=');
  if (!eq || eq == text)
    cli_usage("%s: '%s' is not of the form key=value", flag, text);
  heron_param p;
  p.key = cli_printf("%.*s", (int)(eq - text), text);
  p.value = cli_strdup(eq + 1);
  return p;
}

/* ---- Tasks --------------------------------------------------------------- */

static const char *known_ops(char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < heron_op_count() && used < cap; i++) {
    int n = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "",
                     heron_op_name(i));
    if (n < 0)
      break;
    used += (size_t)n;
  }
  return buf;
}

void cli_check_op(const char *op) {
  char ops[512];
  if (!op || !op[0])
    cli_usage("--op is required (one of %s)", known_ops(ops, sizeof ops));
  const char *const *names;
  int n;
  if (heron_op_dims(op, &names, &n, NULL) != HERON_OK)
    cli_usage("--op: '%s' is not a known operator (one of %s)", op,
              known_ops(ops, sizeof ops));
}

const char *cli_op_dims_text(const char *op, char *buf, size_t cap) {
  const char *const *names;
  int n = 0;
  size_t used = 0;
  buf[0] = '\0';
  if (heron_op_dims(op, &names, &n, NULL) != HERON_OK)
    return buf;
  for (int i = 0; i < n && used < cap; i++) {
    int k = snprintf(buf + used, cap - used, "%s%s", i ? "," : "", names[i]);
    if (k < 0)
      break;
    used += (size_t)k;
  }
  return buf;
}

void cli_task_hardware(const heron_task *t, char *out, size_t cap) {
  snprintf(out, cap, "unknown hardware");
  char *text = NULL;
  heron_error err;
  heron_error_clear(&err);
  if (heron_task_describe(t, &text, &err) == HERON_OK && text) {
    const char *h = strstr(text, "hardware: ");
    if (h) {
      h += strlen("hardware: ");
      snprintf(out, cap, "%.*s", (int)strcspn(h, "\n"), h);
    }
    heron_free(text);
  }
}

int cli_task_args_of_key(const char *key, cli_task_args *a) {
  memset(a, 0, sizeof *a);
  char *copy = cli_strdup(key), *part[6] = {0};
  int n = 0;
  for (char *p = copy; p && n < 6;) {
    part[n++] = p;
    p = strchr(p, '/');
    if (p)
      *p++ = '\0';
  }
  if (n < 4 || !part[0][0] || !part[1][0])
    return -1;
  a->op = part[0];
  a->shape = part[1];
  a->dtype = part[2];
  a->target = part[3];
  for (int i = 4; i < n; i++) {
    if (!strncmp(part[i], "prepack=", 8))
      a->prepack = part[i] + 8;
    else
      a->epilogue = part[i];
  }
  return 0;
}

int cli_detected_cpu(char *model, size_t mcap, char *isa, size_t icap) {
  static const int64_t shape[] = {16, 16, 16};
  heron_task_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.op = "gemm";
  spec.shape = shape;
  spec.nshape = 3;
  spec.target = "cpu";
  heron_task *probe = NULL;
  heron_error err;
  heron_error_clear(&err);
  if (isa && icap)
    isa[0] = '\0';
  if (heron_task_create(&spec, &probe, &err) != HERON_OK) {
    snprintf(model, mcap, "unknown CPU (%s)", err.text);
    return -1;
  }
  char name[256];
  cli_task_hardware(probe, name, sizeof name);
  heron_task_free(probe);
  return cli_hardware_split(name, model, mcap, isa, icap);
}

int cli_hardware_split(const char *name, char *model, size_t mcap, char *isa,
                       size_t icap) {
  if (isa && icap)
    isa[0] = '\0';
  /* "this machine (<model>, <level>)": the level begins at the first ", "
   * followed by an ISA word, and runs to the closing parenthesis. */
  static const char head[] = "this machine (";
  static const char *const words[] = {"amx", "avx512", "avxvnni", "avx2",
                                      "sse"};
  size_t len = strlen(name);
  const char *tag = NULL;
  if (!strncmp(name, head, sizeof head - 1) && len && name[len - 1] == ')')
    for (const char *c = strstr(name, ", "); c && !tag; c = strstr(c + 1, ", "))
      for (size_t i = 0; i < sizeof words / sizeof *words && !tag; i++) {
        size_t n = strlen(words[i]);
        if (!strncmp(c + 2, words[i], n) && c[2 + n] && strchr(" ,)", c[2 + n]))
          tag = c + 2;
      }
  if (!tag) {
    snprintf(model, mcap, "%s", name); /* not the expected form: all of it */
    return -1;
  }
  const char *m = name + sizeof head - 1;
  snprintf(model, mcap, "%.*s", (int)(tag - 2 - m), m);
  if (isa && icap)
    snprintf(isa, icap, "%.*s", (int)(name + len - 1 - tag), tag);
  return 0;
}

/* The dtypes task.h documents.  Checking them here lets the message name the
 * flag; whether a target supports a dtype is still the library's call. */
static const char *const dtypes[] = {"fp32", "fp16", "int8", "bf16"};

void cli_check_task(const cli_task_args *a) {
  if (!a->t1) {
    if (a->t4)
      cli_usage("--t4 needs --t1, the T1 file of its space");
    cli_check_op(a->op);
    return;
  }
  if (a->op || a->shape)
    cli_usage("--t1 gives the whole space: no --op or --shape with it");
  /* A folder would reach the JSON reader as an empty file ("'[' or '{'
   * expected near end of file"). */
  struct stat st;
  if (stat(a->t1, &st) == 0 && S_ISDIR(st.st_mode))
    cli_usage(
        "--t1: '%s' is a folder, not a T1 file (the JSON file of a "
        "space, such as configs/datasets/benchmark_hub/convolution/T1.json)",
        a->t1);
  if (a->t4 && stat(a->t4, &st) == 0 && S_ISDIR(st.st_mode))
    cli_usage("--t4: '%s' is a folder, not a T4 file (the JSON or .json.gz "
              "file of a space's brute-forced results)",
              a->t4);
}

/* A task of a T1 file's space (and its T4 results). */
static heron_task *make_t1_task(const cli_task_args *a) {
  heron_task_spec spec = {.t1 = a->t1,
                          .t4 = a->t4,
                          .target = a->target,
                          .dtype = a->dtype,
                          .hw = a->hw,
                          .epilogue = a->epilogue,
                          .prepack = a->prepack,
                          .replay = a->replay,
                          .nreplay = a->nreplay,
                          .sampler = (heron_sampler)a->sampler};
  heron_task *t = NULL;
  heron_error err;
  heron_error_clear(&err);
  int rc = heron_task_create(&spec, &t, &err);
  if (rc == HERON_OK)
    return t;
  cli_die(rc == HERON_ENOMEM ? CLI_EXIT_FAILURE : CLI_EXIT_USAGE, rc, &err,
          "cannot create the task --t1 %s%s%s", a->t1, a->t4 ? " --t4 " : "",
          a->t4 ? a->t4 : "");
}

/* The task of op a->op at `shape` with the rest of *a (the values checked
 * as cli_try_task checks them). */
static int create_task(const cli_task_args *a, const int64_t *shape, int nshape,
                       heron_task **out, heron_error *err) {
  heron_task_spec spec = {.op = a->op,
                          .shape = shape,
                          .nshape = nshape,
                          .dtype = a->dtype,
                          .target = a->target,
                          .hw = a->hw,
                          .epilogue = a->epilogue,
                          .prepack = a->prepack,
                          .sm =
                              a->sm ? (int)cli_int("--sm", a->sm, 1, 1000) : 0,
                          .replay = a->replay,
                          .nreplay = a->nreplay,
                          .sampler = (heron_sampler)a->sampler};
  *out = NULL;
  heron_error_clear(err);
  return heron_task_create(&spec, out, err);
}

int cli_try_task(const cli_task_args *a, heron_task **out, heron_error *err) {
  char dims[256];
  int64_t shape[32];
  int nshape = 0;
  *out = NULL;
  cli_op_dims_text(a->op, dims, sizeof dims);
  if (!a->shape || !a->shape[0])
    cli_usage("--shape is required for %s (%s)", a->op, dims);
  heron_error_clear(err);
  int rc = heron_parse_shape(a->op, a->shape, shape, 32, &nshape, err);
  if (rc != HERON_OK) {
    /* The library's message may already start with the flag's name. */
    const char *why = err->text[0] ? err->text : heron_strerror(rc);
    if (strncmp(why, "--shape: ", 9) == 0)
      why += 9;
    cli_usage("--shape: '%s' is not a valid %s shape (%s): %s", a->shape, a->op,
              dims, why);
  }
  if (a->dtype) {
    size_t i = 0;
    while (i < sizeof dtypes / sizeof *dtypes && strcmp(a->dtype, dtypes[i]))
      i++;
    if (i == sizeof dtypes / sizeof *dtypes)
      cli_usage("--dtype: '%s' is not one of fp32, fp16, int8, bf16", a->dtype);
  }
  return create_task(a, shape, nshape, out, err);
}

/* After the library refused a task as unsupported: the shape's dimensions
 * of extent 1 that, set to 2 alone, make the task one it creates, named on
 * a line of their own.  The library's message says what the template
 * needs ("an output axis the weights read and the activations do not");
 * this says which dimension of the user's --shape that is. */
static void unit_dims_hint(const cli_task_args *a) {
  const char *const *names;
  int n = 0;
  int64_t shape[32];
  int nshape = 0;
  heron_error err;
  heron_error_clear(&err);
  if (heron_op_dims(a->op, &names, &n, NULL) != HERON_OK ||
      heron_parse_shape(a->op, a->shape, shape, 32, &nshape, &err) !=
          HERON_OK ||
      nshape != n)
    return;
  char *which = NULL;
  int nwhich = 0;
  for (int i = 0; i < n; i++) {
    if (shape[i] != 1)
      continue;
    shape[i] = 2;
    heron_task *t = NULL;
    if (create_task(a, shape, nshape, &t, &err) == HERON_OK) {
      heron_task_free(t);
      which = which ? cli_printf("%s or %s = 1", which, names[i])
                    : cli_printf("%s = 1", names[i]);
      nwhich++;
    }
    shape[i] = 1;
  }
  if (which)
    fprintf(stderr,
            "%s: --shape %s: %s is the cause: the same task with %s set to 2 "
            "is created\n",
            prog_name, a->shape, which, nwhich > 1 ? "either" : "it");
}

heron_task *cli_make_task(const cli_task_args *a) {
  cli_check_task(a);
  if (a->t1)
    return make_t1_task(a);
  heron_task *t = NULL;
  heron_error err;
  int rc = cli_try_task(a, &t, &err);
  if (rc == HERON_OK)
    return t;
  /* These codes mean the library refused a value the user gave; the rest
   * (no memory, an empty space, an internal error) are failures of the run. */
  int usage = rc == HERON_EINVAL || rc == HERON_ENOTFOUND ||
              rc == HERON_ERANGE || rc == HERON_EUNSUPPORTED ||
              rc == HERON_ETASK;
  cli_report(rc, &err,
             "cannot create the task --op %s --shape %s --dtype %s --target %s "
             "--hw %s%s%s%s%s%s%s%s",
             a->op, a->shape,
             a->dtype ? a->dtype
             : heron_target_default_dtype(a->target)
                 ? heron_target_default_dtype(a->target)
                 : "fp32",
             a->target ? a->target : "cpu",
             a->hw                            ? a->hw
             : heron_target_is_gpu(a->target) ? "(the GPU's)"
                                              : "(this machine)",
             a->epilogue ? " --epilogue " : "", a->epilogue ? a->epilogue : "",
             a->prepack ? " --prepack " : "", a->prepack ? a->prepack : "",
             a->nreplay ? " --replay " : "", a->nreplay ? a->replay[0] : "",
             a->nreplay > 1 ? " ..." : "");
  if (rc == HERON_EUNSUPPORTED)
    unit_dims_hint(a);
  exit(usage ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE);
}

int cli_task_flag(cli_task_args *a, int id, const char *val) {
  switch (id) {
  case CLI_OPT_OP:
    a->op = val;
    return 1;
  case CLI_OPT_SHAPE:
    a->shape = val;
    return 1;
  case CLI_OPT_DTYPE:
    a->dtype = val;
    return 1;
  case CLI_OPT_TARGET:
    a->target = val;
    return 1;
  case CLI_OPT_HW:
    a->hw = val;
    return 1;
  case CLI_OPT_EPILOGUE:
    a->epilogue = val;
    return 1;
  case CLI_OPT_SM:
    a->sm = val;
    return 1;
  case CLI_OPT_PREPACK:
    a->prepack = val;
    return 1;
  case CLI_OPT_T1:
    a->t1 = val;
    return 1;
  case CLI_OPT_T4:
    a->t4 = val;
    return 1;
  case CLI_OPT_SAMPLER:
    a->sampler = heron_sampler_parse(val);
    if (a->sampler < 0)
      cli_usage("--sampler: unknown mode '%s' (expected uniform or heron)",
                val);
    return 1;
  case CLI_OPT_REPLAY:
    if (!a->replay_flagged)
      a->nreplay = 0; /* the flags replace a config file's list */
    a->replay_flagged = 1;
    if (a->nreplay == CLI_MAX_REPLAY)
      cli_usage("--replay: '%s': at most %d logs", val, CLI_MAX_REPLAY);
    a->replay[a->nreplay++] = val;
    return 1;
  }
  return 0;
}

int cli_measure_flag(heron_measure_options *m, int id, const char *flag,
                     const char *val) {
  switch (id) {
  case CLI_OPT_NUMBER:
    m->number = (int)cli_int(flag, val, 1, INT_MAX);
    return 1;
  case CLI_OPT_REPEAT:
    m->repeat = (int)cli_int(flag, val, 1, INT_MAX);
    return 1;
  case CLI_OPT_MIN_REPEAT_MS:
    m->min_repeat_ms = cli_double(flag, val, 0, INFINITY);
    return 1;
  case CLI_OPT_TIMEOUT:
    m->timeout_s = cli_double(flag, val, DBL_MIN, INFINITY);
    return 1;
  case CLI_OPT_FLUSH_CACHE:
    m->flush_cache = 1;
    return 1;
  case CLI_OPT_BUILD_JOBS:
    m->build_jobs = (int)cli_int(flag, val, 0, INT_MAX);
    return 1;
  case CLI_OPT_THREADS:
    m->threads = (int)cli_int(flag, val, 0, INT_MAX);
    return 1;
  case CLI_OPT_CC:
    m->cc = val;
    return 1;
  }
  return 0;
}

/* mkdir -p: creates every missing folder of `dir`. */
int cli_make_dirs(const char *dir) {
  char *p = cli_strdup(dir);
  for (char *c = p + 1;; c++) {
    if (*c != '/' && *c != '\0')
      continue;
    char saved = *c;
    *c = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
      return errno;
    *c = saved;
    if (saved == '\0')
      break;
  }
  struct stat st;
  if (stat(dir, &st) != 0)
    return errno;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

void cli_set_default(cli_option *opts, const char *name, const char *fmt, ...) {
  cli_option *o = find_option(opts, name);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->def, sizeof o->def, fmt, ap);
  va_end(ap);
}

void cli_measure_defaults(cli_option *opts, const heron_measure_options *d) {
  cli_set_default(opts, "number", "%d", d->number);
  cli_set_default(opts, "repeat", "%d", d->repeat);
  cli_set_default(opts, "min-repeat-ms", "%g", d->min_repeat_ms);
  cli_set_default(opts, "timeout", "%g", d->timeout_s);
  cli_set_default(opts, "build-jobs", "%d", d->build_jobs);
  cli_set_default(opts, "threads", "%d", d->threads);
}

/* A stream that copies its lines to stderr with `prefix` in front of each
 * (a tuning run's progress lines, so interleaved runs stay readable). */
typedef struct cli_prefix {
  char prefix[256];
  int bol; /* at the beginning of a line */
} cli_prefix;

static ssize_t prefix_write(void *cookie, const char *buf, size_t n) {
  cli_prefix *p = cookie;
  for (size_t i = 0; i < n; i++) {
    if (p->bol)
      fputs(p->prefix, stderr);
    fputc(buf[i], stderr);
    p->bol = buf[i] == '\n';
  }
  return (ssize_t)n;
}

/* Opens the stream over *p (which must outlive it), line-buffered; NULL
 * when it cannot be made.  Close it with fclose. */
static FILE *prefixed_stderr(cli_prefix *p, const char *prefix) {
  snprintf(p->prefix, sizeof p->prefix, "%s", prefix);
  p->bol = 1;
  FILE *f = fopencookie(p, "w", (cookie_io_functions_t){.write = prefix_write});
  if (f)
    setvbuf(f, NULL, _IOLBF, 0);
  return f;
}

/* ---- Signals --------------------------------------------------------------
 * Process-wide by nature: a signal handler can reach nothing else. */
static volatile sig_atomic_t stop_sig;
static volatile pid_t run_child; /* the run of cli_tune_in_child, or 0 */

static void on_stop_signal(int sig) {
  if (stop_sig) {
    /* The second signal: no more waiting for anything. */
    if (run_child > 0)
      kill(run_child, SIGKILL);
    _exit(cli_stop_status(sig));
  }
  stop_sig = sig;
  if (run_child > 0)
    kill(run_child, sig);
}

const volatile sig_atomic_t *cli_stop_on_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  /* No SA_RESTART: a blocking read in the tool returns, so it can look at
   * the flag; the library retries its own calls on EINTR. */
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  return &stop_sig;
}

int cli_stop_signal(void) { return stop_sig; }

int cli_stop_status(int sig) { return 128 + sig; }

const char *cli_signal_name(int sig) {
  return sig == SIGINT    ? "SIGINT"
         : sig == SIGTERM ? "SIGTERM"
                          : cli_printf("signal %d", sig);
}

int cli_name_ok(const char *s, size_t len) {
  if (len == 0 || len > CLI_NAME_MAX_LEN || !isalnum((unsigned char)s[0]))
    return 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (!(isalnum(c) || c == '.' || c == '_' || c == '-'))
      return 0;
    if (c == '_' && i + 1 < len && s[i + 1] == '_')
      return 0;
  }
  return 1;
}

static void tune_child(const heron_task *t, const heron_tune_options *opts,
                       const char *progress_prefix, int fd) {
  heron_tune_options o = *opts;
  /* stdout is the parent's report: a plugin's or a library's printf in
   * the run goes to stderr instead. */
  fflush(stdout);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  cli_prefix po;
  FILE *progress = NULL;
  if (progress_prefix)
    o.progress = progress = prefixed_stderr(&po, progress_prefix);
  cli_tune_report rep;
  memset(&rep, 0, sizeof rep);
  heron_error_clear(&rep.err);
  rep.rc = heron_tune(t, &o, &rep.res, &rep.err);
  if (progress)
    fclose(progress);
  ssize_t w = write(fd, &rep, sizeof rep);
  _exit(w == (ssize_t)sizeof rep ? 0 : 1);
}

int cli_tune_in_child(const heron_task *t, const heron_tune_options *o,
                      const char *progress_prefix, cli_tune_report *rep) {
  int fds[2];
  memset(rep, 0, sizeof *rep);
  heron_error_clear(&rep->err);
  if (pipe(fds) != 0) {
    rep->rc =
        heron_error_set(&rep->err, HERON_EIO, "pipe: %s", strerror(errno));
    return -1;
  }
  fflush(NULL);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    /* Its own process group: a Ctrl-C reaches the parent only, which
     * passes it on once (cli_stop_on_signals).  The handlers are inherited;
     * the flag starts clear and the child has no run of its own. */
    setpgid(0, 0);
    run_child = 0;
    stop_sig = 0;
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
      _exit(1); /* the parent died before prctl took effect */
    close(fds[0]);
    tune_child(t, o, progress_prefix, fds[1]);
  }
  close(fds[1]);
  if (pid > 0) {
    run_child = pid;
    /* A signal that came between fork and now was not passed on. */
    if (stop_sig)
      kill(pid, stop_sig);
  }
  ssize_t got = -1;
  if (pid > 0) {
    size_t have = 0;
    while (have < sizeof *rep) {
      ssize_t r = read(fds[0], (char *)rep + have, sizeof *rep - have);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      have += (size_t)r;
    }
    got = (ssize_t)have;
  }
  close(fds[0]);
  int wst = 0;
  if (pid > 0)
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
      ;
  run_child = 0;
  if (pid > 0 && got == (ssize_t)sizeof *rep)
    return 0;
  memset(rep, 0, sizeof *rep);
  heron_error_clear(&rep->err);
  if (pid < 0)
    heron_error_set(&rep->err, HERON_EIO, "fork: %s", strerror(errno));
  else if (WIFSIGNALED(wst))
    heron_error_set(&rep->err, HERON_EINTERNAL,
                    "the tuning process died of signal %d", WTERMSIG(wst));
  else if (stop_sig && WIFEXITED(wst) &&
           WEXITSTATUS(wst) == cli_stop_status(stop_sig))
    /* The plugin guard ended it: a plugin call was still blocked after
     * the signal (core/plugin/guard.h; its message names the call). */
    heron_error_set(&rep->err, HERON_EINTERNAL,
                    "the tuning process stopped on %s without waiting for a "
                    "blocked plugin call",
                    cli_signal_name(stop_sig));
  else
    heron_error_set(&rep->err, HERON_EINTERNAL,
                    "the tuning process exited with status %d without a "
                    "result",
                    WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
  rep->rc = rep->err.code;
  return -1;
}

json_t *cli_json_load(const char *flag, const char *path) {
  struct stat st;
  if (stat(path, &st) != 0)
    cli_usage("%s: cannot read '%s': %s", flag, path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    cli_usage("%s: '%s' is %s, not a file", flag, path,
              S_ISFIFO(st.st_mode)  ? "a FIFO"
              : S_ISDIR(st.st_mode) ? "a directory"
              : S_ISCHR(st.st_mode) ? "a character device"
                                    : "not a regular file");
  const long long max = 64ll << 20;
  if (st.st_size > max)
    cli_usage("%s: '%s' holds %lld bytes, more than the limit of 64 MiB for "
              "a settings file",
              flag, path, (long long)st.st_size);
  json_error_t jerr;
  json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
  if (!root) {
    if (jerr.line <= 0)
      cli_usage("%s: cannot read '%s': %s", flag, path, jerr.text);
    cli_usage("%s %s: line %d column %d: %s", flag, path, jerr.line,
              jerr.column, jerr.text);
  }
  return root;
}

int cli_config_from_json(const heron_space *sp, json_t *obj, int64_t *cfg,
                         const char **bad) {
  const char *k;
  json_t *v;
  json_object_foreach(obj, k, v) {
    int var = heron_space_find_var(sp, k);
    *bad = k;
    if (var < 0)
      return 1;
    if (!json_is_integer(v))
      return 2;
    cfg[var] = json_integer_value(v);
  }
  return 0;
}

const char *cli_json_unknown_key(json_t *obj, const char *const *keys) {
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    const char *const *k = keys;
    while (*k && strcmp(*k, key))
      k++;
    if (!*k)
      return key;
  }
  return NULL;
}
