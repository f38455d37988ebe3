/* tests/plugin/test_plugin.c - the plugin loader, plugin parameters, the
 * model host and the shipped random / skeleton strategies.
 *
 * Each deliberately broken plugin in tests/plugin/plugins/ is paired with a
 * load_* test asserting the status code and that the message names the
 * file and the failed check (symbol, field, expected vs found).
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/plugin/param_table.h"
#include "core/plugin/plugin.h"
#include "core/space/builder.h"
#include "core/util/util.h"
#include "test.h"

#define TPLUG(name) HERON_TEST_PLUGIN_DIR "/" name ".so"
#define BPLUG(name) HERON_BUILD_PLUGIN_DIR "/" name ".so"

/* ---- helpers ------------------------------------------------------------ */

/* A scratch folder per test process, removed when the process exits. */
static char scratch_dir[256];
static void scratch_remove(void) { heron__rmtree(scratch_dir); }
static const char *scratch(void) {
  if (!scratch_dir[0]) {
    snprintf(scratch_dir, sizeof scratch_dir, "/tmp/heron-test-plugin-XXXXXX");
    if (!mkdtemp(scratch_dir)) {
      scratch_dir[0] = '\0';
      return "/tmp";
    }
    atexit(scratch_remove);
  }
  return scratch_dir;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static char *read_text(const char *path) {
  static char buf[8192];
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f)
    return buf;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* 1 while the shared object at `path` is still mapped in the process. */
static int still_loaded(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (h)
    dlclose(h);
  return h != NULL;
}

/* Last line a strategy logged, and how many warnings. */
static char last_log[512];
static int warnings;
static void test_log(const heron_strategy_env *env, int level, const char *fmt,
                     ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_log, sizeof last_log, fmt, ap);
  va_end(ap);
  if (level == 1)
    warnings++;
}

/* The hand-built space of the tests: two tile factors of 24 whose product
 * is 24, the first at most 8, plus an unroll knob from {1, 4, 16}. */
enum { V_T0, V_T1, V_UNROLL };
static heron_space *small_space(void) {
  heron_space *sp = heron__space_new();
  if (!sp)
    return NULL;
  int t0 = heron__space_var_divisors(sp, "t0", 1, 24);
  int t1 = heron__space_var_divisors(sp, "t1", 1, 24);
  int u = heron__space_var_set(sp, "unroll", 1, (int64_t[]){1, 4, 16}, 3);
  heron_error err = {0};
  if (t0 != V_T0 || t1 != V_T1 || u != V_UNROLL ||
      heron__space_post(sp, HERON_C_PROD, heron__space_const(sp, 24),
                        (int[]){t0, t1}, 2, -1, NULL, 0) < 0 ||
      heron__space_post(sp, HERON_C_LE, t0, (int[]){heron__space_const(sp, 8)},
                        1, -1, NULL, 0) < 0 ||
      heron__space_finish(sp, &err) != HERON_OK) {
    fprintf(stderr, "small_space: %s\n", err.text);
    heron__space_free(sp);
    return NULL;
  }
  return sp;
}

/* A space with valid-looking domains but no solution that propagation at
 * the root can see: three pairwise different variables over {1, 2}. */
static heron_space *empty_space(void) {
  heron_space *sp = heron__space_new();
  if (!sp)
    return NULL;
  int x = heron__space_var(sp, "x", 1, 1, 2);
  int y = heron__space_var(sp, "y", 1, 1, 2);
  int z = heron__space_var(sp, "z", 1, 1, 2);
  heron_error err = {0};
  if (heron__space_post(sp, HERON_C_NE, x, (int[]){y}, 1, -1, NULL, 0) < 0 ||
      heron__space_post(sp, HERON_C_NE, y, (int[]){z}, 1, -1, NULL, 0) < 0 ||
      heron__space_post(sp, HERON_C_NE, x, (int[]){z}, 1, -1, NULL, 0) < 0 ||
      heron__space_finish(sp, &err) != HERON_OK) {
    heron__space_free(sp);
    return NULL;
  }
  return sp;
}

/* Independent check of small_space's constraints (not the solver's). */
static int small_space_valid(const int64_t *c) {
  return c[V_T0] >= 1 && c[V_T1] >= 1 && c[V_T0] * c[V_T1] == 24 &&
         c[V_T0] <= 8 && 24 % c[V_T0] == 0 &&
         (c[V_UNROLL] == 1 || c[V_UNROLL] == 4 || c[V_UNROLL] == 16);
}

static heron_strategy_env make_env(const heron_space *sp, heron_rng *rng) {
  return (heron_strategy_env){
      .abi_version = HERON_STRATEGY_ABI_VERSION,
      .struct_size = sizeof(heron_strategy_env),
      .space = sp,
      .rng = rng,
      .task_key = "test/small",
      .batch = 8,
      .log = test_log,
  };
}

/* ---- resolve ------------------------------------------------------------ */

TEST(resolve_finds_name_in_heron_plugin_path) {
  setenv("HERON_PLUGIN_PATH", "/nonexistent-heron:" HERON_TEST_PLUGIN_DIR, 1);
  char path[1024];
  heron_error err = {0};
  CHECK_OK(
      heron_plugin_resolve("model_minimal", "model", path, sizeof path, &err),
      &err);
  CHECK_EQ(strcmp(path, TPLUG("model_minimal")), 0);
}

