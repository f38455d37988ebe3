/* core/targets/cuda/image.c - a cuda kernel as a program outside libheron
 * launches it (heron_cuda_image_build, include/heron/task.h): the launch
 * from the source's first line (kernel.h) and the cubin NVRTC builds for
 * the task's SM (nvrtc.c), as a tuning run builds it.  heron-lib embeds
 * both in its libraries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/targets/cuda/toolchain.h"
#include "core/task/task.h"
#include "core/util/util.h"

HERON_API int heron_cuda_image_build(const heron_task *t, const char *src,
                                     int compile, heron_cuda_image *out,
                                     heron_error *err) {
  memset(out, 0, sizeof *out);
  const heron__target *tg = t->base ? t->base : t->target;
  if (!tg || strcmp(tg->name, "cuda"))
    return heron_error_set(err, HERON_EINVAL,
                           "task %s: not a cuda task: no device image", t->key);
  heron__cuda_launch l;
  if (!src || heron__cuda_launch_parse(src, &l) != 0)
    return heron_error_set(err, HERON_EINVAL,
                           "task %s: the source has no launch line", t->key);
  /* A TMA kernel (the wgmma path) takes two tensor maps after (in0, in1,
   * out, bias), which the image's launchers do not make. */
  if (l.ntmaps)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "task %s: the kernel takes TMA tensor maps (mma "
                           "2), which a device image's launcher does not "
                           "make",
                           t->key);
  out->sm = t->hw.sm;
  memcpy(out->grid, l.grid, sizeof out->grid);
  memcpy(out->block, l.block, sizeof out->block);
  out->dynamic_smem = l.smem_bytes;
  snprintf(out->entry, sizeof out->entry, "%s", HERON__CUDA_KERNEL_NAME);
  if (!compile)
    return HERON_OK;
  heron__nvrtc_result r;
  int rc = heron__nvrtc_compile(src, t->hw.sm, &r, err);
  if (rc == HERON_OK) {
    out->cubin = r.cubin;
    out->cubin_size = r.cubin_size;
    r.cubin = NULL;
    snprintf(out->entry, sizeof out->entry, "%s", r.entry);
    out->regs = r.regs;
    out->spill_bytes = r.spill_bytes;
    out->static_smem = r.static_smem;
    heron__nvrtc_version(out->nvrtc, sizeof out->nvrtc);
  }
  heron__nvrtc_result_free(&r);
  return rc;
}

HERON_API void heron_cuda_image_free(heron_cuda_image *img) {
  if (!img)
    return;
  free(img->cubin);
  memset(img, 0, sizeof *img);
}
