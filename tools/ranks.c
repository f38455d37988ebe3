/* tools/ranks.c - heron-search and heron-bench across MPI ranks (tools/ranks.h
 * says what; tools/ranks_hw.c compares the ranks' hardware).
 *
 * The protocol, rank 0 with each measuring rank r, on MPI_COMM_WORLD:
 *
 *   all     MPI_Allgather of every rank's identity (host, pid, start time,
 *           kernel and pid namespace), at MPI_Init
 *   r -> 0  TAG_HW      its hardware (cli_mpi_check_hardware, gathered;
 *                       tools/ranks_hw.c)
 *   r -> 0  TAG_READY   a wire_ready: 0 and "" when its measurer opened,
 *                       else the status and why (then r ends)
 *   0 -> r  TAG_WORK    nvars + 1 int64: the candidate's index in the round,
 *                       then its config
 *   r -> 0  TAG_RESULT  a wire_result: the measurement of that candidate
 *   0 -> r  TAG_STOP    nothing more: r closes its measurer and ends
 *   0 -> r  TAG_END_LOST  the same after a rank was lost: r ends without
 *                       MPI_Finalize (synchronous send, so it arrives)
 *   r -> 0  TAG_TALLY   heron-bench: a rank's complete, failed and stop
 *                       counts at its end
 *
 * Nothing here waits in a blocking MPI call that can last: OpenMPI's
 * blocking calls poll at full speed, so a rank waiting an hour for another
 * would burn a core the whole hour.  Every wait is MPI_Test or MPI_Iprobe
 * with a sleep between the polls that doubles from 0.2 ms up to 20 ms while
 * nothing comes, and starts again at 0.2 ms when something does.
 *
 * Rank 0 keeps one receive posted per busy rank and polls them (and the
 * stop flag), so a slow kernel holds only its rank and a rank that never
 * answers costs only its candidate.  A rank is lost when MPI reports it
 * gone (an MPI with ULFM fault tolerance fails the request), when its
 * process has ended (checked for the ranks on rank 0's machine every
 * 0.1 s: OpenMPI 4.1 without ULFM never fails the request, and its
 * --enable-recovery notifies no one), or after --rank-timeout seconds
 * without a result.  Its candidate is recorded as failed (the environment's:
 * measured again on --resume) and the rank gets no more work.  A measuring
 * rank likewise ends when rank 0's process on its machine has ended.
 * Messages are raw bytes: the ranks run one build of the tools on machines
 * of one architecture.
 *
 * Test hooks: HERON_MPI_TEST_DIE_RANK=r and HERON_MPI_TEST_DIE_AFTER=k make
 * rank r kill itself (SIGKILL) when it receives its (k+1)-th candidate, as
 * a lost node would; HERON_MPI_TEST_HW_RANK=r and HERON_MPI_TEST_HW=text
 * (read in tools/ranks_hw.c) make rank r report that as the hardware its
 * task was built for, as a rank given another description would (the
 * machine it detects stays real: HERON_CPU_ISA changes that).
 */
#include "ranks.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ranks_mpi.h"
#include "timing.h"

#ifdef HERON_HAVE_MPI
#include <mpi.h>
#endif

enum {
  TAG_HW = 1,
  TAG_READY,
  TAG_WORK,
  TAG_RESULT,
  TAG_STOP,
  TAG_TALLY,
  TAG_END_LOST
};
enum { WHY_LEN = 1024, HOST_LEN = 128 };

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

void cli_mpi_barrier(void) {}

void cli_mpi_bench_gather(int *complete, int *failed, int *stopped) {
  (void)complete;
  (void)failed;
  (void)stopped;
}

void cli_mpi_end(void) {}

#else

int cli_mpi_built(void) { return 1; }

/* ---- Who each rank is ---------------------------------------------------- */

/* A rank's process as the others can find it: its host name, and its
 * process id with the kernel (boot id) and pid namespace that id means
 * something in, and its start time (so a pid used again is not it). */
typedef struct ident {
  char host[HOST_LEN];
  char space[HOST_LEN]; /* "<boot id>/<pid namespace>" */
  int64_t pid;
  uint64_t start; /* clock ticks after boot, /proc/<pid>/stat field 22 */
} ident;

static ident *idents; /* [world_size], from cli_mpi_start */

/* The polling waits' sleep: *delay seconds, then twice as long next time,
 * up to POLL_MAX_S.  Set *delay to POLL_MIN_S when something arrived. */