TEST(resolve_accepts_name_that_already_ends_in_so) {
  setenv("HERON_PLUGIN_PATH", HERON_TEST_PLUGIN_DIR, 1);
  char path[1024];
  heron_error err = {0};
  CHECK_OK(heron_plugin_resolve("model_minimal.so", "model", path, sizeof path,
                                &err),
           &err);
  CHECK_EQ(strcmp(path, TPLUG("model_minimal")), 0);
}

TEST(resolve_prefers_plugin_path_over_build_folder) {
  /* A decoy random.so in a folder of HERON_PLUGIN_PATH wins over the one in
   * the build tree. */
  char dir[512], decoy[600];
  snprintf(dir, sizeof dir, "%s/first", scratch());
  mkdir(dir, 0755);
  snprintf(decoy, sizeof decoy, "%s/random.so", dir);
  write_text(decoy, "decoy\n");
  setenv("HERON_PLUGIN_PATH", dir, 1);
  char path[1024];
  heron_error err = {0};
  CHECK_OK(heron_plugin_resolve("random", "strategy", path, sizeof path, &err),
           &err);
  CHECK_EQ(strcmp(path, decoy), 0);
}

TEST(resolve_skips_folders_named_like_the_plugin) {
  char dir[512], sub[600];
  snprintf(dir, sizeof dir, "%s/withdir", scratch());
  mkdir(dir, 0755);
  snprintf(sub, sizeof sub, "%s/random", dir);
  mkdir(sub, 0755);
  snprintf(sub, sizeof sub, "%s/random.so", dir);
  mkdir(sub, 0755);
  setenv("HERON_PLUGIN_PATH", dir, 1);
  char path[1024];
  heron_error err = {0};
  CHECK_OK(heron_plugin_resolve("random", "strategy", path, sizeof path, &err),
           &err);
  CHECK_EQ(strcmp(path, BPLUG("random")), 0);
}

TEST(resolve_falls_back_to_build_plugin_folder) {
  setenv("HERON_PLUGIN_PATH", "", 1);
  char path[1024];
  heron_error err = {0};
  CHECK_OK(heron_plugin_resolve("random", "strategy", path, sizeof path, &err),
           &err);
  CHECK_EQ(strcmp(path, BPLUG("random")), 0);
}

TEST(resolve_uses_name_with_slash_as_path_without_search) {
  /* The plugin path has model_minimal.so, but "./model_minimal" means the
   * file ./model_minimal and nothing else. */
  setenv("HERON_PLUGIN_PATH", HERON_TEST_PLUGIN_DIR, 1);
  char path[1024];
  heron_error err = {0};
  CHECK_EQ(
      heron_plugin_resolve("./model_minimal", "model", path, sizeof path, &err),
      HERON_ENOTFOUND);
  CHECK_STR_CONTAINS(err.text, "./model_minimal does not exist");
  heron_error_clear(&err);
  CHECK_OK(heron_plugin_resolve(TPLUG("model_minimal"), "model", path,
                                sizeof path, &err),
           &err);
  CHECK_EQ(strcmp(path, TPLUG("model_minimal")), 0);
}

TEST(resolve_unknown_name_lists_folders_searched) {
  setenv("HERON_PLUGIN_PATH", "/nonexistent-a::/nonexistent-b", 1);
  char path[1024];
  heron_error err = {0};
  CHECK_EQ(heron_plugin_resolve("nosuch", "strategy", path, sizeof path, &err),
           HERON_ENOTFOUND);
  CHECK_EQ(err.code, HERON_ENOTFOUND);
  CHECK_STR_CONTAINS(err.text, "'nosuch'");
  CHECK_STR_CONTAINS(err.text,
                     "/nonexistent-a, /nonexistent-b, " HERON_BUILD_PLUGIN_DIR);
  CHECK_EQ(path[0], '\0');
}

/* ---- load: one test per broken plugin ----------------------------------- */

TEST(load_rejects_text_file_posing_as_shared_object) {
  char fake[512];
  snprintf(fake, sizeof fake, "%s/fake.so", scratch());
  write_text(fake, "this is not an ELF file\n");
  heron__plugin p;
  heron_error err = {0};
  CHECK_EQ(heron__plugin_load_strategy(fake, &p, &err), HERON_EABI);
  CHECK_STR_CONTAINS(err.text, "cannot load plugin");
  CHECK_STR_CONTAINS(err.text, fake);
  CHECK(p.dl == NULL && p.desc == NULL);
}

TEST(load_rejects_wrong_abi_version_naming_both) {
  heron__plugin p;
  heron_error err = {0};
  CHECK_EQ(heron__plugin_load_strategy(TPLUG("strat_bad_abi"), &p, &err),
           HERON_EABI);
  CHECK_STR_CONTAINS(err.text, TPLUG("strat_bad_abi"));
  CHECK_STR_CONTAINS(err.text, "ABI version 7, expected 1");
}

TEST(load_rejects_struct_size_below_v1_layout) {
  heron__plugin p;
  heron_error err = {0};
  CHECK_EQ(heron__plugin_load_strategy(TPLUG("strat_short_size"), &p, &err),
           HERON_EABI);
  char want[96];
  snprintf(want, sizeof want, "struct size 24, expected at least %zu",
           offsetof(heron_strategy_plugin, load_state) +
               sizeof(void (*)(void)));
  CHECK_STR_CONTAINS(err.text, TPLUG("strat_short_size"));
  CHECK_STR_CONTAINS(err.text, want);
}

