/* core/task/task.h - the task struct, internal to libheron.  A task ties an
 * op description to a target, its hardware, its template and its space. */
#ifndef HERON_CORE_TASK_TASK_H
#define HERON_CORE_TASK_TASK_H

#include "core/op/op.h"
#include "core/sched/sched.h"
#include "core/targets/hw.h"
#include "core/targets/target.h"
#include "heron/task.h"

struct heron_task {
  heron__op op;
  heron__hw hw;
  heron__template *tmpl;
  heron_space *space;
  /* The task's target (the spec's; a T1 task's is replay), and the base
   * target whose rules built the template and space and whose setup
   * measures it: the task's own, or for a replay task the recorded one
   * (cpu or cuda), so code generation and --emit treat the kernels as what
   * they were when measured; NULL for a T1 task, which has no kernels. */
  const struct heron__target *target;
  const struct heron__target *base;
  char key[256];
  /* A task answered from recorded measurements (a replay task, a T1 task
   * with its T4 file; nrecorded > 0): copies of the logs or the T4 file to
   * answer from, and the recorded task key their records must carry.  The
   * recorded meter measures such a task (core/measure/meter.h). */
  char **recorded;
  int nrecorded;
  char recorded_key[256];
  /* T1 tasks only: the parameters of the T1 file the space was built from
   * (tmpl is NULL: there is no kernel to generate). */
  struct heron__t1 *t1;
};

#endif
