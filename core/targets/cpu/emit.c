/* core/targets/cpu/emit.c - --emit for the cpu target: the best kernel as
 * kernel.c, a standalone driver.c that times it without libheron, and
 * build.sh, which builds the two with the flags the kernel was tuned with.
 * config.json is written before this by core/tune/emit.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/targets/cpu/cpu.h"
#include "core/task/task.h"
#include "core/util/util.h"

static int write_in(const char *dir, const char *name, const char *text,
                    heron_error *err) {
  char path[HERON__PATH_BUF];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return heron__write_file(path, text, strlen(text), err);
}

int heron__cpu_emit(const heron_task *t, const heron_measurement *best,
                    const char *dir, heron_error *err) {
  char *src = NULL, *drv = NULL;
  int rc = heron_task_source(t, best->config, &src, err);
  if (!rc)
    rc = write_in(dir, "kernel.c", src, err);
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
    char path[HERON__PATH_BUF];
    snprintf(path, sizeof path, "%s/build.sh", dir);
    rc = sh ? heron__write_file(path, sh, strlen(sh), err)
            : heron_error_set(err, HERON_ENOMEM, "out of memory");
    if (!rc)
      chmod(path, 0755);
    free(sh);
  }
  free(src);
  free(drv);
  return rc;
}
