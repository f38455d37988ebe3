/* core/targets/registry.c - the registry of targets: one static const table
 * of the functions that return each target's descriptor.  A new target is
 * a folder core/targets/<name>/ with its target.c, its descriptor function
 * declared in core/targets/target.h, and one line in `registry` below. */
#include <stdio.h>
#include <string.h>

#include "core/targets/target.h"

/* The registry's order is the order messages list targets in; the first is
 * the default target of a spec that names none. */
static const heron__target *(*const registry[])(void) = {
    heron__target_cpu,
    heron__target_cuda,
    heron__target_replay,
    heron__target_amx,
};

#define NTARGETS ((int)(sizeof registry / sizeof *registry))

int heron__target_count(void) { return NTARGETS; }

const heron__target *heron__target_at(int i) {
  return i >= 0 && i < NTARGETS ? registry[i]() : NULL;
}

const heron__target *heron__target_find(const char *name) {
  if (!name)
    return registry[0]();
  for (int i = 0; i < NTARGETS; i++)
    if (!strcmp(registry[i]()->name, name))
      return registry[i]();
  return NULL;
}

const char *heron__target_names(unsigned all, unsigned none, const char *sep,
                                const char *last, const char *quote, char *out,
                                size_t cap) {
  const heron__target *pick[NTARGETS];
  int n = 0;
  for (int i = 0; i < NTARGETS; i++) {
    const heron__target *tg = registry[i]();
    if ((tg->flags & all) == all && !(tg->flags & none))
      pick[n++] = tg;
  }
  if (!quote)
    quote = "";
  size_t used = 0;
  if (cap)
    out[0] = '\0';
  for (int i = 0; i < n && used < cap; i++) {
    const char *join = i == 0 ? "" : i == n - 1 ? last : sep;
    int w = snprintf(out + used, cap - used, "%s%s%s%s", join, quote,
                     pick[i]->name, quote);
    used += w > 0 ? (size_t)w : 0;
  }
  return out;
}

int heron__target_lookup(const char *name, const heron__target **out,
                         heron_error *err) {
  *out = heron__target_find(name);
  if (*out)
    return HERON_OK;
  char names[256];
  heron__target_names(0, 0, ", ", ", ", NULL, names, sizeof names);
  return heron_error_set(err, HERON_ENOTFOUND,
                         "unknown target '%s'; available: %s", name, names);
}

/* ---- the public view (include/heron/task.h) ----------------------------- */

HERON_API const char *heron_target_default_dtype(const char *name) {
  const heron__target *tg = heron__target_find(name);
  return tg ? tg->default_dtype : NULL;
}

HERON_API int heron_target_is_gpu(const char *name) {
  const heron__target *tg = heron__target_find(name);
  return tg && (tg->flags & HERON__TARGET_GPU) ? 1 : 0;
}