TEST(load_rejects_library_without_entry_symbol) {
  heron__plugin p;
  heron_error err = {0};
  CHECK_EQ(heron__plugin_load_strategy(TPLUG("strat_no_entry"), &p, &err),
           HERON_EABI);
  CHECK_STR_CONTAINS(err.text, TPLUG("strat_no_entry"));
  CHECK_STR_CONTAINS(err.text, "does not export heron_strategy_plugin_v1");
  CHECK(strstr(err.text, "model plugin") == NULL);
}

TEST(load_hints_when_model_is_given_as_strategy) {
  heron__plugin p;
  heron_error err = {0};
  CHECK_EQ(heron__plugin_load_strategy(TPLUG("model_minimal"), &p, &err),
           HERON_EABI);
  CHECK_STR_CONTAINS(err.text, "does not export heron_strategy_plugin_v1");
  CHECK_STR_CONTAINS(err.text, "is it a model plugin?");
}

TEST(load_hints_when_strategy_is_given_as_model) {
  heron__plugin p;
  heron_error err = {0};
  CHECK_EQ(heron__plugin_load_model(BPLUG("random"), &p, &err), HERON_EABI);
  CHECK_STR_CONTAINS(err.text, "does not export heron_model_plugin_v1");
  CHECK_STR_CONTAINS(err.text, "is it a strategy plugin?");
}

TEST(load_rejects_entry_returning_null) {
  heron__plugin p;
  heron_error err = {0};
  CHECK_EQ(heron__plugin_load_strategy(TPLUG("strat_null_desc"), &p, &err),
           HERON_EABI);
  CHECK_STR_CONTAINS(err.text, TPLUG("strat_null_desc"));
  CHECK_STR_CONTAINS(err.text, "heron_strategy_plugin_v1() returned NULL");
}

TEST(load_names_null_required_member) {
  heron__plugin p;
  heron_error err = {0};
  CHECK_EQ(heron__plugin_load_strategy(TPLUG("strat_null_member"), &p, &err),
           HERON_EABI);
  CHECK_STR_CONTAINS(err.text, TPLUG("strat_null_member"));
  CHECK_STR_CONTAINS(err.text, "required member propose is NULL");
}

TEST(load_missing_file_is_notfound) {
  setenv("HERON_PLUGIN_PATH", "", 1);
  heron__plugin p;
  heron_error err = {0};
  CHECK_EQ(heron__plugin_load_strategy("no_such_strategy", &p, &err),
           HERON_ENOTFOUND);
  CHECK_STR_CONTAINS(err.text, "no_such_strategy");
}

TEST(load_failure_unloads_the_library) {
  const char *bad[] = {TPLUG("strat_bad_abi"), TPLUG("strat_short_size"),
                       TPLUG("strat_no_entry"), TPLUG("strat_null_desc"),
                       TPLUG("strat_null_member")};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    heron__plugin p;
    heron_error err = {0};
    CHECK_EQ(heron__plugin_load_strategy(bad[i], &p, &err), HERON_EABI);
    CHECK(p.dl == NULL);
    CHECK_MSG(!still_loaded(bad[i]), "%s still mapped after failed load",
              bad[i]);
  }
}

TEST(load_then_close_unloads_the_library) {
  heron__plugin p;
  heron_error err = {0};
  CHECK_OK(heron__plugin_load_model(TPLUG("model_minimal"), &p, &err), &err);
  CHECK(p.desc != NULL);
  CHECK(still_loaded(TPLUG("model_minimal")));
  CHECK_EQ(strcmp(((const heron_model_plugin *)p.desc)->name, "minimal"), 0);
  heron__plugin_close(&p);
  CHECK(p.dl == NULL && p.desc == NULL);
  CHECK(!still_loaded(TPLUG("model_minimal")));
  heron__plugin_close(&p); /* closing twice is harmless */
}

TEST(load_via_plugin_path_records_resolved_file) {
  setenv("HERON_PLUGIN_PATH", HERON_TEST_PLUGIN_DIR, 1);
  heron__plugin p;
  heron_error err = {0};
  CHECK_OK(heron__plugin_load_model("model_minimal", &p, &err), &err);
  CHECK_EQ(strcmp(p.path, TPLUG("model_minimal")), 0);
  heron__plugin_close(&p);
}

/* ---- describe ----------------------------------------------------------- */

static int describe_to_text(const char *name, const char *kind, char *text,
                            size_t cap, heron_error *err) {
  FILE *f = tmpfile();
  if (!f)
    return HERON_EIO;
  int rc = heron_plugin_describe(name, kind, f, err);
  rewind(f);
  size_t n = fread(text, 1, cap - 1, f);
  text[n] = '\0';
  fclose(f);
  return rc;
}

TEST(describe_prints_name_summary_file_and_params) {
  setenv("HERON_PLUGIN_PATH", "", 1);
  char text[4096];
  heron_error err = {0};
  CHECK_OK(describe_to_text("random", "strategy", text, sizeof text, &err),
           &err);
  CHECK_STR_CONTAINS(text, "strategy random - constrained random sampling");
  CHECK_STR_CONTAINS(text, "file: " BPLUG("random"));
  CHECK_STR_CONTAINS(text, "retries (int in [1, 1000000], default 100): ");
}

TEST(describe_says_none_for_plugin_without_params) {
  char text[4096];
  heron_error err = {0};
  CHECK_OK(describe_to_text(TPLUG("model_failing_create"), "model", text,
                            sizeof text, &err),
           &err);
  CHECK_STR_CONTAINS(text, "model failing_create");
  CHECK_STR_CONTAINS(text, "parameters: none");
}

