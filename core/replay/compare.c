/* core/replay/compare.c - a T1 task's whole recorded space (its T4
 * file): every recorded time (heron_task_recorded_space), and the space
 * compared with the file (heron_task_compare_recorded). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/record/record.h"
#include "core/replay/store.h"
#include "core/space/t1.h"
#include "core/task/task.h"
#include "core/util/util.h"

HERON_API int heron_task_recorded_space(const heron_task *t, double **seconds,
                                        double **cost, int *n,
                                        heron_error *err) {
  *seconds = *cost = NULL;
  *n = 0;
  if (!t || !t->t1 || t->nrecorded < 1)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "task %s has no whole recorded space: only a T1 "
                           "task with its T4 file has",
                           t ? heron_task_key(t) : "(null)");
  heron__replay *rp = NULL;
  heron__replay_stats st;
  memset(&st, 0, sizeof st);
  int rc = heron__replay_open(t, 0, &rp, &st, err);
  if (rc)
    return rc;
  double *s = malloc((rp->used > 0 ? rp->used : 1) * sizeof *s);
  double *c = malloc((rp->used > 0 ? rp->used : 1) * sizeof *c);
  if (!s || !c) {
    free(s);
    free(c);
    heron__replay_free(rp);
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  int k = 0;
  for (size_t i = 0; i < rp->cap; i++) {
    const answer *a = &rp->slots[i];
    if (!a->key)
      continue;
    s[k] = a->m.status == HERON_MEAS_OK ? a->m.seconds : NAN;
    c[k++] = a->cost;
  }
  heron__replay_free(rp);
  *seconds = s;
  *cost = c;
  *n = k;
  return HERON_OK;
}

/* Visits every combination of the T1 parameters' values (an odometer over
 * their lists) and sorts the valid ones into those the store answers and
 * those it lacks. */
static int compare_space(heron__replay *rp, long long *both,
                         long long *only_space, heron__buf *out,
                         heron_error *err) {
  const heron__t1 *t1 = rp->task->t1;
  double total = 1;
  for (int i = 0; i < t1->nparams; i++)
    total *= t1->params[i].nvals;
  if (total > 5e7)
    return heron_error_set(err, HERON_ERANGE,
                           "the T1 space has %.3g value combinations, too "
                           "many to enumerate (at most 5e7)",
                           total);
  int *pos = calloc((size_t)t1->nparams, sizeof *pos);
  int64_t *cfg = malloc((size_t)rp->nvars * sizeof *cfg);
  if (!pos || !cfg) {
    free(pos);
    free(cfg);
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  for (;;) {
    for (int i = 0; i < t1->nparams; i++) {
      const heron__t1_param *p = &t1->params[i];
      cfg[p->var] = p->coded ? pos[i] : p->vals[pos[i]].i;
    }
    if (heron_space_violations(rp->sp, cfg, NULL, 0) == 0) {
      if (heron__replay_slot(rp, heron__config_key(rp->sp, cfg))->key) {
        (*both)++;
      } else if ((*only_space)++ < 10) {
        char text[400];
        heron__replay_config_text(rp->sp, cfg, text, sizeof text);
        heron__buf_printf(out, "  in the space, not in the T4 file: %s\n",
                          text);
      }
    }
    int i = t1->nparams - 1;
    while (i >= 0 && ++pos[i] == t1->params[i].nvals)
      pos[i--] = 0;
    if (i < 0)
      break;
  }
  free(pos);
  free(cfg);
  return HERON_OK;
}

HERON_API int heron_task_compare_recorded(const heron_task *t, long long *both,
                                          long long *only_space,
                                          long long *only_file, char **report,
                                          heron_error *err) {
  *both = *only_space = *only_file = 0;
  *report = NULL;
  if (!t || !t->t1 || t->nrecorded < 1)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "only a T1 task with its T4 file can be compared");
  heron__replay *rp = NULL;
  heron__replay_stats st;
  memset(&st, 0, sizeof st);
  int rc = heron__replay_open_store(t, 0, 1, &rp, &st, err);
  if (rc)
    return rc;
  heron__buf out = {0};
  rc = compare_space(rp, both, only_space, &out, err);
  *only_file = rp->noutside;
  if (!rc) {
    if (*only_space > 10)
      heron__buf_printf(&out, "  ... %lld more in the space only\n",
                        *only_space - 10);
    if (rp->outside.data)
      heron__buf_puts(&out, rp->outside.data);
    if (*only_file > 10)
      heron__buf_printf(&out, "  ... %lld more in the T4 file only\n",
                        *only_file - 10);
    *report = heron__buf_take(&out);
    if (!*report && !(*report = strdup("")))
      rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  heron__buf_free(&out);
  heron__replay_free(rp);
  return rc;
}
