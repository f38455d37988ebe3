/* tests/targets/hw_load.c - loading hardware descriptions from JSON: every
 * shipped file loads with its real limits, and malformed files are refused
 * with a message naming the problem. */
#include <dirent.h>
#include <unistd.h>

#include "core/targets/hw.h"
#include "test.h"

/* Writes `json` to a fresh temporary .json file; the path goes to path[64]. */
static int write_temp(const char *json, char *path) {
  snprintf(path, 64, "/tmp/heron-hw-XXXXXX.json");
  int fd = mkstemps(path, 5);
  if (fd < 0)
    return -1;
  size_t len = strlen(json);
  int ok = write(fd, json, len) == (ssize_t)len;
  close(fd);
  return ok ? 0 : -1;
}

/* Loads `json_` over a detected description; expects `code_` and `needle_`, and
 * that a failed load leaves the description untouched. */
#define CHECK_LOAD_FAILS(json_, code_, needle_)                                \
  do {                                                                         \
    char p_[64];                                                               \
    CHECK(write_temp(json_, p_) == 0);                                         \
    heron__hw hw_, before_;                                                    \
    heron__hw_detect_cpu(&hw_);                                                \
    before_ = hw_;                                                             \
    heron_error e_ = {0};                                                      \
    int rc_ = heron__hw_load(p_, &hw_, &e_);                                   \
    unlink(p_);                                                                \
    CHECK_MSG(rc_ == (code_), "got %s (%s)", heron_err_name(rc_), e_.text);    \
    CHECK_STR_CONTAINS(e_.text, needle_);                                      \
    CHECK(!memcmp(&hw_, &before_, sizeof hw_));                                \
  } while (0)

TEST(load_every_shipped_description_by_name) {
  DIR *d = opendir(HERON_SOURCE_DIR "/configs/hw");
  CHECK(d != NULL);
  int loaded = 0, failed = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
      continue;
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(len - 5), e->d_name);
    heron__hw hw;
    heron__hw_detect_cpu(&hw);
    heron_error err = {0};
    if (heron__hw_load(name, &hw, &err) != HERON_OK) {
      fprintf(stderr, "%s: %s\n", name, err.text);
      failed++;
    } else if (!strcmp(hw.target, "cuda") &&
               (hw.warp_size != 32 || hw.max_threads_per_block != 1024 ||
                hw.smem_per_block != 49152 ||
                hw.smem_per_block_optin < hw.smem_per_block)) {
      fprintf(stderr, "%s: implausible cuda limits\n", name);
      failed++;
    }
    loaded++;
  }
  closedir(d);
  CHECK_EQ(failed, 0);
  CHECK(loaded >= 5);
}

TEST(rtx3080_description_has_the_papers_limits) {
  heron__hw hw;
  heron__hw_detect_cpu(&hw);
  int cores = hw.cores;
  heron_error err = {0};
  CHECK_OK(heron__hw_load("rtx3080", &hw, &err), &err);
  CHECK(!strcmp(hw.target, "cuda"));
  CHECK_STR_CONTAINS(hw.name, "3080");
  CHECK_EQ(hw.sm, 86);
  CHECK_EQ(hw.sm_count, 68);
  CHECK_EQ(hw.smem_per_block, 49152);
  CHECK_EQ(hw.smem_per_block_optin, 101376);
  CHECK_EQ(hw.max_threads_per_block, 1024);
  CHECK(hw.max_threads_dim[0] == 1024 && hw.max_threads_dim[1] == 1024 &&
        hw.max_threads_dim[2] == 64);
  CHECK_EQ(hw.regs_per_block, 65536);
  /* Keys the file leaves out keep the detected values. */
  CHECK_EQ(hw.cores, cores);
}