TEST(describe_reports_load_errors_and_bad_kind) {
  char text[4096];
  heron_error err = {0};
  CHECK_EQ(describe_to_text(TPLUG("strat_bad_abi"), "strategy", text,
                            sizeof text, &err),
           HERON_EABI);
  CHECK_STR_CONTAINS(err.text, "ABI version 7");
  heron_error_clear(&err);
  CHECK_EQ(describe_to_text("random", "gizmo", text, sizeof text, &err),
           HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "gizmo");
}

/* ---- parameters --------------------------------------------------------- */

static const heron_param dup_params[] = {
    {"pop", "10"}, {"rate", "0.5"}, {"pop", "20"}};

TEST(param_get_last_occurrence_wins) {
  CHECK_EQ(strcmp(heron_param_get(dup_params, 3, "pop", "x"), "20"), 0);
  CHECK_EQ(strcmp(heron_param_get(dup_params, 2, "pop", "x"), "10"), 0);
}

TEST(param_get_returns_fallback_when_absent) {
  CHECK_EQ(strcmp(heron_param_get(dup_params, 3, "popp", "fb"), "fb"), 0);
  CHECK(heron_param_get(NULL, 0, "pop", NULL) == NULL);
}

static int parse_int(const char *text, int64_t lo, int64_t hi, int64_t *out,
                     heron_error *err) {
  heron_param p = {"pop", text};
  heron_error_clear(err);
  return heron_param_int(&p, 1, "pop", -1, lo, hi, out, err);
}

TEST(param_int_parses_whole_decimal_strings) {
  int64_t v = 0;
  heron_error err;
  CHECK_OK(parse_int("42", 1, 100, &v, &err), &err);
  CHECK_EQ(v, 42);
  CHECK_OK(parse_int("-7", -10, 10, &v, &err), &err);
  CHECK_EQ(v, -7);
  CHECK_OK(parse_int("+3", -10, 10, &v, &err), &err);
  CHECK_EQ(v, 3);
  CHECK_OK(parse_int("9223372036854775807", 0, INT64_MAX, &v, &err), &err);
  CHECK_EQ(v, INT64_MAX);
}

TEST(param_int_rejects_anything_but_a_whole_integer) {
  const char *bad[] = {"abc", "",     " 12", "12 ", "12abc",
                       "1e3", "0x10", "1.5", "--1"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int64_t v = 99;
    heron_error err;
    CHECK_EQ(parse_int(bad[i], -100, 100000, &v, &err), HERON_EINVAL);
    CHECK_EQ(v, 99); /* untouched on error */
    char want[64];
    snprintf(want, sizeof want, "parameter pop = '%s' is not an integer",
             bad[i]);
    CHECK_STR_CONTAINS(err.text, want);
  }
}

TEST(param_int_reports_value_outside_range_with_bounds) {
  int64_t v;
  heron_error err;
  CHECK_EQ(parse_int("0", 1, 100000, &v, &err), HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "parameter pop = 0 is outside [1, 100000]");
  CHECK_EQ(parse_int("100001", 1, 100000, &v, &err), HERON_EINVAL);
  CHECK_OK(parse_int("100000", 1, 100000, &v, &err), &err);
  CHECK_OK(parse_int("1", 1, 100000, &v, &err), &err);
}

TEST(param_int_treats_overflow_as_out_of_range) {
  int64_t v;
  heron_error err;
  CHECK_EQ(parse_int("99999999999999999999", INT64_MIN, INT64_MAX, &v, &err),
           HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "is outside");
}

TEST(param_int_uses_fallback_when_absent) {
  int64_t v = 0;
  heron_error err = {0};
  CHECK_OK(heron_param_int(dup_params, 3, "size", 64, 1, 100, &v, &err), &err);
  CHECK_EQ(v, 64);
  CHECK_OK(heron_param_int(dup_params, 3, "pop", 64, 1, 100, &v, &err), &err);
  CHECK_EQ(v, 20);
}

TEST(param_double_parses_and_checks_range) {
  double v = 0;
  heron_error err = {0};
  heron_param p[] = {{"rate", "0.25"}, {"big", "1e3"}, {"bad", "0.5x"},
                     {"nan", "nan"},   {"out", "1.5"}, {"empty", ""}};
  CHECK_OK(heron_param_double(p, 6, "rate", 0, 0, 1, &v, &err), &err);
  CHECK(v == 0.25);
  CHECK_OK(heron_param_double(p, 6, "big", 0, 0, 1e6, &v, &err), &err);
  CHECK(v == 1000.0);
  CHECK_OK(heron_param_double(p, 6, "absent", 0.75, 0, 1, &v, &err), &err);
  CHECK(v == 0.75);
  CHECK_EQ(heron_param_double(p, 6, "bad", 0, 0, 1, &v, &err), HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "parameter bad = '0.5x' is not a number");
  heron_error_clear(&err);
  CHECK_EQ(heron_param_double(p, 6, "nan", 0, 0, 1, &v, &err), HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "is not a number");
  heron_error_clear(&err);
  CHECK_EQ(heron_param_double(p, 6, "empty", 0, 0, 1, &v, &err), HERON_EINVAL);
  heron_error_clear(&err);
  CHECK_EQ(heron_param_double(p, 6, "out", 0, 0, 1, &v, &err), HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "parameter out = 1.5 is outside [0, 1]");
}

static const heron_param_doc ga_docs[] = {
    {"pop", "64", "population"}, {"rate", "0.1", "mutation rate"}, {NULL}};

