/* core/targets/cpu/rules.h - what the cpu rules' files (rules.c,
 * rules_dot.c) share.  Internal to them. */
#ifndef HERON_CORE_TARGETS_CPU_RULES_H
#define HERON_CORE_TARGETS_CPU_RULES_H

#include "core/sched/rules.h"
#include "core/targets/cpu/template.h"

/* The rule context: the shared builder context (core/sched/rules.h), the
 * template being filled, the vector axis' quotient variable, and what the
 * packing rule leaves to the region's. */
typedef struct ctx {
  heron__template *t;
  heron__cpu_sched *s; /* t's cpu schedule, being filled */
  heron__rules r;
  int vec_q; /* t3 / vec of the vector axis, or -1 */
  /* thread_tile[a]: the variable of spatial axis a's thread tile (levels
   * 1..3, <a>.P), or -1 until one is made; pack_total: pack.elems, the
   * elements of the packs and the output's stage. */
  int thread_tile[HERON__MAX_AXES];
  int pack_total;
} ctx;

/* rules_dot.c: the micro-kernel variant from the description's ISA flags
 * and the reduction steps one 32-bit lane sums (HERON__DOT_NONE for fp32). */
void heron__cpu_dot_setup(ctx *c);
/* rules_dot.c: Vectorize for a dot-product kernel. */
void heron__cpu_rule_vectorize_dot(ctx *c);
/* rules_dot.c: the reduction slice rounded up to whole groups, at most a
 * quarter more. */
void heron__cpu_rule_dot_groups(ctx *c);

/* rules.c: the spatial axis that indexes the output's last (contiguous)
 * dimension alone with coefficient 1, or -1; whether tensor ts reads axis
 * a contiguously (its row-major stride 1). */
int heron__cpu_contiguous_axis(const heron__op *op);
int heron__cpu_reads_contiguously(const heron__op *op, const heron__tensor *ts,
                                  int a);
/* rules_store.c: the output's transposed store (<out>.transpose), after
 * every other rule. */
void heron__cpu_rule_transpose(ctx *c);

#endif
