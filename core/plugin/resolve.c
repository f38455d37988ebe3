/* core/plugin/resolve.c - finding plugins by name, listing every plugin
 * the search can find, and the folders libheron takes plugins and data
 * from (core/plugin/dirs.h).
 *
 * A plugin name without '/' is searched, in this order, in each folder of
 * $HERON_PLUGIN_PATH and then in libheron's own plugin folder: the build
 * tree's when the running libheron is the build tree's, otherwise
 * <libdir>/heron/plugins next to the installed libheron.so.  The first
 * folder holding "<name>" or "<name>.so" wins; later files of that name are
 * shadowed, which heron_plugin_list points out.
 */
#include "core/plugin/dirs.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/plugin/plugin.h"
#include "core/util/util.h"
#include "heron/tune.h"

/* The build defines these; empty values (a compile outside CMake) turn the
 * build-tree layout off, so that only the installed layout is used. */
#ifndef HERON_BUILD_DIR
#define HERON_BUILD_DIR ""
#endif
#ifndef HERON_BUILD_PLUGIN_DIR
#define HERON_BUILD_PLUGIN_DIR ""
#endif
#ifndef HERON_SOURCE_DIR
#define HERON_SOURCE_DIR ""
#endif
#ifndef HERON_LIBDIR_TO_DATADIR
#define HERON_LIBDIR_TO_DATADIR "../share"
#endif

/* ---- Where libheron is ------------------------------------------------- */

/* Writes the resolved path of the file holding this code into out[cap].
 * dladdr names a shared library by the path it was loaded from; for the
 * main program (a tool or test linking the static copy) glibc gives an
 * empty link-map name and only argv[0], which may be relative to a folder
 * the process has left, so /proc/self/exe is used instead. */
static int lib_file(char *out, size_t cap) {
  Dl_info info;
  struct link_map *map = NULL;
  if (!dladdr1((void *)heron__dirs_find, &info, (void **)&map, RTLD_DL_LINKMAP))
    return 0;
  const char *name =
      map && map->l_name && map->l_name[0] ? map->l_name : "/proc/self/exe";
  char real[PATH_MAX];
  if (!realpath(name, real) || strlen(real) >= cap)
    return 0;
  memcpy(out, real, strlen(real) + 1);
  return 1;
}

/* Cuts path[] after its last '/' (keeping "/" for a file at the root), so
 * that it names the folder holding the file. */
static void strip_last(char *path) {
  char *slash = strrchr(path, '/');
  if (slash)
    *(slash == path ? slash + 1 : slash) = '\0';
}

/* 1 when folders a and b are the same folder (after resolving links);
 * folders that do not exist are compared as written. */
static int same_dir(const char *a, const char *b) {
  char ra[PATH_MAX], rb[PATH_MAX];
  if (!realpath(a, ra))
    snprintf(ra, sizeof ra, "%s", a);
  if (!realpath(b, rb))
    snprintf(rb, sizeof rb, "%s", b);
  return strcmp(ra, rb) == 0;
}

/* The build-tree test of dirs.h: the folder above the one holding `lib` is
 * the build tree.  Comparing folders rather than looking for build-tree
 * files keeps a copy installed elsewhere from ever reaching into it. */
static int in_build_tree(const char *lib) {
  if (!HERON_BUILD_DIR[0])
    return 0;
  char up[HERON__DIR_MAX];
  snprintf(up, sizeof up, "%s", lib);
  strip_last(up);
  strip_last(up);
  return same_dir(up, HERON_BUILD_DIR);
}

/* Writes a then b into dst[HERON__DIR_MAX]; 0 when that does not fit. */
static int join(char *dst, const char *a, const char *b) {
  int len = snprintf(dst, HERON__DIR_MAX, "%s%s", a, b);
  return len > 0 && len < HERON__DIR_MAX;
}

