/* core/op/t2d.c - T2D, the transposed 2-D convolution (the gradient of a
 * convolution with respect to its input; PyTorch's ConvTranspose2d), NCHW:
 *
 *   data [N, CI, H, W], weight [CI, CO, KH, KW], out [N, CO, HO, WO]
 *   HO = (H-1)*stride - 2*pad + dil*(KH-1) + output_padding + 1 (W alike)
 *
 * Every input pixel scatters a weighted copy of the kernel into the output:
 *
 *   out[n, co, ih*stride - pad + kh*dil, iw*stride - pad + kw*dil]
 *       += data[n, ci, ih, iw] * weight[ci, co, kh, kw]
 *
 * dropping the taps that land outside the output.  output_padding only adds
 * rows and columns at the bottom and right, to pick one of the `stride`
 * input sizes a strided convolution maps to the same output size.
 *
 * The description is the gather form of the same sum, which the rules need
 * (one output element per spatial point): for each output pixel and tap,
 * ih = (oh + pad - kh*dil) / stride, an element only where the division is
 * exact and the result lies in [0, H).  That is a divided affine index
 * (heron__affine.div), so no zero-expanded copy of the input is made. */
#include <string.h>

#include "core/op/op.h"
#include "core/util/util.h"

enum { N_, H_, W_, CI_, CO_, KH_, KW_, STRIDE_, PAD_, DIL_, OUTPAD_ };

/* Output extent along one dimension; may be < 1 for a large padding, which
 * the build rejects. */
static int64_t out_size(int64_t in, int64_t k, int64_t stride, int64_t pad,
                        int64_t dil, int64_t outpad) {
  return (in - 1) * stride - 2 * pad + dil * (k - 1) + outpad + 1;
}

/* ---- Reference ----------------------------------------------------------
 * The scatter form above, written from the definition: for each (n, co)
 * output plane, every input pixel and kernel tap adds into the output pixel
 * it lands on.  It shares nothing with the gather description (no division,
 * no `bounded` flag), so the two check each other.  One loop nest serves
 * every dtype: it runs over double copies of the inputs and accumulates
 * straight into the double output plane (heron__op_run_ref), so int8's
 * integer sums stay exact; the iw loop is innermost so that, for stride 1,
 * it walks input and output rows contiguously.  The (n, co) output planes
 * are split among threads (heron__par_for), each computed by the same
 * operations whatever the split: the output is the same bit for bit at any
 * thread count. */

static void t2d_rows(void *arg, int64_t lo, int64_t hi) {
  const heron__ref_ctx *c = arg;
  const heron__op *op = c->op;
  const double *const *in = c->in;
  double *out = c->out;
  const int64_t *s = op->shape;
  int64_t H = s[H_], W = s[W_], CI = s[CI_], CO = s[CO_], KH = s[KH_],
          KW = s[KW_], st = s[STRIDE_], pad = s[PAD_], dil = s[DIL_],
          opad = s[OUTPAD_];
  int64_t HO = out_size(H, KH, st, pad, dil, opad),
          WO = out_size(W, KW, st, pad, dil, opad);
  const double *data = in[0], *weight = in[1];
  for (int64_t r = lo; r < hi; r++) {
    int64_t n = r / CO, co = r % CO;
    double *plane = out + (n * CO + co) * HO * WO;
    memset(plane, 0, (size_t)(HO * WO) * sizeof *plane);
    for (int64_t ci = 0; ci < CI; ci++)
      for (int64_t ih = 0; ih < H; ih++) {
        const double *row = data + ((n * CI + ci) * H + ih) * W;
        for (int64_t kh = 0; kh < KH; kh++) {
          int64_t oh = ih * st - pad + kh * dil;
          if (oh < 0 || oh >= HO)
            continue;
          double *orow = plane + oh * WO;
          for (int64_t kw = 0; kw < KW; kw++) {
            double w = weight[((ci * CO + co) * KH + kh) * KW + kw];
            /* Output column ow = iw*st + kw*dil - pad lies in [0, WO)
             * exactly for iw in [iw_lo, iw_hi). */
            int64_t off = kw * dil - pad;
            if (WO - 1 - off < 0)
              continue;
            int64_t iw_lo = off >= 0 ? 0 : (-off + st - 1) / st;
            int64_t iw_hi = (WO - 1 - off) / st + 1;
            if (iw_hi > W)
              iw_hi = W;
            for (int64_t iw = iw_lo; iw < iw_hi; iw++)
              orow[iw * st + off] += w * row[iw];
          }
        }
      }
  }
}

static void t2d_ref_f64(const heron__op *op, const double *const *in,
                        double *out) {
  heron__ref_ctx c = {op, in, out};
  heron__par_for(op->shape[N_] * op->shape[CO_], op->flops / 2, t2d_rows, &c);
}

static void t2d_ref(const heron__op *op, void *const *bufs) {
  heron__op_run_ref(op, bufs, t2d_ref_f64);
}

