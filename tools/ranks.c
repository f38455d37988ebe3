/* tools/ranks.c - heron-search across MPI ranks (tools/ranks.h says what).
 *
 * The protocol, rank 0 with each measuring rank r, on MPI_COMM_WORLD:
 *
 *   r -> 0  TAG_HW      its hardware line (cli_mpi_check_hardware, gathered)
 *   r -> 0  TAG_READY   a wire_ready: 0 and "" when its measurer opened,
 *                       else the status and why (then r ends)
 *   0 -> r  TAG_WORK    nvars + 1 int64: the candidate's index in the round,
 *                       then its config
 *   r -> 0  TAG_RESULT  a wire_result: the measurement of that candidate
 *   0 -> r  TAG_STOP    nothing more: r closes its measurer and ends
 *
 * Rank 0 keeps one receive posted per busy rank and polls them (and the
 * stop flag) every millisecond, so a slow kernel holds only its rank and a
 * rank that never answers costs only its candidate: after --rank-timeout
 * seconds it is recorded as lost (failed, the environment's: measured again
 * on --resume) and the rank gets no more work.  Messages are raw bytes:
 * the ranks run one build of the tools on machines of one architecture.
 *
 * Test hooks: HERON_MPI_TEST_DIE_RANK=r and HERON_MPI_TEST_DIE_AFTER=k make
 * rank r kill itself (SIGKILL) when it receives its (k+1)-th candidate, as
 * a lost node would; HERON_MPI_TEST_HW_RANK=r and HERON_MPI_TEST_HW=text
 * make rank r report that hardware, as another machine would.
 */
#include "ranks.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#ifdef HERON_HAVE_MPI
#include <mpi.h>
#endif

enum { TAG_HW = 1, TAG_READY, TAG_WORK, TAG_RESULT, TAG_STOP };
enum { HW_LEN = 512, WHY_LEN = 1024 };

static int world_size = 1, world_rank = 0;

int cli_mpi_size(void) { return world_size; }

int cli_mpi_rank(void) { return world_rank; }

/* The number of ranks the launcher says this job has, 1 when none. */
static int launcher_size(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                     "PMIX_SIZE", "MPI_LOCALNRANKS"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *v = getenv(vars[i]);
    if (v && atoi(v) > 1)
      return atoi(v);
  }
  return 1;
}

#ifndef HERON_HAVE_MPI

int cli_mpi_built(void) { return 0; }

int cli_mpi_start(int *argc, char ***argv, int *rank) {
  (void)argc;
  (void)argv;
  *rank = 0;
  int n = launcher_size();
  if (n > 1)
    cli_usage("this job has %d ranks, but %s was built without MPI: install "
              "OpenMPI (tools/setup.sh) and build again, or run it without "
              "mpirun",
              n, cli_prog());
  return 1;
}

void cli_mpi_check_hardware(const heron_task *t, int allow_mixed) {
  (void)t;
  (void)allow_mixed;
}

int cli_mpi_measure_for_rank0(const heron_task *t,
                              const heron_measure_options *m, uint64_t seed) {
  (void)t;
  (void)m;
  (void)seed;
  return CLI_EXIT_FAILURE;
}

void cli_mpi_search_on_ranks(heron_tune_options *o, const heron_task *t,
                             double rank_timeout_s) {
  (void)o;
  (void)t;
  (void)rank_timeout_s;
}

void cli_mpi_finish(int status) { (void)status; }

int cli_mpi_lost(void) { return 0; }

void cli_mpi_barrier(void) {}

void cli_mpi_bench_gather(int *complete, int *failed, int *stopped) {
  (void)complete;
  (void)failed;
  (void)stopped;
}

void cli_mpi_end(void) {}

#else

int cli_mpi_built(void) { return 1; }

/* One line of this rank's hardware: its host, and the hardware the task
 * was built for as the library describes it ("hardware: ..." of
 * heron_task_describe: the CPU model and instruction-set level it detected,
 * or the GPU). */
