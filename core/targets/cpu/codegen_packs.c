/* core/targets/cpu/codegen_packs.c - packing in the cpu generator
 * (Add-Multi-Level-SPM): the packed inputs' register layout, the copy of
 * a tile into its pack, the pointers and step index the micro-kernel
 * reads it with, and the per-thread buffers kept across calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/targets/cpu/codegen.h"

/* ---- packing (Add-Multi-Level-SPM) ---------------------------------------
 *
 * A packed input is copied, at each step of the reduction-outer loops, for
 * the thread's whole tile into a per-thread buffer laid out as
 *
 *   [level-1 (and, at acc_at 0, level-2) tile indices of the spatial axes
 *    it reads] [reduction-inner step] [register-tile point]
 *
 * so the micro-kernel reads it with one pointer per register tile (h_q),
 * one step counter (h_k) and constant offsets. */

/* The register layout of every packed input and the reduction-inner step
 * count. */
void heron__cpu_setup_packing(gen *g) {
  const heron__op *op = g->op;
  g->ki = 1;
  for (int a = 0; a < op->naxes; a++)
    if (op->axes[a].kind == HERON__REDUCE)
      g->ki *= g->len[a][1];
  for (int ti = 0; ti < op->ninputs; ti++) {
    g->packed[ti] = (int)g->cfg[g->s->pack[ti]];
    g->prepacked[ti] = g->packed[ti] && (op->prepack >> ti & 1u);
    memset(g->rstride[ti], 0, sizeof g->rstride[ti]);
    const heron__tensor *ts = &op->in[ti];
    int *order = g->rorder[ti], n = 0;
    for (int a = 0; a < op->naxes; a++)
      if (op->axes[a].kind == HERON__SPATIAL && op->axes[a].extent > 1 &&
          heron__tensor_reads(ts, a) && a != g->vaxis)
        order[n++] = a;
    if (g->vaxis >= 0 && heron__tensor_reads(ts, g->vaxis))
      order[n++] = g->vaxis;
    int64_t stride = 1;
    for (int i = n - 1; i >= 0; i--) {
      g->rstride[ti][order[i]] = stride;
      stride *= g->reg[order[i]];
    }
    g->nrorder[ti] = n;
    g->rp[ti] = stride;
  }
}

/* The spatial axes of input ti's pack blocks, with their levels, in the
 * order of the compute loops (level-major, then op order): their loop
 * indices number the blocks. */
int heron__cpu_block_loops(const gen *g, int ti, int *axis, int *level) {
  const heron__op *op = g->op;
  int n = 0;
  for (int l = 1; l < g->reg_from; l++)
    for (int a = 0; a < op->naxes; a++)
      if (op->axes[a].kind == HERON__SPATIAL && g->len[a][l] > 1 &&
          heron__tensor_reads(tensor_at(g, ti), a)) {
        axis[n] = a;
        level[n] = l;
        n++;
      }
  return n;
}

/* Emits the copy of input ti's tile into `dst` (inside the
 * reduction-outer loops): h_pk<ti> in the kernel, the tile's block of the
 * whole packed tensor in heron_prepack. */
