/* bench/bench_suite_dnn.c - the oneDNN baselines: convolutions,
 * deconvolutions and matmuls, on plain and on oneDNN's own layouts. */
#include <dnnl_debug.h>
#include <string.h>

#include "bench_suite.h"

/* ---- oneDNN baselines ---------------------------------------------------- */

static dnnl_engine_t dnn_engine;
static dnnl_stream_t dnn_stream;

int dnn_start(void) {
  return dnnl_engine_create(&dnn_engine, dnnl_cpu, 0) != dnnl_success ||
                 dnnl_stream_create(&dnn_stream, dnn_engine,
                                    dnnl_stream_default_flags) != dnnl_success
             ? -1
             : 0;
}

void dnn_stop(void) {
  dnnl_stream_destroy(dnn_stream);
  dnnl_engine_destroy(dnn_engine);
}

/* How a ReLU epilogue reaches oneDNN: as a post-op of the convolution, or
 * as an eltwise primitive after it.  The post-op is what oneDNN advises,
 * but some of its implementations apply post-ops on a slow path (the
 * gemm-based deconvolution, for one), so the bench takes the faster. */
enum { DNN_RELU_NONE, DNN_RELU_FUSED, DNN_RELU_APART };

void dnn_call(void *p) {
  dnn_ctx *c = p;
  if (c->pre)
    dnnl_primitive_execute(c->pre, dnn_stream, 2, c->pre_args);
  dnnl_primitive_execute(c->prim, dnn_stream, c->nargs, c->args);
  if (c->relu)
    dnnl_primitive_execute(c->relu, dnn_stream, 2, c->relu_args);
  if (c->post)
    dnnl_primitive_execute(c->post, dnn_stream, 2, c->post_args);
  dnnl_stream_wait(dnn_stream);
}

void dnn_free(dnn_ctx *c) {
  if (c->pre)
    dnnl_primitive_destroy(c->pre);
  if (c->post)
    dnnl_primitive_destroy(c->post);
  for (int i = 0; i < 2; i++)
    if (c->user[i])
      dnnl_memory_destroy(c->user[i]);
  if (c->relu)
    dnnl_primitive_destroy(c->relu);
  if (c->prim)
    dnnl_primitive_destroy(c->prim);
  for (int i = 0; i < 4; i++)
    if (c->mem[i])
      dnnl_memory_destroy(c->mem[i]);
  memset(c, 0, sizeof *c);
}

#define DNN_TRY(call)                                                          \
  do {                                                                         \
    dnnl_status_t st_ = (call);                                                \
    if (st_ != dnnl_success) {                                                 \
      snprintf(why, cap, "oneDNN: %s failed: %s", #call,                       \
               dnnl_status2str(st_));                                          \
      goto fail;                                                               \
    }                                                                          \
  } while (0)

/* The row-major tag of rank nd (NCW, NCHW, NCDHW; a convolution's plain
 * weights OIW, OIHW, OIDHW), and the activations' and outputs' own
 * layout of g: those, with the channels last NWC, NHWC, NDHWC, or
 * blocked nCw16c, nChw16c, nCw8c, nChw8c (the "plain" descriptors below
 * are the user's layout, whichever of these it is). */
static dnnl_format_tag_t dnn_nc_tag(int nd) {
  return nd == 3 ? dnnl_abc : nd == 4 ? dnnl_abcd : dnnl_abcde;
}

static dnnl_format_tag_t dnn_act_tag(const geom *g) {
  int nd = g->sp + 2;
  if (g->blk == 16)
    return nd == 3 ? dnnl_aBc16b : dnnl_aBcd16b; /* nCw16c, nChw16c */
  if (g->blk == 8)
    return nd == 3 ? dnnl_aBc8b : dnnl_aBcd8b;
  if (g->cl)
    return nd == 3 ? dnnl_acb : nd == 4 ? dnnl_acdb : dnnl_acdeb;
  return dnn_nc_tag(nd);
}

/* The plain descriptor of g's source (dst = 0) or destination (dst = 1)
 * in type dt. */
