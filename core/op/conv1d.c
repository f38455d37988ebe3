/* core/op/conv1d.c - C1D, the 1-D convolution in NCW layout with stride,
 * zero padding and dilation:
 *
 *   out[n,co,ow] = sum over ci, kw of
 *       data[n, ci, ow*stride + kw*dil - pad] * weight[co, ci, kw]
 *
 * where data reads as zero outside [0,W). */
#include "core/op/op.h"
#include "core/util/util.h"

enum { N_, W_, CI_, CO_, KW_, STRIDE_, PAD_, DIL_ };

/* ---- Reference ----------------------------------------------------------
 * Plain loops over the definition, one loop nest for every dtype over double
 * copies of the inputs (heron__op_run_ref; int8's integer sums are exact in
 * double), accumulating in double over a block of output positions; the
 * padding is an explicit range of positions computed per kernel tap, not the
 * description's `bounded` flag, so the description is checked, not copied.
 * The (n, co) output rows are split among threads (heron__par_for), each
 * computed by the same operations whatever the split: the output is the
 * same bit for bit at any thread count. */

enum { ROW_BLOCK = 256 };

static void c1d_rows(void *arg, int64_t lo, int64_t hi) {
  const heron__ref_ctx *c = arg;
  const heron__op *op = c->op;
  const double *const *in = c->in;
  double *out = c->out;
  const int64_t *s = op->shape;
  int64_t W = s[W_], CI = s[CI_], CO = s[CO_], KW = s[KW_], st = s[STRIDE_],
          pad = s[PAD_], dil = s[DIL_];
  int64_t WO = heron__conv_out_size(W, KW, st, pad, dil);
  const double *data = in[0], *weight = in[1];
  double acc[ROW_BLOCK];
  for (int64_t r = lo; r < hi; r++) {
    int64_t n = r / CO, co = r % CO;
    for (int64_t ow0 = 0; ow0 < WO; ow0 += ROW_BLOCK) {
      int64_t nb = WO - ow0 < ROW_BLOCK ? WO - ow0 : ROW_BLOCK;
      for (int64_t b = 0; b < nb; b++)
        acc[b] = 0;
      for (int64_t ci = 0; ci < CI; ci++) {
        const double *row = data + (n * CI + ci) * W;
        for (int64_t kw = 0; kw < KW; kw++) {
          double w = weight[(co * CI + ci) * KW + kw];
          /* Position x = ow*st + kw*dil - pad lies in [0, W) exactly for
           * ow in [ow_lo, ow_hi). */
          int64_t lo_num = pad - kw * dil, hi_num = W - 1 + pad - kw * dil;
          if (hi_num < 0)
            continue;
          int64_t ow_lo = lo_num <= 0 ? 0 : (lo_num + st - 1) / st;
          int64_t ow_hi = hi_num / st + 1;
          int64_t b_lo = ow_lo > ow0 ? ow_lo - ow0 : 0;
          int64_t b_hi = ow_hi - ow0 < nb ? ow_hi - ow0 : nb;
          const double *src = row + ow0 * st + kw * dil - pad;
          for (int64_t b = b_lo; b < b_hi; b++)
            acc[b] += w * src[b * st];
        }
      }
      double *o = out + (n * CO + co) * WO + ow0;
      for (int64_t b = 0; b < nb; b++)
        o[b] = acc[b];
    }
  }
}

static void c1d_ref_f64(const heron__op *op, const double *const *in,
                        double *out) {
  heron__ref_ctx c = {op, in, out};
  heron__par_for(op->shape[N_] * op->shape[CO_], op->flops / 2, c1d_rows, &c);
}

static void c1d_ref(const heron__op *op, void *const *bufs) {
  heron__op_run_ref(op, bufs, c1d_ref_f64);
}

/* ---- Description -------------------------------------------------------- */