static void hardware_line(const heron_task *t, char *out, size_t cap) {
  char host[128] = "?";
  gethostname(host, sizeof host);
  host[sizeof host - 1] = '\0';
  char hw[200] = "unknown hardware";
  char *text = NULL;
  heron_error err;
  heron_error_clear(&err);
  if (heron_task_describe(t, &text, &err) == HERON_OK && text) {
    const char *h = strstr(text, "hardware: ");
    if (h) {
      h += strlen("hardware: ");
      snprintf(hw, sizeof hw, "%.*s", (int)strcspn(h, "\n"), h);
    }
    heron_free(text);
  }
  const char *fake_rank = getenv("HERON_MPI_TEST_HW_RANK");
  if (fake_rank && atoi(fake_rank) == world_rank && getenv("HERON_MPI_TEST_HW"))
    snprintf(hw, sizeof hw, "%s", getenv("HERON_MPI_TEST_HW"));
  snprintf(out, cap, "%s: %s", host, hw);
}

/* The line without its host: what must agree between ranks. */
static const char *without_host(const char *line) {
  const char *c = strstr(line, ": ");
  return c ? c + 2 : line;
}


int cli_mpi_start(int *argc, char ***argv, int *rank) {
  *rank = 0;
  if (launcher_size() < 2)
    return 1;
  /* Workers fork runners and kernels; OpenMPI warns about fork() only for
   * transports that pin memory, which these processes never touch. */
  setenv("OMPI_MCA_mpi_warn_on_fork", "0", 0);
  if (MPI_Init(argc, argv) != MPI_SUCCESS) {
    fprintf(stderr, "%s: MPI_Init failed\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  /* A failed call (a peer gone) returns instead of ending this process:
   * rank 0 then records what it has and counts that rank as lost. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (world_size < 2) {
    MPI_Finalize();
    world_size = 1;
    return 1;
  }
  *rank = world_rank;
  return world_size;
}

void cli_mpi_check_hardware(const heron_task *t, int allow_mixed) {
  if (world_size < 2)
    return;
  char mine[HW_LEN];
  hardware_line(t, mine, sizeof mine);
  char *all = world_rank == 0 ? calloc((size_t)world_size, HW_LEN) : NULL;
  MPI_Gather(mine, HW_LEN, MPI_CHAR, all, HW_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
  int refuse = 0;
  if (world_rank == 0) {
    for (int r = 1; r < world_size; r++) {
      const char *other = all + (size_t)r * HW_LEN;
      if (!strcmp(without_host(other), without_host(mine)))
        continue;
      if (allow_mixed) {
        fprintf(stderr,
                "%s: warning: rank %d differs from rank 0 (--allow-mixed): "
                "rank 0 is %s; rank %d is %s\n",
                cli_prog(), r, mine, r, other);
        continue;
      }
      fprintf(stderr,
              "%s: rank %d's hardware differs from rank 0's: rank 0 is %s; "
              "rank %d is %s.  Measurements of different machines do not "
              "compare: run the job on one kind of machine, or pass "
              "--allow-mixed\n",
              cli_prog(), r, mine, r, other);
      refuse = 1;
    }
    free(all);
  }
  MPI_Bcast(&refuse, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (refuse) {
    MPI_Finalize();
    exit(CLI_EXIT_USAGE);
  }
}

/* What a measuring rank says once its measurer is open (or not). */
typedef struct wire_ready {
  int32_t rc;
  char why[WHY_LEN];
} wire_ready;

/* One measurement, as bytes. */
typedef struct wire_result {
  int32_t index; /* the candidate's index in the round */
  int32_t status, env, simulated, regs, spill_bytes;
  int64_t smem_bytes;
  double seconds, gflops, build_seconds, max_error;
  char error[WHY_LEN];
} wire_result;

/* ---- A measuring rank ---------------------------------------------------- */

/* This rank's index and the number of ranks on its node, from the
 * launcher; 0 and 1 when it does not say. */
static void local_rank(int *index, int *count) {
  static const char *const idx[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                                    "MPI_LOCALRANKID"};
  static const char *const cnt[] = {"OMPI_COMM_WORLD_LOCAL_SIZE",
                                    "SLURM_NTASKS_PER_NODE", "MPI_LOCALNRANKS"};
  *index = 0;
  *count = 1;
  for (size_t i = 0; i < 3; i++)
    if (getenv(idx[i])) {
      *index = atoi(getenv(idx[i]));
      break;
    }
  for (size_t i = 0; i < 3; i++)
    if (getenv(cnt[i]) && atoi(getenv(cnt[i])) > 0) {
      *count = atoi(getenv(cnt[i]));
      break;
    }
}

/* Each measuring rank on its own share of the node: for a GPU target its
 * GPU (CUDA_VISIBLE_DEVICES = local rank modulo the node's GPUs, counted
 * by the driver or given by HERON_GPUS_PER_NODE, when the launcher did not
 * bind one already), for the cpu its share of the cores as kernel threads
 * (unless --threads says how many). */
static void bind_rank(const heron_task *t, heron_measure_options *m) {
  int li, ln;
  local_rank(&li, &ln);
  if (heron_target_is_gpu(heron_task_target(t))) {
    if (getenv("CUDA_VISIBLE_DEVICES"))
      return;
    const char *g = getenv("HERON_GPUS_PER_NODE");
    int gpus = g && atoi(g) > 0 ? atoi(g) : heron_cuda_device_count();
    if (gpus > 1) {
      char dev[16];
      snprintf(dev, sizeof dev, "%d", li % gpus);
      setenv("CUDA_VISIBLE_DEVICES", dev, 1);
    }
    return;
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (m->threads == 0 && ln > 1 && cores > 0)
    m->threads = cores / ln > 0 ? (int)(cores / ln) : 1;
}

int cli_mpi_measure_for_rank0(const heron_task *t,
                              const heron_measure_options *m, uint64_t seed) {
  heron_measurer *ms = NULL;
  heron_error err;
  heron_error_clear(&err);
  heron_measure_options mine = *m;
  bind_rank(t, &mine);
  wire_ready ready = {0};
  ready.rc = heron_measurer_open(t, &mine, seed, &ms, &err);
  snprintf(ready.why, sizeof ready.why, "%s", ready.rc ? err.text : "");
  MPI_Send(&ready, sizeof ready, MPI_BYTE, 0, TAG_READY, MPI_COMM_WORLD);
  if (ready.rc) {
    MPI_Finalize();
    return CLI_EXIT_FAILURE;
  }
  int nv = heron_space_nvars(heron_task_space(t));
  int64_t *msg = malloc((size_t)(nv + 1) * sizeof *msg);
  const char *die_rank = getenv("HERON_MPI_TEST_DIE_RANK");
  const char *die_after = getenv("HERON_MPI_TEST_DIE_AFTER");
  int die = die_rank && die_after && atoi(die_rank) == world_rank;
  int served = 0, status = CLI_EXIT_OK;
  for (;;) {
    MPI_Status st;
    MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    if (st.MPI_TAG != TAG_WORK) {
      MPI_Recv(NULL, 0, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      break;
    }
    MPI_Recv(msg, nv + 1, MPI_INT64_T, 0, TAG_WORK, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (die && served == atoi(die_after))
      raise(SIGKILL);
    heron_measurement out;
    char *error = NULL;
    int env = 0;
    wire_result w;
    memset(&w, 0, sizeof w);
    w.index = (int32_t)msg[0];
    int rc = heron_measurer_run(ms, msg + 1, 1, &out, &error, &env, &err);
    if (rc != HERON_OK) {
      /* The measurer itself failed (out of memory, its runner gone): the
       * candidate is the environment's failure and this rank is done. */
      w.status = HERON_MEAS_RUNTIME_ERROR;
      w.env = 1;
      snprintf(w.error, sizeof w.error, "rank %d: %s", world_rank, err.text);
      status = CLI_EXIT_FAILURE;
    } else {
      w.status = out.status;
      w.env = env;
      w.simulated = out.simulated;
      w.regs = out.regs;
      w.spill_bytes = out.spill_bytes;
      w.smem_bytes = out.smem_bytes;
      w.seconds = out.seconds;
      w.gflops = out.gflops;
      w.build_seconds = out.build_seconds;
      w.max_error = out.max_error;
      snprintf(w.error, sizeof w.error, "%s", error ? error : "");
    }
    free(error);
    MPI_Send(&w, sizeof w, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
    served++;
    if (rc != HERON_OK)
      break;
  }
  free(msg);
  heron_measurer_close(ms);
  MPI_Finalize();
  return status;
}

/* ---- Rank 0 -------------------------------------------------------------- */

/* One measuring rank as rank 0 sees it. */
typedef struct peer {
  int alive;
  int busy;      /* a candidate is out: `index`, sent at `since` */
  int index;
  double since;
  MPI_Request req;
  wire_result res;
} peer;

typedef struct remote {
  const volatile sig_atomic_t *stop;
  int nvars;
  double timeout_s;
  peer *peers; /* [world_size], 0 unused */
  int lost;    /* candidates lost with ranks */
} remote;

static remote rm;

int cli_mpi_lost(void) { return rm.lost; }

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pause_ms(void) {
  struct timespec ts = {0, 1000000};
  nanosleep(&ts, NULL);
}

static void send_work(int r, int index, const int64_t *cfg, int64_t *buf) {
  buf[0] = index;
  memcpy(buf + 1, cfg, (size_t)rm.nvars * sizeof *cfg);
  MPI_Send(buf, rm.nvars + 1, MPI_INT64_T, r, TAG_WORK, MPI_COMM_WORLD);
  peer *p = &rm.peers[r];
  p->busy = 1;
  p->index = index;
  p->since = now_s();
  MPI_Irecv(&p->res, sizeof p->res, MPI_BYTE, r, TAG_RESULT, MPI_COMM_WORLD,
            &p->req);
}

static void take_result(const wire_result *w, heron_measurement *out,
                        char **errors, int *done, int *env,
                        void (*arrived)(void *, int), void *engine) {
  int i = w->index;
  out[i].status = w->status;
  out[i].simulated = w->simulated;
  out[i].regs = w->regs;
  out[i].spill_bytes = w->spill_bytes;
  out[i].smem_bytes = w->smem_bytes;
  out[i].seconds = w->seconds;
  out[i].gflops = w->gflops;
  out[i].build_seconds = w->build_seconds;
  out[i].max_error = w->max_error;
  errors[i] = w->error[0] ? strdup(w->error) : NULL;
  env[i] = w->env;
  done[i] = 1;
  arrived(engine, i); /* logged now: a job killed later keeps it */
}

/* heron_tune_options.remote: the round's candidates go to free ranks as
 * they come free (module comment). */
static int measure_on_ranks(void *ctx, const int64_t *cfgs, int n,
                            heron_measurement *out, char **errors, int *done,
                            int *env, void (*arrived)(void *, int),
                            void *engine, heron_error *err) {
  (void)ctx;
  int64_t *buf = malloc((size_t)(rm.nvars + 1) * sizeof *buf);
  if (!buf)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  int next = 0, left = n, rc = HERON_OK;
  while (left > 0) {
    if (rm.stop && *rm.stop)
      break; /* the candidates out are abandoned, as a local stop does */
    int alive = 0;
    for (int r = 1; r < world_size; r++) {
      peer *p = &rm.peers[r];
      if (!p->alive)
        continue;
      alive++;
      if (p->busy) {
        int flag = 0;
        int bad = MPI_Test(&p->req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS;
        if (flag && !bad) {
          p->busy = 0;
          take_result(&p->res, out, errors, done, env, arrived, engine);
          left--;
        } else if (bad || now_s() - p->since > rm.timeout_s) {
          /* Lost: its candidate fails as the environment's and the rank
           * gets nothing more.  The posted receive stays: cancelling it
           * could block on a dead peer. */
          int i = p->index;
          p->alive = 0;
          p->busy = 0;
          out[i].status = HERON_MEAS_RUNTIME_ERROR;
          char why[256];
          if (bad)
            snprintf(why, sizeof why,
                     "rank %d failed (MPI reports it gone); measured again "
                     "on --resume",
                     r);
          else
            snprintf(why, sizeof why,
                     "rank %d stopped answering (no result within %.0f s, "
                     "--rank-timeout); measured again on --resume",
                     r, rm.timeout_s);
          errors[i] = strdup(why);
          env[i] = 2;
          done[i] = 1;
          arrived(engine, i);
          left--;
          rm.lost++;
          fprintf(stderr, "%s: %s\n", cli_prog(), why);
          continue;
        }
      }
      if (!p->busy && next < n) {
        send_work(r, next, cfgs + (size_t)next * (size_t)rm.nvars, buf);
        next++;
      }
    }
    if (!alive) {
      rc = heron_error_set(err, HERON_EIO,
                           "every measuring rank stopped answering: %d "
                           "candidate%s of this round not measured",
                           left, left == 1 ? "" : "s");
      break;
    }
    if (left > 0)
      pause_ms();
  }
  /* Results of abandoned candidates may still come: wait for them briefly
   * so the ranks are free for the next round (or the stop). */
  double until = now_s() + 5;
  for (int r = 1; r < world_size; r++) {
    peer *p = &rm.peers[r];
    while (p->alive && p->busy && now_s() < until) {
      int flag = 0;
      MPI_Test(&p->req, &flag, MPI_STATUS_IGNORE);
      if (flag)
        p->busy = 0;
      else
        pause_ms();
    }
  }
  free(buf);
  return rc;
}

void cli_mpi_search_on_ranks(heron_tune_options *o, const heron_task *t,
                             double rank_timeout_s) {
  rm.stop = o->stop;
  rm.nvars = heron_space_nvars(heron_task_space(t));
  rm.timeout_s =
      rank_timeout_s > 0 ? rank_timeout_s : CLI_MPI_RANK_TIMEOUT_DEFAULT;
  rm.peers = calloc((size_t)world_size, sizeof *rm.peers);
  if (!rm.peers) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
  }
  int failed = 0;
  for (int r = 1; r < world_size; r++) {
    wire_ready ready;
    MPI_Recv(&ready, sizeof ready, MPI_BYTE, r, TAG_READY, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (ready.rc != HERON_OK) {
      fprintf(stderr, "%s: rank %d cannot measure: %s: %s\n", cli_prog(), r,
              heron_strerror(ready.rc), ready.why);
      failed = 1;
    }
    rm.peers[r].alive = ready.rc == HERON_OK;
  }
  if (failed) {
    for (int r = 1; r < world_size; r++)
      if (rm.peers[r].alive)
        MPI_Send(NULL, 0, MPI_BYTE, r, TAG_STOP, MPI_COMM_WORLD);
    MPI_Finalize();
    exit(CLI_EXIT_FAILURE);
  }
  o->remote = measure_on_ranks;
  o->remote_ctx = &rm;
  if (o->progress)
    fprintf(o->progress,
            "mpi: rank 0 searches, %d rank%s measure (each candidate on the "
            "next free rank; --rank-timeout %.0f s)\n",
            world_size - 1, world_size == 2 ? "" : "s", rm.timeout_s);
}

void cli_mpi_barrier(void) {
  if (world_size > 1)
    MPI_Barrier(MPI_COMM_WORLD);
}

void cli_mpi_bench_gather(int *complete, int *failed, int *stopped) {
  if (world_size < 2)
    return;
  int mine[2] = {*complete, *failed}, sum[2] = {0, 0}, sig = 0;
  MPI_Reduce(mine, sum, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(stopped, &sig, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
  if (world_rank == 0) {
    *complete = sum[0];
    *failed = sum[1];
    *stopped = sig;
  } else {
    MPI_Finalize();
  }
}

void cli_mpi_end(void) {
  if (world_size > 1 && world_rank == 0)
    MPI_Finalize();
}

void cli_mpi_finish(int status) {
  if (world_size < 2)
    return;
  if (rm.lost) {
    fflush(NULL);
    fprintf(stderr,
            "%s: %d candidate%s lost with ranks that stopped answering; the "
            "log is whole, and --resume measures them again.  Ending the job "
            "with MPI_Abort (a lost rank cannot end in order)\n",
            cli_prog(), rm.lost, rm.lost == 1 ? " was" : "s were");
    MPI_Abort(MPI_COMM_WORLD, status ? status : CLI_EXIT_FAILURE);
  }
  for (int r = 1; r < world_size; r++)
    if (rm.peers && rm.peers[r].alive)
      MPI_Send(NULL, 0, MPI_BYTE, r, TAG_STOP, MPI_COMM_WORLD);
  MPI_Finalize();
}

#endif
