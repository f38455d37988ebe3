/* core/util/util.h - small internal helpers shared by the core modules:
 * a growable string buffer, wall-clock time, files and folders. */
#ifndef HERON_CORE_UTIL_H
#define HERON_CORE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "heron/status.h"

#define HERON__HIDDEN __attribute__((visibility("hidden")))

/* A buffer for a file path (PATH_MAX, 4096 bytes on Linux) and a little
 * more: a suffix or prefix (".state", ".1", "-I", "/kernel.c") or the few
 * words of a message naming it. */
#define HERON__PATH_BUF 4200

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
/* CPU seconds this process has used, all its threads together: a clock a
 * loaded machine does not stretch. */
double heron__cpu_now(void);
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

/* A range function of heron__par_for: handles the indices [lo, hi). */
typedef void (*heron__range_fn)(void *ctx, int64_t lo, int64_t hi);

/* Below this much work (multiply-adds) heron__par_for runs inline. */
#define HERON__PAR_MIN_WORK ((double)(1 << 26))
/* The most threads heron__par_for starts. */
#define HERON__PAR_MAX_THREADS 64

/* The number of threads heron__par_for uses for n indices and `work`
 * multiply-adds in all: 1 when n <= 1 or work < HERON__PAR_MIN_WORK, else
 * min(n, online cores, HERON__PAR_MAX_THREADS).  HERON_REF_THREADS=N (a
 * positive integer, read on every call) replaces the core count and the work
 * threshold: N threads, at most n and HERON__PAR_MAX_THREADS, whatever the
 * work (1 runs everything inline; tests use it on small shapes). */
int heron__par_threads(int64_t n, double work);

/* Runs fn over [0, n) split into heron__par_threads(n, work) contiguous
 * chunks, chunk t being [n*t/T, n*(t+1)/T), each on its own thread; the
 * calling thread runs chunk 0 and returns once every chunk is done.  The
 * threads are plain pthreads created and joined inside the call (no pool
 * outlives it, so a later fork() of the process is safe).  A chunk whose
 * thread cannot be created runs inline on the caller, so the call never
 * fails.  fn must write only what its own indices own: then the result does
 * not depend on T. */
void heron__par_for(int64_t n, double work, heron__range_fn fn, void *ctx);
/* Physical memory in bytes (0 when unknown). */
uint64_t heron__phys_mem(void);

/* 64-bit FNV-1a over bytes, for keys. */
uint64_t heron__hash64(const void *data, size_t len, uint64_t h);

#endif