TEST(param_check_names_unknown_key_and_known_ones) {
  heron_param p[] = {{"pop", "8"}, {"popp", "9"}};
  heron_error err = {0};
  CHECK_EQ(heron_param_check(p, 2, ga_docs, "strategy genetic", &err),
           HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text,
                     "unknown parameter 'popp' for strategy genetic; known: "
                     "pop, rate");
}

TEST(param_check_plugin_without_params_rejects_any_key) {
  heron_param p[] = {{"pop", "8"}};
  heron_error err = {0};
  CHECK_EQ(heron_param_check(p, 1, NULL, "random", &err), HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "random takes no parameters");
  CHECK_STR_CONTAINS(err.text, "pop");
  CHECK_OK(heron_param_check(NULL, 0, NULL, "random", NULL), NULL);
}

TEST(param_check_accepts_declared_keys_repeated) {
  heron_param p[] = {{"pop", "8"}, {"rate", "0.2"}, {"pop", "9"}};
  heron_error err = {0};
  CHECK_OK(heron_param_check(p, 3, ga_docs, "strategy genetic", &err), &err);
}

/* ---- the model host ------------------------------------------------------ */

TEST(model_open_rejects_undeclared_parameter) {
  heron_param p[] = {{"slop", "1"}};
  heron_model *m = (heron_model *)0x1;
  heron_error err = {0};
  CHECK_EQ(heron__model_open(TPLUG("model_minimal"), p, 1, 3, 1, &m, &err),
           HERON_EINVAL);
  CHECK(m == NULL);
  CHECK_STR_CONTAINS(err.text, "unknown parameter 'slop' for model minimal; "
                               "known: slope");
}

TEST(model_open_passes_create_failure_code_and_message) {
  heron_model *m = NULL;
  heron_error err = {0};
  CHECK_EQ(
      heron__model_open(TPLUG("model_failing_create"), NULL, 0, 3, 1, &m, &err),
      HERON_EIO);
  CHECK(m == NULL);
  CHECK_STR_CONTAINS(err.text, "model failing_create: create failed: "
                               "cannot open /dev/oracle");
  CHECK(!still_loaded(TPLUG("model_failing_create")));
}

TEST(model_open_passes_bad_parameter_value_from_create) {
  heron_param p[] = {{"slope", "steep"}};
  heron_model *m = NULL;
  heron_error err = {0};
  CHECK_EQ(heron__model_open(TPLUG("model_minimal"), p, 1, 3, 1, &m, &err),
           HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "parameter slope = 'steep' is not a number");
}

TEST(model_predict_before_fit_is_unsupported) {
  heron_model *m = NULL;
  heron_error err = {0};
  CHECK_OK(heron__model_open(TPLUG("model_minimal"), NULL, 0, 2, 1, &m, &err),
           &err);
  double X[2] = {1, 2}, out[1] = {0};
  CHECK_EQ(heron_model_trained(m), 0);
  CHECK_EQ(heron_model_predict(m, X, 1, 2, out, &err), HERON_EUNSUPPORTED);
  CHECK_STR_CONTAINS(err.text, "not trained");
  heron__model_close(m);
}

TEST(model_fit_then_predict_returns_plugin_scores) {
  heron_param p[] = {{"slope", "2"}};
  heron_model *m = NULL;
  heron_error err = {0};
  CHECK_OK(heron__model_open(TPLUG("model_minimal"), p, 1, 2, 1, &m, &err),
           &err);
  double X[4] = {1, 0, 3, 0}, y[2] = {1, 3}, out[2] = {0, 0};
  CHECK_OK(heron__model_fit(m, X, y, 2, 2, &err), &err);
  CHECK_EQ(heron_model_trained(m), 1);
  CHECK_OK(heron_model_predict(m, X, 2, 2, out, &err), &err);
  CHECK(out[0] == 2 + 2 * 1 && out[1] == 2 + 2 * 3);
  heron__model_close(m);
}

TEST(model_calls_check_feature_count) {
  heron_model *m = NULL;
  heron_error err = {0};
  CHECK_OK(heron__model_open(TPLUG("model_minimal"), NULL, 0, 2, 1, &m, &err),
           &err);
  double X[3] = {1, 2, 3}, y[1] = {1}, out[1];
  CHECK_EQ(heron__model_fit(m, X, y, 1, 3, &err), HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "3 features, expected 2");
  heron_error_clear(&err);
  CHECK_OK(heron__model_fit(m, X, y, 1, 2, &err), &err);
  CHECK_EQ(heron_model_predict(m, X, 1, 3, out, &err), HERON_EINVAL);
  heron__model_close(m);
}

TEST(model_without_optional_members_reports_unsupported) {
  heron_model *m = NULL;
  heron_error err = {0};
  CHECK_OK(heron__model_open(TPLUG("model_minimal"), NULL, 0, 2, 1, &m, &err),
           &err);
  double X[2] = {1, 2}, y[1] = {1}, scores[2];
  CHECK_OK(heron__model_fit(m, X, y, 1, 2, &err), &err);
  CHECK_EQ(heron_model_importance(m, scores, 2, &err), HERON_EUNSUPPORTED);
  CHECK_STR_CONTAINS(err.text, "model minimal does not report feature "
                               "importance");
  heron_error_clear(&err);
  char path[512];
  snprintf(path, sizeof path, "%s/model.bin", scratch());
  CHECK_EQ(heron__model_save(m, path, &err), HERON_EUNSUPPORTED);
  CHECK_STR_CONTAINS(err.text, "no save member");
  heron_error_clear(&err);
  CHECK_EQ(heron__model_load(m, path, &err), HERON_EUNSUPPORTED);
  CHECK_STR_CONTAINS(err.text, "no load member");
  heron__model_close(m);
}

