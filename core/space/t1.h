/* core/space/t1.h - a search space from a T1 input file, internal.
 *
 * T1 is the auto-tuning community's input format ("FAIR Sharing of Data in
 * Autotuning Research", ICPE 2024 companion): a kernel's tuning parameters
 * with their value lists (ConfigurationSpace.TuningParameters[]: Name,
 * Type, Values) and its restrictions as Python expressions
 * (ConfigurationSpace.Conditions[].Expression).  heron__t1_load turns one
 * into a Heron space: every parameter a knob, every restriction an EXPR
 * constraint (core/space/expr.h), so sampling, validation, repair,
 * crossover, mutation and features work on it as on Heron's own spaces and
 * every strategy runs on it unchanged.
 *
 * An int parameter's knob takes the listed integers themselves; a float,
 * string or bool parameter's knob takes the positions 0..n-1 of its list,
 * and restrictions see the listed values (heron__space_var_values).  A
 * config of the space is thus one integer per parameter, in the file's
 * order; heron__t1_config maps a T4 record's "configuration" object onto
 * one, and heron__t1_value back.
 */
#ifndef HERON_CORE_SPACE_T1_H
#define HERON_CORE_SPACE_T1_H

#include <jansson.h>
#include <stdint.h>

#include "core/space/expr.h"
#include "heron/space.h"

typedef struct heron__t1_param {
  char *name;
  int coded;           /* 1: the knob holds positions in vals (not int) */
  heron__value *vals;  /* the listed values, in the file's order */
  int nvals;
  int var;             /* its variable in the space */
} heron__t1_param;

typedef struct heron__t1 {
  char *name; /* General.BenchmarkName, else KernelSpecification.KernelName,
                 else the file's base name */
  heron__t1_param *params;
  int nparams;
  int nconds; /* restrictions posted */
} heron__t1;

/* Reads the T1 file at `path` and builds its space into *sp (finished).
 * Errors name the file and what is wrong: HERON_ENOTFOUND (no such file),
 * HERON_EPARSE (not JSON, a missing or mistyped member, a value list that
 * does not parse, an expression outside the language: "T1 condition 3
 * 'a.b > 1': column 2: ..."), HERON_EUNSAT (the restrictions admit no
 * config, naming the one that failed).  Free both with heron__t1_free and
 * heron__space_free. */
int heron__t1_load(const char *path, heron__t1 **out, heron_space **sp,
                   heron_error *err);
void heron__t1_free(heron__t1 *t1);

/* The config (one value per variable of the space, cfg[nvars]) of a T4
 * record's "configuration" object, whose keys are the parameter names.
 * HERON_ENOTFOUND naming the parameter when one is missing or its value is
 * not in its list (`what` names the record in the message). */
int heron__t1_config(const heron__t1 *t1, const heron_space *sp,
                     const json_t *conf, int64_t *cfg, const char *what,
                     heron_error *err);

/* The JSON value of parameter p at knob value v (a new reference). */
json_t *heron__t1_value(const heron__t1 *t1, int p, int64_t v);

#endif
