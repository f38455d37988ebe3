/* tools/ranks_hw.c - the hardware of each MPI rank (tools/ranks.h:
 * cli_mpi_check_hardware, cli_mpi_check_machines): what each rank detects
 * itself, gathered at rank 0 and compared there. */
#include "ranks.h"

#ifndef HERON_HAVE_MPI

void cli_mpi_check_hardware(const heron_task *t, int allow_mixed) {
  (void)t;
  (void)allow_mixed;
}

void cli_mpi_check_machines(int cpu, int gpu, int allow_mixed) {
  (void)cpu;
  (void)gpu;
  (void)allow_mixed;
}

#else

#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "ranks_mpi.h"
#include "timing.h"

enum { HW_LEN = 512 };

/* ---- The hardware of each rank ------------------------------------------- */

/* This machine's CPU as the library detects it for the cpu target, with
 * HERON_CPU_ISA's cap, whatever --hw says: "<model>, <ISA level>" ("...,
 * avx2 by HERON_CPU_ISA"), or the library's words when it has no such
 * name (cli_detected_cpu). */
static void detected_cpu(char *out, size_t cap) {
  char model[256], isa[64];
  if (cli_detected_cpu(model, sizeof model, isa, sizeof isa) == 0)
    snprintf(out, cap, "%s, %s", model, isa);
  else
    snprintf(out, cap, "%s", model);
}

/* The CUDA driver API calls the GPU probe makes (cuda.h is not needed). */
typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_name_fn)(char *, int, int);
typedef int (*cu_attr_fn)(int *, int, int);
enum { CU_CC_MAJOR = 75, CU_CC_MINOR = 76 };

/* In the probe's child: the first GPU this process sees (CUDA_VISIBLE_DEVICES
 * applies), "<name>, sm_<major><minor>", or "no GPU (<why>)". */
static void probe_gpu_here(char *out, size_t cap) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(out, cap, "no GPU (no CUDA driver: libcuda.so.1 not found)");
    return;
  }
  cu_init_fn init = (cu_init_fn)dlsym(lib, "cuInit");
  cu_count_fn count = (cu_count_fn)dlsym(lib, "cuDeviceGetCount");
  cu_get_fn get = (cu_get_fn)dlsym(lib, "cuDeviceGet");
  cu_name_fn name = (cu_name_fn)dlsym(lib, "cuDeviceGetName");
  cu_attr_fn attr = (cu_attr_fn)dlsym(lib, "cuDeviceGetAttribute");
  int n = 0, dev = 0, major = 0, minor = 0, rc;
  char gpu[200] = "";
  if (!init || !count || !get || !name || !attr)
    snprintf(out, cap, "no GPU (the CUDA driver lacks the device calls)");
  else if ((rc = init(0)) != 0)
    snprintf(out, cap, "no GPU (cuInit: CUDA error %d)", rc);
  else if ((rc = count(&n)) != 0 || n < 1)
    snprintf(out, cap, "no GPU (the driver sees no device)");
  else if (get(&dev, 0) || name(gpu, (int)sizeof gpu, dev) ||
           attr(&major, CU_CC_MAJOR, dev) || attr(&minor, CU_CC_MINOR, dev))
    snprintf(out, cap, "no GPU (device 0 cannot be queried)");
  else
    snprintf(out, cap, "%s, sm_%d%d", gpu, major, minor);
}

/* The GPU this rank would run kernels on, probed in a child process (this
 * process never initialises the driver, as the library never does) with a
 * limit of 60 s. */
static void detected_gpu(char *out, size_t cap) {
  int fd[2];
  snprintf(out, cap, "no GPU (the probe could not start)");
  if (pipe(fd) != 0)
    return;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return;
  }
  if (pid == 0) {
    close(fd[0]);
    char text[HW_LEN];
    probe_gpu_here(text, sizeof text);
    ssize_t w = write(fd[1], text, strlen(text));
    (void)w;
    _exit(0);
  }
  close(fd[1]);
  char text[HW_LEN];
  size_t have = 0;
  double until = cli_now() + 60;
  for (;;) {
    int left = (int)((until - cli_now()) * 1000);
    struct pollfd pf = {fd[0], POLLIN, 0};
    if (left <= 0 || poll(&pf, 1, left) <= 0) {
      if (left <= 0 || errno != EINTR) {
        kill(pid, SIGKILL);
        snprintf(out, cap, "no GPU (the probe did not answer in 60 s)");
        have = 0;
        break;
      }
      continue;
    }
    ssize_t r = read(fd[0], text + have, sizeof text - 1 - have);
    if (r <= 0 || (have += (size_t)r) >= sizeof text - 1)
      break;
  }
  close(fd[0]);
  waitpid(pid, NULL, 0);
  if (have) {
    text[have] = '\0';
    snprintf(out, cap, "%s", text);
  }
}

