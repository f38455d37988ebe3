/* core/targets/cpu/codegen_driver.c - the standalone driver that times an
 * emitted kernel (driver.c of --emit). */
#include "core/targets/cpu/codegen.h"

void heron__codegen_driver(const heron__op *op, heron__buf *out) {
  int n = op->ninputs, nb = heron__op_nbufs(op);
  const heron__tensor *ts[HERON__MAX_TENSORS + 2];
  for (int t = 0; t < nb; t++)
    ts[t] = t < n ? &op->in[t] : t == n ? &op->out : &op->bias;
  heron__buf_printf(out, "/* Standalone driver for a Heron-C kernel: %s (",
                    op->name);
  for (int i = 0; i < op->nshape; i++)
    heron__buf_printf(out, "%s%lld", i ? "," : "", (long long)op->shape[i]);
  heron__buf_printf(
      out,
      ").\n * Build: cc -O3 -march=native -fopenmp driver.c kernel.c -o run\n"
      " * Prints the median time of the timed runs and the GFLOP/s. */\n"
      "#define _POSIX_C_SOURCE 199309L\n"
      "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
      "#include <string.h>\n#include <time.h>\n\n"
      "void heron_kernel(void *const *bufs);\n"
      "/* Exported by kernels that take inputs packed ahead (prepack). */\n"
      "__attribute__((weak)) int64_t heron_prepacked_elems(int input);\n"
      "__attribute__((weak)) void heron_prepack(int input, const void *src,\n"
      "                                         void *dst);\n\n"
      "static const double flops = %.17g;\n"
      "static const int64_t elems[%d] = {",
      op->flops, nb);
  for (int i = 0; i < nb; i++)
    heron__buf_printf(out, "%s%lldLL", i ? ", " : "",
                      (long long)heron__tensor_elems(ts[i]));
  heron__buf_printf(out, "};\nstatic const int elem_bytes[%d] = {", nb);
  for (int i = 0; i < nb; i++)
    heron__buf_printf(out, "%s%d", i ? ", " : "",
                      heron__dtype_size(heron__op_buf_dtype(op, i)));
  heron__buf_printf(
      out,
      "};\n\n"
      "static double now(void) {\n"
      "  struct timespec ts;\n"
      "  clock_gettime(CLOCK_MONOTONIC, &ts);\n"
      "  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;\n}\n\n"
      "static int cmp(const void *a, const void *b) {\n"
      "  double x = *(const double *)a, y = *(const double *)b;\n"
      "  return (x > y) - (x < y);\n}\n\n"
      "int main(int argc, char **argv) {\n"
      "  int runs = argc > 1 ? atoi(argv[1]) : 11;\n"
      "  if (runs < 1)\n    runs = 1;\n"
      "  void *bufs[%d];\n"
      "  for (int t = 0; t < %d; t++) {\n"
      "    size_t bytes = (size_t)elems[t] * (size_t)elem_bytes[t];\n"
      "    bufs[t] = aligned_alloc(64, (bytes + 63) / 64 * 64);\n"
      "    if (!bufs[t]) {\n"
      "      fprintf(stderr, \"out of memory\\n\");\n      return 1;\n    }\n"
      "    memset(bufs[t], 0, bytes);\n"
      "    /* Inputs get values in [-1, 1) from a fixed LCG; the fp32 ones\n"
      "     * as floats, other types as small integers in every byte. */\n"
      "    uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(t + 1);\n"
      "    for (int64_t i = 0; t != %d && i < elems[t]; i++) {\n"
      "      s = s * 6364136223846793005ULL + 1442695040888963407ULL;\n"
      "      if (elem_bytes[t] == 4)\n"
      "        ((float *)bufs[t])[i] = (float)((s >> 40) / 8388608.0 - 1.0);\n"
      "      else\n"
      "        ((unsigned char *)bufs[t])[i] = (unsigned char)(s >> 60);\n"
      "    }\n  }\n"
      "  /* Inputs the kernel takes packed: packed once, untimed, into\n"
      "   * heron_prepacked_elems elements of the input's own type. */\n"
      "  for (int t = 0; heron_prepack && t < %d; t++) {\n"
      "    int64_t pn = heron_prepacked_elems(t);\n"
      "    if (pn <= 0)\n      continue;\n"
      "    void *copy = aligned_alloc(64, ((size_t)pn * (size_t)elem_bytes[t] "
      "+ 63) / 64 * 64);\n"
      "    if (!copy) {\n"
      "      fprintf(stderr, \"out of memory\\n\");\n      return 1;\n    }\n"
      "    heron_prepack(t, bufs[t], copy);\n"
      "    free(bufs[t]);\n    bufs[t] = copy;\n  }\n"
      "  for (int w = 0; w < 2; w++)\n"
      "    heron_kernel(bufs);\n"
      "  double *ms = malloc((size_t)runs * sizeof *ms);\n"
      "  if (!ms)\n    return 1;\n"
      "  for (int r = 0; r < runs; r++) {\n"
      "    double t0 = now();\n"
      "    heron_kernel(bufs);\n"
      "    ms[r] = 1e3 * (now() - t0);\n  }\n"
      "  qsort(ms, (size_t)runs, sizeof *ms, cmp);\n"
      "  double med = ms[runs / 2];\n"
      "  printf(\"median %%.4f ms, %%.2f GFLOP/s (%%d runs)\\n\", med,\n"
      "         flops / (med * 1e-3) / 1e9, runs);\n"
      "  for (int t = 0; t < %d; t++)\n    free(bufs[t]);\n"
      "  free(ms);\n  return 0;\n}\n",
      nb, nb, n, n, nb);
}
