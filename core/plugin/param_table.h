/* core/plugin/param_table.h - a plugin's parameter declarations, either
 * form, internal.
 *
 * A descriptor declares its parameters typed (heron_param_spec, appended to
 * the descriptors later) or as text only (heron_param_doc, the first
 * layout).  The host reads both through this one view, so the loader, the
 * engine, the model host and --help-plugin never ask which form they have.
 *
 * Typed specs are read with the stride the plugin was built with
 * (param_spec_size), and only their first-layout members: a plugin built
 * against a longer heron_param_spec still loads.
 */
#ifndef HERON_CORE_PARAM_TABLE_H
#define HERON_CORE_PARAM_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "heron/model.h"
#include "heron/strategy.h"

typedef struct heron__param_table {
  const heron_param_doc *docs;   /* text form, or NULL */
  const heron_param_spec *specs; /* typed form, or NULL (wins over docs) */
  size_t spec_size;              /* stride of specs in bytes */
} heron__param_table;

/* The declarations of a checked descriptor (its struct_size decides
 * whether the appended param_specs member may be read). */
heron__param_table heron__strategy_param_table(const heron_strategy_plugin *d);
heron__param_table heron__model_param_table(const heron_model_plugin *d);

/* Checks the declarations themselves, as the loader does before it accepts
 * a plugin: HERON_EABI naming `who`, the parameter and the field at fault
 * (see heron/param.h for the rules).  Text-only tables are checked for
 * empty and repeated keys only. */
int heron__param_table_validate(const heron__param_table *t, const char *who,
                                heron_error *err);

/* 1 when the table declares `key`. */
int heron__param_table_has(const heron__param_table *t, const char *key);

/* What create() gets for user parameters in[0..n).  Unknown keys are
 * HERON_EINVAL naming the known ones (as heron_param_check).  Typed: every
 * value is checked against its spec (HERON_EINVAL naming key, value and
 * what was expected), a missing required one is HERON_EINVAL, and the
 * result holds each declared key with a value once, in declaration order,
 * defaults filled in and booleans as "1"/"0".  Text-only: the result is a
 * copy of in.  *out is malloc'ed (free() it; it may be NULL when *nout is
 * 0); its strings point into `in`, the specs or static storage. */
int heron__param_table_apply(const heron__param_table *t, const heron_param *in,
                             int n, const char *who, heron_param **out,
                             int *nout, heron_error *err);

/* Prints the "  parameters:" block of --help-plugin: one line per
 * parameter with its kind, range or choices, default and help. */
void heron__param_table_print(const heron__param_table *t, FILE *out);

#endif