/* What one rank reports about itself: "" in a field it was not asked. */
typedef struct wire_hw {
  char task[HW_LEN]; /* the hardware its task is built for */
  char cpu[HW_LEN];  /* its CPU as detected (detected_cpu) */
  char gpu[HW_LEN];  /* its GPU as detected (detected_gpu) */
} wire_hw;

/* Rank 0: compares one field of every rank from rank `ref` on with rank
 * ref's; a difference is refused (returns 1) or, with allow_mixed, warned
 * about. */
static int compare_field(const wire_hw *all, size_t off, int ref,
                         const char *what, int allow_mixed) {
  int refuse = 0;
  const char *want = (const char *)&all[ref] + off;
  for (int r = ref + 1; r < cli_mpi_size(); r++) {
    const char *got = (const char *)&all[r] + off;
    if (!strcmp(got, want))
      continue;
    if (allow_mixed) {
      fprintf(stderr,
              "%s: warning: rank %d differs from rank %d (--allow-mixed): "
              "rank %d's %s is %s: %s; rank %d's is %s: %s\n",
              cli_prog(), r, ref, ref, what, ranks_host(ref), want, r,
              ranks_host(r), got);
      continue;
    }
    fprintf(stderr,
            "%s: rank %d's %s differs from rank %d's: rank %d is %s: %s; "
            "rank %d is %s: %s.  Measurements of different machines do not "
            "compare: run the job on one kind of machine, or pass "
            "--allow-mixed\n",
            cli_prog(), r, what, ref, ref, ranks_host(ref), want, r,
            ranks_host(r), got);
    refuse = 1;
  }
  return refuse;
}

/* Every rank: gathers `mine` at rank 0, which compares the ranks (the task
 * field among all ranks, the CPU among all ranks, the GPU from rank
 * gpu_ref on), and refuses the job on every rank (exit 2) when they differ
 * and !allow_mixed. */
static void check_ranks(const wire_hw *mine, int gpu_ref, int allow_mixed) {
  wire_hw *all =
      cli_mpi_rank() == 0 ? calloc((size_t)cli_mpi_size(), sizeof *all) : NULL;
  if (cli_mpi_rank() == 0 && !all) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
  }
  MPI_Gather(mine, sizeof *mine, MPI_BYTE, all, sizeof *mine, MPI_BYTE, 0,
             MPI_COMM_WORLD);
  int refuse = 0;
  if (cli_mpi_rank() == 0) {
    /* One difference per rank is enough: the machine before the task's
     * description, which follows from it when no --hw is given. */
    int bad_cpu =
        compare_field(all, offsetof(wire_hw, cpu), 0, "CPU", allow_mixed);
    int bad_gpu = gpu_ref < cli_mpi_size() - 1
                      ? compare_field(all, offsetof(wire_hw, gpu), gpu_ref,
                                      "GPU", allow_mixed)
                      : 0;
    int bad_task = 0;
    if (!bad_cpu && !bad_gpu)
      bad_task = compare_field(all, offsetof(wire_hw, task), 0, "hardware",
                               allow_mixed);
    refuse = bad_cpu || bad_gpu || bad_task;
    free(all);
  }
  MPI_Bcast(&refuse, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (refuse) {
    MPI_Finalize();
    exit(CLI_EXIT_USAGE);
  }
}

void cli_mpi_check_hardware(const heron_task *t, int allow_mixed) {
  if (cli_mpi_size() < 2)
    return;
  wire_hw mine;
  memset(&mine, 0, sizeof mine);
  cli_task_hardware(t, mine.task, sizeof mine.task);
  const char *fake_rank = getenv("HERON_MPI_TEST_HW_RANK");
  if (fake_rank && atoi(fake_rank) == cli_mpi_rank() &&
      getenv("HERON_MPI_TEST_HW"))
    snprintf(mine.task, sizeof mine.task, "%s", getenv("HERON_MPI_TEST_HW"));
  const char *target = heron_task_target(t);
  if (heron_target_is_gpu(target)) {
    /* Rank 0 only searches: its GPU (often none) is reported, not
     * compared; the measuring ranks' GPUs must agree. */
    if (cli_mpi_rank() > 0)
      ranks_bind_gpu();
    detected_gpu(mine.gpu, sizeof mine.gpu);
    check_ranks(&mine, 1, allow_mixed);
  } else {
    /* cpu and amx run on this CPU; replay measures nothing here. */
    if (strcmp(target, "replay"))
      detected_cpu(mine.cpu, sizeof mine.cpu);
    check_ranks(&mine, cli_mpi_size(), allow_mixed);
  }
}

void cli_mpi_check_machines(int cpu, int gpu, int allow_mixed) {
  if (cli_mpi_size() < 2)
    return;
  wire_hw mine;
  memset(&mine, 0, sizeof mine);
  if (cpu)
    detected_cpu(mine.cpu, sizeof mine.cpu);
  if (gpu)
    detected_gpu(mine.gpu, sizeof mine.gpu);
  check_ranks(&mine, gpu ? 0 : cli_mpi_size(), allow_mixed);
}

#endif
