/* core/plugin/plugin.c - finding, loading and checking plugins.
 *
 * The loader trusts nothing a plugin says until it has checked it, in the
 * order the checks can be made safely:
 *
 *   1. the file exists (resolve)                     -> HERON_ENOTFOUND
 *   2. dlopen(RTLD_NOW | RTLD_LOCAL) succeeds        -> HERON_EABI
 *   3. the entry symbol of the wanted kind exists    -> HERON_EABI
 *   4. the entry returns a non-NULL descriptor       -> HERON_EABI
 *   5. abi_version matches                           -> HERON_EABI
 *   6. struct_size covers the version-1 layout       -> HERON_EABI
 *   7. name and the required members are non-NULL    -> HERON_EABI
 *   8. the parameter declarations are well formed    -> HERON_EABI
 *
 * HERON_ENOTFOUND thus always means "no such file" and HERON_EABI "there is
 * a file, but it is not a usable plugin of this kind" (a text file called
 * x.so, a model given as a strategy, a stale build).  Every failure after
 * dlopen closes the library again, and every message names the file.
 */
#include "core/plugin/plugin.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/plugin/param_table.h"
#include "core/util/util.h"
#include "heron/tune.h"

/* ---- load -------------------------------------------------------------- */

/* What differs between the two kinds of plugin, for one shared loader. */
typedef struct kind_info {
  const char *kind;       /* "strategy" / "model" */
  const char *entry;      /* the symbol we want */
  const char *other;      /* the other kind's symbol, for a hint */
  const char *other_kind; /* "model" / "strategy" */
  uint32_t abi;           /* expected abi_version */
  size_t v1_size;         /* struct size of the version-1 layout */
  /* Checks the kind's required members; returns the first NULL one's name
   * or NULL when all are present. */
  const char *(*missing_member)(const void *desc);
  /* The descriptor's parameter declarations, either form. */
  heron__param_table (*params)(const void *desc);
} kind_info;

static heron__param_table strategy_params(const void *d) {
  return heron__strategy_param_table(d);
}

static heron__param_table model_params(const void *d) {
  return heron__model_param_table(d);
}

static const char *strategy_missing(const void *d) {
  const heron_strategy_plugin *s = d;
  if (!s->name)
    return "name";
  if (!s->create)
    return "create";
  if (!s->propose)
    return "propose";
  if (!s->observe)
    return "observe";
  if (!s->destroy)
    return "destroy";
  return NULL;
}

static const char *model_missing(const void *d) {
  const heron_model_plugin *m = d;
  if (!m->name)
    return "name";
  if (!m->create)
    return "create";
  if (!m->fit)
    return "fit";
  if (!m->predict)
    return "predict";
  if (!m->destroy)
    return "destroy";
  return NULL;
}

#define HERON__V1_END(type, member)                                            \
  (offsetof(type, member) + sizeof(((type *)0)->member))

static const kind_info strategy_kind = {
    .kind = "strategy",
    .entry = HERON_STRATEGY_ENTRY,
    .other = HERON_MODEL_ENTRY,
    .other_kind = "model",
    .abi = HERON_STRATEGY_ABI_VERSION,
    .v1_size = HERON__V1_END(heron_strategy_plugin, load_state),
    .missing_member = strategy_missing,
    .params = strategy_params,
};

static const kind_info model_kind = {
    .kind = "model",
    .entry = HERON_MODEL_ENTRY,
    .other = HERON_STRATEGY_ENTRY,
    .other_kind = "strategy",
    .abi = HERON_MODEL_ABI_VERSION,
    .v1_size = HERON__V1_END(heron_model_plugin, destroy),
    .missing_member = model_missing,
    .params = model_params,
};

/* Closes the library after a failed check (the caller has already set the
 * message); returns HERON_EABI. */
static int fail_close(heron__plugin *p) {
  if (p->dl)
    dlclose(p->dl);
  p->dl = NULL;
  p->desc = NULL;
  return HERON_EABI;
}

/* Both descriptor structs begin with the same four members; this is that
 * common prefix, the only part read before the kind-specific checks. */
typedef struct desc_head {
  uint32_t abi_version;
  uint32_t struct_size;
} desc_head;

