/* tests/plugin/test_params.c - typed parameter declarations
 * (heron_param_spec): what the host checks in a declaration at load time,
 * how it checks and completes the user's values before create(), what
 * --help-plugin prints, and that plugins built against the first headers
 * (text-only declarations, the shorter descriptor) still load and run.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plugin/param_table.h"
#include "core/plugin/plugin.h"
#include "test.h"

#define TPLUG(name) HERON_TEST_PLUGIN_DIR "/" name ".so"

/* One parameter of each kind, with open and closed bounds. */
static const heron_param_spec kinds[] = {
    {.key = "n",
     .kind = HERON_PARAM_INT,
     .default_value = "4",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 10,
     .help = "an int in [1, 10]"},
    {.key = "rate",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.5",
     .flags = HERON_PARAM_MIN_OPEN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1,
     .help = "a float in (0, 1]"},
    {.key = "fast",
     .kind = HERON_PARAM_BOOL,
     .default_value = "off",
     .help = "a bool"},
    {.key = "mode",
     .kind = HERON_PARAM_CHOICE,
     .choices = "tpe|random|grid",
     .default_value = "tpe",
     .help = "a choice"},
    {.key = "program",
     .kind = HERON_PARAM_STRING,
     .flags = HERON_PARAM_REQUIRED,
     .help = "a required string"},
    {.key = "above",
     .kind = HERON_PARAM_FLOAT,
     .flags = HERON_PARAM_MIN_OPEN,
     .lo = -1,
     .help = "a float > -1 without a default"},
    {.key = NULL},
};

static heron__param_table kinds_table(void) {
  return (heron__param_table){.specs = kinds,
                              .spec_size = sizeof(heron_param_spec)};
}

/* Applies in[0..n) to the `kinds` table; returns the status, the result in
 * *out / *nout (freed by the caller) and the message in err. */
static int apply(const heron_param *in, int n, heron_param **out, int *nout,
                 heron_error *err) {
  heron__param_table t = kinds_table();
  heron_error_clear(err);
  return heron__param_table_apply(&t, in, n, "strategy t", out, nout, err);
}

/* ---- values ------------------------------------------------------------- */

TEST(typed_params_fill_defaults_in_declaration_order) {
  heron_param in[] = {{"program", "./s.py"}};
  heron_param *out;
  int nout;
  heron_error err;
  CHECK_OK(apply(in, 1, &out, &nout, &err), &err);
  /* "above" has no default and was not given: absent. */
  CHECK_EQ(nout, 5);
  const char *want[][2] = {{"n", "4"},
                           {"rate", "0.5"},
                           {"fast", "0"},
                           {"mode", "tpe"},
                           {"program", "./s.py"}};
  for (int i = 0; i < 5; i++) {
    CHECK(strcmp(out[i].key, want[i][0]) == 0);
    CHECK_MSG(strcmp(out[i].value, want[i][1]) == 0, "%s = %s", out[i].key,
              out[i].value);
  }
  CHECK_EQ(heron_param_int_value(out, nout, "n", -1), 4);
  CHECK(heron_param_double_value(out, nout, "rate", -1) == 0.5);
  CHECK_EQ(heron_param_int_value(out, nout, "fast", -1), 0);
  CHECK(heron_param_double_value(out, nout, "above", 7.0) == 7.0);
  free(out);
}

TEST(typed_params_last_value_wins_and_bools_are_normalized) {
  heron_param in[] = {{"n", "2"},       {"program", "p"}, {"n", "10"},
                      {"fast", "YES"},  {"mode", "grid"}, {"rate", "1"},
                      {"above", "-0.5"}};
  heron_param *out;
  int nout;
  heron_error err;
  CHECK_OK(apply(in, 7, &out, &nout, &err), &err);
  CHECK_EQ(nout, 6);
  CHECK_EQ(heron_param_int_value(out, nout, "n", -1), 10);
  CHECK(strcmp(heron_param_get(out, nout, "fast", "?"), "1") == 0);
  CHECK(strcmp(heron_param_get(out, nout, "mode", "?"), "grid") == 0);
  CHECK(heron_param_double_value(out, nout, "above", 0) == -0.5);
  /* Every key appears once. */
  int ns = 0;
  for (int i = 0; i < nout; i++)
    ns += strcmp(out[i].key, "n") == 0;
  CHECK_EQ(ns, 1);
  free(out);
}

