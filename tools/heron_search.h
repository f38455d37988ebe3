/* tools/heron_search.h - what the files of heron-search share
 * (heron_search.c says what the tool does):
 *
 *   heron_search.c         the flags, --help, the output, main
 *   heron_search_config.c  --config: the settings of a JSON file
 *   heron_search_checks.c  the checks before a run: plugins, --log, --emit,
 *                          --resume
 */
#ifndef HERON_TOOLS_HERON_SEARCH_H
#define HERON_TOOLS_HERON_SEARCH_H

#include <jansson.h>

#include "cli.h"

/* A growable list of plugin parameters. */
typedef struct param_list {
  heron_param *v;
  int n, cap;
} param_list;

/* Appends p to l; exits when out of memory. */
void param_push(param_list *l, heron_param p);

/* Everything the command line and the config file decide. */
typedef struct settings {
  cli_task_args task;
  heron_tune_options o;
  param_list sparams, mparams;
  int quiet, verbose, dry_run;
  int allow_mixed;     /* --allow-mixed */
  double rank_timeout; /* --rank-timeout, 0 for the default */
  const char *config_path;
  json_t *config;       /* the parsed config file; its strings are borrowed */
  json_t *shape_object; /* a config shape of named dimensions, resolved once
                           the op is final */
} settings;

/* ---- The config file (heron_search_config.c) ----------------------------- */

/* Reads s->config_path into *s, before the flags (a usage error, exit 2,
 * names the key and what it must be). */
void load_config(settings *s);

/* The config file's shape of named dimensions as "D1,D2,..." in the order
 * of the final op. */
const char *shape_from_object(const settings *s);

/* ---- Checks before tuning (heron_search_checks.c) ------------------------ */

/* Loads plugin `name` of `kind` once; a usage error naming `flag` when it
 * cannot be found or used. */
void check_plugin(const char *flag, const char *name, const char *kind);

/* Checks --log, --emit and --resume before the run, making the folders
 * of --log and --emit; a usage error naming the reason. */
void prepare_log(const char *path);
void prepare_emit(const char *dir);
void check_resume(const char *path);

#endif /* HERON_TOOLS_HERON_SEARCH_H */