void heron__cpu_emit_pack(gen *g, int ti, int depth, const char *dst) {
  const heron__op *op = g->op;
  const heron__tensor *ts = &op->in[ti];
  indent(g, depth);
  heron__buf_printf(g->o, "{ /* pack %s */\n", ts->name);
  int d = depth + 1;
  indent(g, d);
  heron__buf_printf(g->o, "float *restrict h_p = %s;\n", dst);
  int axis[2 * HERON__MAX_AXES], level[2 * HERON__MAX_AXES];
  int nb = heron__cpu_block_loops(g, ti, axis, level);
  for (int i = 0; i < nb; i++) {
    const char *nm = op->axes[axis[i]].name;
    int l = level[i];
    indent(g, d++);
    heron__buf_printf(g->o,
                      "for (int64_t %s_%d = 0; %s_%d < %lld; %s_%d++) {\n", nm,
                      l, nm, l, (long long)g->len[axis[i]][l], nm, l);
  }
  int nr = heron__cpu_open_loops(g, HERON__REDUCE, 1, d, 0);
  d += nr;
  heron__cpu_reduce_indices(g, d);
  /* The register-tile points, vector axis innermost (rstride order). */
  const int *order = g->rorder[ti];
  int n = g->nrorder[ti];
  int nreg = 0;
  for (int i = 0; i < n; i++) {
    const char *nm = op->axes[order[i]].name;
    if (g->reg[order[i]] <= 1)
      continue;
    indent(g, d + nreg);
    heron__buf_printf(g->o, "for (int64_t %s_r = 0; %s_r < %lld; %s_r++) {\n",
                      nm, nm, (long long)g->reg[order[i]], nm);
    nreg++;
  }
  d += nreg;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__SPATIAL || op->axes[a].extent == 1 ||
        !heron__tensor_reads(ts, a))
      continue;
    heron__buf o = {0};
    heron__cpu_origin_text(g, a, &o);
    if (g->reg[a] > 1)
      heron__buf_printf(&o, " + %s_r", op->axes[a].name);
    indent(g, d);
    heron__buf_printf(g->o, "const int64_t %s_b = %s;\n", op->axes[a].name,
                      o.data);
    heron__buf_free(&o);
  }
  /* Zeros past the edge of every ragged axis. */
  int64_t zero[HERON__MAX_AXES] = {0};
  memcpy(g->guard_axis, g->ragged, sizeof g->guard_axis);
  indent(g, d);
  heron__buf_puts(g->o, "*h_p++ = ");
  heron__cpu_scalar_elem(g, ti, zero, g->o);
  heron__buf_puts(g->o, ";\n");
  memset(g->guard_axis, 0, sizeof g->guard_axis);
  d -= nreg;
  heron__cpu_close_loops(g, nreg, d);
  d -= nr;
  heron__cpu_close_loops(g, nr, d);
  for (int i = nb - 1; i >= 0; i--) {
    indent(g, --d);
    heron__buf_puts(g->o, "}\n");
  }
  indent(g, depth);
  heron__buf_puts(g->o, "}\n");
}

/* " + j_1 * 4608 + ...": the offset of the current block of tensor ti's
 * per-thread buffer (a pack, or the output's stage), numbered by the block
 * loops' indices, blocks of `block` floats. */
void heron__cpu_block_offset_text(const gen *g, int ti, int64_t block,
                                  heron__buf *b) {
  int axis[2 * HERON__MAX_AXES], level[2 * HERON__MAX_AXES];
  int nb = heron__cpu_block_loops(g, ti, axis, level);
  int64_t stride = block;
  for (int i = nb - 1; i >= 0; i--) {
    heron__buf_printf(b, " + %s_%d * %lld", g->op->axes[axis[i]].name, level[i],
                      (long long)stride);
    stride *= g->len[axis[i]][level[i]];
  }
}

/* ---- the region (region.h) -----------------------------------------------
 *
 * The knob X.region copies, at each step of the reduction-outer loops, the
 * part of X the thread tile (spatial levels 1..3) and the reduction slice
 * read into the per-thread buffer h_pk<X>, with region.h's emitter, the
 * one the int8 and bf16 generator calls. */

int heron__cpu_setup_region(gen *g) {
  const heron__op *op = g->op;
  const heron__cpu_sched *s = g->s;
  if (s->region < 0 || !g->cfg[s->region])
    return HERON_OK;
  int64_t tile[HERON__MAX_AXES];
  for (int a = 0; a < op->naxes; a++)
    tile[a] = op->axes[a].kind == HERON__SPATIAL
                  ? g->len[a][1] * g->len[a][2] * g->len[a][3]
                  : g->len[a][1];
  int act = op->act_input;
  if (!heron__cpu_region_plan(op, act, 1 - act, tile, 1, &g->rg))
    return HERON_EINVAL;
  g->region = 1;
  return HERON_OK;
}

/* The origins the region's copy reads: o_<a>, the thread tile's, of every
 * spatial axis the input reads, and b_<r>, the slice's first step, of
 * every reduction axis it reads, in a block of their own. */
