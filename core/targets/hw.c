/* core/targets/hw.c - hardware descriptions: detecting this CPU, and loading
 * JSON descriptions (configs/hw/NAME.json) strictly. */
#include "core/targets/hw.h"

#include <ctype.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/op/op.h"
#include "core/plugin/dirs.h"
#include "core/record/record.h"
#include "core/targets/target.h"
#include "core/util/util.h"

/* ---- Detection ------------------------------------------------------------
 */

/* Cache size of `level` (data or unified) from sysfs, where glibc's sysconf
 * answers 0 (some containers and non-Intel CPUs): the files read "48K". */
static int64_t sysfs_cache(int level) {
  for (int i = 0; i < 8; i++) {
    char path[96], buf[32];
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE *f = fopen(path, "r");
    if (!f)
      break;
    int lv = 0;
    int got = fscanf(f, "%d", &lv);
    fclose(f);
    if (got != 1 || lv != level)
      continue;
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    f = fopen(path, "r");
    if (!f)
      continue;
    got = fscanf(f, "%31s", buf);
    fclose(f);
    if (got != 1 || !strcmp(buf, "Instruction"))
      continue;
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    f = fopen(path, "r");
    if (!f)
      continue;
    long long v = 0;
    char unit = 0;
    got = fscanf(f, "%lld%c", &v, &unit);
    fclose(f);
    if (got < 1 || v <= 0)
      continue;
    if (unit == 'K')
      v *= 1024;
    else if (unit == 'M')
      v *= 1024 * 1024;
    return v;
  }
  return 0;
}

static int64_t cache_size(int level, int64_t fallback) {
  long v = -1;
#if defined(_SC_LEVEL1_DCACHE_SIZE)
  if (level == 1)
    v = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  else if (level == 2)
    v = sysconf(_SC_LEVEL2_CACHE_SIZE);
  else if (level == 3)
    v = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  if (v > 0)
    return v;
  int64_t s = sysfs_cache(level);
  return s > 0 ? s : fallback;
}

/* The CPU's marketing name from /proc/cpuinfo ("AMD EPYC 7763 ..."). */
static void cpu_model(char *buf, size_t cap) {
  snprintf(buf, cap, "unknown cpu");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0)
      continue;
    char *p = strchr(line, ':');
    if (!p)
      break;
    p++;
    while (*p == ' ' || *p == '\t')
      p++;
    p[strcspn(p, "\n")] = '\0';
    if (*p)
      snprintf(buf, cap, "%s", p);
    break;
  }
  fclose(f);
}

/* Instruction-set levels, lowest first, as HERON_CPU_ISA names them. */
enum {
  ISA_SSE,
  ISA_AVX2,
  ISA_AVX_VNNI,
  ISA_AVX512,
  ISA_AMX,
  ISA_NATIVE,
  ISA_UNKNOWN
};

/* The level HERON_CPU_ISA caps detection at: ISA_NATIVE when unset, empty
 * or "native", ISA_UNKNOWN for a value that names no level.  Case and
 * blanks around the word are forgiven; anything else is unknown. */
static int isa_cap(void) {
  const char *v = getenv("HERON_CPU_ISA");
  if (!v)
    return ISA_NATIVE;
  while (isspace((unsigned char)*v))
    v++;
  char word[16];
  size_t n = 0;
  while (*v && !isspace((unsigned char)*v)) {
    if (n + 1 >= sizeof word)
      return ISA_UNKNOWN;
    word[n++] = (char)tolower((unsigned char)*v++);
  }
  word[n] = '\0';
  while (isspace((unsigned char)*v))
    v++;
  if (*v)
    return ISA_UNKNOWN;
  static const struct {
    const char *name;
    int level;
  } names[] = {{"", ISA_NATIVE},        {"native", ISA_NATIVE},
               {"amx", ISA_AMX},        {"avx512", ISA_AVX512},
               {"avx512f", ISA_AVX512}, {"avxvnni", ISA_AVX_VNNI},
               {"avx2", ISA_AVX2},      {"sse", ISA_SSE}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(word, names[i].name))
      return names[i].level;
  return ISA_UNKNOWN;
}

