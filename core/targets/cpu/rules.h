/* core/targets/cpu/rules.h - what the cpu rules' files (rules.c,
 * rules_dot.c) share.  Internal to them. */
#ifndef HERON_CORE_TARGETS_CPU_RULES_H
#define HERON_CORE_TARGETS_CPU_RULES_H

#include "core/sched/rules.h"
#include "core/targets/cpu/template.h"

/* The rule context: the shared builder context (core/sched/rules.h), the
 * template being filled, and the vector axis' quotient variable. */
typedef struct ctx {
  heron__template *t;
  heron__cpu_sched *s; /* t's cpu schedule, being filled */
  heron__rules r;
  int vec_q; /* t3 / vec of the vector axis, or -1 */
} ctx;

/* rules_dot.c: the micro-kernel variant from the description's ISA flags
 * and the reduction steps one 32-bit lane sums (HERON__DOT_NONE for fp32). */
void heron__cpu_dot_setup(ctx *c);
/* rules_dot.c: Vectorize for a dot-product kernel. */
void heron__cpu_rule_vectorize_dot(ctx *c);
/* rules_dot.c: the reduction slice rounded up to whole groups, at most a
 * quarter more. */
void heron__cpu_rule_dot_groups(ctx *c);

#endif
