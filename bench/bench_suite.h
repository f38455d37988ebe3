/* bench/bench_suite.h - what the files of bench_suite share (bench_suite.c
 * says what the program does and how; each file says what it holds):
 *
 *   bench_suite.c          main: the two phases, tuning each row in a child
 *   bench_suite_options.c  the command line
 *   bench_suite_file.c     the suite file
 *   bench_suite_geom.c     a task's geometry, its buffers and their values
 *   bench_suite_kernel.c   Heron-C's emitted kernel, built and loaded
 *   bench_suite_blas.c     the OpenBLAS baselines, its kernel sets in a child
 *   bench_suite_dnn.c      the oneDNN baselines
 *   bench_suite_compare.c  one fp32 row: the kernel against its baselines
 *   bench_suite_lowp.c     one int8 or bf16 row
 *   bench_suite_results.c  results.md and results.csv
 */
#ifndef HERON_BENCH_SUITE_H
#define HERON_BENCH_SUITE_H

#include <dnnl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "heron/heron.h"
#include "timing.h"

/* OpenBLAS's thread control and the name of the kernel set it chose when
 * it loaded; not in cblas.h on every distribution. */
void openblas_set_num_threads(int);
char *openblas_get_corename(void);

enum { MAX_TASKS = 256, MAX_THREADS = 16, MAX_DIMS = 16 };

/* ---- The settings (bench_suite_options.c) -------------------------------- */

/* What the command line decides. */
typedef struct settings {
  const char *suite, *tasks, *out, *epilogue, *strategy, *model;
  const char *fp32_dir; /* --fp32-dir */
  int trials, batch, number, repeat, compare_repeat, no_tune, quiet;
  int prepack_weights; /* --prepack-weights */
  double min_repeat_ms, timeout, compare_ms;
  uint64_t seed;
  heron_param sparams[64], mparams[64];
  int nsparams, nmparams;
  int threads[MAX_THREADS], nthreads;
  int bias, relu;                    /* from --epilogue */
  const volatile sig_atomic_t *stop; /* cli_stop_on_signals's flag */
} settings;

/* Reads the command line into *s (exits on --help and on a usage error). */
void parse_args(settings *s, int argc, char **argv);

/* The CPUs this process may run on. */
int cpu_count(void);

/* ---- The suite (bench_suite_file.c) -------------------------------------- */

typedef struct suite_task {
  const char *name;
  const char *op;
  int64_t shape[MAX_DIMS];
  int nshape;
  const char *error; /* why the task cannot even be created (unknown op) */
} suite_task;

typedef struct suite {
  const char *name;
  const char *dtype;  /* fp32 (default), int8 or bf16 */
  const char *target; /* cpu (default) or amx */
  suite_task tasks[MAX_TASKS];
  int ntasks;
} suite;

/* Reads --suite into *su, the tasks --tasks selects (a usage error, exit 2,
 * names whatever is wrong in the file). */
void load_suite(const settings *s, suite *su);

/* ---- A task's geometry and buffers (bench_suite_geom.c) ------------------ */

enum { FAM_NONE, FAM_GEMM, FAM_BMM, FAM_GEMV, FAM_SCAN, FAM_CONV, FAM_DECONV };

typedef struct geom {
  int fam;
  int64_t M, N, K, B; /* matrix ops */
  int sp;             /* convolutions: spatial rank */
  int cl;             /* convolutions: channels last (NWC, NHWC, NDHWC) */
  int blk;            /* convolutions: the channel block of a blocked op
                         (nCw16c, nChw16c: 16; nChw8c: 8), else 0: the
                         activations [N][C/blk][spatial][blk], the weights
                         [CO/blk][CI/blk][K...][blk i][blk o], channels
                         padded up to the block */
  int64_t n, ci, co, in[3], k[3], out[3], stride, pad, dil, opad;
  int64_t in_elems[2], out_elems;
  int64_t nch, inner; /* bias of output element i: bias[(i / inner) % nch] */
  double red;         /* reduction length: terms per output element */
} geom;

/* The FAM_* family of op; FAM_NONE for an op without a baseline.  The
 * channel block of a blocked convolution (geom.blk), 0 for other ops. */
int op_family(const char *op);
int op_block(const char *op);

/* The geometry of task t; 0, or -1 with the reason in why. */
int make_geom(const heron_task *t, geom *g, char *why, size_t cap);

/* The geometry of a matrix op from its family and extents (the child has
 * no task), as make_geom makes it. */
void matrix_geom(geom *g, int fam, int64_t B, int64_t M, int64_t N, int64_t K);