/* The ISA flags of this CPU, capped at `cap` (an ISA_* level), and the
 * vector sizes that follow from them. */
static void detect_isa(heron__hw *hw, int cap) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  hw->has_fma = __builtin_cpu_supports("fma") != 0;
  hw->has_avx2 = __builtin_cpu_supports("avx2") != 0;
  hw->has_avx512 = __builtin_cpu_supports("avx512f") != 0;
  /* has_vnni is the AVX-512 form of VNNI; the VEX-encoded AVX-VNNI of client
   * CPUs, BF16 and AMX are read from cpuid leaf 7 directly, as not every
   * compiler's __builtin_cpu_supports knows them. */
  hw->has_vnni = hw->has_avx512 && __builtin_cpu_supports("avx512vnni") != 0;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    /* AMX needs the OS to enable the tile state in XCR0 (bits 17, 18). */
    unsigned lo = 0, hi = 0;
    int osxsave = 0;
    unsigned a1, b1, c1, d1;
    if (__get_cpuid(1, &a1, &b1, &c1, &d1) && (c1 >> 27 & 1u)) {
      __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      osxsave = (lo & 0x60000u) == 0x60000u;
    }
    hw->has_amx_tile = osxsave && (d >> 24 & 1u);
    hw->has_amx_int8 = hw->has_amx_tile && (d >> 25 & 1u);
    hw->has_amx_bf16 = hw->has_amx_tile && (d >> 22 & 1u);
    unsigned max_sub = a;
    if (max_sub >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d)) {
      hw->has_avx_vnni = hw->has_avx2 && (a >> 4 & 1u);
      hw->has_avx512_bf16 = hw->has_avx512 && (a >> 5 & 1u);
    }
  }
#endif
  if (cap < ISA_AMX)
    hw->has_amx_tile = hw->has_amx_int8 = hw->has_amx_bf16 = 0;
  if (cap < ISA_AVX512)
    hw->has_avx512 = hw->has_vnni = hw->has_avx512_bf16 = 0;
  if (cap < ISA_AVX_VNNI)
    hw->has_avx_vnni = 0;
  /* AVX2-class CPUs (Haswell, Zen) all have FMA; below them neither. */
  if (cap < ISA_AVX2)
    hw->has_avx2 = hw->has_fma = 0;
  hw->vector_bytes = hw->has_avx512 ? 64 : hw->has_avx2 ? 32 : 16;
  hw->vector_regs = hw->has_avx512 ? 32 : 16;
}

/* The ISA level of detected flags, for the name. */
static int isa_level(const heron__hw *hw) {
  return hw->has_amx_tile   ? ISA_AMX
         : hw->has_avx512   ? ISA_AVX512
         : hw->has_avx_vnni ? ISA_AVX_VNNI
         : hw->has_avx2     ? ISA_AVX2
                            : ISA_SSE;
}

static const char *isa_word(int level) {
  return level == ISA_AMX        ? "amx"
         : level == ISA_AVX512   ? "avx512"
         : level == ISA_AVX_VNNI ? "avxvnni"
         : level == ISA_AVX2     ? "avx2"
                                 : "sse";
}

void heron__hw_detect_cpu(heron__hw *hw) {
  memset(hw, 0, sizeof *hw);
  snprintf(hw->target, sizeof hw->target, "cpu");
  hw->cores = heron__ncores();
  hw->l1_bytes = cache_size(1, 32 * 1024);
  hw->l2_bytes = cache_size(2, 1024 * 1024);
  /* Without a known L3 the L2 is the last level the tiling can count on. */
  hw->l3_bytes = cache_size(3, hw->l2_bytes);
  int cap = isa_cap();
  heron__hw native;
  memset(&native, 0, sizeof native);
  detect_isa(&native, ISA_NATIVE);
  detect_isa(hw, cap == ISA_UNKNOWN ? ISA_NATIVE : cap);
  /* The ISA tag, saying when HERON_CPU_ISA lowered it or was not
   * understood, so that a run's log shows which machine it tuned for. */
  char tag[48];
  int level = isa_level(hw);
  snprintf(tag, sizeof tag, "%s%s", isa_word(level),
           cap == ISA_UNKNOWN           ? ", HERON_CPU_ISA ignored"
           : level < isa_level(&native) ? " by HERON_CPU_ISA"
                                        : "");
  char model[128];
  cpu_model(model, sizeof model);
  /* The model string is truncated to leave room for the ISA tag. */
  int room = (int)sizeof hw->name - 1 - (int)strlen("this machine (, )") -
             (int)strlen(tag);
  char full[256];
  snprintf(full, sizeof full, "this machine (%.*s, %s)", room > 8 ? room : 8,
           model, tag);
  size_t len = strlen(full);
  if (len >= sizeof hw->name)
    len = sizeof hw->name - 1;
  memcpy(hw->name, full, len);
  hw->name[len] = '\0';
}

