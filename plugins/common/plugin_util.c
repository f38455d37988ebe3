/* plugins/common/plugin_util.c - small helpers any shipped plugin may use
 * (plugin_util.h). */
#define _POSIX_C_SOURCE 200809L
#include "plugin_util.h"

#include <stdlib.h>
#include <time.h>

double plugin_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int plugin_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

uint64_t plugin_config_key(const heron_space *sp, const int64_t *cfg) {
  char buf[32];
  if (heron_space_key(sp, cfg, buf, sizeof buf) != HERON_OK)
    return 0;
  return strtoull(buf, NULL, 16);
}