static dnnl_status_t dnn_plain_md(const geom *g, int dst, dnnl_data_type_t dt,
                                  dnnl_memory_desc_t *md) {
  int nd = g->sp + 2;
  dnnl_dims_t d = {g->n, dst ? g->co : g->ci};
  for (int i = 0; i < g->sp; i++)
    d[2 + i] = dst ? g->out[i] : g->in[i];
  return dnnl_memory_desc_init_by_tag(md, nd, d, dt, dnn_act_tag(g));
}

/* A reorder primitive from memory `from` to memory `to`. */
static dnnl_status_t dnn_reorder_prim(dnnl_memory_t from, dnnl_memory_t to,
                                      dnnl_primitive_t *out) {
  const dnnl_memory_desc_t *fmd, *tmd;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_status_t st = dnnl_memory_get_memory_desc(from, &fmd);
  if (st == dnnl_success)
    st = dnnl_memory_get_memory_desc(to, &tmd);
  if (st == dnnl_success)
    st = dnnl_reorder_primitive_desc_create(&pd, fmd, dnn_engine, tmd,
                                            dnn_engine, NULL);
  if (st == dnnl_success)
    st = dnnl_primitive_create(out, pd);
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  return st;
}

/* Copies memory `from` into `to` (a layout change), outside any timing. */
static dnnl_status_t dnn_reorder(dnnl_memory_t from, dnnl_memory_t to) {
  dnnl_primitive_t r = NULL;
  dnnl_status_t st = dnn_reorder_prim(from, to, &r);
  if (st == dnnl_success) {
    dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    st = dnnl_primitive_execute(r, dnn_stream, 2, a);
    if (st == dnnl_success)
      st = dnnl_stream_wait(dnn_stream);
  }
  if (r)
    dnnl_primitive_destroy(r);
  return st;
}

/* A memory object in layout `want` holding the plain user tensor `user`
 * described by `plain`: the user's pointer itself when the layouts agree,
 * else a reordered copy. */
static dnnl_status_t dnn_memory_for(const dnnl_memory_desc_t *want,
                                    const dnnl_memory_desc_t *plain, void *user,
                                    dnnl_memory_t *out) {
  *out = NULL;
  if (dnnl_memory_desc_equal(want, plain))
    return dnnl_memory_create(out, plain, dnn_engine, user);
  dnnl_memory_t u = NULL;
  dnnl_status_t st = dnnl_memory_create(&u, plain, dnn_engine, user);
  if (st == dnnl_success)
    st = dnnl_memory_create(out, want, dnn_engine, DNNL_MEMORY_ALLOCATE);
  if (st == dnnl_success)
    st = dnn_reorder(u, *out);
  if (u)
    dnnl_memory_destroy(u);
  return st;
}

/* Sets up the convolution (or deconvolution) of g on the plain layouts
 * (any = 0) or on oneDNN's preferred ones (any = 1), with a bias when bias
 * is not NULL and a ReLU as `relu` (DNN_RELU_*) says.  The primitive is made
 * after the thread count is set: oneDNN picks its kernel and blocking for
 * the threads it will have. */