static int c1d_build(const int64_t *shape, int n, int dtype, heron__op *op,
                     heron_error *err) {
  int rc = heron__op_begin(op, &heron__op_c1d_kind, shape, n, dtype, err);
  if (rc)
    return rc;
  const int64_t *s = op->shape;
  int64_t st = s[STRIDE_], pad = s[PAD_], dil = s[DIL_];
  rc = heron__conv_check_fits("C1D", "KW", s[KW_], dil, s[W_], pad, "width",
                              err);
  if (rc)
    return rc;
  int64_t WO = heron__conv_out_size(s[W_], s[KW_], st, pad, dil);

  int an = heron__op_add_axis(op, "n", HERON__SPATIAL, s[N_]);
  int aco = heron__op_add_axis(op, "co", HERON__SPATIAL, s[CO_]);
  int aow = heron__op_add_axis(op, "ow", HERON__SPATIAL, WO);
  int aci = heron__op_add_axis(op, "ci", HERON__REDUCE, s[CI_]);
  int akw = heron__op_add_axis(op, "kw", HERON__REDUCE, s[KW_]);
  op->ninputs = 2;

  heron__tensor *data = &op->in[0];
  heron__tensor_init(data, "data", 3, (int64_t[]){s[N_], s[CI_], s[W_]});
  data->index[0].coef[an] = 1;
  data->index[1].coef[aci] = 1;
  data->index[2].coef[aow] = st;
  data->index[2].coef[akw] = dil;
  data->index[2].offset = -pad;
  /* Without padding the largest index, (WO-1)*stride + (KW-1)*dil, stays
   * below W by the definition of WO; only padding can leave the range. */
  data->bounded = pad > 0;

  heron__tensor *weight = &op->in[1];
  heron__tensor_init(weight, "weight", 3, (int64_t[]){s[CO_], s[CI_], s[KW_]});
  weight->index[0].coef[aco] = 1;
  weight->index[1].coef[aci] = 1;
  weight->index[2].coef[akw] = 1;

  heron__tensor_init(&op->out, "out", 3, (int64_t[]){s[N_], s[CO_], WO});
  op->out.index[0].coef[an] = 1;
  op->out.index[1].coef[aco] = 1;
  op->out.index[2].coef[aow] = 1;
  op->channel_axis = aco;
  op->reference = c1d_ref;
  return heron__op_finish(op, err);
}

static const char *const c1d_dims[] = {"N",  "W",      "CI",  "CO",
                                       "KW", "stride", "pad", "dilation"};
static const int64_t c1d_defaults[] = {1, 0, 1}; /* stride, pad, dilation */
static const int64_t c1d_mins[] = {1, 1, 1, 1, 1, 1, 0, 1};

const heron__op_kind heron__op_c1d_kind = {
    .name = "c1d",
    .summary = "1-D convolution, NCW, with stride, zero padding and dilation",
    .dims = c1d_dims,
    .ndims = 5,
    .ndims_max = 8,
    .defaults = c1d_defaults,
    .build = c1d_build,
    .mins = c1d_mins,
};

/* The channels-last form (core/op/layout.c): activations and output
 * in NWC. */
static int c1d_nwc_build(const int64_t *shape, int n, int dtype, heron__op *op,
                         heron_error *err) {
  int rc = c1d_build(shape, n, dtype, op, err);
  return rc ? rc : heron__op_channels_last(op, "c1d_nwc", err);
}

const heron__op_kind heron__op_c1d_nwc_kind = {
    .name = "c1d_nwc",
    .summary = "c1d with the channels last: data [N,W,CI] and out [N,WO,CO] "
               "(NWC), weight [CO,CI,KW]",
    .dims = c1d_dims,
    .ndims = 5,
    .ndims_max = 8,
    .defaults = c1d_defaults,
    .build = c1d_nwc_build,
    .mins = c1d_mins,
};

/* The blocked forms (core/op/blocked.c): activations and output in nCw16c
 * or nCw8c, weights in OIw16i16o or OIw8i8o, fp32. */
static void c1d_blocked_ref(const heron__op *op, void *const *bufs) {
  heron__op_blocked_ref(op, bufs, &heron__op_c1d_kind, CI_, CO_);
}

static int c1d_blocked_build(const int64_t *shape, int n, int dtype,
                             heron__op *op, int64_t block, const char *name,
                             heron_error *err) {
  int rc = c1d_build(shape, n, dtype, op, err);
  if (!rc)
    rc = heron__op_blocked(op, block, name, err);
  op->reference = c1d_blocked_ref;
  return rc;
}

static int c1d_ncw16c_build(const int64_t *shape, int n, int dtype,
                            heron__op *op, heron_error *err) {
  return c1d_blocked_build(shape, n, dtype, op, 16, "c1d_ncw16c", err);
}

static int c1d_ncw8c_build(const int64_t *shape, int n, int dtype,
                           heron__op *op, heron_error *err) {
  return c1d_blocked_build(shape, n, dtype, op, 8, "c1d_ncw8c", err);
}

const heron__op_kind heron__op_c1d_ncw16c_kind = {
    .name = "c1d_ncw16c",
    .summary = "c1d blocked by 16 channels, fp32: data [N,CI/16,W,16] and out "
               "[N,CO/16,WO,16] (nCw16c), weight [CO/16,CI/16,KW,16i,16o]; "
               "channels padded up to 16",
    .dims = c1d_dims,
    .ndims = 5,
    .ndims_max = 8,
    .defaults = c1d_defaults,
    .build = c1d_ncw16c_build,
    .mins = c1d_mins,
};

const heron__op_kind heron__op_c1d_ncw8c_kind = {
    .name = "c1d_ncw8c",
    .summary = "c1d blocked by 8 channels, fp32: data [N,CI/8,W,8] and out "
               "[N,CO/8,WO,8] (nCw8c), weight [CO/8,CI/8,KW,8i,8o]; channels "
               "padded up to 8",
    .dims = c1d_dims,
    .ndims = 5,
    .ndims_max = 8,
    .defaults = c1d_defaults,
    .build = c1d_ncw8c_build,
    .mins = c1d_mins,
};