void heron__cpu_emit_region(gen *g, int depth) {
  const heron__op *op = g->op;
  const heron__tensor *ts = &op->in[g->rg.act];
  indent(g, depth);
  heron__buf_printf(g->o, "{ /* region of %s */\n", ts->name);
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].extent == 1 || !heron__tensor_reads(ts, a))
      continue;
    int spatial = op->axes[a].kind == HERON__SPATIAL;
    int64_t step =
        spatial ? g->len[a][1] * g->len[a][2] * g->len[a][3] : g->len[a][1];
    const char *nm = op->axes[a].name;
    indent(g, depth + 1);
    if (g->len[a][0] > 1)
      heron__buf_printf(g->o, "const int64_t %s_%s = %s_0 * %lld;\n",
                        spatial ? "o" : "b", nm, nm, (long long)step);
    else
      heron__buf_printf(g->o, "const int64_t %s_%s = 0;\n", spatial ? "o" : "b",
                        nm);
  }
  char dst[16];
  snprintf(dst, sizeof dst, "h_pk%d", g->rg.act);
  heron__cpu_region_emit(g->o, op, &g->rg, depth + 1, dst, ts->name, "float");
  indent(g, depth);
  heron__buf_puts(g->o, "}\n");
}

/* In the compute nest, at a register tile: h_q<ti> points at the tile's
 * block of every packed input, and at the tile's origin in the region. */
void heron__cpu_emit_pack_pointers(gen *g, int depth) {
  const heron__op *op = g->op;
  if (g->region) {
    heron__buf b = {0};
    heron__buf_printf(&b, "h_pk%d + %lld", g->rg.act, (long long)g->rg.origin);
    for (int a = 0; a < op->naxes; a++) {
      int64_t k = heron__cpu_region_coef(op, &g->rg, a);
      if (op->axes[a].kind != HERON__SPATIAL || op->axes[a].extent == 1 || !k)
        continue;
      heron__buf o = {0};
      heron__cpu_origin_text_from(g, a, 1, &o);
      if (o.len)
        heron__buf_printf(&b, " + (%s) * %lld", o.data, (long long)k);
      heron__buf_free(&o);
    }
    indent(g, depth);
    heron__buf_printf(g->o, "const float *restrict h_q%d = %s;\n", g->rg.act,
                      b.data);
    heron__buf_free(&b);
  }
  for (int ti = 0; ti < op->ninputs; ti++) {
    if (!g->packed[ti])
      continue;
    heron__buf b = {0};
    heron__cpu_block_offset_text(g, ti, g->ki * g->rp[ti], &b);
    indent(g, depth);
    heron__buf_printf(g->o, "const float *restrict h_q%d = h_pk%d%s;\n", ti, ti,
                      b.len ? b.data : "");
    heron__buf_free(&b);
  }
}

/* Inside the reduction-inner loops: h_k, the flattened step. */
void heron__cpu_emit_step_index(gen *g, int depth) {
  const heron__op *op = g->op;
  if (g->ki <= 1 || !any_packed(g))
    return;
  heron__buf b = {0};
  int64_t stride = 1;
  for (int a = op->naxes - 1; a >= 0; a--) {
    if (op->axes[a].kind != HERON__REDUCE || g->len[a][1] <= 1)
      continue;
    heron__buf_printf(&b, "%s%s_1", b.len ? " + " : "", op->axes[a].name);
    if (stride > 1)
      heron__buf_printf(&b, " * %lld", (long long)stride);
    stride *= g->len[a][1];
  }
  indent(g, depth);
  heron__buf_printf(g->o, "const int64_t h_k = %s;\n", b.data);
  heron__buf_free(&b);
}

/* float *restrict <name> = the kept buffer of h_keep slot `slot` (made on
 * first use) or a new one, of `elems` floats rounded up to 64 bytes; a
 * failed allocation traps. */
static void emit_take(gen *g, int depth, const char *name, int slot,
                      int64_t elems) {
  int64_t bytes = (elems * 4 + 63) / 64 * 64;
  indent(g, depth);
  heron__buf_printf(g->o,
                    "float *restrict %s = h_take(h_kept ? "
                    "&h_keep[%d][h_tn] : 0, %lld);\n",
                    name, slot, (long long)(bytes ? bytes : 64));
  indent(g, depth);
  heron__buf_printf(g->o, "if (!%s)\n", name);
  indent(g, depth + 1);
  heron__buf_puts(g->o, "__builtin_trap();\n");
}

/* Frees buffer <name> when it was not a kept one. */
static void emit_release(gen *g, int depth, const char *name) {
  indent(g, depth);
  heron__buf_puts(g->o, "if (!h_kept)\n");
  indent(g, depth + 1);
  heron__buf_printf(g->o, "free(%s);\n", name);
}

