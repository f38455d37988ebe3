/* tests/op/suite_files.c - the shipped operator suites
 * (configs/suites/cpu.json, its int8 and bf16 forms dlboost.json and
 * cpu-bf16.json, and tensorcore.json) are well formed: every task
 * names a known op, writes its shape with exactly that op's dimension names
 * (all required ones present, no unknown or repeated one), builds at the
 * file's dtype, and each file covers Heron's nine ops once. */
#include <jansson.h>

#include "core/op/op.h"
#include "test.h"

static const char *const suite_ops[] = {"gemm", "bmm", "gemv", "c1d", "c2d",
                                        "c3d",  "dil", "t2d",  "scan"};
enum { NSUITE = sizeof suite_ops / sizeof suite_ops[0] };

static json_t *load_suite(const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/configs/suites/%s", HERON_SOURCE_DIR, file);
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  if (!root)
    fprintf(stderr, "%s:%d: %s\n", path, jerr.line, jerr.text);
  return root;
}

/* Index of the dimension `name` in the kind's --shape order, or -1. */
static int dim_index(const heron__op_kind *k, const char *name) {
  for (int d = 0; d < k->ndims_max; d++)
    if (!strcmp(k->dims[d], name))
      return d;
  return -1;
}

/* Checks one task of a suite and builds it at `dtype`; on success adds the
 * op's index in suite_ops to *seen.  Returns 0 when the task is good. */
static int check_task(const char *file, size_t i, json_t *task, int dtype,
                      int *seen) {
  const char *name = json_string_value(json_object_get(task, "name"));
  const char *opname = json_string_value(json_object_get(task, "op"));
  json_t *shape = json_object_get(task, "shape");
  if (!name || !opname || !json_is_object(shape)) {
    fprintf(stderr, "%s: task %zu lacks a name, op or shape object\n", file, i);
    return 1;
  }
  const heron__op_kind *k = heron__op_kind_find(opname);
  if (!k) {
    fprintf(stderr, "%s: task %s: unknown op '%s'\n", file, name, opname);
    return 1;
  }
  int64_t dims[HERON__MAX_SHAPE];
  int given[HERON__MAX_SHAPE] = {0};
  const char *key;
  json_t *value;
  json_object_foreach(shape, key, value) {
    int d = dim_index(k, key);
    if (d < 0) {
      fprintf(stderr, "%s: task %s: '%s' is not a dimension of %s\n", file,
              name, key, opname);
      return 1;
    }
    if (!json_is_integer(value)) {
      fprintf(stderr, "%s: task %s: %s is not an integer\n", file, name, key);
      return 1;
    }
    dims[d] = json_integer_value(value);
    given[d] = 1;
  }
  /* Required dimensions must all be present; optional ones may be left to
   * the defaults, but only as a suffix, since --shape is positional. */
  int n = 0;
  while (n < k->ndims_max && given[n])
    n++;
  for (int d = 0; d < k->ndims_max; d++)
    if ((d < k->ndims && !given[d]) || (d >= n && given[d])) {
      fprintf(stderr, "%s: task %s: dimension %s of %s is %s\n", file, name,
              k->dims[d], opname, given[d] ? "given after a gap" : "missing");
      return 1;
    }
  heron__op op;
  heron_error err = {0};
  if (heron__op_build(opname, dims, n, dtype, &op, &err)) {
    fprintf(stderr, "%s: task %s: %s\n", file, name, err.text);
    return 1;
  }
  for (int s = 0; s < NSUITE; s++)
    if (!strcmp(opname, suite_ops[s]))
      seen[s]++;
  return 0;
}

/* Checks a whole suite file; `dtype` and `target` are what it must say. */
static int check_suite(const char *file, const char *want_dtype,
                       const char *want_target) {
  json_t *root = load_suite(file);
  if (!root)
    return 1;
  int rc = 0;
  const char *desc = json_string_value(json_object_get(root, "description"));
  const char *dname = json_string_value(json_object_get(root, "dtype"));
  const char *target = json_string_value(json_object_get(root, "target"));
  json_t *tasks = json_object_get(root, "tasks");
  if (!json_string_value(json_object_get(root, "name")) || !desc ||
      strlen(desc) < 40 || !strstr(desc, "dimension")) {
    fprintf(stderr, "%s: needs a name and a description of the format\n", file);
    rc = 1;
  }
  if (!dname || strcmp(dname, want_dtype) || !target ||
      strcmp(target, want_target)) {
    fprintf(stderr, "%s: dtype %s target %s, want %s %s\n", file,
            dname ? dname : "(none)", target ? target : "(none)", want_dtype,
            want_target);
    rc = 1;
  }
  int dtype = dname ? heron__dtype_parse(dname) : HERON_EINVAL;
  int seen[NSUITE] = {0};
  if (dtype < 0 || !json_is_array(tasks)) {
    fprintf(stderr, "%s: bad dtype or no tasks array\n", file);
    rc = 1;
  } else {
    size_t i;
    json_t *task;
    json_array_foreach(tasks, i, task) {
      rc |= check_task(file, i, task, dtype, seen);
    }
    if (json_array_size(tasks) != NSUITE) {
      fprintf(stderr, "%s: %zu tasks, want %d\n", file, json_array_size(tasks),
              NSUITE);
      rc = 1;
    }
  }
  for (int s = 0; s < NSUITE; s++)
    if (seen[s] != 1) {
      fprintf(stderr, "%s: op %s appears %d times\n", file, suite_ops[s],
              seen[s]);
      rc = 1;
    }
  json_decref(root);
  return rc;
}

