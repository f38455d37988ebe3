/* core/targets/cuda/launch.c - what comes first in every generated CUDA
 * source (kernel.h): the launch line, which says the grid, the block and
 * the dynamic shared memory, written and read back here; then the include
 * block, the same in every kernel.
 */
#include "core/targets/cuda/kernel.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The headers come first, before any per-kernel #define, and end at a
 * declaration: that makes the start of every generated source identical,
 * which NVRTC's precompiled headers (-pch) need.  (Measured on the GEMM
 * template, -pch gained 4% on one thread and lost on two, as the time goes
 * to optimisation, so the build does not use it yet.) */
static const char includes[] =
    "#ifndef HERON_EMULATE\n"
    "#include <mma.h>\n"
    "#include <cuda_fp16.h>\n"
    "#endif\n"
    "typedef int heron_pch_boundary_t; /* the same in every kernel above */\n";

const char *heron__cuda_includes(void) { return includes; }

/* ---- the launch line ------------------------------------------------- */

int heron__cuda_launch_format(const heron__cuda_launch *l, char *buf, int cap) {
  return snprintf(buf, cap > 0 ? (size_t)cap : 0,
                  "/* heron-cuda grid %d %d %d block %d %d %d smem %lld */\n",
                  l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                  l->block[2], (long long)l->smem_bytes);
}

/* The parser is strict so that a source whose first line was edited or
 * truncated is refused rather than launched with a wrong geometry: every
 * token is required, separated by at least one blank, and numbers are
 * plain decimal digits in range. */

/* Past one or more blanks (spaces or tabs), or NULL when there is none. */
static const char *blanks(const char *p) {
  if (!p || (*p != ' ' && *p != '\t'))
    return NULL;
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

/* Past the literal word w at p, or NULL. */
static const char *word(const char *p, const char *w) {
  size_t n = strlen(w);
  return p && strncmp(p, w, n) == 0 ? p + n : NULL;
}

/* Past a decimal number in [lo, hi] at p, stored in *v; NULL when p holds
 * no digits, a sign, or a number out of range. */
static const char *number(const char *p, long long lo, long long hi,
                          long long *v) {
  char *end;
  if (!p || !isdigit((unsigned char)*p))
    return NULL;
  errno = 0;
  long long x = strtoll(p, &end, 10);
  if (errno == ERANGE || x < lo || x > hi)
    return NULL;
  *v = x;
  return end;
}

/* Past the blanks and the line end (newline, CR LF, or the text's end)
 * at p, at the newline or the NUL; NULL when anything else follows. */
static const char *line_end(const char *p) {
  if (!p)
    return NULL;
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p == '\r')
    p++;
  return *p == '\n' || *p == '\0' ? p : NULL;
}

int heron__cuda_launch_parse(const char *src, heron__cuda_launch *l) {
  long long g[3], b[3], smem;
  const char *p = src ? word(src, "/*") : NULL;
  p = word(blanks(p), "heron-cuda");
  p = word(blanks(p), "grid");
  for (int i = 0; i < 3; i++)
    p = number(blanks(p), 1, INT_MAX, &g[i]);
  p = word(blanks(p), "block");
  for (int i = 0; i < 3; i++)
    p = number(blanks(p), 1, INT_MAX, &b[i]);
  p = word(blanks(p), "smem");
  p = number(blanks(p), 0, INT64_MAX, &smem);
  p = line_end(word(blanks(p), "*/"));
  if (!p)
    return -1;
  heron__cuda_launch x;
  memset(&x, 0, sizeof x);
  for (int i = 0; i < 3; i++) {
    x.grid[i] = (int)g[i];
    x.block[i] = (int)b[i];
  }
  x.smem_bytes = smem;
  /* Line 2 of a TMA kernel: its two maps. */
  const char *q = *p == '\n' ? p + 1 : p;
  if (word(q, "/* heron-cuda tmaps")) {
    q = word(q, "/*");
    q = word(blanks(q), "heron-cuda");
    q = word(blanks(q), "tmaps");
    for (int m = 0; m < 2; m++) {
      heron__cuda_tmap_spec *t = &x.tmap[m];
      long long v[6];
      q = word(blanks(q), m == 0 ? "in0" : "in1");
      for (int i = 0; i < 5; i++)
        q = number(blanks(q), 1, INT64_MAX, &v[i]);
      q = number(blanks(q), 0, 128, &v[5]);
      if (!q || v[3] > 256 || v[4] > 256)
        return -1;
      t->input = m;
      t->inner = v[0];
      t->outer = v[1];
      t->row_bytes = v[2];
      t->box_inner = (int)v[3];
      t->box_outer = (int)v[4];
      t->swz = (int)v[5];
    }
    if (!line_end(word(blanks(q), "*/")))
      return -1;
    x.ntmaps = 2;
  }
  *l = x;
  return 0;
}

int heron__cuda_tmaps_format(const heron__cuda_launch *l, char *buf, int cap) {
  const heron__cuda_tmap_spec *a = &l->tmap[0], *b = &l->tmap[1];
  return snprintf(buf, cap > 0 ? (size_t)cap : 0,
                  "/* heron-cuda tmaps in%d %lld %lld %lld %d %d %d in%d %lld "
                  "%lld %lld %d %d %d */\n",
                  a->input, (long long)a->inner, (long long)a->outer,
                  (long long)a->row_bytes, a->box_inner, a->box_outer, a->swz,
                  b->input, (long long)b->inner, (long long)b->outer,
                  (long long)b->row_bytes, b->box_inner, b->box_outer, b->swz);
}
