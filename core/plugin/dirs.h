/* core/plugin/dirs.h - where the running libheron is, and the plugin and
 * data folders that belong to it, internal.
 *
 * libheron finds its folders from its own location at run time (dladdr on
 * one of its functions), never from the install prefix compiled in, so an
 * installed tree still works after it has been moved or unpacked elsewhere.
 * There are two layouts:
 *
 *   build tree  the file holding libheron's code sits in a folder directly
 *               below the build tree (build/lib/libheron.so, or a tool or
 *               test in build/bin linking the static copy): plugins are
 *               taken from build/plugins, data from the source tree's
 *               configs/, so a build works without being installed;
 *   installed   anywhere else: plugins from <libdir>/heron/plugins next to
 *               libheron.so, data from <datadir>/heron/configs, reached
 *               from <libdir> by the relative path between the two that
 *               the build was configured with (../share by default).
 *
 * An installed copy therefore never reaches into the build tree it came
 * from, whether or not that tree still exists.
 */
#ifndef HERON_CORE_PLUGIN_DIRS_H
#define HERON_CORE_PLUGIN_DIRS_H

#include "heron/status.h"

#define HERON__DIR_MAX 4096

typedef struct heron__dirs {
  char lib[HERON__DIR_MAX];     /* the file holding libheron's code, resolved
                                   (libheron.so, or the program linking the
                                   static copy); "" when it cannot be found */
  int build_tree;               /* 1: lib is the build tree's (see above) */
  char plugins[HERON__DIR_MAX]; /* the library's own plugin folder; "" when
                                   lib is unknown */
  char configs[HERON__DIR_MAX]; /* the data folder holding hw/, suites/ and
                                   the rest of configs/; "" when lib is
                                   unknown */
} heron__dirs;

/* Fills `d` from the running libheron's location.  Nothing is cached (the
 * library keeps no global state), so each call asks dladdr again; callers
 * look folders up once per operation.  Returns HERON_OK, or HERON_ENOTFOUND
 * with every member "" when the library cannot place itself (then only
 * $HERON_PLUGIN_PATH and explicit paths find anything). */
int heron__dirs_find(heron__dirs *d, heron_error *err);

#endif
