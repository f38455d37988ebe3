/* core/op/conv3d.c - C3D, the 3-D convolution in NCDHW layout with the same
 * stride, zero padding and dilation along depth, height and width:
 *
 *   out[n,co,od,oh,ow] = sum over ci, kd, kh, kw of
 *       data[n, ci, od*stride + kd*dil - pad, oh*stride + kh*dil - pad,
 *            ow*stride + kw*dil - pad]
 *     * weight[co, ci, kd, kh, kw]
 *
 * where data reads as zero outside [0,D) x [0,H) x [0,W). */
#include "core/op/op.h"
#include "core/util/util.h"

enum { N_, D_, H_, W_, CI_, CO_, KD_, KH_, KW_, STRIDE_, PAD_, DIL_ };

/* ---- Reference ----------------------------------------------------------
 * Plain loops over the definition, one loop nest for every dtype over double
 * copies of the inputs (heron__op_run_ref; int8's integer sums are exact in
 * double), accumulating in double over a block of one output row; depth and
 * height padding skip whole input rows, width padding is a range of output
 * columns per kernel tap.  None of it reads the description's index maps or
 * `bounded` flag.  The (n, co, od, oh) output rows are split among threads
 * (heron__par_for), each computed by the same operations whatever the
 * split: the output is the same bit for bit at any thread count. */

enum { ROW_BLOCK = 256 };