int heron__dirs_find(heron__dirs *d, heron_error *err) {
  memset(d, 0, sizeof *d);
  if (!lib_file(d->lib, sizeof d->lib))
    return heron_error_set(err, HERON_ENOTFOUND,
                           "cannot find the file libheron was loaded from");
  d->build_tree = in_build_tree(d->lib);
  int ok;
  if (d->build_tree) {
    ok = join(d->plugins, HERON_BUILD_PLUGIN_DIR, "") &&
         join(d->configs, HERON_SOURCE_DIR, "/configs");
  } else {
    char libdir[HERON__DIR_MAX], data[HERON__DIR_MAX], real[PATH_MAX];
    snprintf(libdir, sizeof libdir, "%s", d->lib);
    strip_last(libdir);
    ok = join(d->plugins, libdir, "/heron/plugins") &&
         join(data, libdir, "/" HERON_LIBDIR_TO_DATADIR "/heron/configs");
    /* The data folder is reached through "..": messages show it without
     * them when it exists. */
    if (ok)
      ok = join(d->configs, realpath(data, real) ? real : data, "");
  }
  if (!ok) {
    memset(d, 0, sizeof *d);
    return heron_error_set(err, HERON_ENOTFOUND,
                           "libheron's folders have paths too long");
  }
  return HERON_OK;
}

/* ---- The folders searched ---------------------------------------------- */

/* One folder of the search: a slice of $HERON_PLUGIN_PATH or the library's
 * own plugin folder (NUL-terminated there). */
typedef struct folder {
  const char *dir;
  int len;
  int from_env; /* 1: an entry of $HERON_PLUGIN_PATH */
} folder;

/* The folders searched for a plugin name, in order: each non-empty entry of
 * $HERON_PLUGIN_PATH, then d->plugins when known.  Fills *out (malloc'ed,
 * the caller frees it; it points into the environment and into *d, which
 * must outlive it) and returns the count, or -1 when out of memory. */
static int plugin_folders(const heron__dirs *d, folder **out) {
  const char *env = getenv("HERON_PLUGIN_PATH");
  int cap = 1;
  for (const char *p = env; p && *p; p++)
    cap += *p == ':';
  cap += env && *env ? 1 : 0;
  folder *f = malloc((size_t)cap * sizeof *f);
  if (!f)
    return -1;
  int n = 0;
  for (const char *p = env; p && *p;) {
    const char *colon = strchr(p, ':');
    size_t len = colon ? (size_t)(colon - p) : strlen(p);
    if (len > 0)
      f[n++] = (folder){p, (int)len, 1};
    p = colon ? colon + 1 : p + len;
  }
  if (d->plugins[0])
    f[n++] = (folder){d->plugins, (int)strlen(d->plugins), 0};
  *out = f;
  return n;
}

/* How a message calls the library's own plugin folder. */
static const char *lib_folder_label(const heron__dirs *d) {
  return d->build_tree ? "the build tree's folder" : "libheron's folder";
}

/* ---- resolve ----------------------------------------------------------- */

static int is_regular_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Tries dir/name and dir/name.so; writes the hit into path[cap]. */
static int try_dir(const folder *f, const char *name, char *path, size_t cap) {
  static const char *const suffixes[] = {"", ".so"};
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
    int len =
        snprintf(path, cap, "%.*s/%s%s", f->len, f->dir, name, suffixes[i]);
    if (len > 0 && (size_t)len < cap && is_regular_file(path))
      return 1;
  }
  return 0;
}

/* The first of folders f[0..n) that holds `name`; its index, or -1. */
static int search(const folder *f, int n, const char *name, char *path,
                  size_t cap) {
  for (int i = 0; i < n; i++)
    if (try_dir(&f[i], name, path, cap))
      return i;
  return -1;
}

/* The not-found message: the folders in the order searched, then where
 * they came from.  The folders come first because heron_error holds 160
 * characters and they matter most. */
