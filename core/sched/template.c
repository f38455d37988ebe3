/* core/sched/template.c - building, describing and freeing schedule
 * templates: the part every target shares in front of the target's own
 * rules, describe, code generator and flags (core/targets/target.h).
 *
 * A target without rules (replay: it rebuilds the recorded target's) is
 * refused with HERON_EUNSUPPORTED and a message naming the targets that
 * have them; a target's rules refuse what they do not cover (an op, a
 * dtype) the same way, so a task fails at creation instead of producing a
 * space whose configs nothing can build.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched/template.h"
#include "core/space/builder.h"
#include "core/targets/target.h"

/* HERON_EUNSUPPORTED for a target without rules (or none of that name),
 * naming the targets that have them. */
static int no_rules(const char *target, heron_error *err) {
  char names[128];
  heron__target_names(0, HERON__TARGET_RECORDED, ", ", ", ", NULL, names,
                      sizeof names);
  return heron_error_set(err, HERON_EUNSUPPORTED,
                         "target '%s' has no schedule rules (supported: %s)",
                         target, names);
}

int heron__template_build_for(const heron__op *op, const heron__hw *hw,
                              const heron__target *tg, heron__template **tmpl,
                              heron_space **space, heron_error *err) {
  if (!op || !hw || !tg || !tmpl || !space)
    return heron_error_set(err, HERON_EINVAL, "template: NULL argument");
  *tmpl = NULL;
  *space = NULL;
  if (!tg->rules)
    return no_rules(tg->name, err);
  /* Makes a template and a space, lets the target's rules fill them, and
   * freezes the space. */
  heron__template *t = calloc(1, sizeof *t);
  heron_space *sp = heron__space_new();
  if (!t || !sp) {
    free(t);
    heron__space_free(sp);
    return heron_error_set(err, HERON_ENOMEM, "template: out of memory");
  }
  t->op = *op;
  t->hw = *hw;
  t->target = tg;
  int rc = tg->rules(t, sp, err);
  if (rc == HERON_OK)
    rc = heron__space_finish(sp, err);
  if (rc != HERON_OK) {
    heron__template_free(t);
    heron__space_free(sp);
    return rc;
  }
  *tmpl = t;
  *space = sp;
  return HERON_OK;
}

int heron__template_build(const heron__op *op, const heron__hw *hw,
                          const char *target, heron__template **tmpl,
                          heron_space **space, heron_error *err) {
  if (!op || !hw || !tmpl || !space)
    return heron_error_set(err, HERON_EINVAL, "template: NULL argument");
  const heron__target *tg = heron__target_find(target);
  if (!tg) {
    *tmpl = NULL;
    *space = NULL;
    return no_rules(target, err);
  }
  return heron__template_build_for(op, hw, tg, tmpl, space, err);
}

void heron__template_free(heron__template *t) {
  if (t && t->target && t->target->free_sched)
    t->target->free_sched(t);
  free(t);
}

const char *heron__template_cflags(const heron__template *t) {
  /* No template (a caller asking for the defaults): this machine's ISA. */
  if (!t || !t->target->cflags)
    return "-O3 -fno-predictive-commoning -march=native -fopenmp -fPIC "
           "-shared";
  return t->target->cflags(t);
}

int heron__codegen(const heron__template *t, const heron_space *sp,
                   const int64_t *cfg, heron__buf *out, heron_error *err) {
  if (!t || !sp || !cfg || !out)
    return heron_error_set(err, HERON_EINVAL, "codegen: NULL argument");
  return t->target->codegen(t, sp, cfg, out, err);
}

static void knobs_and_constraints(const heron_space *sp, heron__buf *out);

/* The target's stages and loop nest, then the knobs and constraints. */
void heron__template_describe(const heron__template *t, const heron_space *sp,
                              heron__buf *out) {
  if (!t || !out)
    return;
  if (t->target->describe)
    t->target->describe(t, out);
  knobs_and_constraints(sp, out);
}

/* The space part of describe: every knob with its domain, every
 * constraint. */
static void knobs_and_constraints(const heron_space *sp, heron__buf *out) {
  if (!sp)
    return;
  heron__buf_puts(out, "knobs:\n");
  for (int i = 0; i < heron_space_nknobs(sp); i++) {
    int v = heron_space_knob(sp, i);
    int64_t lo, hi;
    const int64_t *vals;
    int nvals;
    if (heron_space_var_domain(sp, v, &lo, &hi, &vals, &nvals) != HERON_OK)
      continue;
    heron__buf_printf(out, "  %s in ", heron_space_var_name(sp, v));
    if (vals) {
      heron__buf_puts(out, "{");
      for (int k = 0; k < nvals; k++)
        heron__buf_printf(out, "%s%lld", k ? ", " : "", (long long)vals[k]);
      heron__buf_puts(out, "}\n");
    } else {
      heron__buf_printf(out, "[%lld, %lld]\n", (long long)lo, (long long)hi);
    }
  }
  heron__buf_printf(out, "constraints (%d over %d variables):\n",
                    heron_space_nconstraints(sp), heron_space_nvars(sp));
  for (int c = 0; c < heron_space_nconstraints(sp); c++) {
    char text[512];
    if (heron_space_constraint_str(sp, c, text, sizeof text) >= 0)
      heron__buf_printf(out, "  %s\n", text);
  }
}
