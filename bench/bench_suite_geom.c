/* bench/bench_suite_geom.c - a task's geometry as the baselines need it,
 * and the buffers and deterministic values of its inputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_suite.h"

/* ---- Geometry of a task ---------------------------------------------------
 * What the buffers and the baselines need, read from the task's key (whose
 * shape has the defaults filled in) and the op's dimension names. */

static const struct {
  const char *op;
  int fam, sp, cl, blk;
} families[] = {
    {"gemm", FAM_GEMM, 0, 0, 0},        {"bmm", FAM_BMM, 0, 0, 0},
    {"gemv", FAM_GEMV, 0, 0, 0},        {"scan", FAM_SCAN, 0, 0, 0},
    {"c1d", FAM_CONV, 1, 0, 0},         {"c2d", FAM_CONV, 2, 0, 0},
    {"dil", FAM_CONV, 2, 0, 0},         {"c3d", FAM_CONV, 3, 0, 0},
    {"t2d", FAM_DECONV, 2, 0, 0},       {"c1d_nwc", FAM_CONV, 1, 1, 0},
    {"c2d_nhwc", FAM_CONV, 2, 1, 0},    {"c3d_ndhwc", FAM_CONV, 3, 1, 0},
    {"c1d_ncw16c", FAM_CONV, 1, 0, 16}, {"c2d_nchw16c", FAM_CONV, 2, 0, 16},
    {"c1d_ncw8c", FAM_CONV, 1, 0, 8},   {"c2d_nchw8c", FAM_CONV, 2, 0, 8}};

int op_family(const char *op) {
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
    if (!strcmp(families[i].op, op))
      return families[i].fam;
  return FAM_NONE;
}

int op_block(const char *op) {
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
    if (!strcmp(families[i].op, op))
      return families[i].blk;
  return 0;
}

/* Value of dimension `name` of the task, or -1 when the op has none. */
static int64_t dim(const char *const *names, int nd, const int64_t *s, int ns,
                   const char *name) {
  for (int d = 0; d < nd && d < ns; d++)
    if (!strcmp(names[d], name))
      return s[d];
  return -1;
}

int make_geom(const heron_task *t, geom *g, char *why, size_t cap) {
  memset(g, 0, sizeof *g);
  const char *op = heron_task_op(t);
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
    if (!strcmp(families[i].op, op)) {
      g->fam = families[i].fam;
      g->sp = families[i].sp;
      g->cl = families[i].cl;
      g->blk = families[i].blk;
    }
  if (g->fam == FAM_NONE)
    return snprintf(why, cap, "no baseline for op %s", op), -1;
  /* The key is "op/d1,d2,.../dtype/target[/epilogue]". */
  const char *p = strchr(heron_task_key(t), '/');
  int64_t s[MAX_DIMS];
  int ns = 0;
  while (p && (*p == '/' || *p == ',') && ns < MAX_DIMS) {
    char *end;
    s[ns++] = strtoll(p + 1, &end, 10);
    p = *end == ',' ? end : NULL;
  }
  const char *const *names;
  int nd;
  if (heron_op_dims(op, &names, &nd, NULL) || ns != nd)
    return snprintf(why, cap, "cannot read the shape of %s", heron_task_key(t)),
           -1;
#define D(name) dim(names, nd, s, ns, name)
  switch (g->fam) {
  case FAM_GEMM:
  case FAM_SCAN:
    g->B = 1, g->M = D("M"), g->N = D("N"), g->K = D("K");
    break;
  case FAM_BMM:
    g->B = D("B"), g->M = D("M"), g->N = D("N"), g->K = D("K");
    break;
  case FAM_GEMV:
    g->B = 1, g->M = D("M"), g->N = 1, g->K = D("K");
    break;
  default: {
    static const char *const sp_names[3][3] = {
        {"W"}, {"H", "W"}, {"D", "H", "W"}};
    static const char *const k_names[3][3] = {
        {"KW"}, {"KH", "KW"}, {"KD", "KH", "KW"}};
    g->n = D("N"), g->ci = D("CI"), g->co = D("CO");
    g->stride = D("stride"), g->pad = D("pad"), g->dil = D("dilation");
    g->opad = g->fam == FAM_DECONV ? D("output_padding") : 0;
    int64_t sane = g->n | g->ci | g->co | g->stride | g->pad | g->dil | g->opad;
    for (int i = 0; i < g->sp; i++) {
      g->in[i] = D(sp_names[g->sp - 1][i]);
      g->k[i] = D(k_names[g->sp - 1][i]);
      sane |= g->in[i] | g->k[i];
      g->out[i] = g->fam == FAM_DECONV
                      ? (g->in[i] - 1) * g->stride - 2 * g->pad +
                            g->dil * (g->k[i] - 1) + g->opad + 1
                      : (g->in[i] + 2 * g->pad - g->dil * (g->k[i] - 1) - 1) /
                                g->stride +
                            1;
    }
    if (sane < 0)
      return snprintf(why, cap, "%s lacks a dimension the baseline needs", op),
             -1;
  }
  }
#undef D
  if (g->fam <= FAM_SCAN) {
    if ((g->M | g->N | g->K | g->B) < 0)
      return snprintf(why, cap, "%s lacks a dimension the baseline needs", op),
             -1;
    g->in_elems[0] = g->B * g->M * g->K;
    g->in_elems[1] = g->fam == FAM_GEMV ? g->K : g->B * g->K * g->N;
    g->out_elems = g->B * g->M * g->N;
    /* The channel (bias) axis is the output's last dimension: the column
     * of gemm and bmm, the row of gemv. */
    g->nch = g->fam == FAM_GEMV ? g->M : g->N;
    g->inner = 1;
  } else {
    int64_t in = 1, k = 1, out = 1;
    for (int i = 0; i < g->sp; i++)
      in *= g->in[i], k *= g->k[i], out *= g->out[i];
    /* Blocked: the channels padded up to the block. */
    int64_t b = g->blk > 0 ? g->blk : 1;
    int64_t ci = (g->ci + b - 1) / b * b, co = (g->co + b - 1) / b * b;
    g->in_elems[0] = g->n * ci * in;
    g->in_elems[1] = co * ci * k;
    g->out_elems = g->n * co * out;
    g->nch = g->co;
    g->inner = g->cl ? 1 : out;
  }
  g->red = heron_task_flops(t) / 2 / (double)g->out_elems;
  return 0;
}