TEST(cpu_suite_names_dims_builds_fp32_and_covers_the_nine_ops) {
  CHECK(check_suite("cpu.json", "fp32", "cpu") == 0);
}

TEST(dlboost_suite_names_dims_builds_int8_and_covers_the_nine_ops) {
  CHECK(check_suite("dlboost.json", "int8", "cpu") == 0);
}

TEST(cpu_bf16_suite_names_dims_builds_bf16_and_covers_the_nine_ops) {
  CHECK(check_suite("cpu-bf16.json", "bf16", "cpu") == 0);
}

TEST(tensorcore_suite_names_dims_builds_fp16_and_covers_the_nine_ops) {
  CHECK(check_suite("tensorcore.json", "fp16", "cuda") == 0);
}

/* The shape of task `op` in a suite, built; 0 on success. */
static int suite_op(const char *file, const char *opname, heron__op *op) {
  json_t *root = load_suite(file);
  if (!root)
    return 1;
  int rc = 1;
  size_t i;
  json_t *task;
  json_array_foreach(json_object_get(root, "tasks"), i, task) {
    const char *name = json_string_value(json_object_get(task, "op"));
    if (!name || strcmp(name, opname))
      continue;
    const heron__op_kind *k = heron__op_kind_find(opname);
    int64_t dims[HERON__MAX_SHAPE];
    for (int d = 0; d < k->ndims_max; d++) {
      json_t *v = json_object_get(json_object_get(task, "shape"), k->dims[d]);
      dims[d] = v ? json_integer_value(v) : k->defaults[d - k->ndims];
    }
    heron_error err = {0};
    rc = heron__op_build(opname, dims, k->ndims_max, HERON__FP32, op, &err);
  }
  json_decref(root);
  return rc;
}

TEST(suites_hold_heron_shapes_with_batch_16_on_tensor_cores_and_1_on_cpu) {
  heron__op tc, cpu;
  /* BMM [12,512,64,512] in the notes' order [batch,M,K,N]. */
  CHECK(suite_op("tensorcore.json", "bmm", &tc) == 0);
  CHECK(tc.shape[0] == 12 && tc.shape[1] == 512 && tc.shape[2] == 512 &&
        tc.shape[3] == 64);
  CHECK(tc.in[0].dims[2] == 64);
  /* SCAN [16,512,128] is [M,N,K]. */
  CHECK(suite_op("tensorcore.json", "scan", &tc) == 0);
  CHECK(tc.shape[0] == 16 && tc.shape[1] == 512 && tc.shape[2] == 128);
  static const char *const convs[] = {"c1d", "c2d", "c3d", "dil", "t2d"};
  for (int c = 0; c < 5; c++) {
    CHECK(suite_op("tensorcore.json", convs[c], &tc) == 0);
    CHECK(suite_op("cpu.json", convs[c], &cpu) == 0);
    CHECK_MSG(tc.shape[0] == 16 && cpu.shape[0] == 1, "%s", convs[c]);
    /* Apart from the batch, the CPU suite has the same cases. */
    CHECK_MSG(!memcmp(tc.shape + 1, cpu.shape + 1,
                      (size_t)(tc.nshape - 1) * sizeof tc.shape[0]),
              "%s", convs[c]);
  }
  CHECK(suite_op("tensorcore.json", "dil", &tc) == 0);
  CHECK(tc.shape[9] == 2 && tc.shape[8] == 1);
  /* C1D: 892 long, 512 -> 512 channels, kernel 3, pad 4. */
  CHECK(suite_op("tensorcore.json", "c1d", &tc) == 0);
  CHECK(tc.shape[1] == 892 && tc.shape[4] == 3 && tc.shape[6] == 4);
  /* T2D keeps the 56x56 size at stride 1, pad 1, 3x3. */
  CHECK(suite_op("tensorcore.json", "t2d", &tc) == 0);
  CHECK(tc.out.dims[2] == 56 && tc.out.dims[3] == 56);
}
