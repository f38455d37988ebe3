/* core/plugin/model.c - the host side of a cost model.
 *
 * A heron_model is a loaded model plugin plus one instance of it.  The
 * engine opens and fits it; strategies only see the const handle and call
 * heron_model_predict / heron_model_importance.  Calls into the plugin get
 * a private heron_error so that the message the host passes on can say
 * which model failed and in which call ("model xgb: fit failed: ...").
 *
 * Every call into the plugin is bracketed by guard_in / guard_out, so that
 * with a guard set (heron__model_set_guard) a crash or a hang in the model
 * ends the run with a message naming the file and the call
 * (core/plugin/guard.h); without one they cost a NULL test.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/plugin/param_table.h"
#include "core/plugin/plugin.h"
#include "core/util/util.h"

/* The env's logger: one line on stderr, prefixed with the model's name so
 * the user can tell who speaks.  Debug lines (level 2) only appear when
 * HERON_DEBUG is set in the environment. */
static void model_log(const heron_model_env *env, int level, const char *fmt,
                      ...) {
  const heron_model *m = env ? env->host : NULL;
  if (level >= 2 && !getenv("HERON_DEBUG"))
    return;
  const char *tag = level == 1 ? "warning: " : level >= 2 ? "debug: " : "";
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  /* One fprintf, so lines from several threads do not interleave. */
  fprintf(stderr, "[%s] %s%s\n", m && m->desc ? m->desc->name : "model", tag,
          line);
}

/* Marks the start and the end of a call into the plugin, for the guard. */
static void guard_in(const heron_model *m, const char *fn) {
  heron__guard_enter(m->guard, "model", m->lib.path, fn, m->guard_limit_s);
}
static void guard_out(const heron_model *m) { heron__guard_leave(m->guard); }

void heron__model_set_guard(heron_model *m, heron__guard *g, double limit_s) {
  if (!m)
    return;
  m->guard = g;
  m->guard_limit_s = g ? limit_s : 0;
}

/* Passes a plugin's failure on, prefixed with the model and the call.  A
 * plugin that fails without a message or with a non-negative code still
 * yields a usable error. */
static int call_failed(const heron_model *m, const char *call, int rc,
                       const heron_error *inner, heron_error *err) {
  if (rc >= 0)
    rc = HERON_EPLUGIN;
  const char *why = inner->code != HERON_OK && inner->text[0]
                        ? inner->text
                        : heron_strerror(rc);
  return heron_error_set(err, rc, "model %s: %s failed: %s", m->desc->name,
                         call, why);
}

const heron_param_doc heron__model_host_params[] = {
    {"load", "none",
     "start from a model saved by an earlier run with save=FILE (the "
     "pre-trained mode); later fits build on it"},
    {"save", "none", "save the model to FILE after every fit"},
    {NULL, NULL, NULL},
};

static int is_host_param(const char *key) {
  for (const heron_param_doc *d = heron__model_host_params; d->key; d++)
    if (strcmp(d->key, key) == 0)
      return 1;
  return 0;
}

/* Checks load= and save= before anything is created: the plugin must have
 * the member, the file to load must be readable and the folder to save in
 * must exist, so a typo fails now and not after the first round. */
