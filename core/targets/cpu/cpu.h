/* core/targets/cpu/cpu.h - what the cpu target's files share besides its
 * template (template.h): the descriptor's members that live in their own
 * files.  Internal to core/targets/cpu/ and to the amx target, whose --emit
 * is the cpu's. */
#ifndef HERON_CORE_TARGET_CPU_CPU_H
#define HERON_CORE_TARGET_CPU_CPU_H

#include "core/sched/sched.h"
#include "core/targets/target.h"

/* describe.c: the template's rules, stages and loop nest. */
void heron__cpu_describe(const heron__template *t, heron__buf *out);

/* emit.c: kernel.c, driver.c and build.sh of the best kernel. */
int heron__cpu_emit(const heron_task *t, const heron_measurement *best,
                    const char *dir, heron_error *err);

#endif
