/* core/sched/template.h - the target-neutral base of a schedule template,
 * as every target's rules, describe and generator see it.  Internal to
 * libheron.
 *
 * The core owns the base and each target owns its extension, as SQLite's
 * VFS layer owns sqlite3_file and each VFS the rest of its file: the core
 * (core/sched/template.c) allocates the base and sets op, hw and target;
 * the target's rules set elem_bytes, record their notes and hang the
 * target's own schedule on `sched` (core/targets/target.h: rules,
 * free_sched), which only that target reads, through the typed accessor
 * in its own header (heron__cpu_sched_of in core/targets/cpu/template.h,
 * heron__amx_sched_of, heron__cuda_sched_of).  Nothing here names a
 * target.
 */
#ifndef HERON_CORE_SCHED_TEMPLATE_H
#define HERON_CORE_SCHED_TEMPLATE_H

#include "core/sched/rules.h"
#include "core/sched/sched.h"

struct heron__template {
  heron__op op;   /* a copy: the template outlives nobody's op */
  heron__hw hw;   /* a copy of the hardware the limits came from */
  int elem_bytes; /* bytes of one element of every tensor (fp32: 4) */

  /* The rules that applied (or were considered), for describe. */
  int nrules;
  heron__rule_note rules[HERON__MAX_RULES];

  /* The target whose rules built it (core/targets/target.h). */
  const struct heron__target *target;
  /* That target's own schedule, owned (freed by its free_sched); NULL
   * until its rules make one. */
  void *sched;
};

#endif
