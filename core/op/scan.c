/* core/op/scan.c - SCAN, the inclusive prefix sum along the rows of a
 * matrix, in Heron's formulation as a product with a constant triangular
 * matrix so that it runs on the same rules (and Tensor Cores) as GEMM:
 *
 *   out[m, n] = sum over k < K, k <= n of A[m, k]
 *             = sum over k < K of A[m, k] * T[k, n],  T[k, n] = (k <= n)
 *
 * A is [M, K] data; T is [K, N], part of the op's definition rather than
 * data (its fill is HERON__FILL_UPPER, so heron__op_fill_inputs writes the
 * 0/1 pattern and kernels receive it as an ordinary input).  With N > K the
 * last columns repeat the full row sum; with N < K only the first N prefix
 * sums are asked for. */
#include "core/op/op.h"
#include "core/util/util.h"

/* ---- Reference ----------------------------------------------------------
 * A running sum along each row of A, computed directly from the definition:
 * it never reads T (heron__op_run_ref passes NULL for it, a constant input),
 * so a wrong fill of T or a wrong description of the product shows up as a
 * mismatch.  One loop nest for every dtype, summing in double: int8's u8
 * rows give integer sums, exact in double. */

/* The rows of A are split among threads (heron__par_for); each row's sum
 * runs in order whatever the split. */
typedef struct scan_ctx {
  const double *A;
  double *out;
  int64_t N, K;
} scan_ctx;

static void scan_rows(void *arg, int64_t lo, int64_t hi) {
  const scan_ctx *c = arg;
  const double *A = c->A;
  double *out = c->out;
  int64_t N = c->N, K = c->K;
  for (int64_t m = lo; m < hi; m++) {
    double sum = 0;
    for (int64_t n = 0; n < N; n++) {
      if (n < K)
        sum += A[m * K + n];
      out[m * N + n] = sum;
    }
  }
}

static void scan_ref_f64(const heron__op *op, const double *const *in,
                         double *out) {
  int64_t M = op->shape[0], N = op->shape[1], K = op->shape[2];
  scan_ctx c = {in[0], out, N, K};
  /* One addition per output element. */
  heron__par_for(M, (double)M * N, scan_rows, &c);
}

static void scan_ref(const heron__op *op, void *const *bufs) {
  heron__op_run_ref(op, bufs, scan_ref_f64);
}

/* ---- Description -------------------------------------------------------- */

static int scan_build(const int64_t *shape, int n, int dtype, heron__op *op,
                      heron_error *err) {
  int rc = heron__op_begin(op, &heron__op_scan_kind, shape, n, dtype, err);
  if (rc)
    return rc;
  int64_t M = op->shape[0], N = op->shape[1], K = op->shape[2];
  int am = heron__op_add_axis(op, "m", HERON__SPATIAL, M);
  int an = heron__op_add_axis(op, "n", HERON__SPATIAL, N);
  int ak = heron__op_add_axis(op, "k", HERON__REDUCE, K);
  op->ninputs = 2;
  heron__tensor_init(&op->in[0], "A", 2, (int64_t[]){M, K});
  op->in[0].index[0].coef[am] = 1;
  op->in[0].index[1].coef[ak] = 1;
  heron__tensor_init(&op->in[1], "T", 2, (int64_t[]){K, N});
  op->in[1].index[0].coef[ak] = 1;
  op->in[1].index[1].coef[an] = 1;
  op->in[1].fill = HERON__FILL_UPPER;
  heron__tensor_init(&op->out, "out", 2, (int64_t[]){M, N});
  op->out.index[0].coef[am] = 1;
  op->out.index[1].coef[an] = 1;
  /* A prefix sum has no channels: a per-column bias would not mean
   * anything, so --epilogue bias is refused (relu alone is fine). */
  op->channel_axis = -1;
  op->reference = scan_ref;
  return heron__op_finish(op, err);
}

static const char *const scan_dims[] = {"M", "N", "K"};

const heron__op_kind heron__op_scan_kind = {
    .name = "scan",
    .summary = "inclusive prefix sum out[M,N] = sum over k <= n of A[M,K], "
               "computed as a GEMM with a constant upper-triangular 0/1 "
               "matrix T[K,N]",
    .dims = scan_dims,
    .ndims = 3,
    .ndims_max = 3,
    .build = scan_build,
};