/* The feature names of one description's needs that `have` lacks, joined
 * by ", " into missing[cap]; returns how many. */
static int lacks(const heron__hw *need, const heron__hw *have, int dtype,
                 char *missing, size_t cap) {
  /* int8 and bf16 kernels use the dot-product extension the template picks
   * from the description (core/targets/cpu/rules_dot.c, heron__cpu_dot_setup).
   */
  int vnni = dtype == HERON__INT8 && need->has_avx512 && need->has_vnni;
  int avx_vnni =
      dtype == HERON__INT8 && !vnni && need->has_avx2 && need->has_avx_vnni;
  int bf16 = dtype == HERON__BF16 && need->has_avx512 && need->has_avx512_bf16;
  /* The template's flags for an AVX-512 description also enable AVX2 and
   * FMA (its vec-8 micro-kernel is _mm256_fmadd_ps). */
  const struct {
    const char *name;
    int needed, present;
  } feats[] = {
      {"avx512f", need->has_avx512, have->has_avx512},
      {"avx2", need->has_avx2 || need->has_avx512, have->has_avx2},
      {"fma", need->has_fma || need->has_avx512, have->has_fma},
      {"avx512vnni", vnni, have->has_vnni},
      {"avxvnni", avx_vnni, have->has_avx_vnni},
      {"avx512bf16", bf16, have->has_avx512_bf16},
  };
  int n = 0;
  size_t len = 0;
  for (size_t i = 0; i < sizeof feats / sizeof feats[0]; i++) {
    if (!feats[i].needed || feats[i].present)
      continue;
    if (missing && cap > len) {
      int w = snprintf(missing + len, cap - len, "%s%s", n ? ", " : "",
                       feats[i].name);
      len += w > 0 ? (size_t)w : 0;
    }
    n++;
  }
  return n;
}

int heron__hw_cpu_lacks(const heron__hw *hw, char *missing, size_t cap) {
  return heron__hw_cpu_lacks_for(hw, HERON__FP32, missing, cap);
}

int heron__hw_cpu_lacks_for(const heron__hw *hw, int dtype, char *missing,
                            size_t cap) {
  if (missing && cap)
    missing[0] = '\0';
  const heron__target *tg = hw ? heron__target_find(hw->target) : NULL;
  if (!hw || (tg && (tg->flags & HERON__TARGET_GPU)))
    return 0;
  int cap_level = isa_cap();
  heron__hw here;
  memset(&here, 0, sizeof here);
  detect_isa(&here, cap_level == ISA_UNKNOWN ? ISA_NATIVE : cap_level);
  return lacks(hw, &here, dtype, missing, cap) > 0;
}

/* ---- Loading --------------------------------------------------------------
 */

/* How a JSON key maps onto a field of heron__hw. */
typedef enum { K_STR, K_INT, K_I64, K_BOOL, K_DIM3 } key_type;

typedef struct key_desc {
  const char *key;
  key_type type;
  size_t offset;
  size_t size; /* for strings: the buffer size */
} key_desc;

#define KEY(name, type, field)                                                 \
  { name, type, offsetof(heron__hw, field), sizeof(((heron__hw *)0)->field) }

