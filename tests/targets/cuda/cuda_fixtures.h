/* tests/targets/cuda/cuda_fixtures.h - the Tensor Core suite and small shapes
 * of every op, shared by the cuda template tests (rules, NVRTC, CPU check). */
#ifndef HERON_TESTS_CUDA_FIXTURES_H
#define HERON_TESTS_CUDA_FIXTURES_H

#include "test.h"

#include "core/op/op.h"
#include "core/sched/sched.h"
#include "core/space/builder.h"
#include "core/targets/cuda/template.h"
#include "core/targets/hw.h"

typedef struct cuda_case {
  const char *op;
  int64_t shape[12];
  int n;
} cuda_case;

/* configs/suites/tensorcore.json, in the ops' --shape order. */
static const cuda_case CUDA_SUITE[] = {
    {"gemm", {1024, 1024, 1024}, 3},
    {"bmm", {12, 512, 512, 64}, 4},
    {"gemv", {1024, 1024}, 2},
    {"c1d", {16, 892, 512, 512, 3, 1, 4, 1}, 8},
    {"c2d", {16, 56, 56, 64, 64, 3, 3, 1, 1, 1}, 10},
    {"c3d", {16, 8, 56, 56, 64, 64, 3, 3, 3, 1, 1, 1}, 12},
    {"dil", {16, 56, 56, 64, 64, 3, 3, 1, 1, 2}, 10},
    {"t2d", {16, 56, 56, 64, 64, 3, 3, 1, 1, 1, 0}, 11},
    {"scan", {16, 512, 128}, 3},
};

/* Small, odd shapes of every op for the CPU check: padded M, N and K,
 * padding, stride 2, dilation 2, a transposed conv with output padding,
 * GEMV's N of 1, and one GEMM whose extents allow every vector width. */
static const cuda_case CUDA_SMALL[] = {
    {"gemm", {24, 40, 20}, 3},
    {"gemm", {32, 48, 64}, 3},
    {"bmm", {2, 20, 24, 16}, 4},
    {"gemv", {40, 36}, 2},
    {"c1d", {2, 10, 6, 8, 3, 2, 1, 1}, 8},
    {"c2d", {2, 6, 5, 4, 8, 3, 3, 1, 1, 1}, 10},
    {"c3d", {1, 3, 4, 4, 4, 8, 3, 3, 3, 1, 1, 1}, 12},
    {"dil", {1, 7, 7, 4, 8, 3, 3, 1, 2, 2}, 10},
    {"t2d", {1, 5, 5, 4, 8, 3, 3, 2, 1, 1, 1}, 11},
    {"scan", {4, 24, 16}, 3},
};

#define CUDA_NSUITE ((int)(sizeof CUDA_SUITE / sizeof CUDA_SUITE[0]))
#define CUDA_NSMALL ((int)(sizeof CUDA_SMALL / sizeof CUDA_SMALL[0]))

typedef struct cuda_built {
  heron__op op;
  heron__hw hw;
  heron__template *t;
  heron_space *sp;
} cuda_built;

/* Builds the cuda template of case c on the GPU description `gpu`
 * (configs/hw/<gpu>.json), with an optional epilogue. */
static int cuda_build(cuda_built *b, const cuda_case *c, const char *gpu,
                      int epilogue, heron_error *err) {
  memset(b, 0, sizeof *b);
  int rc = heron__op_build(c->op, c->shape, c->n, HERON__FP16, &b->op, err);
  if (!rc && epilogue)
    rc = heron__op_set_epilogue(&b->op, epilogue, err);
  if (!rc) {
    heron__hw_detect_cpu(&b->hw);
    rc = heron__hw_load(gpu, &b->hw, err);
  }
  if (!rc)
    rc = heron__template_build(&b->op, &b->hw, "cuda", &b->t, &b->sp, err);
  return rc;
}

static void cuda_unbuild(cuda_built *b) {
  heron__template_free(b->t);
  heron__space_free(b->sp);
  b->t = NULL;
  b->sp = NULL;
}

static int64_t cuda_val(const heron_space *sp, const int64_t *cfg,
                        const char *name) {
  int v = heron_space_find_var(sp, name);
  return v >= 0 ? cfg[v] : -1;
}

#endif
