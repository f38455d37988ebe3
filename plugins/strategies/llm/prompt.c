/* plugins/strategies/llm/prompt.c - the prompt, built from the space (see
 * prompt.h).  The text grows in a small string builder; any allocation
 * failure makes llm_prompt_fixed or llm_prompt return NULL. */
#include "prompt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char llm_system_message[] =
    "You are an expert in optimizing tensor programs for deep-learning "
    "accelerators and CPUs. You propose schedule configurations for a "
    "kernel auto-tuner. Answer only with configurations in the requested "
    "format, with no other text.";

/* Candidate sets longer than this are shown by their ends and size. */
#define LLM_SET_SHOWN 48

typedef struct sbuf {
  char *s;
  size_t len, cap;
  int failed;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sb_add(sbuf *b, const char *fmt, ...) {
  if (b->failed)
    return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0,
                      fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->failed = 1;
      return;
    }
    if (b->s && b->len + (size_t)n < b->cap) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = b->cap ? b->cap : 4096;
    while (cap <= b->len + (size_t)n)
      cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
      b->failed = 1;
      return;
    }
    b->s = s;
    b->cap = cap;
  }
}

/* "knob: value, knob: value, ..." of the knobs of cfg. */
static void add_knobs(sbuf *b, const heron_space *sp, const int64_t *cfg) {
  int nk = heron_space_nknobs(sp);
  for (int i = 0; i < nk; i++) {
    int v = heron_space_knob(sp, i);
    sb_add(b, "%s%s: %lld", i ? ", " : "", heron_space_var_name(sp, v),
           (long long)cfg[v]);
  }
}

static void add_domain(sbuf *b, const heron_space *sp, int v) {
  int64_t lo = 0, hi = 0;
  const int64_t *vals = NULL;
  int nvals = 0;
  heron_space_var_domain(sp, v, &lo, &hi, &vals, &nvals);
  if (!vals) {
    sb_add(b, "an integer from %lld to %lld", (long long)lo, (long long)hi);
    return;
  }
  sb_add(b, "one of {");
  for (int i = 0; i < nvals; i++) {
    if (nvals > LLM_SET_SHOWN && i == LLM_SET_SHOWN / 2) {
      sb_add(b, ", ... (%d values in all)", nvals);
      i = nvals - LLM_SET_SHOWN / 2;
    }
    sb_add(b, "%s%lld", i ? ", " : "", (long long)vals[i]);
  }
  sb_add(b, "}");
}

/* An ok measurement's place in the history and its throughput, sorted
 * fastest first (a copy, so qsort needs no context). */
typedef struct ranked {
  double gflops;
  int index;
} ranked;

static int by_gflops_desc(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->gflops != y->gflops)
    return (x->gflops < y->gflops) - (x->gflops > y->gflops);
  return x->index - y->index;
}

/* The example lines: the `examples` best ok measurements, then the
 * `failures` latest failed ones with perf 0, as Heron's prompt shows
 * them. */
static void add_examples(sbuf *b, const heron_strategy_env *env, int examples,
                         int failures) {
  const heron_history *h = env->history;
  int n = h ? heron_history_count(h) : 0;
  ranked *ok = malloc(((size_t)n + 1) * sizeof *ok);
  if (!ok) {
    b->failed = 1;
    return;
  }
  int nok = 0, nfail = 0;
  for (int i = 0; i < n; i++) {
    const heron_measurement *m = heron_history_get(h, i);
    if (m->status == HERON_MEAS_OK)
      ok[nok++] = (ranked){m->gflops, i};
    else
      nfail++;
  }
  qsort(ok, (size_t)nok, sizeof *ok, by_gflops_desc);
  int shown_ok = nok < examples ? nok : examples;
  int shown_fail = nfail < failures ? nfail : failures;
  if (shown_ok + shown_fail == 0) {
    sb_add(b, "No configuration has been measured yet.\n");
    free(ok);
    return;
  }
  sb_add(b,
         "Measured configurations (perf: GFLOP/s, higher is better; perf 0 "
         "means the kernel failed to build or run, or gave wrong results):\n");
  int line = 1;
  for (int i = 0; i < shown_ok; i++) {
    const heron_measurement *m = heron_history_get(h, ok[i].index);
    sb_add(b, "Configuration %d (perf: %.2f): ", line++, m->gflops);
    add_knobs(b, env->space, m->config);
    sb_add(b, "\n");
  }
  for (int i = n - 1; i >= 0 && shown_fail > 0; i--) {
    const heron_measurement *m = heron_history_get(h, i);
    if (m->status == HERON_MEAS_OK)
      continue;
    sb_add(b, "Configuration %d (perf: 0): ", line++);
    add_knobs(b, env->space, m->config);
    sb_add(b, "\n");
    shown_fail--;
  }
  free(ok);
}

/* Returns b's text, or NULL (freeing it) when any step failed. */
static char *sb_done(sbuf *b) {
  if (!b->failed)
    return b->s;
  free(b->s);
  return NULL;
}

char *llm_prompt_fixed(const heron_strategy_env *env) {
  const heron_space *sp = env->space;
  sbuf b = {0};
  sb_add(&b,
         "Task: %s (operator/shape/element type/target). Find the "
         "configuration of its kernel that runs fastest on this target.\n\n",
         env->task_key ? env->task_key : "(unnamed)");

  int nk = heron_space_nknobs(sp);
  sb_add(&b, "A configuration sets each of these %d knobs to an integer:\n",
         nk);
  for (int i = 0; i < nk; i++) {
    int v = heron_space_knob(sp, i);
    sb_add(&b, "- %s: ", heron_space_var_name(sp, v));
    add_domain(&b, sp, v);
    sb_add(&b, "\n");
  }

  int nc = heron_space_nconstraints(sp);
  sb_add(&b,
         "\nEvery configuration must satisfy all of these %d rules. Names "
         "that are not knobs are derived from the knobs; plain numbers are "
         "the target's limits and the loop extents:\n",
         nc);
  char text[512];
  for (int c = 0; c < nc; c++) {
    heron_space_constraint_str(sp, c, text, sizeof text);
    sb_add(&b, "- %s\n", text);
  }
  return sb_done(&b);
}

char *llm_prompt(const heron_strategy_env *env, const char *fixed, int want,
                 int examples, int failures, const int64_t *pending,
                 int npending) {
  const heron_space *sp = env->space;
  int nvars = heron_space_nvars(sp);
  int nk = heron_space_nknobs(sp);
  sbuf b = {0};
  sb_add(&b, "%s", fixed);
  sb_add(&b, "\n");
  add_examples(&b, env, examples, failures);
  if (npending > 0) {
    sb_add(&b, "\nAlready proposed and waiting to be measured (do not "
               "repeat them):\n");
    for (int i = 0; i < npending; i++) {
      sb_add(&b, "## ");
      add_knobs(&b, sp, pending + (size_t)i * nvars);
      sb_add(&b, " ##\n");
    }
  }

  sb_add(&b,
         "\nPropose %d new configuration%s expected to run faster than the "
         "best one above, different from every configuration above, "
         "respecting every rule. Avoid the ends of a knob's range unless "
         "they are needed. Answer with exactly %d line%s and nothing else, "
         "each setting every knob, in this form:\n## ",
         want, want == 1 ? "" : "s", want, want == 1 ? "" : "s");
  for (int i = 0; i < nk; i++)
    sb_add(&b, "%s%s: VALUE", i ? ", " : "",
           heron_space_var_name(sp, heron_space_knob(sp, i)));
  sb_add(&b, " ##\n");
  return sb_done(&b);
}