static const key_desc keys[] = {
    KEY("name", K_STR, name),
    KEY("target", K_STR, target),
    KEY("cores", K_INT, cores),
    KEY("l1_bytes", K_I64, l1_bytes),
    KEY("l2_bytes", K_I64, l2_bytes),
    KEY("l3_bytes", K_I64, l3_bytes),
    KEY("vector_bytes", K_INT, vector_bytes),
    KEY("vector_regs", K_INT, vector_regs),
    KEY("has_fma", K_BOOL, has_fma),
    KEY("has_avx2", K_BOOL, has_avx2),
    KEY("has_avx512", K_BOOL, has_avx512),
    KEY("has_vnni", K_BOOL, has_vnni),
    KEY("has_avx_vnni", K_BOOL, has_avx_vnni),
    KEY("has_avx512_bf16", K_BOOL, has_avx512_bf16),
    KEY("has_amx_tile", K_BOOL, has_amx_tile),
    KEY("has_amx_int8", K_BOOL, has_amx_int8),
    KEY("has_amx_bf16", K_BOOL, has_amx_bf16),
    KEY("max_padded_work_pct", K_INT, max_padded_work_pct),
    KEY("sm", K_INT, sm),
    KEY("smem_per_block", K_I64, smem_per_block),
    KEY("smem_per_block_optin", K_I64, smem_per_block_optin),
    KEY("max_threads_per_block", K_INT, max_threads_per_block),
    KEY("max_threads_dim", K_DIM3, max_threads_dim),
    KEY("warp_size", K_INT, warp_size),
    KEY("sm_count", K_INT, sm_count),
    KEY("regs_per_block", K_INT, regs_per_block),
};
enum { NKEYS = sizeof keys / sizeof keys[0] };

/* Stores one JSON value into its field, checking type and range.  Every
 * number in a description is a count or a size, so all must be positive. */
static int set_key(const char *path, const key_desc *k, json_t *v,
                   heron__hw *hw, heron_error *err) {
  char *field = (char *)hw + k->offset;
  switch (k->type) {
  case K_STR: {
    if (!json_is_string(v))
      return heron_error_set(err, HERON_EPARSE, "%s: key '%s' must be a string",
                             path, k->key);
    const char *s = json_string_value(v);
    if (strlen(s) + 1 > k->size || !*s)
      return heron_error_set(err, HERON_EPARSE,
                             "%s: key '%s' must have 1 to %zu characters", path,
                             k->key, k->size - 1);
    memcpy(field, s, strlen(s) + 1);
    return HERON_OK;
  }
  case K_BOOL:
    if (!json_is_boolean(v))
      return heron_error_set(err, HERON_EPARSE,
                             "%s: key '%s' must be true or false", path,
                             k->key);
    *(int *)field = json_is_true(v);
    return HERON_OK;
  case K_INT:
  case K_I64: {
    json_int_t limit = k->type == K_INT ? 2147483647 : INT64_MAX;
    if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
        json_integer_value(v) > limit)
      return heron_error_set(err, HERON_EPARSE,
                             "%s: key '%s' must be a positive integer", path,
                             k->key);
    if (k->type == K_INT)
      *(int *)field = (int)json_integer_value(v);
    else
      *(int64_t *)field = (int64_t)json_integer_value(v);
    return HERON_OK;
  }
  case K_DIM3: {
    int ok = json_is_array(v) && json_array_size(v) == 3;
    for (size_t i = 0; ok && i < 3; i++) {
      json_t *e = json_array_get(v, i);
      ok = json_is_integer(e) && json_integer_value(e) > 0 &&
           json_integer_value(e) <= 2147483647;
    }
    if (!ok)
      return heron_error_set(err, HERON_EPARSE,
                             "%s: key '%s' must be an array of 3 positive "
                             "integers",
                             path, k->key);
    for (size_t i = 0; i < 3; i++)
      ((int *)field)[i] = (int)json_integer_value(json_array_get(v, i));
    return HERON_OK;
  }
  }
  return HERON_EINTERNAL;
}

/* A description for the cuda target is useless without the limits the
 * constraint rules bound knobs with, so they are required, not defaulted. */
