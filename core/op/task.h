/* core/op/task.h - the task struct, internal to libheron.  A task ties an
 * op description to a target, its hardware, its template and its space. */
#ifndef HERON_CORE_TASK_H
#define HERON_CORE_TASK_H

#include "core/op/op.h"
#include "core/sched/sched.h"
#include "core/target/hw.h"
#include "heron/task.h"

struct heron_task {
  heron__op op;
  heron__hw hw;
  heron__template *tmpl;
  heron_space *space;
  char target[16];
  char key[256];
};

#endif