static int not_found(const char *kind, const char *name, const heron__dirs *d,
                     const folder *f, int n, heron_error *err) {
  if (n == 0)
    return heron_error_set(err, HERON_ENOTFOUND,
                           "%s plugin '%s' not found: $HERON_PLUGIN_PATH is "
                           "empty and libheron cannot find its own folder",
                           kind, name);
  heron__buf list = {0};
  for (int i = 0; i < n; i++)
    heron__buf_printf(&list, "%s%.*s", i ? ", " : "", f[i].len, f[i].dir);
  char *text = heron__buf_take(&list);
  int env = f[0].from_env, lib = !f[n - 1].from_env;
  const char *own = d->build_tree ? "the build tree's" : "libheron's";
  /* The folders come last: a message longer than heron_error holds keeps
   * its head and its tail, and the folders searched are the tail worth
   * keeping (a long build path used to push them into the cut middle). */
  heron_error_set(err, HERON_ENOTFOUND,
                  "%s plugin '%s' not found (as %s or %s.so) in %s%s%s: %s",
                  kind, name, name, name, env ? "$HERON_PLUGIN_PATH" : "",
                  env && lib ? ", then " : "", lib ? own : "",
                  text ? text : "(out of memory)");
  free(text);
  return HERON_ENOTFOUND;
}

HERON_API int heron_plugin_resolve(const char *name, const char *kind,
                                   char *path, size_t cap, heron_error *err) {
  if (!kind)
    kind = "plugin";
  if (!name || !name[0] || !path || cap == 0)
    return heron_error_set(err, HERON_EINVAL, "no %s plugin name given", kind);
  path[0] = '\0';

  /* A name with a slash is a path, used exactly as given. */
  if (strchr(name, '/')) {
    if (!is_regular_file(name))
      return heron_error_set(err, HERON_ENOTFOUND,
                             "%s plugin file %s does not exist", kind, name);
    if (strlen(name) >= cap)
      return heron_error_set(err, HERON_EINVAL, "plugin path %s is too long",
                             name);
    memcpy(path, name, strlen(name) + 1);
    return HERON_OK;
  }

  /* A library that cannot place itself still searches $HERON_PLUGIN_PATH;
   * the message then says no library folder was searched. */
  heron__dirs d;
  heron__dirs_find(&d, NULL);
  folder *f;
  int n = plugin_folders(&d, &f);
  if (n < 0)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  int rc = HERON_OK;
  if (search(f, n, name, path, cap) < 0) {
    path[0] = '\0';
    rc = not_found(kind, name, &d, f, n, err);
  }
  free(f);
  return rc;
}

/* ---- list -------------------------------------------------------------- */

/* The kind a file claims by its entry symbol ("strategy" or "model"), so
 * that the loader's full checks run for that kind and its message is the
 * one shown; "" when it exports neither, NULL when dlopen fails. */
static const char *claimed_kind(const char *path) {
  void *dl = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (!dl)
    return NULL;
  const char *kind = dlsym(dl, HERON_STRATEGY_ENTRY) ? "strategy"
                     : dlsym(dl, HERON_MODEL_ENTRY)  ? "model"
                                                     : "";
  dlclose(dl);
  return kind;
}

/* Prints one file of folder f[i]: its kind, name, summary and path, which
 * file shadows it, or why it is not a plugin.  Never fails: a broken file
 * is a line of the listing, not a reason to stop. */
