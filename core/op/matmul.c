/* core/op/matmul.c - the matrix-product ops: GEMM, BMM (batched GEMM) and
 * GEMV.  Each has a catalogue entry, a build function that writes its loop
 * nest as axes and affine index maps, and a reference written as plain loops
 * over the shape, independently of that description, so tests can check one
 * against the other. */
#include "core/op/op.h"
#include "core/util/util.h"

/* ---- References ---------------------------------------------------------
 * One loop nest per op for every dtype, over double copies of the inputs
 * (heron__op_run_ref): the products of two inputs of any dtype are exact in
 * double and the sum's rounding error is then negligible, so the check's
 * tolerance only has to cover the error of the kernel being measured; int8's
 * sums are integers below 2^31, which double holds exactly.  The loop order
 * i, k, j streams B's rows and the j loop vectorises, which keeps a 1024^3
 * GEMM well under a second.  gemm's and bmm's activations (u8 with int8)
 * are A; gemv's are the vector x, its matrix A the weights.  The output rows
 * are split among threads (heron__par_for; HERON_REF_THREADS), each row
 * computed by the same operations whatever the split, so the output is the
 * same bit for bit at any thread count. */

enum { ROW_BLOCK = 256 };

/* C[nb][M,N] = A[nb][M,K] * B[nb][K,N], all row-major, one output row per
 * index of the range (row r is row r % M of batch r / M), so heron__par_for
 * splits the rows among threads; each element's sum runs over k in order
 * whatever the split. */
typedef struct matmul_ctx {
  const double *A, *B;
  double *C;
  int64_t M, N, K;
} matmul_ctx;

static void matmul_rows(void *arg, int64_t lo, int64_t hi) {
  const matmul_ctx *c = arg;
  int64_t M = c->M, N = c->N, K = c->K;
  double acc[ROW_BLOCK];
  for (int64_t r = lo; r < hi; r++) {
    int64_t b = r / M, i = r % M;
    const double *A = c->A + b * M * K, *B = c->B + b * K * N;
    double *C = c->C + b * M * N;
    for (int64_t j0 = 0; j0 < N; j0 += ROW_BLOCK) {
      int64_t nb = N - j0 < ROW_BLOCK ? N - j0 : ROW_BLOCK;
      for (int64_t j = 0; j < nb; j++)
        acc[j] = 0;
      for (int64_t k = 0; k < K; k++) {
        double a = A[i * K + k];
        const double *bk = B + k * N + j0;
        for (int64_t j = 0; j < nb; j++)
          acc[j] += a * bk[j];
      }
      for (int64_t j = 0; j < nb; j++)
        C[i * N + j0 + j] = acc[j];
    }
  }
}

static void matmul_f64(const double *A, const double *B, double *C,
                       int64_t nbatch, int64_t M, int64_t N, int64_t K) {
  matmul_ctx c = {A, B, C, M, N, K};
  heron__par_for(nbatch * M, (double)nbatch * M * N * K, matmul_rows, &c);
}

static void gemm_ref_f64(const heron__op *op, const double *const *in,
                         double *out) {
  matmul_f64(in[0], in[1], out, 1, op->shape[0], op->shape[1], op->shape[2]);
}

static void bmm_ref_f64(const heron__op *op, const double *const *in,
                        double *out) {
  matmul_f64(in[0], in[1], out, op->shape[0], op->shape[1], op->shape[2],
             op->shape[3]);
}

/* y[M] = A[M,K] * x[K], rows split among threads. */
typedef struct gemv_ctx {
  const double *A, *x;
  double *y;
  int64_t K;
} gemv_ctx;

static void gemv_rows(void *arg, int64_t lo, int64_t hi) {
  const gemv_ctx *c = arg;
  const double *A = c->A, *x = c->x;
  int64_t K = c->K;
  for (int64_t i = lo; i < hi; i++) {
    double acc = 0;
    for (int64_t k = 0; k < K; k++)
      acc += A[i * K + k] * x[k];
    c->y[i] = acc;
  }
}

static void gemv_ref_f64(const heron__op *op, const double *const *in,
                         double *out) {
  int64_t M = op->shape[0], K = op->shape[1];
  gemv_ctx c = {in[0], in[1], out, K};
  heron__par_for(M, (double)M * K, gemv_rows, &c);
}

static void gemm_ref(const heron__op *op, void *const *bufs) {
  heron__op_run_ref(op, bufs, gemm_ref_f64);
}

static void bmm_ref(const heron__op *op, void *const *bufs) {
  heron__op_run_ref(op, bufs, bmm_ref_f64);
}

static void gemv_ref(const heron__op *op, void *const *bufs) {
  heron__op_run_ref(op, bufs, gemv_ref_f64);
}

/* ---- Descriptions ------------------------------------------------------- */

/* Sets tensor t's dimension d to be indexed by axis a alone. */
static void index_by(heron__tensor *t, int d, int a) {
  t->index[d].coef[a] = 1;
}