TEST(model_trained_and_calls_accept_null_handle) {
  heron_error err = {0};
  double s[1];
  CHECK_EQ(heron_model_trained(NULL), 0);
  CHECK_EQ(heron_model_predict(NULL, s, 1, 1, s, &err), HERON_EINVAL);
  CHECK_EQ(heron_model_importance(NULL, s, 1, NULL), HERON_EINVAL);
  heron__model_close(NULL);
}

TEST(model_log_goes_to_stderr_prefixed_with_model_name) {
  char path[512];
  snprintf(path, sizeof path, "%s/stderr.txt", scratch());
  fflush(stderr);
  int saved = dup(2);
  FILE *f = fopen(path, "w");
  CHECK(f && saved >= 0);
  dup2(fileno(f), 2);
  heron_model *m = NULL;
  heron_error err = {0};
  int rc = heron__model_open(TPLUG("model_minimal"), NULL, 0, 5, 1, &m, &err);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  fclose(f);
  heron__model_close(m);
  CHECK_OK(rc, &err);
  CHECK_STR_CONTAINS(read_text(path), "[minimal] created with 5 features\n");
}

/* ---- the random strategy ------------------------------------------------ */

/* Loads a shipped strategy from the build tree by name. */
static int load_shipped(const char *name, heron__plugin *p,
                        const heron_strategy_plugin **s, heron_error *err) {
  setenv("HERON_PLUGIN_PATH", "", 1);
  int rc = heron__plugin_load_strategy(name, p, err);
  *s = rc == HERON_OK ? p->desc : NULL;
  return rc;
}

TEST(random_loads_by_name_and_proposes_valid_configs) {
  heron__plugin p;
  const heron_strategy_plugin *s;
  heron_error err = {0};
  CHECK_OK(load_shipped("random", &p, &s, &err), &err);
  heron_space *sp = small_space();
  CHECK(sp != NULL);
  heron_rng rng;
  heron_rng_seed(&rng, 7);
  heron_strategy_env env = make_env(sp, &rng);
  void *self = NULL;
  CHECK_OK(s->create(&env, NULL, 0, &self, &err), &err);
  int nv = heron_space_nvars(sp);
  int64_t out[32 * 16];
  int got = -1;
  CHECK(nv <= 16);
  CHECK_OK(s->propose(self, 32, out, &got, &err), &err);
  CHECK_EQ(got, 32);
  int distinct_t0 = 0;
  int seen[25] = {0};
  for (int i = 0; i < got; i++) {
    const int64_t *c = out + (size_t)i * nv;
    CHECK_MSG(small_space_valid(c), "config %d: t0=%lld t1=%lld u=%lld", i,
              (long long)c[V_T0], (long long)c[V_T1], (long long)c[V_UNROLL]);
    CHECK_EQ(heron_space_violations(sp, c, NULL, 0), 0);
    if (!seen[c[V_T0]]++)
      distinct_t0++;
  }
  /* t0 can be 1, 2, 3, 4, 6, 8: 32 random draws see more than one. */
  CHECK(distinct_t0 > 1);
  heron_measurement m = {.trial = 1,
                         .status = HERON_MEAS_OK,
                         .config = out,
                         .seconds = 1,
                         .gflops = 1,
                         .error = ""};
  CHECK_OK(s->observe(self, &m, 1, &err), &err);
  s->destroy(self);
  heron__space_free(sp);
  heron__plugin_close(&p);
}

TEST(random_same_seed_gives_same_proposals) {
  heron__plugin p;
  const heron_strategy_plugin *s;
  heron_error err = {0};
  CHECK_OK(load_shipped("random", &p, &s, &err), &err);
  heron_space *sp = small_space();
  CHECK(sp != NULL);
  int nv = heron_space_nvars(sp);
  int64_t a[8 * 16], b[8 * 16];
  for (int run = 0; run < 2; run++) {
    heron_rng rng;
    heron_rng_seed(&rng, 123);
    heron_strategy_env env = make_env(sp, &rng);
    void *self = NULL;
    int got = 0;
    CHECK_OK(s->create(&env, NULL, 0, &self, &err), &err);
    CHECK_OK(s->propose(self, 8, run ? b : a, &got, &err), &err);
    CHECK_EQ(got, 8);
    s->destroy(self);
  }
  CHECK_EQ(memcmp(a, b, sizeof(int64_t) * 8 * (size_t)nv), 0);
  heron__space_free(sp);
  heron__plugin_close(&p);
}

TEST(random_rejects_unknown_param_and_bad_retries) {
  heron__plugin p;
  const heron_strategy_plugin *s;
  heron_error err = {0};
  CHECK_OK(load_shipped("random", &p, &s, &err), &err);
  /* random declares typed parameters: the host refuses both before
   * create() is called. */
  heron__param_table pt = heron__strategy_param_table(s);
  heron_param *out = NULL;
  int nout = 0;
  heron_param typo[] = {{"retry", "5"}};
  CHECK_EQ(heron__param_table_apply(&pt, typo, 1, "strategy random", &out,
                                    &nout, &err),
           HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "unknown parameter 'retry' for strategy "
                               "random; known: retries");
  heron_error_clear(&err);
  heron_param zero[] = {{"retries", "0"}};
  CHECK_EQ(heron__param_table_apply(&pt, zero, 1, "strategy random", &out,
                                    &nout, &err),
           HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text,
                     "parameter retries = '0' is outside [1, 1000000]");
  CHECK(out == NULL);
  heron__plugin_close(&p);
}