static int dnn_setup(dnn_ctx *c, const geom *g, int any,
                     const dnnl_data_type_t ty[3], void *data, void *weight,
                     float *bias, int relu, char *why, size_t cap) {
  memset(c, 0, sizeof *c);
  int nd = g->sp + 2;
  dnnl_dims_t sd = {g->n, g->ci}, wd = {g->co, g->ci}, dd = {g->n, g->co},
              bd = {g->co};
  dnnl_dims_t strides, dil, pl, pr;
  for (int i = 0; i < g->sp; i++) {
    sd[2 + i] = g->in[i];
    wd[2 + i] = g->k[i];
    dd[2 + i] = g->out[i];
    strides[i] = g->stride;
    dil[i] = g->dil - 1; /* oneDNN counts the taps skipped: 0 is none */
    pl[i] = g->pad;
    /* A deconvolution's output padding is less padding on the far side. */
    pr[i] = g->pad - (g->fam == FAM_DECONV ? g->opad : 0);
  }
  dnnl_format_tag_t act = dnn_act_tag(g);
  /* Deconvolution weights are [CI, CO, ...] (PyTorch's ConvTranspose), the
   * logical {CO, CI, ...} of oneDNN with the first two swapped: iohw. */
  dnnl_format_tag_t wtag = g->fam != FAM_DECONV ? dnn_nc_tag(nd)
                           : nd == 3            ? dnnl_bac
                           : nd == 4            ? dnnl_bacd
                                                : dnnl_bacde;
  /* A blocked op's weights: OIw16i16o, OIhw16i16o (8 alike). */
  if (g->blk == 16)
    wtag = nd == 3 ? dnnl_ABc16b16a : dnnl_ABcd16b16a;
  else if (g->blk == 8)
    wtag = nd == 3 ? dnnl_ABc8b8a : dnnl_ABcd8b8a;
  dnnl_format_tag_t pick = dnnl_format_tag_any;
  dnnl_memory_desc_t smd, wmd, dmd, bmd, psmd, pwmd;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t po = NULL;
  dnnl_primitive_desc_t pd = NULL, rpd = NULL;
  DNN_TRY(dnnl_memory_desc_init_by_tag(&psmd, nd, sd, ty[0], act));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&pwmd, nd, wd, ty[1], wtag));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&smd, nd, sd, ty[0], any ? pick : act));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&wmd, nd, wd, ty[1], any ? pick : wtag));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&dmd, nd, dd, ty[2], any ? pick : act));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_a));
  DNN_TRY(dnnl_primitive_attr_create(&attr));
  if (relu == DNN_RELU_FUSED) {
    DNN_TRY(dnnl_post_ops_create(&po));
    DNN_TRY(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0, 0));
    DNN_TRY(dnnl_primitive_attr_set_post_ops(attr, po));
  }
  if (g->fam == FAM_DECONV) {
    dnnl_deconvolution_desc_t d;
    DNN_TRY(dnnl_dilated_deconvolution_forward_desc_init(
        &d, dnnl_forward_inference, dnnl_deconvolution_direct, &smd, &wmd,
        bias ? &bmd : NULL, &dmd, strides, dil, pl, pr));
    DNN_TRY(dnnl_primitive_desc_create(&pd, &d, attr, dnn_engine, NULL));
  } else {
    /* auto: oneDNN may choose Winograd where it judges it faster. */
    dnnl_convolution_desc_t d;
    DNN_TRY(dnnl_dilated_convolution_forward_desc_init(
        &d, dnnl_forward_inference, dnnl_convolution_auto, &smd, &wmd,
        bias ? &bmd : NULL, &dmd, strides, dil, pl, pr));
    DNN_TRY(dnnl_primitive_desc_create(&pd, &d, attr, dnn_engine, NULL));
  }
  DNN_TRY(dnnl_primitive_create(&c->prim, pd));
  /* The implementation goes into the table: a "ref" one (oneDNN's slow
   * fallback, for a combination it has no fast kernel for) explains a
   * weak baseline. */
  const char *impl = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) ==
          dnnl_success &&
      impl)
    snprintf(c->impl, sizeof c->impl, "%s", impl);
  DNN_TRY(dnn_memory_for(dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
                         &psmd, data, &c->mem[0]));
  DNN_TRY(
      dnn_memory_for(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                     &pwmd, weight, &c->mem[1]));
  if (bias)
    DNN_TRY(dnnl_memory_create(&c->mem[2], &bmd, dnn_engine, bias));
  DNN_TRY(dnnl_memory_create(
      &c->mem[3], dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
      dnn_engine, DNNL_MEMORY_ALLOCATE));
  c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, c->mem[0]};
  c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, c->mem[1]};
  if (bias)
    c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, c->mem[2]};
  c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, c->mem[3]};
  if (relu == DNN_RELU_APART) {
    dnnl_eltwise_desc_t ed;
    DNN_TRY(dnnl_eltwise_forward_desc_init(
        &ed, dnnl_forward_inference, dnnl_eltwise_relu,
        dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), 0, 0));
    DNN_TRY(dnnl_primitive_desc_create(&rpd, &ed, NULL, dnn_engine, NULL));
    DNN_TRY(dnnl_primitive_create(&c->relu, rpd));
    dnnl_primitive_desc_destroy(rpd);
    rpd = NULL;
    c->relu_args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, c->mem[3]};
    c->relu_args[1] = (dnnl_exec_arg_t){DNNL_ARG_DST, c->mem[3]};
  }
  dnnl_primitive_desc_destroy(pd);
  dnnl_primitive_attr_destroy(attr);
  if (po)
    dnnl_post_ops_destroy(po);
  return 0;