static void c3d_rows(void *arg, int64_t lo, int64_t hi) {
  const heron__ref_ctx *c = arg;
  const heron__op *op = c->op;
  const double *const *in = c->in;
  double *out = c->out;
  const int64_t *s = op->shape;
  int64_t D = s[D_], H = s[H_], W = s[W_], CI = s[CI_], CO = s[CO_],
          KD = s[KD_], KH = s[KH_], KW = s[KW_], st = s[STRIDE_], pad = s[PAD_],
          dil = s[DIL_];
  int64_t DO = heron__conv_out_size(D, KD, st, pad, dil),
          HO = heron__conv_out_size(H, KH, st, pad, dil),
          WO = heron__conv_out_size(W, KW, st, pad, dil);
  const double *data = in[0], *weight = in[1];
  double acc[ROW_BLOCK];
  for (int64_t r = lo; r < hi; r++) {
    int64_t n = r / (CO * DO * HO), co = r / (DO * HO) % CO, od = r / HO % DO,
            oh = r % HO;
    for (int64_t ow0 = 0; ow0 < WO; ow0 += ROW_BLOCK) {
      int64_t nb = WO - ow0 < ROW_BLOCK ? WO - ow0 : ROW_BLOCK;
      for (int64_t b = 0; b < nb; b++)
        acc[b] = 0;
      for (int64_t ci = 0; ci < CI; ci++)
        for (int64_t kd = 0; kd < KD; kd++) {
          int64_t d = od * st + kd * dil - pad;
          if (d < 0 || d >= D)
            continue;
          for (int64_t kh = 0; kh < KH; kh++) {
            int64_t h = oh * st + kh * dil - pad;
            if (h < 0 || h >= H)
              continue;
            const double *row = data + (((n * CI + ci) * D + d) * H + h) * W;
            const double *wrow =
                weight + (((co * CI + ci) * KD + kd) * KH + kh) * KW;
            for (int64_t kw = 0; kw < KW; kw++) {
              double w = wrow[kw];
              /* Column x = ow*st + kw*dil - pad lies in [0, W) exactly
               * for ow in [ow_lo, ow_hi). */
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
        }
      double *o = out + (((n * CO + co) * DO + od) * HO + oh) * WO + ow0;
      for (int64_t b = 0; b < nb; b++)
        o[b] = acc[b];
    }
  }
}

static void c3d_ref_f64(const heron__op *op, const double *const *in,
                        double *out) {
  heron__ref_ctx c = {op, in, out};
  const int64_t *s = op->shape;
  int64_t DO =
              heron__conv_out_size(s[D_], s[KD_], s[STRIDE_], s[PAD_], s[DIL_]),
          HO =
              heron__conv_out_size(s[H_], s[KH_], s[STRIDE_], s[PAD_], s[DIL_]);
  heron__par_for(s[N_] * s[CO_] * DO * HO, op->flops / 2, c3d_rows, &c);
}

static void c3d_ref(const heron__op *op, void *const *bufs) {
  heron__op_run_ref(op, bufs, c3d_ref_f64);
}

/* ---- Description -------------------------------------------------------- */

/* Sets dimension d of the data tensor to in = o*stride + k*dil - pad. */
static void window_index(heron__tensor *t, int d, int ao, int ak, int64_t st,
                         int64_t dil, int64_t pad) {
  t->index[d].coef[ao] = st;
  t->index[d].coef[ak] = dil;
  t->index[d].offset = -pad;
}

static int c3d_build(const int64_t *shape, int n, int dtype, heron__op *op,
                     heron_error *err) {
  int rc = heron__op_begin(op, &heron__op_c3d_kind, shape, n, dtype, err);
  if (rc)
    return rc;
  const int64_t *s = op->shape;
  int64_t st = s[STRIDE_], pad = s[PAD_], dil = s[DIL_];
  rc = heron__conv_check_fits("C3D", "KD", s[KD_], dil, s[D_], pad, "depth",
                              err);
  if (!rc)
    rc = heron__conv_check_fits("C3D", "KH", s[KH_], dil, s[H_], pad, "height",
                                err);
  if (!rc)
    rc = heron__conv_check_fits("C3D", "KW", s[KW_], dil, s[W_], pad, "width",
                                err);
  if (rc)
    return rc;
  int64_t DO = heron__conv_out_size(s[D_], s[KD_], st, pad, dil);
  int64_t HO = heron__conv_out_size(s[H_], s[KH_], st, pad, dil);
  int64_t WO = heron__conv_out_size(s[W_], s[KW_], st, pad, dil);

  int an = heron__op_add_axis(op, "n", HERON__SPATIAL, s[N_]);
  int aco = heron__op_add_axis(op, "co", HERON__SPATIAL, s[CO_]);
  int aod = heron__op_add_axis(op, "od", HERON__SPATIAL, DO);
  int aoh = heron__op_add_axis(op, "oh", HERON__SPATIAL, HO);
  int aow = heron__op_add_axis(op, "ow", HERON__SPATIAL, WO);
  int aci = heron__op_add_axis(op, "ci", HERON__REDUCE, s[CI_]);
  int akd = heron__op_add_axis(op, "kd", HERON__REDUCE, s[KD_]);
  int akh = heron__op_add_axis(op, "kh", HERON__REDUCE, s[KH_]);
  int akw = heron__op_add_axis(op, "kw", HERON__REDUCE, s[KW_]);
  op->ninputs = 2;

  heron__tensor *data = &op->in[0];
  heron__tensor_init(data, "data", 5,
                     (int64_t[]){s[N_], s[CI_], s[D_], s[H_], s[W_]});
  data->index[0].coef[an] = 1;
  data->index[1].coef[aci] = 1;
  window_index(data, 2, aod, akd, st, dil, pad);
  window_index(data, 3, aoh, akh, st, dil, pad);
  window_index(data, 4, aow, akw, st, dil, pad);
  /* As for C2D, only padding can take an index out of range. */
  data->bounded = pad > 0;

  heron__tensor *weight = &op->in[1];
  heron__tensor_init(weight, "weight", 5,
                     (int64_t[]){s[CO_], s[CI_], s[KD_], s[KH_], s[KW_]});
  weight->index[0].coef[aco] = 1;
  weight->index[1].coef[aci] = 1;
  weight->index[2].coef[akd] = 1;
  weight->index[3].coef[akh] = 1;
  weight->index[4].coef[akw] = 1;

  heron__tensor_init(&op->out, "out", 5,
                     (int64_t[]){s[N_], s[CO_], DO, HO, WO});
  op->out.index[0].coef[an] = 1;
  op->out.index[1].coef[aco] = 1;
  op->out.index[2].coef[aod] = 1;
  op->out.index[3].coef[aoh] = 1;
  op->out.index[4].coef[aow] = 1;
  op->channel_axis = aco;
  op->reference = c3d_ref;
  return heron__op_finish(op, err);
}

static const char *const c3d_dims[] = {"N",  "D",      "H",   "W",
                                       "CI", "CO",     "KD",  "KH",
                                       "KW", "stride", "pad", "dilation"};
static const int64_t c3d_defaults[] = {1, 0, 1}; /* stride, pad, dilation */
static const int64_t c3d_mins[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1};

const heron__op_kind heron__op_c3d_kind = {
    .name = "c3d",
    .summary = "3-D convolution, NCDHW, with one stride, zero padding and "
               "dilation for depth, height and width",
    .dims = c3d_dims,
    .ndims = 9,
    .ndims_max = 12,
    .defaults = c3d_defaults,
    .build = c3d_build,
    .mins = c3d_mins,
};

/* The channels-last form (core/op/layout.c): activations and output
 * in NDHWC. */
static int c3d_ndhwc_build(const int64_t *shape, int n, int dtype,
                           heron__op *op, heron_error *err) {
  int rc = c3d_build(shape, n, dtype, op, err);
  return rc ? rc : heron__op_channels_last(op, "c3d_ndhwc", err);
}

const heron__op_kind heron__op_c3d_ndhwc_kind = {
    .name = "c3d_ndhwc",
    .summary = "c3d with the channels last: data [N,D,H,W,CI] and out "
               "[N,OD,OH,OW,CO] (NDHWC), weight [CO,CI,KD,KH,KW]",
    .dims = c3d_dims,
    .ndims = 9,
    .ndims_max = 12,
    .defaults = c3d_defaults,
    .build = c3d_ndhwc_build,
    .mins = c3d_mins,
};
