/* bench/bench_suite_kernel.c - the kernel a tuning run emitted, built
 * with the tuner's flags and loaded, its inputs prepacked where it packs
 * them ahead. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_suite.h"

/* ---- Heron-C's kernel ---------------------------------------------------- */

void heron_call(void *p) {
  heron_ctx *c = p;
  c->k(c->bufs);
}

/* Single quotes for sh, with any single quote in s escaped. */
void shell_quote(char *out, size_t cap, const char *s) {
  size_t len = 0;
  if (cap < 3)
    return;
  out[len++] = '\'';
  for (; *s && len + 6 < cap; s++) {
    if (*s == '\'') {
      memcpy(out + len, "'\\''", 4);
      len += 4;
    } else {
      out[len++] = *s;
    }
  }
  out[len++] = '\'';
  out[len] = '\0';
}

/* Compiles dir/kernel.c into dir/kernel.so with the flags the tuner used
 * and loads it. */
kernel_fn load_kernel(const char *dir, const char *cflags, void **dl, char *why,
                      size_t cap) {
  char src[CLI_PATH_BUF], so[CLI_PATH_BUF], log[CLI_PATH_BUF], qsrc[8600],
      qso[8600], qlog[8600];
  snprintf(src, sizeof src, "%s/kernel.c", dir);
  snprintf(so, sizeof so, "%s/kernel.so", dir);
  snprintf(log, sizeof log, "%s/kernel-build.log", dir);
  if (access(src, R_OK) != 0) {
    snprintf(why, cap, "no emitted kernel %.300s%s", src,
             " (run without --no-tune first)");
    return NULL;
  }
  shell_quote(qsrc, sizeof qsrc, src);
  shell_quote(qso, sizeof qso, so);
  shell_quote(qlog, sizeof qlog, log);
  const char *cc = getenv("CC");
  char cmd[30000];
  snprintf(cmd, sizeof cmd, "%s %s -o %s %s 2>%s", cc && *cc ? cc : "cc",
           cflags, qso, qsrc, qlog);
  if (system(cmd) != 0) {
    snprintf(why, cap, "cannot build the emitted kernel (see %.300s)", log);
    return NULL;
  }
  /* dlopen needs a slash to take the name as a path. */
  char path[4300];
  snprintf(path, sizeof path, "%s%s", so[0] == '/' ? "" : "./", so);
  *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  kernel_fn k = NULL;
  if (*dl) {
    void *sym = dlsym(*dl, "heron_kernel");
    memcpy(&k, &sym, sizeof k);
  }
  if (!k) {
    snprintf(why, cap, "cannot load %.200s: %.160s", so, dlerror());
    if (*dl)
      dlclose(*dl);
    *dl = NULL;
  }
  return k;
}

/* When the kernel exports heron_prepack (a task with prepacked inputs):
 * packs each input it takes packed into a new buffer, packed[i], of
 * heron_prepacked_elems(i) elements of esize[i] bytes (the input's own
 * type), and puts that in bufs[i]. */
void prepack_inputs(void *dl, void **bufs, void **packed, const int esize[2]) {
  void *pe = dlsym(dl, "heron_prepacked_elems");
  void *pk = dlsym(dl, "heron_prepack");
  if (!pe || !pk)
    return;
  int64_t (*elems)(int);
  void (*pack)(int, const void *, void *);
  memcpy(&elems, &pe, sizeof elems);
  memcpy(&pack, &pk, sizeof pack);
  for (int i = 0; i < 2; i++) {
    int64_t n = elems(i);
    if (n <= 0)
      continue;
    packed[i] = balloc(n * esize[i]); /* exits when out of memory */
    pack(i, bufs[i], packed[i]);
    bufs[i] = packed[i];
  }
}