/* ---- Description -------------------------------------------------------- */

/* Checks the output extent of one dimension ("height" / "width") and
 * returns it through *o. */
static int check_out(const char *what, const char *in_name, int64_t in,
                     const char *k_name, int64_t k, const int64_t *s,
                     int64_t *o, heron_error *err) {
  *o = out_size(in, k, s[STRIDE_], s[PAD_], s[DIL_], s[OUTPAD_]);
  if (*o < 1)
    return heron_error_set(err, HERON_EINVAL,
                           "T2D: output %s (%s-1)*stride - 2*pad + "
                           "dilation*(%s-1) + output_padding + 1 = %lld is "
                           "less than 1 (pad=%lld is too large)",
                           what, in_name, k_name, (long long)*o,
                           (long long)s[PAD_]);
  if (*o > HERON__DIM_MAX)
    return heron_error_set(err, HERON_EINVAL,
                           "T2D: output %s %lld exceeds the largest dimension "
                           "%lld",
                           what, (long long)*o, HERON__DIM_MAX);
  return HERON_OK;
}

/* Sets dimension d of the data tensor to the gather index
 * (o + pad - k*dil) / stride and returns whether it needs bounds: when some
 * (o, k) gives an index outside [0, in) or, with stride > 1, a non-exact
 * division. */
static int gather_index(heron__tensor *t, int d, int ao, int ak, int64_t o_ext,
                        int64_t k_ext, int64_t in, int64_t st, int64_t pad,
                        int64_t dil) {
  heron__affine *f = &t->index[d];
  f->coef[ao] = 1;
  f->coef[ak] = -dil;
  f->offset = pad;
  f->div = st > 1 ? st : 0;
  int64_t lo = pad - (k_ext - 1) * dil, hi = o_ext - 1 + pad;
  return st > 1 || lo < 0 || hi > (in - 1) * st;
}

static int t2d_build(const int64_t *shape, int n, int dtype, heron__op *op,
                     heron_error *err) {
  int rc = heron__op_begin(op, &heron__op_t2d_kind, shape, n, dtype, err);
  if (rc)
    return rc;
  const int64_t *s = op->shape;
  int64_t st = s[STRIDE_], pad = s[PAD_], dil = s[DIL_], opad = s[OUTPAD_];
  /* As in PyTorch: output_padding selects among the input sizes that give
   * the same output, of which there are max(stride, dilation). */
  int64_t opad_lim = st > dil ? st : dil;
  if (opad >= opad_lim)
    return heron_error_set(err, HERON_EINVAL,
                           "T2D: output_padding=%lld must be smaller than "
                           "stride %lld or dilation %lld",
                           (long long)opad, (long long)st, (long long)dil);
  int64_t HO, WO;
  rc = check_out("height", "H", s[H_], "KH", s[KH_], s, &HO, err);
  if (!rc)
    rc = check_out("width", "W", s[W_], "KW", s[KW_], s, &WO, err);
  if (rc)
    return rc;

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
  int bh = gather_index(data, 2, aoh, akh, HO, s[KH_], s[H_], st, pad, dil);
  int bw = gather_index(data, 3, aow, akw, WO, s[KW_], s[W_], st, pad, dil);
  data->bounded = bh || bw;

  heron__tensor *weight = &op->in[1];
  heron__tensor_init(weight, "weight", 4,
                     (int64_t[]){s[CI_], s[CO_], s[KH_], s[KW_]});
  weight->index[0].coef[aci] = 1;
  weight->index[1].coef[aco] = 1;
  weight->index[2].coef[akh] = 1;
  weight->index[3].coef[akw] = 1;

  heron__tensor_init(&op->out, "out", 4, (int64_t[]){s[N_], s[CO_], HO, WO});
  op->out.index[0].coef[an] = 1;
  op->out.index[1].coef[aco] = 1;
  op->out.index[2].coef[aoh] = 1;
  op->out.index[3].coef[aow] = 1;
  op->channel_axis = aco;
  op->reference = t2d_ref;
  return heron__op_finish(op, err);
}

static const char *const t2d_dims[] = {"N",
                                       "H",
                                       "W",
                                       "CI",
                                       "CO",
                                       "KH",
                                       "KW",
                                       "stride",
                                       "pad",
                                       "dilation",
                                       "output_padding"};
/* stride, pad, dilation, output_padding */
static const int64_t t2d_defaults[] = {1, 0, 1, 0};
static const int64_t t2d_mins[] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0};

const heron__op_kind heron__op_t2d_kind = {
    .name = "t2d",
    .summary = "transposed 2-D convolution (ConvTranspose2d), NCHW, weight "
               "[CI,CO,KH,KW], with stride, padding, dilation and output "
               "padding",
    .dims = t2d_dims,
    .ndims = 7,
    .ndims_max = 11,
    .defaults = t2d_defaults,
    .build = t2d_build,
    .mins = t2d_mins,
};
