/* tests/cli/lib/check_threads.c - tlib_set_num_threads, checked from
 * inside the kernels (lib_builds_links_and_serves_every_tuned_shape.sh
 * builds it against the static and the shared library): every parallel
 * region a kernel opens must run on as many threads as the setting says,
 * or as the caller's OpenMP setting when it is 0, with the results equal
 * to the reference and the caller's OpenMP setting as it was after the
 * call; a negative count is refused.  Then 8 threads call the kernels at
 * once, each with its own OpenMP setting, under a count set for all.
 *
 * How many threads ran a region is seen here: this program defines
 * GOMP_parallel, the libgomp call gcc makes for every `#pragma omp
 * parallel`, so the kernels' calls come here (the executable's definition
 * comes first, for the static and the shared library alike); it counts
 * the threads that enter the region's body, then passes the call on to
 * libgomp's.  A library built by another compiler than gcc makes no such
 * call: the program then says so and fails.
 *
 * Prints "ok" and exits 0, or names the first mismatch and exits 1. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "tlib.h"

/* ---- The hook ------------------------------------------------------------ */

typedef void (*region_fn)(void *);
typedef void (*gomp_parallel_fn)(region_fn, void *, unsigned, unsigned);

typedef struct region {
  region_fn fn;
  void *data;
  int entered; /* the threads that ran the body */
} region;

/* The regions the calling thread opened since its last reset, and the
 * fewest and most threads that ran one. */
static _Thread_local int regions, fewest, most;

static void body(void *arg) {
  region *r = arg;
  __atomic_add_fetch(&r->entered, 1, __ATOMIC_RELAXED);
  r->fn(r->data);
}

void GOMP_parallel(region_fn fn, void *data, unsigned num_threads,
                   unsigned flags) {
  static gomp_parallel_fn next;
  gomp_parallel_fn f = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
  if (!f) {
    f = (gomp_parallel_fn)dlsym(RTLD_NEXT, "GOMP_parallel");
    if (!f) {
      fprintf(stderr, "FAIL: no GOMP_parallel after this program's\n");
      abort();
    }
    __atomic_store_n(&next, f, __ATOMIC_RELEASE);
  }
  region r = {fn, data, 0};
  f(body, &r, num_threads, flags);
  /* The team has joined: every thread's increment is seen. */
  int n = __atomic_load_n(&r.entered, __ATOMIC_RELAXED);
  fewest = regions && fewest < n ? fewest : n;
  most = regions && most > n ? most : n;
  regions++;
}

/* ---- The checks ---------------------------------------------------------- */

enum { GM = 33, GN = 17, GK = 9 }; /* gemm of suite.json */
enum { VM = 31, VK = 20 };         /* gemv */

typedef struct inputs {
  float *A, *B, *C_ref, *VA, *vx, *vy_ref;
} inputs;

/* Calls the fp32 GEMM and GEMV, checks their results and that every
 * region they opened ran on `want` threads; `what` names the case. */
static void run(const inputs *in, int want, const char *what) {
  float C[GM * GN], y[VM];
  regions = 0;
  int rc = tlib_sgemm(GM, GN, GK, in->A, in->B, C);
  CHECK(rc == tlib_OK, "%s: tlib_sgemm: %s", what, tlib_strerror(rc));
  CHECK(check_mismatch(C, in->C_ref, GM * GN) < 0, "%s: sgemm result", what);
  CHECK(regions > 0,
        "%s: tlib_sgemm's kernel opened no parallel region through "
        "GOMP_parallel (a library built by gcc with -fopenmp does)",
        what);
  int r0 = regions;
  rc = tlib_sgemv(VM, VK, in->VA, in->vx, y);
  CHECK(rc == tlib_OK, "%s: tlib_sgemv: %s", what, tlib_strerror(rc));
  CHECK(check_mismatch(y, in->vy_ref, VM) < 0, "%s: sgemv result", what);
  CHECK(regions > r0, "%s: tlib_sgemv's kernel opened no parallel region",
        what);
  CHECK(fewest == want && most == want,
        "%s: the kernels' %d regions ran on %d to %d threads, want %d", what,
        regions, fewest, most, want);
}

static inputs in;

/* One of 8 threads at once: its own OpenMP setting (1 + its index % 2)
 * must not matter under the count set for all (3). */
static void *concurrent(void *arg) {
  int idx = (int)(size_t)arg;
  omp_set_num_threads(1 + idx % 2);
  for (int r = 0; r < 5; r++)
    run(&in, 3, "8 threads, count 3");
  CHECK(omp_get_max_threads() == 1 + idx % 2,
        "8 threads: a thread's OpenMP setting became %d",
        omp_get_max_threads());
  return NULL;
}

int main(void) {
  in.A = check_randf(GM * GK, 1);
  in.B = check_randf(GK * GN, 2);
  in.C_ref = malloc(GM * GN * sizeof(float));
  check_ref_gemm(GM, GN, GK, in.A, in.B, in.C_ref);
  in.VA = check_randf(VM * VK, 3);
  in.vx = check_randf(VK, 4);
  in.vy_ref = malloc(VM * sizeof(float));
  check_ref_gemm(VM, 1, VK, in.VA, in.vx, in.vy_ref);

  /* 3 threads is neither the caller's 2 nor 1, whatever the cores. */
  CHECK(tlib_get_num_threads() == 0, "the default count is %d, want 0",
        tlib_get_num_threads());
  omp_set_num_threads(2);
  run(&in, 2, "count 0, OpenMP 2");
  CHECK(tlib_set_num_threads(1) == tlib_OK, "set_num_threads(1)");
  CHECK(tlib_get_num_threads() == 1, "get_num_threads after 1");
  run(&in, 1, "count 1, OpenMP 2");
  CHECK(omp_get_max_threads() == 2, "the caller's OpenMP setting became %d",
        omp_get_max_threads());
  omp_set_num_threads(1);
  CHECK(tlib_set_num_threads(3) == tlib_OK, "set_num_threads(3)");
  run(&in, 3, "count 3, OpenMP 1");
  CHECK(omp_get_max_threads() == 1, "the caller's OpenMP setting became %d",
        omp_get_max_threads());
  CHECK(tlib_set_num_threads(-1) == tlib_EINVAL, "set_num_threads(-1)");
  CHECK(tlib_get_num_threads() == 3, "a refused count changed the setting");
  pthread_t th[8];
  for (int i = 0; i < 8; i++)
    pthread_create(&th[i], NULL, concurrent, (void *)(size_t)i);
  for (int i = 0; i < 8; i++)
    pthread_join(th[i], NULL);
  CHECK(tlib_set_num_threads(0) == tlib_OK, "set_num_threads(0)");
  run(&in, 1, "count 0 again, OpenMP 1");
  if (check_failed)
    return 1;
  printf("ok\n");
  return 0;
}