static int gemm_build(const int64_t *shape, int n, int dtype, heron__op *op,
                      heron_error *err) {
  int rc = heron__op_begin(op, &heron__op_gemm_kind, shape, n, dtype, err);
  if (rc)
    return rc;
  int64_t M = op->shape[0], N = op->shape[1], K = op->shape[2];
  int i = heron__op_add_axis(op, "i", HERON__SPATIAL, M);
  int j = heron__op_add_axis(op, "j", HERON__SPATIAL, N);
  int k = heron__op_add_axis(op, "k", HERON__REDUCE, K);
  op->ninputs = 2;
  heron__tensor_init(&op->in[0], "A", 2, (int64_t[]){M, K});
  index_by(&op->in[0], 0, i);
  index_by(&op->in[0], 1, k);
  heron__tensor_init(&op->in[1], "B", 2, (int64_t[]){K, N});
  index_by(&op->in[1], 0, k);
  index_by(&op->in[1], 1, j);
  heron__tensor_init(&op->out, "C", 2, (int64_t[]){M, N});
  index_by(&op->out, 0, i);
  index_by(&op->out, 1, j);
  /* As in a fully connected layer, a bias has one value per column. */
  op->channel_axis = j;
  op->reference = gemm_ref;
  return heron__op_finish(op, err);
}

static int bmm_build(const int64_t *shape, int n, int dtype, heron__op *op,
                     heron_error *err) {
  int rc = heron__op_begin(op, &heron__op_bmm_kind, shape, n, dtype, err);
  if (rc)
    return rc;
  int64_t nb = op->shape[0], M = op->shape[1], N = op->shape[2],
          K = op->shape[3];
  int b = heron__op_add_axis(op, "b", HERON__SPATIAL, nb);
  int i = heron__op_add_axis(op, "i", HERON__SPATIAL, M);
  int j = heron__op_add_axis(op, "j", HERON__SPATIAL, N);
  int k = heron__op_add_axis(op, "k", HERON__REDUCE, K);
  op->ninputs = 2;
  heron__tensor_init(&op->in[0], "A", 3, (int64_t[]){nb, M, K});
  index_by(&op->in[0], 0, b);
  index_by(&op->in[0], 1, i);
  index_by(&op->in[0], 2, k);
  heron__tensor_init(&op->in[1], "B", 3, (int64_t[]){nb, K, N});
  index_by(&op->in[1], 0, b);
  index_by(&op->in[1], 1, k);
  index_by(&op->in[1], 2, j);
  heron__tensor_init(&op->out, "C", 3, (int64_t[]){nb, M, N});
  index_by(&op->out, 0, b);
  index_by(&op->out, 1, i);
  index_by(&op->out, 2, j);
  op->channel_axis = j;
  op->reference = bmm_ref;
  return heron__op_finish(op, err);
}

static int gemv_build(const int64_t *shape, int n, int dtype, heron__op *op,
                      heron_error *err) {
  int rc = heron__op_begin(op, &heron__op_gemv_kind, shape, n, dtype, err);
  if (rc)
    return rc;
  int64_t M = op->shape[0], K = op->shape[1];
  int i = heron__op_add_axis(op, "i", HERON__SPATIAL, M);
  int k = heron__op_add_axis(op, "k", HERON__REDUCE, K);
  op->ninputs = 2;
  heron__tensor_init(&op->in[0], "A", 2, (int64_t[]){M, K});
  index_by(&op->in[0], 0, i);
  index_by(&op->in[0], 1, k);
  heron__tensor_init(&op->in[1], "x", 1, (int64_t[]){K});
  index_by(&op->in[1], 0, k);
  heron__tensor_init(&op->out, "y", 1, (int64_t[]){M});
  index_by(&op->out, 0, i);
  /* y has one element per row of A, so a per-channel bias runs along i.
   * A is the layer's weights and x its activations. */
  op->channel_axis = i;
  op->act_input = 1;
  op->reference = gemv_ref;
  return heron__op_finish(op, err);
}

/* ---- Catalogue entries -------------------------------------------------- */

static const char *const gemm_dims[] = {"M", "N", "K"};
static const char *const bmm_dims[] = {"B", "M", "N", "K"};
static const char *const gemv_dims[] = {"M", "K"};

const heron__op_kind heron__op_gemm_kind = {
    .name = "gemm",
    .summary = "matrix product C[M,N] = A[M,K] * B[K,N]",
    .dims = gemm_dims,
    .ndims = 3,
    .ndims_max = 3,
    .build = gemm_build,
};

const heron__op_kind heron__op_bmm_kind = {
    .name = "bmm",
    .summary = "batched matrix product C[B,M,N] = A[B,M,K] * B[B,K,N]",
    .dims = bmm_dims,
    .ndims = 4,
    .ndims_max = 4,
    .build = bmm_build,
};

const heron__op_kind heron__op_gemv_kind = {
    .name = "gemv",
    .summary = "matrix-vector product y[M] = A[M,K] * x[K]",
    .dims = gemv_dims,
    .ndims = 2,
    .ndims_max = 2,
    .build = gemv_build,
};