/* Per-thread pack buffers, kept across calls: each OpenMP thread (up to
 * H_KEEP of them) takes its buffer from h_keep, made on its first call and
 * freed when the kernel is unloaded, so that a call no longer allocates and
 * page-faults its packs.  A call made while another is running (from
 * another host thread) does not own the kept buffers and allocates its own
 * (h_own).  A failed allocation traps, which the harness records as a
 * runtime error. */
void heron__cpu_emit_pack_alloc(gen *g, int depth) {
  if (!any_buffer(g))
    return;
  indent(g, depth);
  heron__buf_puts(g->o, "const int h_tn = omp_get_thread_num();\n");
  indent(g, depth);
  heron__buf_puts(g->o, "const int h_kept = h_own && h_tn < H_KEEP;\n");
  for (int ti = 0; ti < g->op->ninputs; ti++) {
    if (!g->packed[ti] || g->prepacked[ti])
      continue;
    char name[16];
    snprintf(name, sizeof name, "h_pk%d", ti);
    emit_take(g, depth, name, ti, g->cfg[g->s->pack_elems[ti]]);
  }
  if (g->region) {
    char name[16];
    snprintf(name, sizeof name, "h_pk%d", g->rg.act);
    emit_take(g, depth, name, g->rg.act, g->rg.elems);
  }
  if (g->stage)
    emit_take(g, depth, "h_stg", g->op->ninputs, g->cfg[g->s->stage_elems]);
}

void heron__cpu_emit_pack_free(gen *g, int depth) {
  for (int ti = 0; ti < g->op->ninputs; ti++)
    if (g->packed[ti] && !g->prepacked[ti]) {
      char name[16];
      snprintf(name, sizeof name, "h_pk%d", ti);
      emit_release(g, depth, name);
    }
  if (g->region) {
    char name[16];
    snprintf(name, sizeof name, "h_pk%d", g->rg.act);
    emit_release(g, depth, name);
  }
  if (g->stage)
    emit_release(g, depth, "h_stg");
}

/* The kept pack buffers' storage, their release at unload, and h_take. */
void heron__cpu_emit_pack_keep(gen *g) {
  if (!any_kept(g))
    return;
  heron__buf_puts(g->o, "static int h_busy; /* a call owns the kept buffers "
                        "*/\n");
  if (any_buffer(g)) {
    int slots = g->op->ninputs + (g->stage ? 1 : 0);
    heron__buf_printf(
        g->o,
        "/* Pack buffers kept across calls, per input and OpenMP thread. */\n"
        "#define H_KEEP 256\n"
        "static float *h_keep[%d][H_KEEP];\n"
        "__attribute__((destructor)) static void h_release(void) {\n"
        "  for (int i = 0; i < %d; i++)\n"
        "    for (int t = 0; t < H_KEEP; t++)\n"
        "      free(h_keep[i][t]);\n}\n"
        "/* The kept buffer of *slot (made on first use), or a new one when\n"
        " * slot is NULL. */\n"
        "static float *h_take(float **slot, size_t bytes) {\n"
        "  if (!slot)\n    return aligned_alloc(64, bytes);\n"
        "  if (!*slot)\n    *slot = aligned_alloc(64, bytes);\n"
        "  return *slot;\n}\n\n",
        slots, slots);
  }
  if (any_halo(g))
    heron__buf_printf(
        g->o,
        "/* Zero-haloed input copies kept across calls, per input. */\n"
        "static float *h_halo_keep[%d];\n"
        "__attribute__((destructor)) static void h_halo_release(void) {\n"
        "  for (int i = 0; i < %d; i++)\n"
        "    free(h_halo_keep[i]);\n}\n"
        "/* The kept copy of *slot, or a new one when slot is NULL; zeroed\n"
        " * when made (the halo stays zero: calls copy only the input). */\n"
        "static float *h_halo(float **slot, size_t bytes) {\n"
        "  if (slot && *slot)\n    return *slot;\n"
        "  float *p = aligned_alloc(64, bytes);\n"
        "  if (p)\n    __builtin_memset(p, 0, bytes);\n"
        "  if (slot)\n    *slot = p;\n"
        "  return p;\n}\n\n",
        g->op->ninputs, g->op->ninputs);
}