/* Whether a GEMM row also times sgemv (M or N of 1). */
int gemm_as_gemv(const geom *g);

/* 64-byte-aligned memory for `bytes` bytes, or n floats; exits when out of
 * memory. */
void *balloc(int64_t bytes);
float *falloc(int64_t n);

/* The next value of the xorshift64* stream in *x. */
uint64_t next_random(uint64_t *x);

/* Deterministic values in [-1, 1], the same on every run; NaN. */
void fill_random(float *p, int64_t n, uint64_t seed);
void fill_nan(float *p, int64_t n);

/* Zeroes the padded channel lanes of a blocked convolution's inputs
 * (g->blk; nothing otherwise), which oneDNN's blocked layouts keep zero. */
void zero_block_padding(const geom *g, float *data, float *weight);

/* Deterministic inputs of a matrix op: A from seed 1, B (or x) from seed 2,
 * the bias from seed 3; the same in the OpenBLAS child. */
void fill_matrix_inputs(const geom *g, float *in0, float *in1, float *bias);

/* ---- Heron-C's kernel (bench_suite_kernel.c) ----------------------------- */

typedef void (*kernel_fn)(void *const *);

typedef struct heron_ctx {
  kernel_fn k;
  void *bufs[4];
} heron_ctx;

/* Calls the kernel of a heron_ctx (a cli_runner's call). */
void heron_call(void *p);

/* Single quotes for sh, with any single quote in s escaped. */
void shell_quote(char *out, size_t cap, const char *s);

/* Compiles dir/kernel.c into dir/kernel.so with the flags the tuner used
 * and loads it; NULL with the reason in why. */
kernel_fn load_kernel(const char *dir, const char *cflags, void **dl, char *why,
                      size_t cap);

/* When the kernel exports heron_prepack (a task with prepacked inputs):
 * packs each input it takes packed into a new buffer, packed[i], and puts
 * that in bufs[i]. */
void prepack_inputs(void *dl, void **bufs, void **packed, const int esize[2]);

/* ---- OpenBLAS (bench_suite_blas.c) --------------------------------------- */

typedef struct blas_ctx {
  const geom *g;
  const float *a, *b, *bias;
  float *out;
  int relu;
} blas_ctx;

/* A STREAM-like copy, c[i] = a[i] over n floats on the row's threads: the
 * bandwidth a memory-bound kernel can hope for, timed beside it. */
typedef struct copy_ctx {
  const float *a;
  float *c;
  int64_t n;
} copy_ctx;

/* The calls timed (cli_runner calls): OpenBLAS's sgemm (a loop of them for
 * bmm) or sgemv, sgemv for a GEMM with M or N of 1, each followed by the
 * epilogue pass a BLAS user writes; the STREAM-like copy; SCAN's plain
 * prefix-sum loop. */
void blas_call(void *p);
void blas_gemv_call(void *p);
void copy_call(void *p);
void prefix_call(void *p);

/* The bias and ReLU pass after a library call. */
void epilogue_pass(const blas_ctx *c);

/* Sets the threads of OpenMP (our kernels, oneDNN) and of OpenBLAS. */
void set_threads(int t);

/* The kernel set this process's OpenBLAS runs ("Haswell", "SkylakeX"). */
const char *blas_core(void);

/* Whether SkylakeX's kernels are to be timed; else 0 with the reason. */
int cpu_avx512(char *why, size_t cap);

/* Finds this program (/proc/self/exe) for openblas_child_run. */
void blas_find_self(void);

/* bench_suite --internal-openblas-child ...: the OpenBLAS half of a row in
 * a child process; returns its exit status. */
int openblas_child(int argc, char **argv);

/* Runs the OpenBLAS half of the row in a child with OPENBLAS_CORETYPE =
 * core; 0, or -1 with the reason in why. */
int openblas_child_run(const settings *s, const geom *g, int threads,
                       const char *core, const char *dir, double sec[2],
                       char *got, size_t gotcap, float *out, char *why,
                       size_t cap);

/* ---- oneDNN (bench_suite_dnn.c) ------------------------------------------ */

typedef struct dnn_ctx {
  dnnl_primitive_t prim;
  dnnl_memory_t mem[4]; /* src, weights, bias, dst; NULL when unused */
  dnnl_exec_arg_t args[4];
  int nargs;
  /* ReLU as a second primitive, in place on dst (relu mode DNN_RELU_APART),
   * or NULL. */
  dnnl_primitive_t relu;
  dnnl_exec_arg_t relu_args[2];
  /* With dnn_reorder_in_call: the reorders of the plain user source into
   * the primitive's layout (pre) and of its output back into the plain
   * user destination (post), run in every call, or NULL. */
  dnnl_primitive_t pre, post;
  dnnl_exec_arg_t pre_args[2], post_args[2];
  dnnl_memory_t user[2]; /* the plain source and destination they use */
  char impl[40];         /* oneDNN's implementation ("jit:avx2", "ref:any") */
} dnn_ctx;