static void list_file(FILE *out, const folder *f, int i, const char *file) {
  char path[HERON__DIR_MAX], first[HERON__DIR_MAX], name[256];
  snprintf(path, sizeof path, "%.*s/%s", f[i].len, f[i].dir, file);
  /* The name the file answers to by; the search for that name over the
   * folders up to this one says whether an earlier file wins. */
  size_t len = strlen(file);
  if (len > 3 && strcmp(file + len - 3, ".so") == 0)
    len -= 3;
  snprintf(name, sizeof name, "%.*s", (int)len, file);
  int shadowed = search(f, i + 1, name, first, sizeof first) >= 0 &&
                 strcmp(first, path) != 0;

  const char *kind = claimed_kind(path);
  heron__plugin p;
  heron_error err;
  heron_error_clear(&err);
  int rc;
  if (kind && !kind[0])
    rc = heron_error_set(&err, HERON_EABI, "exports neither %s nor %s",
                         HERON_STRATEGY_ENTRY, HERON_MODEL_ENTRY);
  else if (kind && strcmp(kind, "model") == 0)
    rc = heron__plugin_load_model(path, &p, &err);
  else
    rc = heron__plugin_load_strategy(path, &p, &err);
  if (rc != HERON_OK) {
    fprintf(out, "  not a plugin: %s\n    %s\n", path, err.text);
    return;
  }

  const char *pname, *summary;
  if (kind && strcmp(kind, "model") == 0) {
    const heron_model_plugin *m = p.desc;
    pname = m->name, summary = m->summary;
  } else {
    const heron_strategy_plugin *s = p.desc;
    pname = s->name, summary = s->summary;
  }
  fprintf(out, "  %s %s - %s\n    file: %s\n", kind ? kind : "strategy", pname,
          summary ? summary : "", path);
  /* The run logs the descriptor's name, but --strategy and --model take
   * the file's. */
  if (strcmp(name, pname) != 0)
    fprintf(out, "    by name: %s (the file's name)\n", name);
  if (shadowed)
    fprintf(out, "    shadowed by %s (found first)\n", first);
  heron__plugin_close(&p);
}

/* Hidden files are never plugins the listing should open. */
static int visible(const struct dirent *e) { return e->d_name[0] != '.'; }

/* Prints folder f[i] under its heading: every regular file in it, in name
 * order, or why there are none. */
static void list_folder(FILE *out, const heron__dirs *d, const folder *f,
                        int i) {
  char dir[HERON__DIR_MAX];
  snprintf(dir, sizeof dir, "%.*s", f[i].len, f[i].dir);
  fprintf(out, "\n%s: %s\n",
          f[i].from_env ? "$HERON_PLUGIN_PATH" : lib_folder_label(d), dir);
  /* A folder named twice is searched twice to no effect; list it once. */
  for (int j = 0; j < i; j++) {
    char earlier[HERON__DIR_MAX];
    snprintf(earlier, sizeof earlier, "%.*s", f[j].len, f[j].dir);
    if (same_dir(earlier, dir)) {
      fprintf(out, "  (the same folder as %s, listed above)\n", earlier);
      return;
    }
  }
  struct dirent **names;
  int n = scandir(dir, &names, visible, alphasort);
  if (n < 0) {
    fprintf(out, "  (cannot read the folder: %s)\n", strerror(errno));
    return;
  }
  int files = 0;
  for (int k = 0; k < n; k++) {
    char path[HERON__DIR_MAX + sizeof names[k]->d_name + 1];
    snprintf(path, sizeof path, "%s/%s", dir, names[k]->d_name);
    if (is_regular_file(path)) {
      list_file(out, f, i, names[k]->d_name);
      files++;
    }
    free(names[k]);
  }
  free(names);
  if (files == 0)
    fprintf(out, "  (no files)\n");
}

HERON_API int heron_plugin_list(FILE *out, heron_error *err) {
  if (!out)
    return heron_error_set(err, HERON_EINVAL, "heron_plugin_list: no output");
  heron__dirs d;
  heron_error derr;
  heron_error_clear(&derr);
  heron__dirs_find(&d, &derr);
  folder *f;
  int n = plugin_folders(&d, &f);
  if (n < 0)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  int env = n > 0 && f[0].from_env;
  fprintf(out, "Plugin folders, in search order: %s%s%s\n",
          env                           ? "$HERON_PLUGIN_PATH"
          : getenv("HERON_PLUGIN_PATH") ? "$HERON_PLUGIN_PATH (empty)"
                                        : "$HERON_PLUGIN_PATH (not set)",
          d.plugins[0] ? ", then " : "",
          d.plugins[0] ? lib_folder_label(&d) : "");
  if (!d.plugins[0])
    fprintf(out, "(no folder of libheron's own: %s)\n", derr.text);
  for (int i = 0; i < n; i++)
    list_folder(out, &d, f, i);
  free(f);
  if (fflush(out) != 0 || ferror(out))
    return heron_error_set(err, HERON_EIO, "cannot write the plugin list");
  return HERON_OK;
}