static int load(const char *name, const kind_info *k, heron__plugin *p,
                heron_error *err) {
  memset(p, 0, sizeof *p);
  int rc = heron_plugin_resolve(name, k->kind, p->path, sizeof p->path, err);
  if (rc != HERON_OK)
    return rc;
  const char *path = p->path;

  dlerror();
  p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!p->dl) {
    /* dlerror() usually starts with the path again; drop it so the reason
     * fits in the message. */
    const char *why = dlerror();
    size_t plen = strlen(path);
    if (!why)
      why = "unknown reason";
    else if (strncmp(why, path, plen) == 0 && strncmp(why + plen, ": ", 2) == 0)
      why += plen + 2;
    heron_error_set(err, HERON_EABI, "cannot load plugin %s: %s", path, why);
    return fail_close(p);
  }

  /* POSIX allows converting the void * of dlsym to a function pointer;
   * the memcpy keeps -Wpedantic quiet about it. */
  void *sym = dlsym(p->dl, k->entry);
  if (!sym) {
    if (dlsym(p->dl, k->other))
      heron_error_set(err, HERON_EABI,
                      "plugin %s does not export %s (is it a %s plugin?)", path,
                      k->entry, k->other_kind);
    else
      heron_error_set(err, HERON_EABI, "plugin %s does not export %s", path,
                      k->entry);
    return fail_close(p);
  }
  const void *(*entry)(void);
  memcpy(&entry, &sym, sizeof entry);
  const void *desc = entry();
  if (!desc) {
    heron_error_set(err, HERON_EABI, "plugin %s: %s() returned NULL", path,
                    k->entry);
    return fail_close(p);
  }

  const desc_head *head = desc;
  if (head->abi_version != k->abi) {
    heron_error_set(err, HERON_EABI, "plugin %s: ABI version %u, expected %u",
                    path, (unsigned)head->abi_version, (unsigned)k->abi);
    return fail_close(p);
  }
  if (head->struct_size < k->v1_size) {
    heron_error_set(err, HERON_EABI,
                    "plugin %s: struct size %u, expected at least %zu", path,
                    (unsigned)head->struct_size, k->v1_size);
    return fail_close(p);
  }
  const char *missing = k->missing_member(desc);
  if (missing) {
    heron_error_set(err, HERON_EABI,
                    "plugin %s: required member %s is NULL in its %s "
                    "descriptor",
                    path, missing, k->kind);
    return fail_close(p);
  }
  /* 8. the parameter declarations are well formed          -> HERON_EABI
   * (checked here, once, so a bad default or an empty range is the
   * plugin's fault at load time, not the user's at run time). */
  heron__param_table pt = k->params(desc);
  char who[1100];
  snprintf(who, sizeof who, "plugin %s", path);
  if (heron__param_table_validate(&pt, who, err) != HERON_OK)
    return fail_close(p);
  p->desc = desc;
  return HERON_OK;
}

int heron__plugin_load_strategy(const char *name, heron__plugin *p,
                                heron_error *err) {
  return load(name, &strategy_kind, p, err);
}

int heron__plugin_load_model(const char *name, heron__plugin *p,
                             heron_error *err) {
  return load(name, &model_kind, p, err);
}

void heron__plugin_close(heron__plugin *p) {
  if (!p)
    return;
  if (p->dl)
    dlclose(p->dl);
  p->dl = NULL;
  p->desc = NULL;
}

/* ---- describe ---------------------------------------------------------- */

HERON_API int heron_plugin_describe(const char *name, const char *kind,
                                    FILE *out, heron_error *err) {
  if (!out || !kind)
    return heron_error_set(err, HERON_EINVAL,
                           "heron_plugin_describe: no output or kind");
  int is_strategy = strcmp(kind, "strategy") == 0;
  if (!is_strategy && strcmp(kind, "model") != 0)
    return heron_error_set(err, HERON_EINVAL,
                           "plugin kind '%s' is neither strategy nor model",
                           kind);
  heron__plugin p;
  int rc = is_strategy ? heron__plugin_load_strategy(name, &p, err)
                       : heron__plugin_load_model(name, &p, err);
  if (rc != HERON_OK)
    return rc;
  const char *pname, *summary;
  heron__param_table pt;
  if (is_strategy) {
    const heron_strategy_plugin *s = p.desc;
    pname = s->name, summary = s->summary;
    pt = heron__strategy_param_table(s);
  } else {
    const heron_model_plugin *m = p.desc;
    pname = m->name, summary = m->summary;
    pt = heron__model_param_table(m);
  }
  fprintf(out, "%s %s - %s\n", kind, pname, summary ? summary : "");
  fprintf(out, "  file: %s\n", p.path);
  heron__param_table_print(&pt, out);
  if (!is_strategy) {
    const heron_model_plugin *m = p.desc;
    fprintf(out, "  host parameters (the engine's, for every model):\n");
    for (const heron_param_doc *d = heron__model_host_params; d->key; d++) {
      int has = strcmp(d->key, "load") == 0 ? HERON__PLUGIN_HAS(m, load)
                                            : HERON__PLUGIN_HAS(m, save);
      fprintf(out, "    %s=FILE: %s%s\n", d->key, d->help,
              has ? "" : " (not available: this model lacks the member)");
    }
  }
  heron__plugin_close(&p);
  return HERON_OK;
}
