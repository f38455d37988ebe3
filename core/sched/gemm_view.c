/* core/sched/gemm_view.c - the implicit-GEMM view shared by the cuda and
 * amx templates (gemm_view.h). */
#include "core/sched/gemm_view.h"

#include <stdio.h>
#include <string.h>

void heron__gemm_view_group(const heron__op *op, int ia, int ib,
                            heron__gemm_group g[HERON__NGROUPS]) {
  for (int i = 0; i < HERON__NGROUPS; i++)
    g[i].naxes = 0;
  /* Axes go in op order, so each group keeps the op's outermost-first
   * nesting and its fused index splits back with div / mod. */
  for (int a = 0; a < op->naxes; a++) {
    int grp;
    if (op->axes[a].kind == HERON__REDUCE) {
      grp = HERON__GK;
    } else {
      int ra = heron__tensor_reads(&op->in[ia], a);
      int rb = heron__tensor_reads(&op->in[ib], a);
      grp = ra && !rb ? HERON__GM : rb && !ra ? HERON__GN : HERON__GB;
    }
    g[grp].axes[g[grp].naxes++] = a;
  }
  for (int i = 0; i < HERON__NGROUPS; i++) {
    g[i].extent = 1;
    for (int k = 0; k < g[i].naxes; k++)
      g[i].extent *= op->axes[g[i].axes[k]].extent;
  }
}

void heron__gemm_group_names(const heron__op *op, const heron__gemm_group *g,
                             char *buf, size_t cap) {
  buf[0] = '\0';
  for (int k = 0; k < g->naxes; k++)
    snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", k ? "*" : "",
             op->axes[g->axes[k]].name);
  if (!buf[0])
    snprintf(buf, cap, "1");
}

void heron__flat_coefs(const heron__op *op, const heron__tensor *ts,
                       int64_t *fc, int64_t *off) {
  int64_t stride = 1;
  for (int a = 0; a < op->naxes; a++)
    fc[a] = 0;
  *off = 0;
  for (int d = ts->ndim - 1; d >= 0; d--) {
    for (int a = 0; a < op->naxes; a++)
      fc[a] += ts->index[d].coef[a] * stride;
    *off += ts->index[d].offset * stride;
    stride *= ts->dims[d];
  }
}

int heron__gemm_divided(const heron__tensor *ts) {
  for (int d = 0; d < ts->ndim; d++)
    if (heron__affine_div(&ts->index[d]) > 1)
      return 1;
  return 0;
}
