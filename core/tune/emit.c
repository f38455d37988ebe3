/* core/tune/emit.c - --emit DIR: the best kernel's source, its config and a
 * standalone driver that builds and times it without libheron.
 *
 * For the cuda target the source is written as kernel.cu, and instead of a
 * C driver a one-line README.txt says how to launch it (its geometry and
 * dynamic shared memory come from the source's first line). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/target/cuda/kernel.h"
#include "core/op/task.h"
#include "core/tune/tune_internal.h"
#include "core/util/util.h"

int heron__emit(const heron_task *t, const heron_history *h, const char *dir,
                heron_error *err);

static int write_in(const char *dir, const char *name, const char *text,
                    heron_error *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return heron__write_file(path, text, strlen(text), err);
}

static char *config_json(const heron_task *t, const heron_measurement *best) {
  const heron_space *sp = t->space;
  json_t *knobs = json_object();
  for (int i = 0; i < heron_space_nknobs(sp); i++) {
    int v = heron_space_knob(sp, i);
    json_object_set_new(knobs, heron_space_var_name(sp, v),
                        json_integer((json_int_t)best->config[v]));
  }
  char key[32] = "";
  heron_space_key(sp, best->config, key, sizeof key);
  json_t *o = json_object();
  json_object_set_new(o, "task", json_string(t->key));
  json_object_set_new(o, "trial", json_integer(best->trial));
  json_object_set_new(o, "key", json_string(key));
  json_object_set_new(o, "seconds", json_real(best->seconds));
  json_object_set_new(o, "gflops", json_real(best->gflops));
  json_object_set_new(o, "hardware", json_string(t->hw.name));
  json_object_set_new(o, "config", knobs);
  char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(o);
  return s;
}

/* kernel.cu, config.json and README.txt for the best cuda kernel. */
static int emit_cuda(const heron_task *t, const heron_measurement *best,
                     const char *dir, heron_error *err) {
  char *src = NULL, *cfg = NULL, *readme = NULL;
  int rc = heron_task_source(t, best->config, &src, err);
  if (!rc)
    rc = write_in(dir, "kernel.cu", src, err);
  if (!rc && !(cfg = config_json(t, best)))
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  if (!rc)
    rc = write_in(dir, "config.json", cfg, err);
  heron__cuda_launch l;
  if (!rc && heron__cuda_launch_parse(src, &l) != 0)
    rc = heron_error_set(err, HERON_EINVAL,
                         "emit: the best kernel's source has no launch line");
  if (!rc) {
    heron__buf b = {0};
    heron__buf_printf(
        &b,
        "kernel.cu: launch " HERON__CUDA_KERNEL_NAME "(in0, in1, out, bias; "
        "fp16, bias NULL when none) with grid (%d, %d, %d), block (%d, %d, "
        "%d) and %lld bytes of dynamic shared memory; built with NVRTC for "
        "sm_%d (%d registers, %d bytes spilled, %lld bytes shared memory); "
        "trial %d of %s",
        l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
        (long long)l.smem_bytes, t->hw.sm, best->regs, best->spill_bytes,
        (long long)best->smem_bytes, best->trial, t->key);
    /* Only a timed kernel is ever the best (heron_history_best). */
    heron__buf_printf(&b, ", %.2f GFLOP/s when tuned.\n", best->gflops);
    readme = heron__buf_take(&b);
    rc = readme ? write_in(dir, "README.txt", readme, err)
                : heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  free(src);
  free(cfg);
  free(readme);
  return rc;
}

int heron__emit(const heron_task *t, const heron_history *h, const char *dir,
                heron_error *err) {
  const heron_measurement *best = heron_history_best(h);
  if (!best)
    return HERON_OK;
  int rc = heron__mkdirs(dir, err);
  if (!rc && !strcmp(t->target, "cuda"))
    return emit_cuda(t, best, dir, err);
  if (!rc && t->t1) {
    /* A T1 space has no kernel to write: its best config is the result. */
    char *cfg = config_json(t, best);
    rc = cfg ? write_in(dir, "config.json", cfg, err)
             : heron_error_set(err, HERON_ENOMEM, "out of memory");
    free(cfg);
    return rc;
  }
  char *src = NULL, *cfg = NULL, *drv = NULL;
  if (!rc)
    rc = heron_task_source(t, best->config, &src, err);
  if (!rc)
    rc = write_in(dir, "kernel.c", src, err);
  if (!rc && !(cfg = config_json(t, best)))
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  if (!rc)
    rc = write_in(dir, "config.json", cfg, err);
  heron__buf b = {0};
  if (!rc) {
    heron__codegen_driver(&t->op, &b);
    drv = heron__buf_take(&b);
    rc = drv ? write_in(dir, "driver.c", drv, err)
             : heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  if (!rc) {
    /* The flags the kernel was tuned with (its ISA: an AVX2 description
     * builds AVX2 code on any machine), less those of a shared object. */
    char flags[256];
    snprintf(flags, sizeof flags, "%s", heron__template_cflags(t->tmpl));
    char *so = strstr(flags, " -fPIC -shared");
    if (so)
      *so = '\0';
    heron__buf_printf(&b,
                      "#!/bin/sh\n"
                      "# Builds and times the best kernel of %s\n"
                      "# (trial %d, %.2f GFLOP/s when tuned).\n"
                      "set -e\ncd \"$(dirname \"$0\")\"\n"
                      "${CC:-cc} %s -o bench driver.c kernel.c -lm\n"
                      "./bench \"$@\"\n",
                      t->key, best->trial, best->gflops, flags);
    char *sh = heron__buf_take(&b);
    char path[4200];
    snprintf(path, sizeof path, "%s/build.sh", dir);
    rc = sh ? heron__write_file(path, sh, strlen(sh), err)
            : heron_error_set(err, HERON_ENOMEM, "out of memory");
    if (!rc)
      chmod(path, 0755);
    free(sh);
  }
  free(src);
  free(cfg);
  free(drv);
  return rc;
}