fail:
  if (rpd)
    dnnl_primitive_desc_destroy(rpd);
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  if (po)
    dnnl_post_ops_destroy(po);
  dnn_free(c);
  return -1;
}

/* dnn_setup with the faster of the two ReLU modes when there is a ReLU,
 * decided by a short timing of both; *how says which won. */
int dnn_setup_best(dnn_ctx *c, const geom *g, int any,
                   const dnnl_data_type_t ty[3], void *data, void *weight,
                   float *bias, int relu, int threads, const char **how,
                   char *why, size_t cap) {
  *how = "";
  if (!relu)
    return dnn_setup(c, g, any, ty, data, weight, bias, DNN_RELU_NONE, why,
                     cap);
  dnn_ctx apart;
  if (dnn_setup(&apart, g, any, ty, data, weight, bias, DNN_RELU_APART, why,
                cap))
    return -1;
  char ignored[160];
  if (dnn_setup(c, g, any, ty, data, weight, bias, DNN_RELU_FUSED, ignored,
                sizeof ignored)) {
    *c = apart;
    *how = ", relu apart";
    return 0;
  }
  cli_runner rs[2] = {{.call = dnn_call, .self = c},
                      {.call = dnn_call, .self = &apart}};
  cli_time_runners(rs, 2, 3, 0.01, threads);
  if (rs[1].seconds < rs[0].seconds) {
    dnn_free(c);
    *c = apart;
    *how = ", relu apart";
  } else {
    dnn_free(&apart);
  }
  return 0;
}

/* Makes every call of the convolution c (set up on oneDNN's layouts) take
 * the plain user source `data` and give its output in the plain layout
 * (in `out` when it needed a reorder, c->post; else dnn_result reads it),
 * as a user holding NCHW tensors would call it: the source reordered into
 * the primitive's layout and the output back, timed with the primitive
 * (the weights stay reordered once, as prepacked weights are).  A layout
 * that is plain already needs no reorder. */
int dnn_reorder_in_call(dnn_ctx *c, const geom *g, const dnnl_data_type_t ty[3],
                        void *data, void *out, char *why, size_t cap) {
  dnnl_memory_desc_t psmd, pdmd;
  const dnnl_memory_desc_t *md;
  DNN_TRY(dnn_plain_md(g, 0, ty[0], &psmd));
  DNN_TRY(dnn_plain_md(g, 1, ty[2], &pdmd));
  DNN_TRY(dnnl_memory_create(&c->user[0], &psmd, dnn_engine, data));
  DNN_TRY(dnnl_memory_create(&c->user[1], &pdmd, dnn_engine, out));
  DNN_TRY(dnnl_memory_get_memory_desc(c->mem[0], &md));
  if (!dnnl_memory_desc_equal(md, &psmd)) {
    DNN_TRY(dnn_reorder_prim(c->user[0], c->mem[0], &c->pre));
    c->pre_args[0] = (dnnl_exec_arg_t){DNNL_ARG_FROM, c->user[0]};
    c->pre_args[1] = (dnnl_exec_arg_t){DNNL_ARG_TO, c->mem[0]};
  }
  DNN_TRY(dnnl_memory_get_memory_desc(c->mem[3], &md));
  if (!dnnl_memory_desc_equal(md, &pdmd)) {
    DNN_TRY(dnn_reorder_prim(c->mem[3], c->user[1], &c->post));
    c->post_args[0] = (dnnl_exec_arg_t){DNNL_ARG_FROM, c->mem[3]};
    c->post_args[1] = (dnnl_exec_arg_t){DNNL_ARG_TO, c->user[1]};
  }
  return 0;
fail:
  return -1;
}