/* Each bad value is refused naming the key, the value and what was
 * expected. */
TEST(typed_params_refuse_bad_values_naming_key_value_and_range) {
  static const struct {
    const char *key, *value, *needle;
  } cases[] = {
      {"n", "11", "parameter n = '11' is outside [1, 10]"},
      {"n", "0", "is outside [1, 10]"},
      {"n", "2.5", "is not an integer"},
      {"n", "", "is not an integer"},
      {"n", "99999999999999999999", "64-bit"},
      {"rate", "0", "parameter rate = '0' is outside (0, 1]"},
      {"rate", "1.0001", "is outside (0, 1]"},
      {"rate", "nan", "is not a finite number"},
      {"rate", "inf", "is not a finite number"},
      {"rate", "0.5x", "is not a finite number"},
      {"fast", "maybe", "is not a boolean"},
      {"mode", "TPE", "is not one of tpe|random|grid"},
      {"mode", "tp", "is not one of tpe|random|grid"},
      {"above", "-1", "is outside > -1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    heron_param in[] = {{"program", "p"}, {cases[i].key, cases[i].value}};
    heron_param *out = NULL;
    int nout = -1;
    heron_error err;
    CHECK_EQ(apply(in, 2, &out, &nout, &err), HERON_EINVAL);
    CHECK_STR_CONTAINS(err.text, cases[i].needle);
    CHECK_STR_CONTAINS(err.text, "strategy t");
    CHECK(out == NULL && nout == 0);
  }
}

TEST(typed_params_missing_required_and_unknown_keys_are_refused) {
  heron_param *out;
  int nout;
  heron_error err;
  CHECK_EQ(apply(NULL, 0, &out, &nout, &err), HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "parameter program is required");
  CHECK_STR_CONTAINS(err.text, "--param program=VALUE");
  heron_param in[] = {{"program", "p"}, {"rte", "0.1"}};
  CHECK_EQ(apply(in, 2, &out, &nout, &err), HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "unknown parameter 'rte'");
  CHECK_STR_CONTAINS(err.text, "known: n, rate, fast, mode, program, above");
}

/* A text-only table passes the user's values through as given (the old
 * contract), still refusing unknown keys. */
TEST(text_only_params_pass_through_unchanged) {
  static const heron_param_doc docs[] = {{"step", "1", "h"},
                                         {NULL, NULL, NULL}};
  heron__param_table t = {.docs = docs};
  heron_param in[] = {{"step", "x"}, {"step", "3"}};
  heron_param *out;
  int nout;
  heron_error err;
  heron_error_clear(&err);
  CHECK_OK(heron__param_table_apply(&t, in, 2, "w", &out, &nout, &err), &err);
  CHECK_EQ(nout, 2);
  CHECK(strcmp(out[0].value, "x") == 0 && strcmp(out[1].value, "3") == 0);
  free(out);
  heron_param bad[] = {{"stp", "1"}};
  CHECK_EQ(heron__param_table_apply(&t, bad, 1, "w", &out, &nout, &err),
           HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "known: step");
}

/* ---- declarations ------------------------------------------------------- */

/* One bad spec in a table; returns the message of validate. */
static const char *validate_one(heron_param_spec s) {
  static heron_error err;
  heron_param_spec table[2] = {s, {.key = NULL}};
  heron__param_table t = {.specs = table, .spec_size = sizeof *table};
  heron_error_clear(&err);
  if (heron__param_table_validate(&t, "plugin x.so", &err) != HERON_EABI)
    return "(accepted)";
  return err.text;
}

TEST(declarations_are_checked_field_by_field) {
  CHECK_STR_CONTAINS(validate_one((heron_param_spec){.key = "a",
                                                     .kind = HERON_PARAM_INT,
                                                     .default_value = "3",
                                                     .flags = HERON_PARAM_MIN,
                                                     .lo = 4}),
                     "parameter 'a', field default_value: the default '3' "
                     "is outside >= 4");
  CHECK_STR_CONTAINS(validate_one((heron_param_spec){.key = "a",
                                                     .kind = HERON_PARAM_FLOAT,
                                                     .flags = HERON_PARAM_MIN |
                                                              HERON_PARAM_MAX,
                                                     .lo = 2,
                                                     .hi = 1}),
                     "field lo: the range [2, 1] is empty");
  CHECK_STR_CONTAINS(validate_one((heron_param_spec){
                         .key = "a",
                         .kind = HERON_PARAM_FLOAT,
                         .flags = HERON_PARAM_MIN | HERON_PARAM_MAX_OPEN,
                         .lo = 1,
                         .hi = 1}),
                     "the range [1, 1) is empty");
  CHECK_STR_CONTAINS(validate_one((heron_param_spec){.key = "a",
                                                     .kind = HERON_PARAM_STRING,
                                                     .flags = HERON_PARAM_MAX,
                                                     .hi = 1}),
                     "field flags: a string parameter cannot have bounds");
  CHECK_STR_CONTAINS(
      validate_one((heron_param_spec){.key = "a", .flags = 0x100}),
      "field flags: unknown flag bits 0x100");
  CHECK_STR_CONTAINS(
      validate_one((heron_param_spec){.key = "a", .kind = HERON_PARAM_CHOICE}),
      "field choices: a choice parameter needs its words");
  CHECK_STR_CONTAINS(validate_one((heron_param_spec){.key = "a",
                                                     .kind = HERON_PARAM_CHOICE,
                                                     .choices = "x||y"}),
                     "'x||y' has an empty word");
  CHECK_STR_CONTAINS(validate_one((heron_param_spec){.key = "a",
                                                     .kind = HERON_PARAM_CHOICE,
                                                     .choices = "x|y|x"}),
                     "repeats the word 'x'");
  CHECK_STR_CONTAINS(validate_one((heron_param_spec){.key = "a",
                                                     .kind = HERON_PARAM_CHOICE,
                                                     .choices = "x|y",
                                                     .default_value = "z"}),
                     "the default 'z' is not one of x|y");
  CHECK_STR_CONTAINS(validate_one((heron_param_spec){
                         .key = "a", .kind = HERON_PARAM_INT, .choices = "x"}),
                     "field choices: only a choice parameter has choices");
  CHECK_STR_CONTAINS(
      validate_one((heron_param_spec){
          .key = "a", .flags = HERON_PARAM_REQUIRED, .default_value = "v"}),
      "field default_value: a required parameter cannot have "
      "a default");
  CHECK_STR_CONTAINS(validate_one((heron_param_spec){.key = "a",
                                                     .kind = HERON_PARAM_BOOL,
                                                     .default_value = "2"}),
                     "the default '2' is not a boolean");
  CHECK_STR_CONTAINS(validate_one((heron_param_spec){.key = "a b"}),
                     "key 'a b' is empty or holds '=' or white space");
  CHECK_STR_CONTAINS(validate_one((heron_param_spec){.key = ""}),
                     "is empty or holds");
  CHECK(strcmp(validate_one((heron_param_spec){.key = "fine",
                                               .kind = HERON_PARAM_INT,
                                               .default_value = "-5"}),
               "(accepted)") == 0);
}

TEST(declarations_with_a_short_spec_stride_are_refused) {
  heron__param_table t = {.specs = kinds, .spec_size = 8};
  heron_error err;
  heron_error_clear(&err);
  CHECK_EQ(heron__param_table_validate(&t, "plugin y.so", &err), HERON_EABI);
  CHECK_STR_CONTAINS(err.text, "param_spec_size 8 is smaller");
}

/* Every fault of strat_bad_spec.c is refused by the loader, naming the
 * file, the parameter and the field. */
TEST(loader_refuses_plugins_with_bad_declarations) {
  static const struct {
    const char *file, *needle;
  } cases[] = {
      {TPLUG("strat_bad_spec_1"),
       "parameter 'pop', field default_value: the default '3' is outside "
       "[4, 100]"},
      {TPLUG("strat_bad_spec_2"), "parameter 'rate', field lo"},
      {TPLUG("strat_bad_spec_3"), "parameter 'mode', field choices"},
      {TPLUG("strat_bad_spec_4"), "parameter 'odd', field kind"},
      {TPLUG("strat_bad_spec_5"), "parameter 'seed' is declared twice"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    heron__plugin p;
    heron_error err;
    heron_error_clear(&err);
    CHECK_EQ(heron__plugin_load_strategy(cases[i].file, &p, &err), HERON_EABI);
    CHECK_STR_CONTAINS(err.text, cases[i].file);
    CHECK_STR_CONTAINS(err.text, cases[i].needle);
    CHECK(p.dl == NULL);
  }
}

/* ---- --help-plugin ------------------------------------------------------ */

TEST(describe_prints_kinds_ranges_and_defaults) {
  heron__param_table t = kinds_table();
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CHECK(f != NULL);
  heron__param_table_print(&t, f);
  fclose(f);
  CHECK_STR_CONTAINS(text, "    n (int in [1, 10], default 4): an int");
  CHECK_STR_CONTAINS(text, "    rate (float in (0, 1], default 0.5)");
  CHECK_STR_CONTAINS(text, "    fast (bool, default off)");
  CHECK_STR_CONTAINS(text, "    mode (choice of tpe|random|grid, default tpe)");
  CHECK_STR_CONTAINS(text, "    program (string, required)");
  CHECK_STR_CONTAINS(text, "    above (float > -1, no default)");
  free(text);
}

TEST(shipped_plugins_declare_typed_parameters) {
  const char *names[] = {"random", "genetic", "becbo",
                         "tsbo",   "llm",     "skeleton"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    heron__plugin p;
    heron_error err;
    heron_error_clear(&err);
    char path[512];
    snprintf(path, sizeof path, "%s/%s.so", HERON_BUILD_PLUGIN_DIR, names[i]);
    CHECK_OK(heron__plugin_load_strategy(path, &p, &err), &err);
    heron__param_table t = heron__strategy_param_table(p.desc);
    CHECK_MSG(t.specs != NULL, "%s declares text-only parameters", names[i]);
    heron__plugin_close(&p);
  }
  const char *models[] = {"xgb", "linear"};
  for (size_t i = 0; i < 2; i++) {
    heron__plugin p;
    heron_error err;
    heron_error_clear(&err);
    char path[512];
    snprintf(path, sizeof path, "%s/%s.so", HERON_BUILD_PLUGIN_DIR, models[i]);
    CHECK_OK(heron__plugin_load_model(path, &p, &err), &err);
    heron__param_table t = heron__model_param_table(p.desc);
    CHECK(t.specs != NULL);
    heron__plugin_close(&p);
  }
}

/* ---- the first ABI ------------------------------------------------------ */

/* The committed binary built from the first headers, and the same source
 * built by this tree from the snapshot: both load, with text-only
 * declarations and no typed ones read past their struct_size. */
TEST(plugins_built_against_the_first_headers_still_load) {
  const char *files[] = {HERON_SOURCE_DIR "/tests/plugin/abi_v1/strat_v1.so",
                         TPLUG("strat_v1")};
  /* The plugins call heron_param_int and heron_space_* of the host's
   * libheron.so, which this test (linked statically) does not export: load
   * the shared library globally first, as heron-search has it. */
  void *lib =
      dlopen(HERON_BINARY_DIR "/lib/libheron.so", RTLD_NOW | RTLD_GLOBAL);
  CHECK_MSG(lib != NULL, "%s", dlerror());
  for (int i = 0; i < 2; i++) {
    heron__plugin p;
    heron_error err;
    heron_error_clear(&err);
    CHECK_OK(heron__plugin_load_strategy(files[i], &p, &err), &err);
    const heron_strategy_plugin *d = p.desc;
    CHECK(d->struct_size <
          offsetof(heron_strategy_plugin, param_specs) + sizeof(void *));
    heron__param_table t = heron__strategy_param_table(d);
    CHECK(t.specs == NULL && t.docs != NULL);
    CHECK(heron__param_table_has(&t, "step"));
    heron__plugin_close(&p);
  }
  dlclose(lib);
}
