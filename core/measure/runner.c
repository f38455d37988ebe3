/* core/measure/runner.c - the runner: the one process that forks workers.
 *
 * A worker must be forked from a process without threads (see
 * measure.h).  The tuner cannot promise that once a cost model has run an
 * OpenMP region, so heron__bench_init forks the runner while the tuner is
 * still single-threaded, and every run goes through it:
 *
 *     tuner                          runner                 worker
 *     heron__run_one --request-->    (first time: inputs,
 *                                     reference)
 *                                    heron__run_in_worker --fork-->  kernel
 *                    <--reply----    (status, time, error)
 *
 * Requests and replies are fixed-size records on a SOCK_SEQPACKET socket
 * pair, so each arrives whole or not at all, and sends use MSG_NOSIGNAL so
 * a dead peer is an error code rather than a SIGPIPE.  The runner ends when
 * the tuner closes its end (or dies: the kernel closes it then), so it can
 * never outlive the tuner by more than the run in progress.  A request
 * names the kernel: its artifact, the file and the toolchain's meta
 * (toolchain.h), which the toolchain's run in the worker reads.
 *
 * A process may hold several runners at once (one per task measured:
 * heron_measurer, heron-bench's tasks).  A runner forked after another
 * would inherit the tuner's end of the earlier one's socket and keep it
 * open, so closing that end would no longer end the earlier runner and
 * heron__runner_stop would wait for it forever.  So the tuner's ends of
 * the live runners are listed here, and each new runner closes them.
 */
#include "core/measure/measure.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct runner_request {
  heron__artifact art;
  double flops;
} runner_request;

typedef struct runner_reply {
  int rc;           /* HERON_OK, or the machinery failure of the runner */
  int status;       /* heron_meas_status */
  double seconds;   /* as heron_measurement */
  double gflops;    /* as heron_measurement */
  double max_error; /* as heron_measurement */
  char error[1024]; /* the measurement's error text, "" when OK */
  char rc_text[sizeof(((heron_error *)0)->text)]; /* when rc != OK */
} runner_reply;

/* send/recv that retry on EINTR.  Both return what the call returned. */
static ssize_t send_all(int fd, const void *p, size_t n) {
  ssize_t w;
  do
    w = send(fd, p, n, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
  return w;
}

static ssize_t recv_one(int fd, void *p, size_t n) {
  ssize_t r;
  do
    r = recv(fd, p, n, 0);
  while (r < 0 && errno == EINTR);
  return r;
}

/* Serves one request: prepares the data on first use, then runs. */
static void serve(heron__bench *b, const runner_request *q, runner_reply *a) {
  memset(a, 0, sizeof *a);
  heron_error err;
  heron_error_clear(&err);
  int rc = heron__bench_prepare_data(b, &err);
  heron_measurement m;
  memset(&m, 0, sizeof m);
  char *text = NULL;
  if (rc == HERON_OK)
    rc = heron__run_in_worker(b, &q->art, q->flops, &m, &text, &err);
  a->rc = rc;
  if (rc != HERON_OK) {
    snprintf(a->rc_text, sizeof a->rc_text, "%s", err.text);
    return;
  }
  a->status = m.status;
  a->seconds = m.seconds;
  a->gflops = m.gflops;
  a->max_error = m.max_error;
  snprintf(a->error, sizeof a->error, "%s", text ? text : "");
  free(text);
}

/* The runner's whole life; never returns.  SIGINT is ignored so that a
 * Ctrl-C in the terminal lets the tuner finish its round and close the
 * socket, which ends the runner in order. */
static void runner_main(heron__bench *b) {
  signal(SIGINT, SIG_IGN);
  runner_request q;
  runner_reply a;
  for (;;) {
    ssize_t r = recv_one(b->runner_fd, &q, sizeof q);
    if (r != (ssize_t)sizeof q)
      _exit(0); /* end of file (or a broken tuner): nothing more to do */
    q.art.path[sizeof q.art.path - 1] = '\0';
    serve(b, &q, &a);
    if (send_all(b->runner_fd, &a, sizeof a) != (ssize_t)sizeof a)
      _exit(0);
  }
}

/* The tuner's ends of the live runners' sockets (in the tuner). */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static int *live_fds;
static size_t live_n, live_cap;

/* Lists fd as a live runner's socket; -1 when out of memory. */
static int live_add(int fd) {
  if (live_n == live_cap) {
    size_t cap = live_cap ? 2 * live_cap : 8;
    int *g = realloc(live_fds, cap * sizeof *g);
    if (!g)
      return -1;
    live_fds = g;
    live_cap = cap;
  }
  live_fds[live_n++] = fd;
  return 0;
}

static void live_remove(int fd) {
  for (size_t i = 0; i < live_n; i++)
    if (live_fds[i] == fd) {
      live_fds[i] = live_fds[--live_n];
      return;
    }
}

int heron__runner_start(heron__bench *b, heron_error *err) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return heron_error_set(err, HERON_ERUN,
                           "cannot create the runner's socket: %s",
                           strerror(errno));
  /* Whatever stdio holds now would otherwise be flushed twice. */
  fflush(NULL);
  pthread_mutex_lock(&live_lock);
  if (live_add(sv[0]) != 0) {
    pthread_mutex_unlock(&live_lock);
    close(sv[0]);
    close(sv[1]);
    return heron_error_set(err, HERON_ENOMEM, "cannot list the runner");
  }
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    live_remove(sv[0]);
    pthread_mutex_unlock(&live_lock);
    close(sv[0]);
    close(sv[1]);
    return heron_error_set(err, HERON_ERUN, "cannot fork the runner: %s",
                           strerror(e));
  }
  if (pid == 0) {
    /* Its own tuner end and every earlier runner's (the top of the file). */
    for (size_t i = 0; i < live_n; i++)
      close(live_fds[i]);
    b->runner_fd = sv[1];
    b->runner_pid = 0;
    runner_main(b);
  }
  pthread_mutex_unlock(&live_lock);
  close(sv[1]);
  b->runner_fd = sv[0];
  b->runner_pid = pid;
  return HERON_OK;
}

