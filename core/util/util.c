/* core/util/util.c - string buffer, time, files and machine facts. */
#include "core/util/util.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void heron__buf_vprintf(heron__buf *b, const char *fmt, va_list ap) {
  if (b->failed)
    return;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    b->failed = 1;
    return;
  }
  if (b->len + (size_t)n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + (size_t)n + 1)
      cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
      b->failed = 1;
      return;
    }
    b->data = p;
    b->cap = cap;
  }
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void heron__buf_printf(heron__buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  heron__buf_vprintf(b, fmt, ap);
  va_end(ap);
}

void heron__buf_puts(heron__buf *b, const char *s) {
  heron__buf_printf(b, "%s", s);
}

char *heron__buf_take(heron__buf *b) {
  char *p = b->failed ? NULL : b->data;
  if (b->failed)
    free(b->data);
  else if (!p)
    p = calloc(1, 1);
  b->data = NULL;
  b->len = b->cap = 0;
  b->failed = 0;
  return p;
}

void heron__buf_free(heron__buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->failed = 0;
}

double heron__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double heron__cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void heron__iso_time(char *buf, size_t cap) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int heron__mkdirs(const char *path, heron_error *err) {
  char tmp[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof tmp)
    return heron_error_set(err, HERON_EINVAL, "bad folder path '%s'", path);
  memcpy(tmp, path, n + 1);
  for (char *p = tmp + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
      return heron_error_set(err, HERON_EIO, "cannot create folder %s: %s", tmp,
                             strerror(errno));
    *p = '/';
  }
  if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
    return heron_error_set(err, HERON_EIO, "cannot create folder %s: %s", tmp,
                           strerror(errno));
  struct stat st;
  if (stat(tmp, &st) != 0 || !S_ISDIR(st.st_mode))
    return heron_error_set(err, HERON_EIO, "%s exists and is not a folder",
                           tmp);
  return HERON_OK;
}

int heron__write_file(const char *path, const void *data, size_t len,
                      heron_error *err) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return heron_error_set(err, HERON_EIO, "cannot write %s: %s", path,
                           strerror(errno));
  size_t w = fwrite(data, 1, len, f);
  int bad = (w != len) | (fclose(f) != 0);
  if (bad)
    return heron_error_set(err, HERON_EIO, "cannot write %s: %s", path,
                           strerror(errno));
  return HERON_OK;
}

int heron__read_file(const char *path, char **data, size_t *len,
                     heron_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return heron_error_set(err, errno == ENOENT ? HERON_ENOTFOUND : HERON_EIO,
                           "cannot read %s: %s", path, strerror(errno));
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (n + 1 < cap)
      break;
    char *p = realloc(buf, cap * 2);
    if (!p) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = p;
    cap *= 2;
  }
  int ioerr = ferror(f);
  fclose(f);
  if (!buf)
    return heron_error_set(err, HERON_ENOMEM, "out of memory reading %s", path);
  if (ioerr) {
    free(buf);
    return heron_error_set(err, HERON_EIO, "cannot read %s", path);
  }
  buf[n] = '\0';
  *data = buf;
  if (len)
    *len = n;
  return HERON_OK;
}

void heron__rmtree(const char *path) {
  DIR *d = opendir(path);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
        continue;
      char sub[4096];
      snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
      struct stat st;
      if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
        heron__rmtree(sub);
      else
        unlink(sub);
    }
    closedir(d);
  }
  rmdir(path);
}

int heron__ncores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

int heron__par_threads(int64_t n, double work) {
  if (n <= 1)
    return 1;
  int64_t t = 0;
  const char *env = getenv("HERON_REF_THREADS");
  if (env && *env) {
    char *end;
    long long v = strtoll(env, &end, 10);
    if (*end == '\0' && v > 0)
      t = v > HERON__PAR_MAX_THREADS ? HERON__PAR_MAX_THREADS : v;
  }
  if (t == 0) {
    if (!(work >= HERON__PAR_MIN_WORK))
      return 1;
    t = heron__ncores();
    if (t > HERON__PAR_MAX_THREADS)
      t = HERON__PAR_MAX_THREADS;
  }
  return (int)(t < n ? t : n);
}

typedef struct par_chunk {
  heron__range_fn fn;
  void *ctx;
  int64_t lo, hi;
} par_chunk;

static void *par_run(void *arg) {
  par_chunk *c = arg;
  c->fn(c->ctx, c->lo, c->hi);
  return NULL;
}

void heron__par_for(int64_t n, double work, heron__range_fn fn, void *ctx) {
  if (n <= 0)
    return;
  int T = heron__par_threads(n, work);
  if (T <= 1) {
    fn(ctx, 0, n);
    return;
  }
  par_chunk chunk[HERON__PAR_MAX_THREADS];
  pthread_t tid[HERON__PAR_MAX_THREADS];
  for (int t = 0; t < T; t++) {
    chunk[t].fn = fn;
    chunk[t].ctx = ctx;
    /* n * t / T without overflow for any n below 2^63 / 64. */
    chunk[t].lo = n / T * t + n % T * t / T;
    chunk[t].hi = n / T * (t + 1) + n % T * (t + 1) / T;
  }
  /* Chunks 1.. go to new threads until one cannot be created; the caller
   * runs chunk 0 and every chunk from the first failure on. */
  int started = 1;
  while (started < T &&
         pthread_create(&tid[started], NULL, par_run, &chunk[started]) == 0)
    started++;
  par_run(&chunk[0]);
  for (int t = started; t < T; t++)
    par_run(&chunk[t]);
  for (int t = 1; t < started; t++)
    pthread_join(tid[t], NULL);
}

uint64_t heron__phys_mem(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return (pages > 0 && size > 0) ? (uint64_t)pages * (uint64_t)size : 0;
}

uint64_t heron__hash64(const void *data, size_t len, uint64_t h) {
  const unsigned char *p = data;
  if (h == 0)
    h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}