TEST(random_fails_on_empty_space_instead_of_spinning) {
  heron__plugin p;
  const heron_strategy_plugin *s;
  heron_error err = {0};
  CHECK_OK(load_shipped("random", &p, &s, &err), &err);
  heron_space *sp = empty_space();
  if (!sp) { /* the solver saw through it at the root: nothing to test */
    heron__plugin_close(&p);
    return;
  }
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  heron_strategy_env env = make_env(sp, &rng);
  heron_param few[] = {{"retries", "3"}};
  void *self = NULL;
  CHECK_OK(s->create(&env, few, 1, &self, &err), &err);
  int64_t out[4 * 3];
  int got = -1;
  int rc = s->propose(self, 4, out, &got, &err);
  s->destroy(self);
  heron__space_free(sp);
  heron__plugin_close(&p);
  CHECK_EQ(rc, HERON_EUNSAT);
  CHECK_EQ(got, 0);
  CHECK_STR_CONTAINS(err.text, "random: no valid config in 3 attempts");
}

/* ---- the skeleton strategy ---------------------------------------------- */

TEST(skeleton_mutates_best_config_after_a_success) {
  heron__plugin p;
  const heron_strategy_plugin *s;
  heron_error err = {0};
  CHECK_OK(load_shipped("skeleton", &p, &s, &err), &err);
  heron_space *sp = small_space();
  CHECK(sp != NULL);
  heron_rng rng;
  heron_rng_seed(&rng, 5);
  heron_strategy_env env = make_env(sp, &rng);
  heron_param prm[] = {{"explore", "0"}};
  void *self = NULL;
  CHECK_OK(s->create(&env, prm, 1, &self, &err), &err);
  int nv = heron_space_nvars(sp);
  int64_t out[8 * 16];
  int got = 0;
  CHECK_OK(s->propose(self, 8, out, &got, &err), &err);
  CHECK_EQ(got, 8);
  /* The third config ran fastest; the next proposals are its neighbours. */
  int64_t best[16];
  memcpy(best, out + 2 * nv, sizeof(int64_t) * (size_t)nv);
  heron_measurement ms[3] = {
      {.trial = 1,
       .status = HERON_MEAS_OK,
       .config = out,
       .gflops = 1,
       .error = ""},
      {.trial = 2,
       .status = HERON_MEAS_COMPILE_ERROR,
       .config = out + nv,
       .error = "boom"},
      {.trial = 3,
       .status = HERON_MEAS_OK,
       .config = out + 2 * nv,
       .gflops = 5,
       .error = ""},
  };
  CHECK_OK(s->observe(self, ms, 3, &err), &err);
  memset(out, 0, sizeof out); /* the engine's array: the strategy copied */
  CHECK_OK(s->propose(self, 8, out, &got, &err), &err);
  CHECK(got >= 1);
  for (int i = 0; i < got; i++) {
    const int64_t *c = out + (size_t)i * nv;
    CHECK(small_space_valid(c));
    CHECK_MSG(memcmp(c, best, sizeof(int64_t) * (size_t)nv) != 0,
              "proposal %d repeats the best config", i);
  }
  s->destroy(self);
  heron__space_free(sp);
  heron__plugin_close(&p);
}

TEST(skeleton_state_survives_save_and_load) {
  heron__plugin p;
  const heron_strategy_plugin *s;
  heron_error err = {0};
  CHECK_OK(load_shipped("skeleton", &p, &s, &err), &err);
  CHECK(s->save_state && s->load_state);
  heron_space *sp = small_space();
  CHECK(sp != NULL);
  heron_rng rng;
  heron_rng_seed(&rng, 9);
  heron_strategy_env env = make_env(sp, &rng);
  void *a = NULL, *b = NULL;
  CHECK_OK(s->create(&env, NULL, 0, &a, &err), &err);
  CHECK_OK(s->create(&env, NULL, 0, &b, &err), &err);
  int64_t out[16];
  int got = 0;
  CHECK_OK(s->propose(a, 1, out, &got, &err), &err);
  heron_measurement m = {.trial = 1,
                         .status = HERON_MEAS_OK,
                         .config = out,
                         .gflops = 3.5,
                         .error = ""};
  CHECK_OK(s->observe(a, &m, 1, &err), &err);
  char p1[512], p2[512];
  snprintf(p1, sizeof p1, "%s/skel1.state", scratch());
  snprintf(p2, sizeof p2, "%s/skel2.state", scratch());
  CHECK_OK(s->save_state(a, p1, &err), &err);
  CHECK_OK(s->load_state(b, p1, &err), &err);
  CHECK_OK(s->save_state(b, p2, &err), &err);
  char t1[4096];
  snprintf(t1, sizeof t1, "%s", read_text(p1));
  CHECK_STR_CONTAINS(t1, "heron-skeleton-state 1");
  CHECK_EQ(strcmp(t1, read_text(p2)), 0);
  s->destroy(a);
  s->destroy(b);
  heron__space_free(sp);
  heron__plugin_close(&p);
}

