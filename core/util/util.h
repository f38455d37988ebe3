/* core/util/util.h - small internal helpers shared by the core modules:
 * a growable string buffer, wall-clock time, files and folders. */
#ifndef HERON_CORE_UTIL_H
#define HERON_CORE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "heron/status.h"

#define HERON__HIDDEN __attribute__((visibility("hidden")))

/* A growable, always NUL-terminated string. Zero-initialise before use.
 * On allocation failure `failed` is set and further appends do nothing. */
typedef struct heron__buf {
  char *data;
  size_t len;
  size_t cap;
  int failed;
} heron__buf;

void heron__buf_printf(heron__buf *b, const char *fmt, ...) HERON_PRINTF(2, 3);
void heron__buf_vprintf(heron__buf *b, const char *fmt, va_list ap);
void heron__buf_puts(heron__buf *b, const char *s);
/* Hands the string over (caller frees with free/heron_free) and resets b;
 * returns NULL if any append failed. */
char *heron__buf_take(heron__buf *b);
void heron__buf_free(heron__buf *b);

/* Monotonic seconds, for durations. */
double heron__now(void);
/* The current UTC time as ISO 8601 ("2026-11-22T10:00:00Z") into buf[32]. */
void heron__iso_time(char *buf, size_t cap);

/* Creates a folder and its parents (mode 0755); OK when it exists. */
int heron__mkdirs(const char *path, heron_error *err);
/* Writes `len` bytes to `path` (truncating); HERON_EIO with the reason. */
int heron__write_file(const char *path, const void *data, size_t len,
                      heron_error *err);
/* Reads a whole file into a malloc'ed NUL-terminated buffer. */
int heron__read_file(const char *path, char **data, size_t *len,
                     heron_error *err);
/* Removes a folder tree (best effort). */
void heron__rmtree(const char *path);

/* Number of online cores, at least 1. */
int heron__ncores(void);
/* Physical memory in bytes (0 when unknown). */
uint64_t heron__phys_mem(void);

/* 64-bit FNV-1a over bytes, for keys. */
uint64_t heron__hash64(const void *data, size_t len, uint64_t h);

#endif
