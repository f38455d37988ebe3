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
  int coded;          /* 1: the knob holds positions in vals (not int) */
  heron__value *vals; /* the listed values, in the file's order */
  int nvals;
  int *order; /* positions of vals sorted by value (lookups) */
  int var;    /* its variable in the space */
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
 * does not parse, an expression outside the language: "T1 file F:
 * condition 3 'a.b > 1': column 2: ..."), HERON_EUNSAT (the restrictions admit
 * no config, naming the one that failed).  Free both with heron__t1_free and
 * heron__space_free.
 *
 * The file must be a regular file (a FIFO or a folder is refused, not
 * waited on) within the input limit of core/record/record.h; a listed
 * integer beyond int64 is refused as such; a parameter's values are
 * checked for repeats in O(n log n), so a list of 10^6 values loads in
 * about a second.
 *
 * Every restriction must evaluate on every combination of its own
 * parameters' values: one that fails on any (a division or modulo by
 * zero, an int64 overflow where Python's integers would grow, a string
 * repeated or joined, operands of the wrong types) refuses the file with
 * HERON_EINVAL naming the restriction, the values and the reason, e.g.
 * "T1 file F: condition 1 'x // (y - y)': column 3: integer division by
 * zero at x=1, y=2".  Python raises an exception there; Kernel Tuner's
 * solver then stops, while its older check_restrictions ignores a
 * ZeroDivisionError (keeping the config), so neither "invalid" nor "valid"
 * would be what every Python reading gives: the file is refused instead,
 * and a guard belongs in the expression itself ("y != 0 and x // y > 1").
 * The check enumerates the restriction's own parameters (not the whole
 * space), up to HERON__T1_CHECK_MAX combinations per restriction; one over
 * more is left to the solver, which counts a failing evaluation as not
 * holding. */
#define HERON__T1_CHECK_MAX (1L << 24)
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