static int check_host_params(heron_model *m, const char *load, const char *save,
                             heron_error *err) {
  const char *name = m->desc->name;
  if (load && !HERON__PLUGIN_HAS(m->desc, load))
    return heron_error_set(err, HERON_EINVAL,
                           "model %s: load=%s: this model cannot load a saved "
                           "model (it has no load member)",
                           name, load);
  if (save && !HERON__PLUGIN_HAS(m->desc, save))
    return heron_error_set(err, HERON_EINVAL,
                           "model %s: save=%s: this model cannot save itself "
                           "(it has no save member)",
                           name, save);
  if (load && access(load, R_OK) != 0)
    return heron_error_set(err, HERON_EINVAL, "model %s: load=%s: %s", name,
                           load, strerror(errno));
  if (save) {
    if (!*save)
      return heron_error_set(err, HERON_EINVAL,
                             "model %s: save= needs a file name", name);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", save);
    char *slash = strrchr(dir, '/');
    if (slash)
      *slash = '\0';
    const char *d = slash ? (dir[0] ? dir : "/") : ".";
    if (access(d, W_OK) != 0)
      return heron_error_set(err, HERON_EINVAL,
                             "model %s: save=%s: folder '%s' is not writable: "
                             "%s",
                             name, save, d, strerror(errno));
    m->save_path = strdup(save);
    if (!m->save_path)
      return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  return HERON_OK;
}

int heron__model_open(const char *name, const heron_param *params, int n,
                      int nfeatures, uint64_t seed, heron_model **out,
                      heron_error *err) {
  return heron__model_open_guarded(name, params, n, nfeatures, seed, NULL, 0,
                                   out, err);
}

int heron__model_open_guarded(const char *name, const heron_param *params,
                              int n, int nfeatures, uint64_t seed,
                              heron__guard *g, double limit_s,
                              heron_model **out, heron_error *err) {
  if (!out || nfeatures < 1)
    return heron_error_set(err, HERON_EINVAL,
                           "heron__model_open: bad arguments (nfeatures %d)",
                           nfeatures);
  *out = NULL;
  heron_model *m = calloc(1, sizeof *m);
  if (!m)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  int rc = heron__plugin_load_model(name, &m->lib, err);
  if (rc != HERON_OK) {
    free(m);
    return rc;
  }
  m->desc = m->lib.desc;
  m->nfeatures = nfeatures;
  heron__model_set_guard(m, g, limit_s);

  /* The plugin sees only its own parameters; load= and save= are ours. */
  heron_param *own = malloc((size_t)(n > 0 ? n : 1) * sizeof *own);
  if (!own) {
    heron__model_close(m);
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  int nown = 0;
  for (int i = 0; i < n; i++)
    if (!is_host_param(params[i].key))
      own[nown++] = params[i];
  const char *load = heron_param_get(params, n, "load", NULL);
  const char *save = heron_param_get(params, n, "save", NULL);
  char who[96];
  snprintf(who, sizeof who, "model %s", m->desc->name);
  heron__param_table pt = heron__model_param_table(m->desc);
  heron_param *checked = NULL;
  int nchecked = 0;
  rc = heron__param_table_apply(&pt, own, nown, who, &checked, &nchecked, err);
  free(own);
  if (rc == HERON_OK)
    rc = check_host_params(m, load, save, err);
  if (rc != HERON_OK) {
    free(checked);
    heron__model_close(m);
    return rc;
  }

  m->env = (heron_model_env){
      .abi_version = HERON_MODEL_ABI_VERSION,
      .struct_size = sizeof(heron_model_env),
      .nfeatures = nfeatures,
      .seed = seed,
      .log = model_log,
      .host = m,
  };
  heron_error inner = {0};
  void *self = NULL;
  guard_in(m, "create");
  rc = m->desc->create(&m->env, checked, nchecked, &self, &inner);
  guard_out(m);
  free(checked);
  if (rc != HERON_OK) {
    rc = call_failed(m, "create", rc, &inner, err);
    /* create failed, so whatever it left in self is not ours to destroy. */
    m->self = NULL;
    heron__model_close(m);
    return rc;
  }
  m->self = self;
  if (load && (rc = heron__model_load(m, load, err)) != HERON_OK) {
    heron__model_close(m);
    return rc;
  }
  *out = m;
  return HERON_OK;
}

/* Saves to a temporary sibling, then renames it over `path`, so a run
 * killed mid-save leaves the previous model whole. */
static int save_atomically(heron_model *m, const char *path, heron_error *err) {
  char tmp[HERON__PATH_BUF];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  int rc = heron__model_save(m, tmp, err);
  if (rc == HERON_OK && rename(tmp, path) != 0)
    rc = heron_error_set(err, HERON_EIO, "model %s: save=%s: %s", m->desc->name,
                         path, strerror(errno));
  if (rc != HERON_OK)
    unlink(tmp);
  return rc;
}

int heron__model_fit(heron_model *m, const double *X, const double *y, int n,
                     int d, heron_error *err) {
  if (!m || (n > 0 && (!X || !y)) || n < 0)
    return heron_error_set(err, HERON_EINVAL,
                           "heron__model_fit: bad arguments");
  if (d != m->nfeatures)
    return heron_error_set(err, HERON_EINVAL,
                           "model %s: fit with %d features, expected %d",
                           m->desc->name, d, m->nfeatures);
  heron_error inner = {0};
  guard_in(m, "fit");
  int rc = m->desc->fit(m->self, X, y, n, d, &inner);
  guard_out(m);
  if (rc != HERON_OK)
    return call_failed(m, "fit", rc, &inner, err);
  m->trained = 1;
  if (m->save_path)
    return save_atomically(m, m->save_path, err);
  return HERON_OK;
}

int heron__model_save(heron_model *m, const char *path, heron_error *err) {
  if (!m || !path)
    return heron_error_set(err, HERON_EINVAL,
                           "heron__model_save: bad arguments");
  if (!HERON__PLUGIN_HAS(m->desc, save))
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "model %s cannot save itself (no save member)",
                           m->desc->name);
  heron_error inner = {0};
  guard_in(m, "save");
  int rc = m->desc->save(m->self, path, &inner);
  guard_out(m);
  return rc == HERON_OK ? HERON_OK : call_failed(m, "save", rc, &inner, err);
}

int heron__model_load(heron_model *m, const char *path, heron_error *err) {
  if (!m || !path)
    return heron_error_set(err, HERON_EINVAL,
                           "heron__model_load: bad arguments");
  if (!HERON__PLUGIN_HAS(m->desc, load))
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "model %s cannot load a saved model (no load "
                           "member)",
                           m->desc->name);
  heron_error inner = {0};
  guard_in(m, "load");
  int rc = m->desc->load(m->self, path, &inner);
  guard_out(m);
  if (rc != HERON_OK)
    return call_failed(m, "load", rc, &inner, err);
  m->trained = 1;
  return HERON_OK;
}