/* The primitive's output in the plain layout, into out. */
int dnn_result(dnn_ctx *c, const geom *g, dnnl_data_type_t dt, void *out,
               char *why, size_t cap) {
  dnnl_memory_desc_t plain;
  dnnl_memory_t m = NULL;
  DNN_TRY(dnn_plain_md(g, 1, dt, &plain));
  DNN_TRY(dnnl_memory_create(&m, &plain, dnn_engine, out));
  DNN_TRY(dnn_reorder(c->mem[3], m));
  dnnl_memory_destroy(m);
  return 0;
fail:
  if (m)
    dnnl_memory_destroy(m);
  return -1;
}

/* The matrix ops in int8 or bf16 as oneDNN's matmul primitive: OpenBLAS
 * has no integer GEMM, and oneDNN's matmul is what its users call for one
 * (u8 x s8 -> s32 with VNNI, bf16 x bf16 -> f32 with AVX512-BF16).  The
 * user's row-major tensors are a (the left operand) and b; for GEMV,
 * `vec_left` says the vector is the left operand (y^T = x^T A^T: src {1,K},
 * weights A read transposed through its strides), else the matrix is
 * (src A {M,K}, weights x {K,1}).  With any = 1 the weights go into the
 * layout oneDNN prefers, reordered untimed as prepacked weights would be;
 * dst is the user's plain out, written in place. */
int dnn_matmul_setup(dnn_ctx *c, const geom *g, int any, int vec_left,
                     const dnnl_data_type_t ty[3], void *a, void *b, void *out,
                     char *why, size_t cap) {
  memset(c, 0, sizeof *c);
  int nd = g->fam == FAM_BMM ? 3 : 2;
  dnnl_dims_t sd, wd, dd;
  dnnl_format_tag_t stag = nd == 3 ? dnnl_abc : dnnl_ab, wtag = stag;
  if (g->fam == FAM_BMM) {
    sd[0] = wd[0] = dd[0] = g->B;
    sd[1] = g->M, sd[2] = g->K, wd[1] = g->K, wd[2] = g->N;
    dd[1] = g->M, dd[2] = g->N;
  } else if (g->fam == FAM_GEMV && vec_left) {
    sd[0] = 1, sd[1] = g->K, wd[0] = g->K, wd[1] = g->M;
    dd[0] = 1, dd[1] = g->M;
    wtag = dnnl_ba; /* A is [M][K]: as a K x M matrix, column-major */
  } else {
    sd[0] = g->M, sd[1] = g->K, wd[0] = g->K, wd[1] = g->N;
    dd[0] = g->M, dd[1] = g->N;
  }
  void *src = g->fam == FAM_GEMV && vec_left ? b : a;
  void *wei = g->fam == FAM_GEMV && vec_left ? a : b;
  dnnl_memory_desc_t smd, wmd, pwmd, dmd;
  dnnl_primitive_desc_t pd = NULL;
  DNN_TRY(dnnl_memory_desc_init_by_tag(&smd, nd, sd, ty[0], stag));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&pwmd, nd, wd, ty[1], wtag));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&wmd, nd, wd, ty[1],
                                       any ? dnnl_format_tag_any : wtag));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&dmd, nd, dd, ty[2], stag));
  dnnl_matmul_desc_t d;
  DNN_TRY(dnnl_matmul_desc_init(&d, &smd, &wmd, NULL, &dmd));
  DNN_TRY(dnnl_primitive_desc_create(&pd, &d, NULL, dnn_engine, NULL));
  DNN_TRY(dnnl_primitive_create(&c->prim, pd));
  const char *impl = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) ==
          dnnl_success &&
      impl)
    snprintf(c->impl, sizeof c->impl, "%s", impl);
  DNN_TRY(dnnl_memory_create(&c->mem[0], &smd, dnn_engine, src));
  DNN_TRY(
      dnn_memory_for(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                     &pwmd, wei, &c->mem[1]));
  DNN_TRY(dnnl_memory_create(&c->mem[3], &dmd, dnn_engine, out));
  c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, c->mem[0]};
  c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, c->mem[1]};
  c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, c->mem[3]};
  dnnl_primitive_desc_destroy(pd);
  return 0;
fail:
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  dnn_free(c);
  return -1;
}
