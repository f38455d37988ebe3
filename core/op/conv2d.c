/* core/op/conv2d.c - C2D, the 2-D convolution in NCHW layout with stride,
 * zero padding and dilation, and DIL, the same op under its own name with
 * dilation 2 by default (Heron's suite lists it separately).
 *
 *   out[n,co,oh,ow] = sum over ci, kh, kw of
 *       data[n, ci, oh*stride + kh*dil - pad, ow*stride + kw*dil - pad]
 *     * weight[co, ci, kh, kw]
 *
 * where data reads as zero outside [0,H) x [0,W). */
#include "core/op/op.h"
#include "core/util/util.h"

enum { N_, H_, W_, CI_, CO_, KH_, KW_, STRIDE_, PAD_, DIL_ };

/* ---- Reference ----------------------------------------------------------
 * Plain loops over the definition above, one loop nest for every dtype over
 * double copies of the inputs (heron__op_run_ref; int8's integer sums are
 * exact in double), accumulating in double.  The ow loop is innermost over
 * a row buffer so that, for stride 1, consecutive ow read consecutive data
 * elements; the zero padding is an explicit range of rows and columns, not
 * the op's `bounded` flag, so the description is checked, not copied.  The
 * (n, co, oh) output rows are split among threads (heron__par_for), each
 * computed by the same operations whatever the split: the output is the
 * same bit for bit at any thread count. */

enum { ROW_BLOCK = 256 };