void heron__model_close(heron_model *m) {
  if (!m)
    return;
  if (m->self && m->desc) {
    guard_in(m, "destroy");
    m->desc->destroy(m->self);
    guard_out(m);
  }
  heron__plugin_close(&m->lib);
  free(m->save_path);
  free(m);
}

/* ---- what strategies call ---------------------------------------------- */

HERON_API int heron_model_trained(const heron_model *m) {
  return m && m->trained ? 1 : 0;
}

HERON_API int heron_model_predict(const heron_model *m, const double *X, int n,
                                  int d, double *out, heron_error *err) {
  if (!m || n < 0 || (n > 0 && (!X || !out)))
    return heron_error_set(err, HERON_EINVAL,
                           "heron_model_predict: bad arguments");
  if (!m->trained)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "model %s is not trained yet", m->desc->name);
  if (d != m->nfeatures)
    return heron_error_set(err, HERON_EINVAL,
                           "model %s: predict with %d features, expected %d",
                           m->desc->name, d, m->nfeatures);
  if (n == 0)
    return HERON_OK;
  heron_error inner = {0};
  guard_in(m, "predict");
  int rc = m->desc->predict(m->self, X, n, d, out, &inner);
  guard_out(m);
  return rc == HERON_OK ? HERON_OK : call_failed(m, "predict", rc, &inner, err);
}

HERON_API int heron_model_importance(const heron_model *m, double *scores,
                                     int d, heron_error *err) {
  if (!m || !scores)
    return heron_error_set(err, HERON_EINVAL,
                           "heron_model_importance: bad arguments");
  if (!HERON__PLUGIN_HAS(m->desc, importance))
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "model %s does not report feature importance",
                           m->desc->name);
  if (!m->trained)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "model %s is not trained yet", m->desc->name);
  if (d != m->nfeatures)
    return heron_error_set(err, HERON_EINVAL,
                           "model %s: importance for %d features, expected %d",
                           m->desc->name, d, m->nfeatures);
  heron_error inner = {0};
  guard_in(m, "importance");
  int rc = m->desc->importance(m->self, scores, d, &inner);
  guard_out(m);
  return rc == HERON_OK ? HERON_OK
                        : call_failed(m, "importance", rc, &inner, err);
}