/* ---- Buffers ------------------------------------------------------------- */

/* 64-byte-aligned memory for `bytes` bytes; exits when out of memory. */
void *balloc(int64_t bytes) {
  size_t n = ((size_t)(bytes > 0 ? bytes : 1) + 63) / 64 * 64;
  void *p = aligned_alloc(64, n);
  if (!p) {
    fprintf(stderr, "bench_suite: out of memory (%zu bytes)\n", n);
    exit(CLI_EXIT_FAILURE);
  }
  return p;
}

float *falloc(int64_t n) { return balloc(n * (int64_t)sizeof(float)); }

/* The next value of the xorshift64* stream in *x. */
uint64_t next_random(uint64_t *x) {
  *x ^= *x >> 12, *x ^= *x << 25, *x ^= *x >> 27;
  return *x * 0x2545F4914F6CDD1Dull;
}

/* Deterministic values in [-1, 1], the same on every run. */
void fill_random(float *p, int64_t n, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < n; i++)
    p[i] = (float)((double)(next_random(&x) >> 11) * 0x1p-52 - 1);
}

void fill_nan(float *p, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    p[i] = NAN;
}

void zero_block_padding(const geom *g, float *data, float *weight) {
  int64_t b = g->blk;
  if (b <= 0 || (g->ci % b == 0 && g->co % b == 0))
    return;
  int64_t cib = (g->ci + b - 1) / b, cob = (g->co + b - 1) / b, in = 1, k = 1;
  for (int i = 0; i < g->sp; i++)
    in *= g->in[i], k *= g->k[i];
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t p = 0; p < in; p++)
      for (int64_t c = g->ci; c < cib * b; c++)
        data[((n * cib + c / b) * in + p) * b + c % b] = 0;
  for (int64_t o = 0; o < cob * b; o++)
    for (int64_t i = 0; i < cib * b; i++)
      for (int64_t q = 0; q < k && (o >= g->co || i >= g->ci); q++)
        weight[(((o / b * cib + i / b) * k + q) * b + i % b) * b + o % b] = 0;
}

/* Deterministic inputs of a matrix op: A from seed 1, B (or x) from seed 2,
 * the bias from seed 3; the same in the child. */
void fill_matrix_inputs(const geom *g, float *in0, float *in1, float *bias) {
  fill_random(in0, g->in_elems[0], 1);
  fill_random(in1, g->in_elems[1], 2);
  if (bias)
    fill_random(bias, g->nch, 3);
}

/* The geometry of a matrix op from its family and extents (the child has
 * no task), as make_geom makes it. */
void matrix_geom(geom *g, int fam, int64_t B, int64_t M, int64_t N, int64_t K) {
  memset(g, 0, sizeof *g);
  g->fam = fam, g->B = B, g->M = M, g->N = N, g->K = K;
  g->in_elems[0] = B * M * K;
  g->in_elems[1] = fam == FAM_GEMV ? K : B * K * N;
  g->out_elems = B * M * N;
  g->nch = fam == FAM_GEMV ? M : N;
  g->inner = 1;
  g->red = (double)K;
}

/* Whether a GEMM row also times sgemv (M or N of 1). */
int gemm_as_gemv(const geom *g) {
  return g->fam == FAM_GEMM && (g->M == 1 || g->N == 1) && g->B <= 1;
}
