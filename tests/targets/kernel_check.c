/* tests/targets/kernel_check.c - the steps the generated-kernel tests of the
 * targets share (see kernel_check.h). */
#include "kernel_check.h"

#include "core/measure/measure.h"
#include "core/space/builder.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kc_scratch(char *dir, size_t cap, const char *tag) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, cap, "%s/heron-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
  return mkdtemp(dir) ? 0 : -1;
}

int kc_cpu_build(kc_cpu *b, const char *name, const int64_t *shape, int n,
                 int dtype, int epilogue, const char *prepack, const char *hw,
                 heron_error *err) {
  memset(b, 0, sizeof *b);
  heron__hw_detect_cpu(&b->hw);
  int rc = hw ? heron__hw_load(hw, &b->hw, err) : HERON_OK;
  if (rc == HERON_OK)
    rc = heron__op_build(name, shape, n, dtype, &b->op, err);
  if (rc == HERON_OK)
    rc = heron__op_set_epilogue(&b->op, epilogue, err);
  if (rc == HERON_OK && prepack && !strcmp(prepack, KC_PREPACK_WEIGHTS))
    prepack = b->op.in[1 - b->op.act_input].name;
  if (rc == HERON_OK)
    rc = heron__op_set_prepack(&b->op, prepack, err);
  if (rc == HERON_OK)
    rc = heron__template_build(&b->op, &b->hw, "cpu", &b->t, &b->sp, err);
  return rc;
}

void kc_cpu_free(kc_cpu *b) {
  heron__template_free(b->t);
  heron__space_free(b->sp);
  b->t = NULL;
  b->sp = NULL;
}

void kc_append_renamed(heron__buf *all, int i, const char *src) {
  heron__buf_printf(all,
                    "#define heron_kernel heron_kernel_%d\n"
                    "#define heron_prepack heron_prepack_%d\n"
                    "#define heron_prepacked_elems heron_prepacked_elems_%d\n"
                    "%s#undef heron_kernel\n#undef heron_prepack\n"
                    "#undef heron_prepacked_elems\n",
                    i, i, i, src ? src : "");
}

void *kc_sym(void *h, const char *base, int i) {
  char name[64];
  snprintf(name, sizeof name, "%s_%d", base, i);
  return dlsym(h, name);
}

int kc_compile_all_c(const char *dir, const char *name, const char *cflags,
                     const char *extra) {
  /* Through the build cache when HERON_BUILD_CACHE is set, as the
   * measurements build (core/measure/measure.h). */
  const char *cache = heron__build_cache_dir();
  char cmd[1024], src_path[600], out[600];
  snprintf(src_path, sizeof src_path, "%s/all.c", dir);
  snprintf(out, sizeof out, "%s/%s.so", dir, name);
  char *src = NULL;
  size_t len = 0;
  heron_error err = {0};
  heron__buf key = {0};
  if (cache && heron__read_file(src_path, &src, &len, &err) == HERON_OK) {
    snprintf(cmd, sizeof cmd, "cc %s %s", cflags, extra);
    if (heron__build_cache_key(cmd, src, len, &key) != 0)
      cache = NULL;
    else if (heron__build_cache_fetch(cache, &key, out)) {
      free(src);
      heron__buf_free(&key);
      return 1;
    }
  } else {
    cache = NULL;
  }
  snprintf(cmd, sizeof cmd, "cd '%s' && cc %s %s all.c -o %s.so 2> %s.err", dir,
           cflags, extra, name, name);
  int ok = system(cmd) == 0;
  if (ok && cache)
    heron__build_cache_store(cache, &key, out);
  free(src);
  heron__buf_free(&key);
  return ok;
}

int kc_hold_libgomp(char *why, size_t cap) {
  if (dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL))
    return 0;
  snprintf(why, cap, "dlopen libgomp: %s", dlerror());
  return -1;
}

int kc_inputs(const heron__op *op, void **bufs, void **ref, uint64_t seed,
              heron_error *err) {
  int rc = heron__op_alloc_buffers(op, bufs, err);
  if (rc != HERON_OK)
    return rc;
  rc = heron__op_alloc_buffers(op, ref, err);
  if (rc != HERON_OK) {
    heron__op_free_buffers(op, bufs);
    return rc;
  }
  heron__op_fill_inputs(op, bufs, seed);
  heron__op_fill_inputs(op, ref, seed);
  heron__op_reference_full(op, ref);
  return HERON_OK;
}

void kc_inputs_free(const heron__op *op, void **bufs, void **ref) {
  heron__op_free_buffers(op, bufs);
  heron__op_free_buffers(op, ref);
}