void heron__runner_stop(heron__bench *b) {
  if (b->runner_fd >= 0) {
    pthread_mutex_lock(&live_lock);
    if (b->runner_pid > 0)
      live_remove(b->runner_fd);
    close(b->runner_fd);
    pthread_mutex_unlock(&live_lock);
  }
  b->runner_fd = -1;
  if (b->runner_pid > 0) {
    /* The runner leaves as soon as it reads end-of-file; a run in progress
     * ends within its own timeout, after which the runner's reply fails
     * and it leaves too. */
    while (waitpid(b->runner_pid, NULL, 0) < 0 && errno == EINTR)
      ;
  }
  b->runner_pid = 0;
}

/* Sends one run request to the runner and waits for its reply. */
static int run_kernel(heron__bench *b, const heron__artifact *art, double flops,
                      heron_measurement *m, char **error, heron_error *err) {
  m->status = HERON_MEAS_RUNTIME_ERROR;
  m->seconds = m->gflops = m->max_error = 0;
  m->error = "";
  m->simulated = 0;
  *error = NULL;
  if (b->runner_fd < 0)
    return heron_error_set(err, HERON_ERUN, "the measurement runner is gone");
  runner_request q;
  memset(&q, 0, sizeof q);
  q.art = *art;
  q.flops = flops;
  runner_reply *a = malloc(sizeof *a);
  if (!a)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  int rc = HERON_OK;
  if (send_all(b->runner_fd, &q, sizeof q) != (ssize_t)sizeof q)
    rc = heron_error_set(err, HERON_ERUN,
                         "cannot reach the measurement runner: %s",
                         strerror(errno));
  else if (recv_one(b->runner_fd, a, sizeof *a) != (ssize_t)sizeof *a)
    rc = heron_error_set(err, HERON_ERUN,
                         "the measurement runner (pid %d) ended without a "
                         "reply",
                         b->runner_pid);
  else if (a->rc != HERON_OK)
    rc = heron_error_set(err, a->rc, "%s", a->rc_text);
  if (rc == HERON_OK) {
    a->error[sizeof a->error - 1] = '\0';
    m->status = a->status;
    m->seconds = a->seconds;
    m->gflops = a->gflops;
    m->max_error = a->max_error;
    if (a->error[0]) {
      *error = strdup(a->error);
      m->error = *error ? *error : "";
    }
  }
  free(a);
  return rc;
}

int heron__run_one(heron__bench *b, const char *path, double flops,
                   heron_measurement *m, char **error, heron_error *err) {
  heron__artifact a;
  memset(&a, 0, sizeof a);
  if (strlen(path) >= sizeof a.path) {
    m->status = HERON_MEAS_RUNTIME_ERROR;
    m->error = "";
    *error = NULL;
    return heron_error_set(err, HERON_EINVAL, "kernel path too long: %s", path);
  }
  strcpy(a.path, path);
  return run_kernel(b, &a, flops, m, error, err);
}

int heron__run_candidate(heron__bench *b, const heron__candidate *c,
                         double flops, heron_measurement *m, char **error,
                         heron_error *err) {
  return run_kernel(b, &c->art, flops, m, error, err);
}
