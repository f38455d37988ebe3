/* core/targets/cpu/codegen_halo.c - the zero halo of the cpu generator:
 * an unpacked input read past its edges is copied into a zero-haloed
 * buffer, so that no read of it needs a range check. */
#include <string.h>

#include "core/targets/cpu/codegen.h"

/* ---- the zero halo ---------------------------------------------------
 *
 * A padded convolution's border tiles read outside the input, and so do
 * the cut-short tiles of a ragged axis.  Read in place, each such read
 * needs a range check, and every tile touching a border (half the tiles
 * of a 3-D convolution over 8 x 56 x 56 with 8-wide tiles) would run a
 * guarded copy of the micro-kernel, 0.8x the speed of the plain one.  An
 * unpacked input with range-checked dimensions is copied, at each call,
 * into a buffer whose every dimension is widened to the indices the tiles
 * reach (over the rounded-up covers of all axes), zeros outside the
 * input: the zeros are written once, when the buffer is made (it is kept
 * across calls, as the packs are), each call copies the input's rows in.
 * Every read is then in range and unguarded.  A transposed convolution's
 * divided dimensions keep their checks (no halo). */
void heron__cpu_setup_halo(gen *g) {
  const heron__op *op = g->op;
  int64_t last[HERON__MAX_AXES];
  for (int a = 0; a < op->naxes; a++)
    last[a] = g->cover[a] - 1;
  for (int ti = 0; ti < op->ninputs; ti++) {
    const heron__tensor *ts = &op->in[ti];
    int any = 0;
    for (int d = 0; d < ts->ndim; d++)
      any |= g->guard[ti][d];
    g->halo[ti] = 0;
    if (!any || g->packed[ti] || is_region(g, ti) || g->divided[ti] ||
        !ts->bounded)
      continue;
    g->halo[ti] = 1;
    int64_t stride = 1;
    memset(g->lin[ti], 0, sizeof g->lin[ti]);
    g->lin0[ti] = 0;
    for (int d = ts->ndim - 1; d >= 0; d--) {
      const heron__affine *ix = &ts->index[d];
      int64_t lo, hi;
      heron__cpu_index_bounds(op, ix, last, &lo, &hi);
      if (lo > 0)
        lo = 0;
      if (hi < ts->dims[d] - 1)
        hi = ts->dims[d] - 1;
      g->hshift[ti][d] = -lo;
      g->hdims[ti][d] = hi - lo + 1;
      for (int a = 0; a < op->naxes; a++)
        g->lin[ti][a] += stride * ix->coef[a];
      g->lin0[ti] += stride * (ix->offset - lo);
      g->guard[ti][d] = 0;
      stride *= g->hdims[ti][d];
    }
    g->helems[ti] = stride;
  }
}

/* Emits the haloed copies: h_hc<ti> (kept, its zeros written when made)
 * gets the input's rows, in parallel, and the input's name then points at
 * it. */
void heron__cpu_emit_halo(gen *g) {
  const heron__op *op = g->op;
  for (int ti = 0; ti < op->ninputs; ti++) {
    if (!g->halo[ti])
      continue;
    const heron__tensor *ts = &op->in[ti];
    int nd = ts->ndim;
    int64_t row = ts->dims[nd - 1], rows = 1;
    for (int d = 0; d < nd - 1; d++)
      rows *= ts->dims[d];
    int64_t bytes = (g->helems[ti] * 4 + 63) / 64 * 64;
    heron__buf_printf(g->o,
                      "  float *restrict h_hc%d = h_halo(h_own ? "
                      "&h_halo_keep[%d] : 0, %lld);\n"
                      "  if (!h_hc%d)\n    __builtin_trap();\n"
                      "#pragma omp parallel for schedule(static)\n"
                      "  for (int64_t h_r = 0; h_r < %lld; h_r++) {\n"
                      "    int64_t h_x = h_r, h_o = %lld;\n",
                      ti, ti, (long long)bytes, ti, (long long)rows,
                      (long long)g->hshift[ti][nd - 1]);
    int64_t stride = g->hdims[ti][nd - 1];
    for (int d = nd - 2; d >= 0; d--) {
      heron__buf_printf(g->o,
                        "    h_o += (h_x %% %lld + %lld) * %lld;\n"
                        "    h_x /= %lld;\n",
                        (long long)ts->dims[d], (long long)g->hshift[ti][d],
                        (long long)stride, (long long)ts->dims[d]);
      stride *= g->hdims[ti][d];
    }
    heron__buf_printf(
        g->o,
        "    __builtin_memcpy(h_hc%d + h_o, h_src%d + h_r * %lld, "
        "%lld);\n  }\n"
        "  const float *restrict %s = h_hc%d;\n",
        ti, ti, (long long)row, (long long)(row * 4), ts->name, ti);
  }
}