TEST(skeleton_load_state_rejects_state_of_another_space) {
  heron__plugin p;
  const heron_strategy_plugin *s;
  heron_error err = {0};
  CHECK_OK(load_shipped("skeleton", &p, &s, &err), &err);
  heron_space *sp = small_space();
  CHECK(sp != NULL);
  heron_rng rng;
  heron_rng_seed(&rng, 9);
  heron_strategy_env env = make_env(sp, &rng);
  void *self = NULL;
  CHECK_OK(s->create(&env, NULL, 0, &self, &err), &err);
  char path[512];
  snprintf(path, sizeof path, "%s/other.state", scratch());
  write_text(path, "heron-skeleton-state 1\n99 1 2.0 4\n1 2 3\n");
  CHECK_EQ(s->load_state(self, path, &err), HERON_EPARSE);
  CHECK_STR_CONTAINS(err.text, path);
  s->destroy(self);
  heron__space_free(sp);
  heron__plugin_close(&p);
}

/* ---- the host's load= and save= model parameters ----------------------- */

TEST(model_save_param_writes_the_model_after_every_fit_atomically) {
  char dir[] = "/tmp/heron-save-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[256];
  snprintf(path, sizeof path, "%s/m.txt", dir);
  heron_param p[] = {{"save", path}};
  heron_model *m = NULL;
  heron_error err = {0};
  CHECK_OK(heron__model_open(TPLUG("model_saving"), p, 1, 1, 1, &m, &err),
           &err);
  CHECK(access(path, F_OK) != 0); /* nothing to save before a fit */
  double X[2] = {0, 0}, y[2] = {1, 3};
  CHECK_OK(heron__model_fit(m, X, y, 2, 1, &err), &err);
  char text[256];
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  CHECK(fgets(text, sizeof text, f) != NULL);
  fclose(f);
  CHECK_STR_CONTAINS(text, "saving-model 2");
  heron__model_close(m);
  /* No temporary file is left next to it. */
  char cmd[512];
  snprintf(cmd, sizeof cmd, "test $(ls %s | wc -l) -eq 1", dir);
  CHECK_EQ(system(cmd), 0);
  heron__rmtree(dir);
}

TEST(model_load_param_gives_a_trained_model_from_the_start) {
  char path[] = "/tmp/heron-load-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  CHECK(write(fd, "saving-model 7.5\n", 17) == 17);
  close(fd);
  heron_param p[] = {{"load", path}};
  heron_model *m = NULL;
  heron_error err = {0};
  CHECK_OK(heron__model_open(TPLUG("model_saving"), p, 1, 1, 1, &m, &err),
           &err);
  CHECK_EQ(heron_model_trained(m), 1);
  double X[1] = {0}, out[1] = {0};
  CHECK_OK(heron_model_predict(m, X, 1, 1, out, &err), &err);
  CHECK(out[0] == 7.5);
  heron__model_close(m);
  unlink(path);
}

TEST(model_load_param_of_a_garbage_file_names_model_and_file) {
  char path[] = "/tmp/heron-load-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  CHECK(write(fd, "{not a model", 12) == 12);
  close(fd);
  heron_param p[] = {{"load", path}};
  heron_model *m = NULL;
  heron_error err = {0};
  CHECK_EQ(heron__model_open(TPLUG("model_saving"), p, 1, 1, 1, &m, &err),
           HERON_EPARSE);
  CHECK(m == NULL);
  CHECK_STR_CONTAINS(err.text, "model saving: load failed: ");
  CHECK_STR_CONTAINS(err.text, "is not a saved model");
  unlink(path);
}

TEST(model_load_param_of_a_missing_file_is_rejected_before_create) {
  heron_param p[] = {{"load", "/nonexistent/model.bin"}};
  heron_model *m = NULL;
  heron_error err = {0};
  CHECK_EQ(heron__model_open(TPLUG("model_saving"), p, 1, 1, 1, &m, &err),
           HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text,
                     "model saving: load=/nonexistent/model.bin: No such file");
}

TEST(model_save_param_into_a_missing_folder_is_rejected) {
  heron_param p[] = {{"save", "/nonexistent/dir/model.bin"}};
  heron_model *m = NULL;
  heron_error err = {0};
  CHECK_EQ(heron__model_open(TPLUG("model_saving"), p, 1, 1, 1, &m, &err),
           HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "folder '/nonexistent/dir' is not writable");
}

TEST(model_load_and_save_need_the_plugin_members) {
  heron_param p[] = {{"load", "/etc/hostname"}};
  heron_model *m = NULL;
  heron_error err = {0};
  CHECK_EQ(heron__model_open(TPLUG("model_minimal"), p, 1, 1, 1, &m, &err),
           HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "cannot load a saved model");
  heron_param q[] = {{"save", "/tmp/x.bin"}};
  heron_error_clear(&err);
  CHECK_EQ(heron__model_open(TPLUG("model_minimal"), q, 1, 1, 1, &m, &err),
           HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "cannot save itself");
}

TEST(describe_lists_the_host_model_parameters) {
  char text[4096];
  heron_error err = {0};
  CHECK_OK(
      describe_to_text(TPLUG("model_saving"), "model", text, sizeof text, &err),
      &err);
  CHECK_STR_CONTAINS(text, "load=FILE: start from a model saved");
  CHECK_STR_CONTAINS(text, "save=FILE: save the model to FILE after every fit");
  CHECK_OK(describe_to_text(TPLUG("model_minimal"), "model", text, sizeof text,
                            &err),
           &err);
  CHECK_STR_CONTAINS(text, "(not available: this model lacks the member)");
}