#define POLL_MIN_S 0.0002
#define POLL_MAX_S 0.02
static void nap(double *delay) {
  struct timespec ts = {0, (long)(*delay * 1e9)};
  nanosleep(&ts, NULL);
  *delay = *delay * 2 < POLL_MAX_S ? *delay * 2 : POLL_MAX_S;
}

/* State and start time of process pid from /proc; 0 when it could be read,
 * else -1 with errno (ENOENT: no such process). */
static int proc_stat(long pid, char *state, uint64_t *start) {
  char path[64], line[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  size_t n = fread(line, 1, sizeof line - 1, f);
  fclose(f);
  line[n] = '\0';
  /* "pid (comm) S ppid ...": comm may hold anything, so fields are
   * counted from the last ')'; the start time is field 22. */
  char *p = strrchr(line, ')');
  if (!p || p[1] != ' ') {
    errno = EINVAL;
    return -1;
  }
  p += 2;
  *state = *p;
  for (int field = 3; field < 22; field++) {
    p = strchr(p, ' ');
    if (!p) {
      errno = EINVAL;
      return -1;
    }
    p++;
  }
  *start = strtoull(p, NULL, 10);
  return 0;
}

static void read_line_of(const char *path, char *out, size_t cap) {
  out[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  if (fgets(out, (int)cap, f))
    out[strcspn(out, "\n")] = '\0';
  fclose(f);
}

static void my_ident(ident *me) {
  memset(me, 0, sizeof *me);
  if (gethostname(me->host, sizeof me->host) != 0)
    snprintf(me->host, sizeof me->host, "?");
  me->host[sizeof me->host - 1] = '\0';
  char boot[64], ns[64] = "";
  read_line_of("/proc/sys/kernel/random/boot_id", boot, sizeof boot);
  ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  ns[n > 0 ? n : 0] = '\0';
  if (boot[0] && ns[0])
    snprintf(me->space, sizeof me->space, "%s/%s", boot, ns);
  me->pid = (int64_t)getpid();
  char state;
  if (proc_stat((long)me->pid, &state, &me->start) != 0)
    me->start = 0;
}

const char *ranks_host(int r) { return idents[r].host; }

/* 1 when rank r's process has ended: it ran where this process runs (the
 * same kernel and pid namespace) and /proc no longer shows it alive (gone,
 * a zombie, or its pid now another process's).  0 when it is alive or
 * cannot be seen from here (another machine). */
static int rank_gone(int r) {
  if (!idents || r == world_rank)
    return 0;
  const ident *me = &idents[world_rank], *it = &idents[r];
  if (!me->space[0] || strcmp(me->space, it->space) || !it->start)
    return 0;
  char state;
  uint64_t start;
  if (proc_stat((long)it->pid, &state, &start) != 0)
    return errno == ENOENT;
  return state == 'Z' || state == 'X' || start != it->start;
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
  ident me;
  my_ident(&me);
  idents = calloc((size_t)world_size, sizeof *idents);
  if (!idents) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
  }
  MPI_Allgather(&me, sizeof me, MPI_BYTE, idents, sizeof me, MPI_BYTE,
                MPI_COMM_WORLD);
  *rank = world_rank;
  return world_size;
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
  static const char *const idx[] = {"OMPI_COMM_WORLD_LOCAL_RANK",
                                    "SLURM_LOCALID", "MPI_LOCALRANKID"};
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

/* Binds this rank to its GPU (ranks_mpi.h). */
void ranks_bind_gpu(void) {
  if (getenv("CUDA_VISIBLE_DEVICES"))
    return;
  int li, ln;
  local_rank(&li, &ln);
  const char *g = getenv("HERON_GPUS_PER_NODE");
  int gpus = g && atoi(g) > 0 ? atoi(g) : heron_cuda_device_count();
  if (gpus > 1) {
    char dev[16];
    snprintf(dev, sizeof dev, "%d", li % gpus);
    setenv("CUDA_VISIBLE_DEVICES", dev, 1);
  }
}

/* Each measuring rank on its own share of the node: for a GPU target its
 * GPU (bind_gpu), for the cpu its share of the cores as kernel threads
 * (unless --threads says how many). */
static void bind_rank(const heron_task *t, heron_measure_options *m) {
  if (heron_target_is_gpu(heron_task_target(t))) {
    ranks_bind_gpu();
    return;
  }
  int li, ln;
  local_rank(&li, &ln);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (m->threads == 0 && ln > 1 && cores > 0)
    m->threads = cores / ln > 0 ? (int)(cores / ln) : 1;
}

/* A measuring rank: waits for rank 0's next message, polling (module
 * comment); 0 when rank 0's process has ended meanwhile. */
static int wait_for_rank0(MPI_Status *st) {
  double delay = POLL_MIN_S, checked = cli_now();
  for (;;) {
    int flag = 0;
    if (MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, st) != MPI_SUCCESS)
      return 0;
    if (flag)
      return 1;
    if (cli_now() - checked >= 0.1) {
      if (rank_gone(0))
        return 0;
      checked = cli_now();
    }
    nap(&delay);
  }
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
    if (!wait_for_rank0(&st)) {
      /* Rank 0 is gone: no one is left to answer or to end the job. */
      fprintf(stderr,
              "%s: rank %d: rank 0 (process %lld on %s) is gone; this "
              "measuring rank ends\n",
              cli_prog(), world_rank, (long long)idents[0].pid, idents[0].host);
      free(msg);
      heron_measurer_close(ms);
      exit(CLI_EXIT_FAILURE);
    }
    if (st.MPI_TAG == TAG_END_LOST) {
      /* A rank was lost: MPI_Finalize's fence could wait for it forever
       * (OpenMPI 4.1 under --enable-recovery), so this rank ends without. */
      MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_END_LOST, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      free(msg);
      heron_measurer_close(ms);
      fflush(NULL);
      _exit(status);
    }
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
  int gone; /* lost because its process ended or MPI said so (not hung) */
  int busy; /* a candidate is out: `index`, sent at `since` */
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

static void send_work(int r, int index, const int64_t *cfg, int64_t *buf) {
  buf[0] = index;
  memcpy(buf + 1, cfg, (size_t)rm.nvars * sizeof *cfg);
  MPI_Send(buf, rm.nvars + 1, MPI_INT64_T, r, TAG_WORK, MPI_COMM_WORLD);
  peer *p = &rm.peers[r];
  p->busy = 1;
  p->index = index;
  p->since = cli_now();
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
  double delay = POLL_MIN_S, checked = cli_now();
  while (left > 0) {
    if (rm.stop && *rm.stop)
      break; /* the candidates out are abandoned, as a local stop does */
    int alive = 0, moved = 0;
    /* Whether the busy ranks' processes still exist, every 0.1 s. */
    int check = cli_now() - checked >= 0.1;
    if (check)
      checked = cli_now();
    for (int r = 1; r < world_size; r++) {
      peer *p = &rm.peers[r];
      if (!p->alive)
        continue;
      alive++;
      if (p->busy) {
        int flag = 0;
        int bad = MPI_Test(&p->req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS;
        int gone = !flag && !bad && check && rank_gone(r);
        if (flag && !bad) {
          p->busy = 0;
          take_result(&p->res, out, errors, done, env, arrived, engine);
          left--;
          moved = 1;
        } else if (bad || gone || cli_now() - p->since > rm.timeout_s) {
          /* Lost: its candidate fails as the environment's and the rank
           * gets nothing more.  The posted receive stays: cancelling it
           * could block on a dead peer. */
          int i = p->index;
          p->alive = 0;
          p->busy = 0;
          p->gone = bad || gone;
          out[i].status = HERON_MEAS_RUNTIME_ERROR;
          char why[512];
          if (bad)
            snprintf(why, sizeof why,
                     "rank %d failed (MPI reports it gone); measured again "
                     "on --resume",
                     r);
          else if (gone)
            snprintf(why, sizeof why,
                     "rank %d is gone (its process %lld on %s ended after "
                     "%.1f s on this candidate); measured again on --resume",
                     r, (long long)idents[r].pid, idents[r].host,
                     cli_now() - p->since);
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
          moved = 1;
          fprintf(stderr, "%s: %s\n", cli_prog(), why);
          continue;
        }
      }
      if (!p->busy && next < n) {
        send_work(r, next, cfgs + (size_t)next * (size_t)rm.nvars, buf);
        next++;
        moved = 1;
      }
    }
    if (!alive) {
      rc = heron_error_set(err, HERON_EIO,
                           "every measuring rank stopped answering: %d "
                           "candidate%s of this round not measured",
                           left, left == 1 ? "" : "s");
      break;
    }
    if (moved)
      delay = POLL_MIN_S;
    else if (left > 0)
      nap(&delay);
  }
  /* Results of abandoned candidates may still come: wait for them briefly
   * so the ranks are free for the next round (or the stop). */
  double until = cli_now() + 5;
  delay = POLL_MIN_S;
  for (int r = 1; r < world_size; r++) {
    peer *p = &rm.peers[r];
    while (p->alive && p->busy && cli_now() < until) {
      int flag = 0;
      MPI_Test(&p->req, &flag, MPI_STATUS_IGNORE);
      if (flag)
        p->busy = 0;
      else
        nap(&delay);
    }
  }
  free(buf);
  return rc;
}

/* Rank 0 after a rank's process ended: tells the measuring ranks still
 * alive to end (synchronously, so the message has arrived) and ends with
 * status st, no rank calling MPI_Finalize: its fence can wait for the lost
 * rank forever (OpenMPI 4.1 under --enable-recovery, now and then). */
static void end_after_loss(int st) {
  for (int r = 1; r < world_size; r++)
    if (rm.peers && rm.peers[r].alive)
      MPI_Ssend(NULL, 0, MPI_BYTE, r, TAG_END_LOST, MPI_COMM_WORLD);
  fflush(NULL);
  _exit(st);
}

/* Rank 0: one message of `size` bytes with `tag` from every measuring
 * rank r, into buf + r * size, polled (module comment): heard(ctx, r, 1)
 * as each arrives, heard(ctx, r, 0) for a rank whose process ended first
 * or that MPI reports failed, in the order that happens.  Returns when
 * every rank was heard of. */
static void hear_from_ranks(void *buf, size_t size, int tag,
                            void (*heard)(void *ctx, int r, int arrived),
                            void *ctx) {
  MPI_Request *req = calloc((size_t)world_size, sizeof *req);
  int *got = calloc((size_t)world_size, sizeof *got);
  if (!req || !got) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
  }
  for (int r = 1; r < world_size; r++)
    MPI_Irecv((char *)buf + (size_t)r * size, (int)size, MPI_BYTE, r, tag,
              MPI_COMM_WORLD, &req[r]);
  int waiting = world_size - 1;
  double delay = POLL_MIN_S, checked = cli_now();
  while (waiting > 0) {
    int check = cli_now() - checked >= 0.1;
    if (check)
      checked = cli_now();
    for (int r = 1; r < world_size; r++) {
      if (got[r])
        continue;
      int flag = 0;
      int bad = MPI_Test(&req[r], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS;
      if (flag || bad || (check && rank_gone(r))) {
        got[r] = 1;
        waiting--;
        heard(ctx, r, flag && !bad);
      }
    }
    if (waiting > 0)
      nap(&delay);
  }
  free(req);
  free(got);
}

/* What cli_mpi_search_on_ranks hears from the measuring ranks. */
typedef struct ready_wait {
  const wire_ready *ready; /* [world_size] */
  int failed, gone;
} ready_wait;

static void heard_ready(void *ctx, int r, int arrived) {
  ready_wait *w = ctx;
  if (!arrived) {
    fprintf(stderr,
            "%s: rank %d is gone (its process %lld on %s ended before its "
            "measurer was ready)\n",
            cli_prog(), r, (long long)idents[r].pid, idents[r].host);
    w->failed = 1;
    w->gone = 1;
    return;
  }
  rm.peers[r].alive = w->ready[r].rc == HERON_OK;
  if (w->ready[r].rc != HERON_OK) {
    fprintf(stderr, "%s: rank %d cannot measure: %s: %s\n", cli_prog(), r,
            heron_strerror(w->ready[r].rc), w->ready[r].why);
    w->failed = 1;
  }
}

void cli_mpi_search_on_ranks(heron_tune_options *o, const heron_task *t,
                             double rank_timeout_s) {
  rm.stop = o->stop;
  rm.nvars = heron_space_nvars(heron_task_space(t));
  rm.timeout_s =
      rank_timeout_s > 0 ? rank_timeout_s : CLI_MPI_RANK_TIMEOUT_DEFAULT;
  rm.peers = calloc((size_t)world_size, sizeof *rm.peers);
  wire_ready *ready = calloc((size_t)world_size, sizeof *ready);
  if (!rm.peers || !ready) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
  }
  /* Every rank's word on its measurer, polled: a rank whose process ends
   * while it opens its measurer fails the job instead of holding it. */
  ready_wait w = {ready, 0, 0};
  hear_from_ranks(ready, sizeof *ready, TAG_READY, heard_ready, &w);
  free(ready);
  int failed = w.failed, gone = w.gone;
  if (failed && gone)
    end_after_loss(CLI_EXIT_FAILURE);
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

/* heron-bench's rank 0: a rank's process ended before it reported. */
static int bench_lost;

/* What cli_mpi_bench_gather hears from the other ranks: their tallies,
 * summed into rank 0's. */
typedef struct tally_wait {
  const int32_t (*tally)[3]; /* [world_size] */
  int *reported;             /* [world_size]: 1 for a rank that reported */
  int *complete, *failed, *stopped;
} tally_wait;

static void heard_tally(void *ctx, int r, int arrived) {
  tally_wait *w = ctx;
  if (!arrived) {
    *w->failed += 1;
    bench_lost = 1;
    fprintf(stderr,
            "%s: rank %d is gone (its process %lld on %s ended before it "
            "reported): its run in flight is counted as failed; the same "
            "command again resumes it\n",
            cli_prog(), r, (long long)idents[r].pid, idents[r].host);
    return;
  }
  w->reported[r] = 1;
  *w->complete += w->tally[r][0];
  *w->failed += w->tally[r][1];
  if (w->tally[r][2] && !*w->stopped)
    *w->stopped = w->tally[r][2];
}

void cli_mpi_bench_gather(int *complete, int *failed, int *stopped) {
  if (world_size < 2)
    return;
  int32_t mine[3] = {*complete, *failed, *stopped};
  if (world_rank > 0) {
    /* Then rank 0's word: TAG_STOP, and MPI_Finalize (its wait sleeps),
     * or TAG_END_LOST after a rank was lost, and no MPI_Finalize (its
     * fence could wait for the lost rank forever). */
    MPI_Send(mine, sizeof mine, MPI_BYTE, 0, TAG_TALLY, MPI_COMM_WORLD);
    MPI_Status st;
    if (!wait_for_rank0(&st))
      return; /* rank 0 is gone: no MPI_Finalize either */
    MPI_Recv(NULL, 0, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (st.MPI_TAG == TAG_STOP)
      MPI_Finalize();
    return;
  }
  /* Rank 0 may wait hours for the others' runs: polled, not a collective
   * that spins a core; a rank whose process ends first is counted as a
   * failed run (its run in flight left a partial log that the same command
   * resumes). */
  int32_t(*tally)[3] = calloc((size_t)world_size, sizeof *tally);
  int *reported = calloc((size_t)world_size, sizeof *reported);
  if (!tally || !reported) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
  }
  tally_wait w = {tally, reported, complete, failed, stopped};
  hear_from_ranks(tally, sizeof *tally, TAG_TALLY, heard_tally, &w);
  for (int r = 1; r < world_size; r++)
    if (reported[r])
      MPI_Ssend(NULL, 0, MPI_BYTE, r, bench_lost ? TAG_END_LOST : TAG_STOP,
                MPI_COMM_WORLD);
  free(tally);
  free(reported);
}

void cli_mpi_end(void) {
  /* After a loss MPI_Finalize's fence could wait for the lost rank
   * forever (end_after_loss); the process then just ends. */
  if (world_size > 1 && world_rank == 0 && !bench_lost)
    MPI_Finalize();
}

void cli_mpi_finish(int status) {
  if (world_size < 2)
    return;
  int st = status ? status : CLI_EXIT_FAILURE;
  if (rm.lost) {
    int hung = 0;
    for (int r = 1; r < world_size; r++)
      hung += !rm.peers[r].alive && !rm.peers[r].gone;
    fflush(NULL);
    if (hung) {
      fprintf(stderr,
              "%s: %d candidate%s lost with ranks that stopped answering; "
              "the log is whole, and --resume measures them again.  Ending "
              "the job with MPI_Abort (a rank that hangs cannot end in "
              "order), exit status %d\n",
              cli_prog(), rm.lost, rm.lost == 1 ? " was" : "s were", st);
      MPI_Abort(MPI_COMM_WORLD, st);
    }
    /* Every lost rank's process has ended: the others are told to end
     * and every rank ends without MPI_Finalize, whose fence can wait for
     * the lost rank forever (OpenMPI 4.1 under --enable-recovery, now and
     * then).  The message is sent synchronously, so it has arrived. */
    fprintf(stderr,
            "%s: %d candidate%s lost with ranks that are gone; the log is "
            "whole, and --resume measures them again.  Exit status %d\n",
            cli_prog(), rm.lost, rm.lost == 1 ? " was" : "s were", st);
    end_after_loss(st);
  }
  for (int r = 1; r < world_size; r++)
    if (rm.peers && rm.peers[r].alive)
      MPI_Send(NULL, 0, MPI_BYTE, r, TAG_STOP, MPI_COMM_WORLD);
  MPI_Finalize();
}

#endif