TEST(datacenter_gpu_descriptions_have_their_sm_and_optin_limits) {
  static const struct {
    const char *name;
    int sm, count;
    int64_t optin;
  } want[] = {{"a100", 80, 108, 166912},
              {"h100", 90, 132, 232448},
              {"h200", 90, 132, 232448}};
  for (int i = 0; i < 3; i++) {
    heron__hw hw;
    heron__hw_detect_cpu(&hw);
    heron_error err = {0};
    CHECK_OK(heron__hw_load(want[i].name, &hw, &err), &err);
    CHECK_EQ(hw.sm, want[i].sm);
    CHECK_EQ(hw.sm_count, want[i].count);
    CHECK_EQ(hw.smem_per_block_optin, want[i].optin);
  }
}

TEST(load_cpu_description_by_path) {
  heron__hw hw;
  heron__hw_detect_cpu(&hw);
  heron_error err = {0};
  CHECK_OK(
      heron__hw_load(HERON_SOURCE_DIR "/configs/hw/cpu-avx512.json", &hw, &err),
      &err);
  CHECK(!strcmp(hw.target, "cpu"));
  CHECK_EQ(hw.cores, 40);
  CHECK_EQ(hw.vector_bytes, 64);
  CHECK(hw.has_avx512 && hw.has_vnni && hw.has_fma);
}

TEST(load_rejects_unknown_key_naming_it) {
  CHECK_LOAD_FAILS("{\"target\": \"cpu\", \"l4_bytes\": 4}", HERON_EPARSE,
                   "unknown key 'l4_bytes'");
}

TEST(load_rejects_wrong_types_naming_the_key) {
  CHECK_LOAD_FAILS("{\"cores\": \"many\"}", HERON_EPARSE,
                   "key 'cores' must be a positive integer");
  CHECK_LOAD_FAILS("{\"cores\": 2.5}", HERON_EPARSE, "key 'cores'");
  CHECK_LOAD_FAILS("{\"cores\": 0}", HERON_EPARSE, "key 'cores'");
  CHECK_LOAD_FAILS("{\"has_fma\": 1}", HERON_EPARSE,
                   "key 'has_fma' must be true or false");
  CHECK_LOAD_FAILS("{\"name\": 7}", HERON_EPARSE,
                   "key 'name' must be a string");
  CHECK_LOAD_FAILS("{\"max_threads_dim\": [1024, 1024]}", HERON_EPARSE,
                   "key 'max_threads_dim' must be an array of 3");
  CHECK_LOAD_FAILS("{\"l2_bytes\": true}", HERON_EPARSE, "key 'l2_bytes'");
}

TEST(load_rejects_bad_target_and_incomplete_cuda_description) {
  CHECK_LOAD_FAILS("{\"target\": \"tpu\"}", HERON_EPARSE,
                   "key 'target' must be \"cpu\" or \"cuda\"");
  CHECK_LOAD_FAILS("{\"target\": \"cuda\", \"sm\": 80}", HERON_EPARSE,
                   "needs key 'smem_per_block'");
}

TEST(load_rejects_malformed_json_and_non_objects) {
  CHECK_LOAD_FAILS("{\"cores\": 4,", HERON_EPARSE, "heron-hw-");
  CHECK_LOAD_FAILS("[1, 2]", HERON_EPARSE, "is a JSON object");
  CHECK_LOAD_FAILS("{\"cores\": 4, \"cores\": 5}", HERON_EPARSE, "duplicate");
}

TEST(load_of_missing_description_is_notfound) {
  heron__hw hw;
  heron__hw_detect_cpu(&hw);
  heron_error err = {0};
  CHECK_EQ(heron__hw_load("no-such-gpu", &hw, &err), HERON_ENOTFOUND);
  CHECK_STR_CONTAINS(err.text, "no-such-gpu");
  heron_error e2 = {0};
  CHECK_EQ(heron__hw_load("/nonexistent/x.json", &hw, &e2), HERON_ENOTFOUND);
  CHECK_STR_CONTAINS(e2.text, "/nonexistent/x.json");
}