/* Creates (0, or -1) and destroys the CPU engine and stream every oneDNN
 * baseline runs on. */
int dnn_start(void);
void dnn_stop(void);

/* Runs the primitive(s) of c (a cli_runner's call); frees them. */
void dnn_call(void *p);
void dnn_free(dnn_ctx *c);

/* The convolution (or deconvolution) of g on the plain layouts (any = 0)
 * or on oneDNN's own (any = 1), in types ty (source, weights, output),
 * with a bias when bias is not NULL and the faster way of a ReLU when
 * relu; *how says which ("" or ", relu apart").  0, or -1 with why. */
int dnn_setup_best(dnn_ctx *c, const geom *g, int any,
                   const dnnl_data_type_t ty[3], void *data, void *weight,
                   float *bias, int relu, int threads, const char **how,
                   char *why, size_t cap);

/* Makes every call of c (set up on oneDNN's layouts) take the plain source
 * data and give its output in the plain layout (in out when reordered). */
int dnn_reorder_in_call(dnn_ctx *c, const geom *g, const dnnl_data_type_t ty[3],
                        void *data, void *out, char *why, size_t cap);

/* The primitive's output in the plain layout, into out. */
int dnn_result(dnn_ctx *c, const geom *g, dnnl_data_type_t dt, void *out,
               char *why, size_t cap);

/* The matrix ops as oneDNN's matmul primitive (bench_suite_dnn.c says
 * which operand is which). */
int dnn_matmul_setup(dnn_ctx *c, const geom *g, int any, int vec_left,
                     const dnnl_data_type_t ty[3], void *a, void *b, void *out,
                     char *why, size_t cap);

/* ---- A row of the table -------------------------------------------------- */

/* ROW_INTERRUPTED: a SIGINT / SIGTERM ended the benchmark before the row
 * was tuned to its budget or compared; the same command again resumes it. */
enum { ROW_OK, ROW_MISMATCH, ROW_FAILED, ROW_INTERRUPTED };

typedef struct row {
  const suite_task *task;
  heron_task *ht;
  int threads;
  char file[200]; /* base name of the log and the kernel folder */
  char shape[160];
  int status;
  char error[400];
  int trials, best_trial;
  char strategy[64]; /* as the log records it (--no-tune), else "" */
  double tune_gflops, tune_seconds;
  double heron_gflops;
  char base[160], base2[160];
  double base_gflops, base2_gflops;
  /* fp32 gemm, bmm and gemv: the kernel set of the OpenBLAS figure that
   * counted ("SkylakeX", "default: Haswell"), OpenBLAS's GFLOP/s with the
   * kernels it chose itself and with SkylakeX's (0: not timed), and
   * oneDNN's fp32 matmul's (0: not timed); "" and 0 on other rows. */
  char blas_kernels[64];
  double blas_default_gflops, blas_avx512_gflops, dnn_mm_gflops;
  double max_err;
  /* Memory-bound rows (gemv, a gemm with M or N of 1): the bytes the op
   * must move (its inputs and output once), Heron-C's and the baseline's
   * GB/s at that, and a STREAM-like copy's GB/s timed in the same run; 0
   * on other rows. */
  double bytes, heron_gbs, base_gbs, copy_gbs;
  /* int8 and bf16 rows with --fp32-dir: our fp32 kernel of the same task
   * timed in this run (0 without one), and its error over the fp32
   * tolerance against this row's output on the same values. */
  double fp32_gflops, fp32_err;
} row;

/* Largest error of out against ref over a tolerance that grows with the
 * reduction length red (bench_suite_compare.c); a match when <= 1. */
double compare(const float *out, const float *ref, int64_t n, double red);

/* Compares row r of an fp32 suite (bench_suite_compare.c), of an int8 or
 * bf16 suite (bench_suite_lowp.c): its status, figures and error. */
void compare_row(const settings *s, row *r);
void compare_row_lowp(const settings *s, const suite *su, row *r);

/* ---- Results (bench_suite_results.c) ------------------------------------- */

/* The table of rows[0, n) in Markdown (stdout, results.md) and CSV. */
void write_markdown(FILE *f, const settings *s, const suite *su,
                    const row *rows, int n);
void write_csv(FILE *f, const settings *s, const suite *su, const row *rows,
               int n);

#endif /* HERON_BENCH_SUITE_H */
