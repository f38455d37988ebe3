/* core/measure/cache.c - the build cache (HERON_BUILD_CACHE, measure.h).
 *
 * An entry is one file, <folder>/<16 hex digits>.hbc, written to a
 * temporary name and renamed into place (so a reader sees a whole entry or
 * none, and builds of many threads and processes may share the folder):
 *
 *   "HERONBC1\n" <key length in decimal> "\n" <key> <artifact bytes>
 *
 * The hex digits are a hash of the key; the key itself is compared byte
 * for byte on every fetch, so two keys with one hash only cost a compile.
 * The key holds everything a host compile's result depends on besides its
 * arguments' file names: the compiler (the file its first word names, with
 * size, modification time and inode, so an upgraded compiler misses), the
 * command's words and flags, the environment variables GCC reads for
 * include and program paths, the CPU (model and flags, for -march=native),
 * and the source text. */
#include "core/measure/measure.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util/util.h"

#define MAGIC "HERONBC1\n"
/* Larger entries (an artifact this big is no kernel) are not kept. */
#define MAX_ENTRY ((size_t)64 << 20)

const char *heron__build_cache_dir(void) {
  const char *d = getenv("HERON_BUILD_CACHE");
  return d && *d ? d : NULL;
}

/* ---- The key ------------------------------------------------------------ */

static char cpu_id[4096];
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

/* The first "model name" and "flags" lines of /proc/cpuinfo. */
static void read_cpu_id(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return;
  char line[8192];
  int have_model = 0, have_flags = 0;
  size_t used = 0;
  while ((!have_model || !have_flags) && fgets(line, sizeof line, f)) {
    int *have = NULL;
    if (strncmp(line, "model name", 10) == 0)
      have = &have_model;
    else if (strncmp(line, "flags", 5) == 0)
      have = &have_flags;
    if (!have || *have)
      continue;
    *have = 1;
    int n = snprintf(cpu_id + used, sizeof cpu_id - used, "%s", line);
    if (n > 0)
      used += (size_t)n < sizeof cpu_id - used ? (size_t)n
                                               : sizeof cpu_id - used - 1;
  }
  fclose(f);
}

/* Finds the program `name` as posix_spawnp would (PATH when it has no
 * slash) and stats it; 0 when found. */
static int find_program(const char *name, char *path, size_t cap,
                        struct stat *st) {
  if (strchr(name, '/')) {
    snprintf(path, cap, "%s", name);
    return stat(path, st);
  }
  const char *p = getenv("PATH");
  if (!p || !*p)
    p = "/usr/local/bin:/usr/bin:/bin";
  while (*p) {
    size_t n = strcspn(p, ":");
    int w = snprintf(path, cap, "%.*s/%s", (int)n, n ? p : ".", name);
    if (w > 0 && (size_t)w < cap && stat(path, st) == 0 &&
        S_ISREG(st->st_mode) && access(path, X_OK) == 0)
      return 0;
    p += n;
    if (*p == ':')
      p++;
  }
  return -1;
}

int heron__build_cache_key(const char *command, const char *src, size_t len,
                           heron__buf *key) {
  char first[256];
  size_t n = strcspn(command + strspn(command, " \t"), " \t");
  if (n == 0 || n >= sizeof first)
    return -1;
  memcpy(first, command + strspn(command, " \t"), n);
  first[n] = 0;
  char path[1024];
  struct stat st;
  if (find_program(first, path, sizeof path, &st) != 0)
    return -1;
  pthread_once(&cpu_once, read_cpu_id);
  heron__buf_printf(key,
                    "compiler: %s size %lld mtime %lld.%09ld inode %llu:%llu\n"
                    "command: %s\n",
                    path, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                    st.st_mtim.tv_nsec, (unsigned long long)st.st_dev,
                    (unsigned long long)st.st_ino, command);
  static const char *const vars[] = {"CPATH",           "C_INCLUDE_PATH",
                                     "GCC_EXEC_PREFIX", "COMPILER_PATH",
                                     "LIBRARY_PATH",    "SOURCE_DATE_EPOCH"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v)
      heron__buf_printf(key, "env %s=%s\n", vars[i], v);
  }
  heron__buf_printf(key, "cpu: %s", cpu_id);
  heron__buf_printf(key, "source %zu:\n", len);
  if (!key->failed && len) {
    size_t need = key->len + len + 1;
    if (need > key->cap) {
      char *d = realloc(key->data, need);
      if (!d) {
        key->failed = 1;
        return -1;
      }
      key->data = d;
      key->cap = need;
    }
    memcpy(key->data + key->len, src, len);
    key->len += len;
    key->data[key->len] = 0;
  }
  return key->failed ? -1 : 0;
}

static void entry_path(const char *dir, const heron__buf *key, char *out,
                       size_t cap) {
  snprintf(out, cap, "%s/%016llx.hbc", dir,
           (unsigned long long)heron__hash64(key->data, key->len, 0));
}

/* ---- Fetch and store ---------------------------------------------------- */

static int write_whole(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int heron__build_cache_fetch(const char *dir, const heron__buf *key,
                             const char *out) {
  char path[1100];
  entry_path(dir, key, path, sizeof path);
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
      (size_t)st.st_size > MAX_ENTRY)
    return 0;
  char *data = NULL;
  size_t len = 0;
  heron_error err = {0};
  if (heron__read_file(path, &data, &len, &err) != HERON_OK)
    return 0;
  int hit = 0;
  size_t m = sizeof MAGIC - 1;
  char *end = NULL;
  if (len > m && memcmp(data, MAGIC, m) == 0) {
    errno = 0;
    unsigned long long klen = strtoull(data + m, &end, 10);
    size_t at = end ? (size_t)(end - data) + 1 : len;
    if (errno == 0 && end && *end == '\n' && klen == key->len &&
        at + klen < len && memcmp(data + at, key->data, klen) == 0) {
      size_t art = at + (size_t)klen;
      unlink(out);
      int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
      if (fd >= 0) {
        hit = write_whole(fd, data + art, len - art) == 0;
        if (close(fd) != 0)
          hit = 0;
        if (!hit)
          unlink(out);
      }
    }
  }
  free(data);
  return hit;
}

void heron__build_cache_store(const char *dir, const heron__buf *key,
                              const char *artifact) {
  char *art = NULL;
  size_t alen = 0;
  heron_error err = {0};
  if (heron__read_file(artifact, &art, &alen, &err) != HERON_OK)
    return;
  if (alen == 0 || alen + key->len > MAX_ENTRY ||
      heron__mkdirs(dir, &err) != HERON_OK) {
    free(art);
    return;
  }
  static unsigned counter;
  char tmp[1100], path[1100], head[64];
  snprintf(tmp, sizeof tmp, "%s/.tmp-%ld-%lx-%u.hbc", dir, (long)getpid(),
           (unsigned long)pthread_self(), __atomic_add_fetch(&counter, 1, 0));
  entry_path(dir, key, path, sizeof path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0) {
    int n = snprintf(head, sizeof head, "%s%zu\n", MAGIC, key->len);
    int ok = write_whole(fd, head, (size_t)n) == 0 &&
             write_whole(fd, key->data, key->len) == 0 &&
             write_whole(fd, art, alen) == 0;
    if (close(fd) != 0)
      ok = 0;
    if (!ok || rename(tmp, path) != 0)
      unlink(tmp);
  }
  free(art);
}