static int check_cuda(const char *path, const heron__hw *hw, heron_error *err) {
  static const char *const need[] = {
      "sm",        "smem_per_block", "max_threads_per_block", "max_threads_dim",
      "warp_size", "sm_count",       "regs_per_block"};
  int64_t have[] = {hw->sm,
                    hw->smem_per_block,
                    hw->max_threads_per_block,
                    hw->max_threads_dim[0],
                    hw->warp_size,
                    hw->sm_count,
                    hw->regs_per_block};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
    if (have[i] <= 0)
      return heron_error_set(err, HERON_EPARSE,
                             "%s: a cuda description needs key '%s'", path,
                             need[i]);
  return HERON_OK;
}

static int load_file(const char *path, heron__hw *hw, heron_error *err) {
  /* A FIFO would block the read forever; a folder gives a parse error that
   * names no cause. */
  int rc0 = heron__input_check(path, "hardware description", err);
  if (rc0 != HERON_OK)
    return rc0;
  json_error_t jerr;
  json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
  if (!root)
    return heron_error_set(err, HERON_EPARSE, "%s:%d: %s", path, jerr.line,
                           jerr.text);
  int rc = HERON_OK;
  heron__hw tmp = *hw;
  if (!json_is_object(root))
    rc = heron_error_set(err, HERON_EPARSE,
                         "%s: a hardware description is a JSON object", path);
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
    if (rc)
      break;
    const key_desc *k = NULL;
    for (int i = 0; i < NKEYS && !k; i++)
      if (!strcmp(keys[i].key, key))
        k = &keys[i];
    if (!k) {
      rc =
          heron_error_set(err, HERON_EPARSE, "%s: unknown key '%s'", path, key);
      break;
    }
    rc = set_key(path, k, v, &tmp, err);
  }
  const heron__target *tg = heron__target_find(tmp.target);
  if (!rc && !(tg && (tg->flags & HERON__TARGET_HW_FILE))) {
    char names[64];
    heron__target_names(HERON__TARGET_HW_FILE, 0, ", ", " or ", "\"", names,
                        sizeof names);
    rc = heron_error_set(err, HERON_EPARSE,
                         "%s: key 'target' must be %s, not \"%s\"", path, names,
                         tmp.target);
  }
  if (!rc && (tg->flags & HERON__TARGET_GPU))
    rc = check_cuda(path, &tmp, err);
  json_decref(root);
  /* *hw changes only when the whole file is good. */
  if (!rc)
    *hw = tmp;
  return rc;
}

static int is_file(const char *path) { return access(path, R_OK) == 0; }

/* Keys a file leaves out keep the values already in *hw: callers detect this
 * CPU first (as heron_task_create does), so a GPU description need not repeat
 * the host's caches and a CPU description may override just a few values. */
int heron__hw_load(const char *name_or_path, heron__hw *hw, heron_error *err) {
  if (!name_or_path || !*name_or_path)
    return heron_error_set(err, HERON_EINVAL, "hw: no description named");
  size_t len = strlen(name_or_path);
  if (strchr(name_or_path, '/') ||
      (len > 5 && !strcmp(name_or_path + len - 5, ".json"))) {
    if (!is_file(name_or_path))
      return heron_error_set(err, HERON_ENOTFOUND,
                             "hw: cannot read description file %s",
                             name_or_path);
    return load_file(name_or_path, hw, err);
  }
  /* A bare name: configs/hw of the data folder that belongs to this
   * libheron, the source tree's for a build tree (so it always sees the
   * descriptions it was built with) and the installed copy otherwise,
   * wherever the install has been moved since. */
  heron__dirs d;
  int rc = heron__dirs_find(&d, err);
  if (rc != HERON_OK)
    return rc;
  char path[HERON__DIR_MAX + 256];
  snprintf(path, sizeof path, "%s/hw/%s.json", d.configs, name_or_path);
  if (is_file(path))
    return load_file(path, hw, err);
  return heron_error_set(err, HERON_ENOTFOUND,
                         "hw: no description '%s' in %s/hw", name_or_path,
                         d.configs);
}