static void c2d_rows(void *arg, int64_t lo, int64_t hi) {
  const heron__ref_ctx *c = arg;
  const heron__op *op = c->op;
  const double *const *in = c->in;
  double *out = c->out;
  const int64_t *s = op->shape;
  int64_t H = s[H_], W = s[W_], CI = s[CI_], CO = s[CO_], KH = s[KH_],
          KW = s[KW_], st = s[STRIDE_], pad = s[PAD_], dil = s[DIL_];
  int64_t HO = heron__conv_out_size(H, KH, st, pad, dil),
          WO = heron__conv_out_size(W, KW, st, pad, dil);
  const double *data = in[0], *weight = in[1];
  double acc[ROW_BLOCK];
  for (int64_t r = lo; r < hi; r++) {
    int64_t n = r / (CO * HO), co = r / HO % CO, oh = r % HO;
    for (int64_t ow0 = 0; ow0 < WO; ow0 += ROW_BLOCK) {
      int64_t nb = WO - ow0 < ROW_BLOCK ? WO - ow0 : ROW_BLOCK;
      for (int64_t b = 0; b < nb; b++)
        acc[b] = 0;
      for (int64_t ci = 0; ci < CI; ci++)
        for (int64_t kh = 0; kh < KH; kh++) {
          int64_t h = oh * st + kh * dil - pad;
          if (h < 0 || h >= H)
            continue;
          const double *row = data + ((n * CI + ci) * H + h) * W;
          for (int64_t kw = 0; kw < KW; kw++) {
            double w = weight[((co * CI + ci) * KH + kh) * KW + kw];
            /* Column x = ow*st + kw*dil - pad is inside [0, W) exactly
             * for ow in [ow_lo, ow_hi); computing the range once keeps
             * the test out of the inner loop, which then vectorises. */
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
      double *o = out + ((n * CO + co) * HO + oh) * WO + ow0;
      for (int64_t b = 0; b < nb; b++)
        o[b] = acc[b];
    }
  }
}

static void c2d_ref_f64(const heron__op *op, const double *const *in,
                        double *out) {
  heron__ref_ctx c = {op, in, out};
  const int64_t *s = op->shape;
  int64_t HO =
      heron__conv_out_size(s[H_], s[KH_], s[STRIDE_], s[PAD_], s[DIL_]);
  heron__par_for(s[N_] * s[CO_] * HO, op->flops / 2, c2d_rows, &c);
}

static void c2d_ref(const heron__op *op, void *const *bufs) {
  heron__op_run_ref(op, bufs, c2d_ref_f64);
}

/* ---- Description -------------------------------------------------------- */

/* C2D and DIL differ only in their catalogue entry (name and the default
 * dilation), so both build through here; `up` names the op in messages. */
static int conv2d_build(const heron__op_kind *kind, const char *up,
                        const int64_t *shape, int n, int dtype, heron__op *op,
                        heron_error *err) {
  int rc = heron__op_begin(op, kind, shape, n, dtype, err);
  if (rc)
    return rc;
  const int64_t *s = op->shape;
  int64_t st = s[STRIDE_], pad = s[PAD_], dil = s[DIL_];
  rc = heron__conv_check_fits(up, "KH", s[KH_], dil, s[H_], pad, "height", err);
  if (!rc)
    rc =
        heron__conv_check_fits(up, "KW", s[KW_], dil, s[W_], pad, "width", err);
  if (rc)
    return rc;
  int64_t HO = heron__conv_out_size(s[H_], s[KH_], st, pad, dil);
  int64_t WO = heron__conv_out_size(s[W_], s[KW_], st, pad, dil);

  int an = heron__op_add_axis(op, "n", HERON__SPATIAL, s[N_]);
  int aco = heron__op_add_axis(op, "co", HERON__SPATIAL, s[CO_]);
  int aoh = heron__op_add_axis(op, "oh", HERON__SPATIAL, HO);
  int aow = heron__op_add_axis(op, "ow", HERON__SPATIAL, WO);
  int aci = heron__op_add_axis(op, "ci", HERON__REDUCE, s[CI_]);
  int akh = heron__op_add_axis(op, "kh", HERON__REDUCE, s[KH_]);
  int akw = heron__op_add_axis(op, "kw", HERON__REDUCE, s[KW_]);
  op->ninputs = 2;

  heron__tensor *data = &op->in[0];
  heron__tensor_init(data, "data", 4, (int64_t[]){s[N_], s[CI_], s[H_], s[W_]});
  data->index[0].coef[an] = 1;
  data->index[1].coef[aci] = 1;
  data->index[2].coef[aoh] = st;
  data->index[2].coef[akh] = dil;
  data->index[2].offset = -pad;
  data->index[3].coef[aow] = st;
  data->index[3].coef[akw] = dil;
  data->index[3].offset = -pad;
  /* Without padding the largest index is (HO-1)*stride + (KH-1)*dil, which
   * the definition of HO keeps below H; only padding can leave the range. */
  data->bounded = pad > 0;

  heron__tensor *weight = &op->in[1];
  heron__tensor_init(weight, "weight", 4,
                     (int64_t[]){s[CO_], s[CI_], s[KH_], s[KW_]});
  weight->index[0].coef[aco] = 1;
  weight->index[1].coef[aci] = 1;
  weight->index[2].coef[akh] = 1;
  weight->index[3].coef[akw] = 1;

  heron__tensor_init(&op->out, "out", 4, (int64_t[]){s[N_], s[CO_], HO, WO});
  op->out.index[0].coef[an] = 1;
  op->out.index[1].coef[aco] = 1;
  op->out.index[2].coef[aoh] = 1;
  op->out.index[3].coef[aow] = 1;
  op->channel_axis = aco;
  op->reference = c2d_ref;
  return heron__op_finish(op, err);
}

static int c2d_build(const int64_t *shape, int n, int dtype, heron__op *op,
                     heron_error *err) {
  return conv2d_build(&heron__op_c2d_kind, "C2D", shape, n, dtype, op, err);
}

static int dil_build(const int64_t *shape, int n, int dtype, heron__op *op,
                     heron_error *err) {
  return conv2d_build(&heron__op_dil_kind, "DIL", shape, n, dtype, op, err);
}

static const char *const c2d_dims[] = {"N",  "H",  "W",      "CI",  "CO",
                                       "KH", "KW", "stride", "pad", "dilation"};
static const int64_t c2d_defaults[] = {1, 0, 1}; /* stride, pad, dilation */
static const int64_t c2d_mins[] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 1};
/* Heron's DIL cases are its C2D cases with dilation 2. */
static const int64_t dil_defaults[] = {1, 0, 2}; /* stride, pad, dilation */

const heron__op_kind heron__op_c2d_kind = {
    .name = "c2d",
    .summary = "2-D convolution, NCHW, with stride, zero padding and dilation",
    .dims = c2d_dims,
    .ndims = 7,
    .ndims_max = 10,
    .defaults = c2d_defaults,
    .build = c2d_build,
    .mins = c2d_mins,
};

const heron__op_kind heron__op_dil_kind = {
    .name = "dil",
    .summary = "dilated 2-D convolution: C2D with the dilation defaulting to 2",
    .dims = c2d_dims,
    .ndims = 7,
    .ndims_max = 10,
    .defaults = dil_defaults,
    .build = dil_build,
    .mins = c2d_mins,
};

/* The channels-last form (core/op/layout.c): activations and output
 * in NHWC. */
static int c2d_nhwc_build(const int64_t *shape, int n, int dtype, heron__op *op,
                          heron_error *err) {
  int rc = c2d_build(shape, n, dtype, op, err);
  return rc ? rc : heron__op_channels_last(op, "c2d_nhwc", err);
}

const heron__op_kind heron__op_c2d_nhwc_kind = {
    .name = "c2d_nhwc",
    .summary = "c2d with the channels last: data [N,H,W,CI] and out "
               "[N,OH,OW,CO] (NHWC), weight [CO,CI,KH,KW]",
    .dims = c2d_dims,
    .ndims = 7,
    .ndims_max = 10,
    .defaults = c2d_defaults,
    .build = c2d_nhwc_build,
    .mins = c2d_mins,
};

/* The blocked forms (core/op/blocked.c): activations and output in nChw16c
 * or nChw8c, weights in OIhw16i16o or OIhw8i8o, fp32. */
static void c2d_blocked_ref(const heron__op *op, void *const *bufs) {
  heron__op_blocked_ref(op, bufs, &heron__op_c2d_kind, CI_, CO_);
}

static int c2d_blocked_build(const int64_t *shape, int n, int dtype,
                             heron__op *op, int64_t block, const char *name,
                             heron_error *err) {
  int rc = c2d_build(shape, n, dtype, op, err);
  if (!rc)
    rc = heron__op_blocked(op, block, name, err);
  op->reference = c2d_blocked_ref;
  return rc;
}

static int c2d_nchw16c_build(const int64_t *shape, int n, int dtype,
                             heron__op *op, heron_error *err) {
  return c2d_blocked_build(shape, n, dtype, op, 16, "c2d_nchw16c", err);
}

static int c2d_nchw8c_build(const int64_t *shape, int n, int dtype,
                            heron__op *op, heron_error *err) {
  return c2d_blocked_build(shape, n, dtype, op, 8, "c2d_nchw8c", err);
}

const heron__op_kind heron__op_c2d_nchw16c_kind = {
    .name = "c2d_nchw16c",
    .summary = "c2d blocked by 16 channels, fp32: data [N,CI/16,H,W,16] and "
               "out [N,CO/16,OH,OW,16] (nChw16c), weight "
               "[CO/16,CI/16,KH,KW,16i,16o]; channels padded up to 16",
    .dims = c2d_dims,
    .ndims = 7,
    .ndims_max = 10,
    .defaults = c2d_defaults,
    .build = c2d_nchw16c_build,
    .mins = c2d_mins,
};

const heron__op_kind heron__op_c2d_nchw8c_kind = {
    .name = "c2d_nchw8c",
    .summary = "c2d blocked by 8 channels, fp32: data [N,CI/8,H,W,8] and "
               "out [N,CO/8,OH,OW,8] (nChw8c), weight "
               "[CO/8,CI/8,KH,KW,8i,8o]; channels padded up to 8",
    .dims = c2d_dims,
    .ndims = 7,
    .ndims_max = 10,
    .defaults = c2d_defaults,
    .build = c2d_nchw8c_build,
    .mins = c2d_mins,
};
