/* tests/targets/amx/amx_test_util.h - what the amx tests share: building C
 * sources into one shared object with one compiler call, and running code in a
 * forked child whose stderr comes back (their scratch folder is
 * tests/targets/kernel_check.h's). */
#ifndef HERON_TESTS_AMX_UTIL_H
#define HERON_TESTS_AMX_UTIL_H

#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/measure/measure.h"
#include "core/targets/amx/amx_template.h"
#include "core/util/util.h"
#include "test.h"

/* Writes srcs[0..n) to dir/<stem><i>.c and builds them, with `cflags`, in
 * one compiler call into dir/<stem>.so (path in so[cap]).  The compiler's
 * messages are printed on failure; returns 0 or -1. */
static int amx_build(const char *dir, const char *stem, char *const *srcs,
                     int n, const char *cflags, char *so, size_t cap) {
  heron__buf cmd = {0};
  heron__buf_printf(&cmd, "cc %s -o '%s/%s.so'", cflags, dir, stem);
  for (int i = 0; i < n; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s%d.c", dir, stem, i);
    heron_error err = {0};
    if (heron__write_file(path, srcs[i], strlen(srcs[i]), &err) != HERON_OK) {
      fprintf(stderr, "%s\n", err.text);
      heron__buf_free(&cmd);
      return -1;
    }
    heron__buf_printf(&cmd, " '%s'", path);
  }
  heron__buf_printf(&cmd, " 2> '%s/%s.err'", dir, stem);
  snprintf(so, cap, "%s/%s.so", dir, stem);
  /* Through the build cache when HERON_BUILD_CACHE is set
   * (core/measure/measure.h): the key is the flags and every source in
   * order. */
  const char *cache = heron__build_cache_dir();
  heron__buf key = {0}, all = {0}, flags = {0};
  if (cache) {
    heron__buf_printf(&flags, "cc %s (%d sources)", cflags, n);
    for (int i = 0; i < n; i++)
      heron__buf_printf(&all, "/* source %d */\n%s", i, srcs[i]);
    if (all.failed || !all.data ||
        heron__build_cache_key(flags.data, all.data, all.len, &key) != 0)
      cache = NULL;
    else if (heron__build_cache_fetch(cache, &key, so)) {
      heron__buf_free(&key);
      heron__buf_free(&all);
      heron__buf_free(&flags);
      heron__buf_free(&cmd);
      return 0;
    }
  }
  int rc = system(cmd.data);
  heron__buf_free(&cmd);
  if (rc == 0 && cache)
    heron__build_cache_store(cache, &key, so);
  heron__buf_free(&key);
  heron__buf_free(&all);
  heron__buf_free(&flags);
  if (rc != 0) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s.err", dir, stem);
    char *log = NULL;
    size_t len = 0;
    heron_error err = {0};
    heron__read_file(path, &log, &len, &err);
    fprintf(stderr, "%s: cc failed:\n%.4000s\n", stem, log ? log : "");
    free(log);
    return -1;
  }
  return 0;
}

/* Runs fn(arg) in a forked child (alarm 60 s) whose stderr is captured in
 * err[cap]; returns the child's wait status, or -1. */
static int amx_run_child(void (*fn)(void *), void *arg, char *err, size_t cap) {
  int fds[2];
  if (pipe(fds) != 0)
    return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    alarm(60);
    fn(arg);
    _exit(0);
  }
  close(fds[1]);
  heron_test_drain(fds[0], err, cap);
  int status;
  if (waitpid(pid, &status, 0) != pid)
    return -1;
  return status;
}

/* Whether kernels of `kind` run natively here; the reason in why[cap]
 * when not. */
static int amx_native_here(int kind, char *why, size_t cap) {
  heron__amx_support s;
  heron__amx_probe(&s);
  return heron__amx_native_ok(&s, kind, why, cap);
}

#endif
