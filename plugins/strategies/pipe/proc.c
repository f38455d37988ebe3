/* plugins/strategies/pipe/proc.c - the child process of the pipe strategy.
 *
 * See proc.h for what it guarantees.  Three things are worth knowing when
 * reading this file:
 *
 *   - fork() happens in a host with threads (the engine's watchdog, the
 *     measurement runner, our own stderr relays), so between fork and exec
 *     the child only makes async-signal-safe calls: every path and argument
 *     is prepared before the fork, and an exec failure travels back as an
 *     errno through a close-on-exec pipe.
 *   - The host's pipes to the child are non-blocking and every wait is a
 *     poll() with a deadline, so a child that neither reads nor writes costs
 *     at most the deadline.
 *   - The stderr relay is a thread because the child may write to stderr at
 *     any time, also while the host is busy measuring; an unread stderr pipe
 *     would fill and block the child.
 */
#define _GNU_SOURCE
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plugin_util.h"

/* The longest stderr line relayed in one piece; longer ones are cut into
 * pieces of this size, each a line of its own. */
#define RELAY_LINE 4000
/* Bytes read from the child's stdout at most per read(). */
#define READ_CHUNK 65536

struct pipe_relay {
  pthread_t thread;
  int fd;      /* the child's stderr, our end */
  int wake[2]; /* written by pipe_proc_stop: drain what is there and stop */
  char prefix[96];
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done; /* the thread reached the end of the child's stderr */
};

/* Milliseconds left until `deadline`, for poll(): at least 0. */
static int ms_left(double deadline) {
  double left = (deadline - plugin_now()) * 1e3;
  if (left <= 0)
    return 0;
  return left > 1e9 ? 1000000000 : (int)left + 1;
}

static void close_fd(int *fd) {
  if (*fd >= 0)
    close(*fd);
  *fd = -1;
}

/* ---- stderr relay ---------------------------------------------------------
 * One write(2) per line, prefix included, so concurrent writers (the host's
 * progress lines, another child) never split it. */

size_t pipe_sanitize(char *out, size_t cap, const char *in, size_t n) {
  size_t k = 0;
  if (cap == 0)
    return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)in[i];
    int c1 = c == 0xc2 && i + 1 < n && (unsigned char)in[i + 1] >= 0x80 &&
             (unsigned char)in[i + 1] <= 0x9f;
    if ((c < 0x20 && c != '\t') || c == 0x7f || c1) {
      unsigned v = c1 ? (unsigned char)in[++i] : c;
      if (k + 7 > cap)
        break;
      k += (size_t)snprintf(out + k, cap - k, c1 ? "\\u%04x" : "\\x%02x", v);
      continue;
    }
    if (k + 2 > cap)
      break;
    out[k++] = (char)c;
  }
  out[k] = '\0';
  return k;
}

static void relay_emit(pipe_relay *r, const char *line, size_t n) {
  /* Each byte becomes at most four ("\x1b"). */
  char out[sizeof r->prefix + 4 * RELAY_LINE + 2];
  size_t k = strlen(r->prefix);
  memcpy(out, r->prefix, k);
  /* A CRLF line's CR is the line's end, not a character of it. */
  if (n > 0 && line[n - 1] == '\r')
    n--;
  k += pipe_sanitize(out + k, sizeof out - k - 1, line, n);
  out[k++] = '\n';
  size_t off = 0;
  while (off < k) {
    ssize_t w = write(2, out + off, k - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return; /* stderr is gone: nothing better to do than drop it */
    off += (size_t)w;
  }
}

static void *relay_main(void *arg) {
  pipe_relay *r = arg;
  char line[RELAY_LINE];
  size_t n = 0;
  int stop = 0;
  for (;;) {
    struct pollfd pf[2] = {{r->fd, POLLIN, 0}, {r->wake[0], POLLIN, 0}};
    /* After a stop request, take only what is already there. */
    int rc = poll(pf, stop ? 1 : 2, stop ? 0 : -1);
    if (rc < 0 && errno == EINTR)
      continue;
    if (rc < 0 || (stop && rc == 0))
      break;
    if (!stop && (pf[1].revents & POLLIN)) {
      stop = 1;
      continue;
    }
    char chunk[4096];
    ssize_t got = read(r->fd, chunk, sizeof chunk);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (got <= 0)
      break; /* end of the child's stderr */
    for (ssize_t i = 0; i < got; i++) {
      if (chunk[i] == '\n') {
        relay_emit(r, line, n);
        n = 0;
        continue;
      }
      line[n++] = chunk[i];
      if (n == RELAY_LINE) {
        relay_emit(r, line, n);
        n = 0;
      }
    }
  }
  if (n > 0)
    relay_emit(r, line, n); /* an unfinished last line, finished for it */
  pthread_mutex_lock(&r->mu);
  r->done = 1;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

static pipe_relay *relay_start(int fd, const char *name) {
  pipe_relay *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->fd = fd;
  snprintf(r->prefix, sizeof r->prefix, "[%s] ", name);
  if (pipe2(r->wake, O_CLOEXEC) != 0) {
    free(r);
    return NULL;
  }
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
  if (pthread_create(&r->thread, NULL, relay_main, r) != 0) {
    close(r->wake[0]);
    close(r->wake[1]);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
    return NULL;
  }
  return r;
}

/* Waits until the relay has copied the child's stderr to its end, at most
 * until `deadline`. */
static void relay_wait(pipe_relay *r, double deadline) {
  if (!r)
    return;
  pthread_mutex_lock(&r->mu);
  while (!r->done && plugin_now() < deadline) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 10 * 1000000;
    if (ts.tv_nsec >= 1000000000) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&r->cv, &r->mu, &ts);
  }
  pthread_mutex_unlock(&r->mu);
}

/* Stops the relay (it first copies whatever is already in the pipe) and
 * frees it. */
static void relay_stop(pipe_relay *r) {
  if (!r)
    return;
  char c = 1;
  while (write(r->wake[1], &c, 1) < 0 && errno == EINTR)
    ;
  pthread_join(r->thread, NULL);
  close(r->wake[0]);
  close(r->wake[1]);
  close(r->fd);
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
  free(r);
}

/* ---- start ------------------------------------------------------------- */

void pipe_proc_init(pipe_proc *p) {
  memset(p, 0, sizeof *p);
  p->in_fd = p->out_fd = -1;
}

/* Runs in the child, between fork and exec: async-signal-safe calls only. */
static void child_exec(const char *path, char *const argv[], int in, int out,
                       int err, int report, pid_t parent) {
  /* Its own process group: a Ctrl-C at the terminal goes to the host, which
   * stops the run in order and then ends the child. */
  setpgid(0, 0);
  /* Die with the host, even when the host is killed with SIGKILL. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    _exit(127);
  /* All four descriptors are >= 3 (see pipe_proc_start), so these dup2 calls
   * cannot overwrite one another; dup2 clears close-on-exec on the copy. */
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
    goto fail;
  /* The host's other descriptors (logs, the measurement runner's pipes) are
   * none of the program's business. */
  if (report > 3)
    close_range(3, (unsigned)report - 1, 0);
  close_range((unsigned)report + 1, ~0u, 0);
  /* Signal handlers are reset by exec, but ignored signals and the mask are
   * inherited: give the program the defaults. */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP)
      sigaction(s, &dfl, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  execv(path, argv);
fail:;
  int e = errno;
  while (write(report, &e, sizeof e) < 0 && errno == EINTR)
    ;
  _exit(127);
}

/* A close-on-exec pipe whose both ends are >= 3. */
static int pipe_high(int fds[2]) {
  int raw[2];
  if (pipe2(raw, O_CLOEXEC) != 0)
    return -1;
  for (int i = 0; i < 2; i++) {
    fds[i] = raw[i];
    if (raw[i] < 3) {
      fds[i] = fcntl(raw[i], F_DUPFD_CLOEXEC, 3);
      close(raw[i]);
    }
  }
  if (fds[0] < 0 || fds[1] < 0) {
    close_fd(&fds[0]);
    close_fd(&fds[1]);
    return -1;
  }
  return 0;
}

int pipe_proc_start(pipe_proc *p, const char *path, char *const argv[],
                    const char *name, heron_error *err) {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, ex[2] = {-1, -1};
  if (pipe_high(in) || pipe_high(out) || pipe_high(er) || pipe_high(ex)) {
    int e = errno;
    close_fd(&in[0]), close_fd(&in[1]), close_fd(&out[0]), close_fd(&out[1]);
    close_fd(&er[0]), close_fd(&er[1]), close_fd(&ex[0]), close_fd(&ex[1]);
    return heron_error_set(err, HERON_EIO, "pipe: cannot make pipes: %s",
                           strerror(e));
  }
  /* No signal handler of the host may run in the child before exec resets
   * them, so every signal is blocked across the fork. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0)
    child_exec(path, argv, in[0], out[1], er[1], ex[1], parent);
  int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close_fd(&in[0]), close_fd(&out[1]), close_fd(&er[1]), close_fd(&ex[1]);
  if (pid < 0) {
    close_fd(&in[1]), close_fd(&out[0]), close_fd(&er[0]), close_fd(&ex[0]);
    return heron_error_set(err, HERON_EIO, "pipe: cannot fork: %s",
                           strerror(fork_errno));
  }
  /* The report pipe closes without a byte when exec succeeds. */
  int e = 0;
  ssize_t got;
  while ((got = read(ex[0], &e, sizeof e)) < 0 && errno == EINTR)
    ;
  close_fd(&ex[0]);
  if (got == (ssize_t)sizeof e) {
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
      ;
    close_fd(&in[1]), close_fd(&out[0]), close_fd(&er[0]);
    return heron_error_set(
        err, e == ENOENT || e == EACCES ? HERON_EINVAL : HERON_EIO,
        "pipe: cannot run %s: %s", path, strerror(e));
  }
  fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  p->pid = pid;
  p->in_fd = in[1];
  p->out_fd = out[0];
  p->reaped = 0;
  p->eof = 0;
  p->start = p->len = p->scan = 0;
  p->relay = relay_start(er[0], name);
  if (!p->relay) {
    close_fd(&er[0]);
    pipe_proc_stop(p, 0);
    return heron_error_set(err, HERON_EIO,
                           "pipe: cannot start the stderr relay thread");
  }
  return HERON_OK;
}

/* ---- write ------------------------------------------------------------- */

/* write(2) that turns the SIGPIPE of a closed pipe into EPIPE: SIGPIPE is
 * blocked in this thread for the call, and one the call raised is taken
 * back before the mask is restored (unless one was pending already, which
 * then is not ours to take). */
static ssize_t write_nosigpipe(int fd, const char *d, size_t n) {
  sigset_t pipe_set, old, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  sigpending(&pending);
  int was_pending = sigismember(&pending, SIGPIPE);
  ssize_t w = write(fd, d, n);
  int e = errno;
  if (w < 0 && e == EPIPE && !was_pending) {
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
      ;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = e;
  return w;
}

int pipe_proc_write(pipe_proc *p, const char *data, size_t n, double deadline) {
  size_t off = 0;
  if (p->in_fd < 0)
    return HERON_EIO;
  while (off < n) {
    ssize_t w = write_nosigpipe(p->in_fd, data + off, n - off);
    if (w > 0) {
      off += (size_t)w;
      continue;
    }
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0 && errno != EAGAIN)
      return HERON_EIO; /* EPIPE: the child closed its stdin or is gone */
    struct pollfd pf = {p->in_fd, POLLOUT, 0};
    int rc = poll(&pf, 1, ms_left(deadline));
    if (rc == 0)
      return HERON_ETIMEOUT;
    if (rc < 0 && errno != EINTR)
      return HERON_EIO;
  }
  return HERON_OK;
}

/* ---- read -------------------------------------------------------------- */

/* Makes room for at least READ_CHUNK more bytes, moving the unread bytes to
 * the front first. */
static int make_room(pipe_proc *p) {
  if (p->start > 0) {
    memmove(p->buf, p->buf + p->start, p->len - p->start);
    p->len -= p->start;
    p->start = 0;
  }
  if (p->cap - p->len > READ_CHUNK)
    return 0;
  size_t cap = p->cap ? p->cap * 2 : 2 * READ_CHUNK;
  char *b = realloc(p->buf, cap);
  if (!b)
    return -1;
  p->buf = b;
  p->cap = cap;
  return 0;
}

int pipe_proc_read_line(pipe_proc *p, double deadline, size_t max, char **line,
                        size_t *n) {
  for (;;) {
    /* Look for the newline only in bytes not searched before, so a long
     * line costs linear time. */
    size_t avail = p->len - p->start - p->scan;
    char *nl = avail ? memchr(p->buf + p->start + p->scan, '\n', avail) : NULL;
    if (nl) {
      char *s = p->buf + p->start;
      size_t k = (size_t)(nl - s);
      if (k > max)
        return HERON_ERANGE;
      if (k > 0 && s[k - 1] == '\r')
        k--; /* CRLF from a program on a Windows-minded runtime */
      s[k] = '\0';
      p->start = (size_t)(nl - p->buf) + 1;
      p->scan = 0;
      *line = s;
      *n = k;
      return HERON_OK;
    }
    p->scan = p->len - p->start;
    if (p->scan > max)
      return HERON_ERANGE;
    if (p->eof)
      return HERON_EIO;
    if (make_room(p) != 0)
      return HERON_ENOMEM;
    struct pollfd pf = {p->out_fd, POLLIN, 0};
    int rc = poll(&pf, 1, ms_left(deadline));
    if (rc < 0 && errno == EINTR)
      continue;
    if (rc == 0)
      return HERON_ETIMEOUT;
    /* Leave one byte for the terminating NUL a line may need. */
    ssize_t got = read(p->out_fd, p->buf + p->len, p->cap - p->len - 1);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (got <= 0)
      p->eof = 1;
    else
      p->len += (size_t)got;
  }
}

const char *pipe_proc_partial(const pipe_proc *p, size_t *n) {
  *n = p->len - p->start;
  return p->buf ? p->buf + p->start : "";
}

int pipe_proc_pending(pipe_proc *p) {
  if (p->len > p->start || p->eof)
    return 1;
  if (p->out_fd < 0)
    return 0;
  struct pollfd pf = {p->out_fd, POLLIN, 0};
  return poll(&pf, 1, 0) > 0;
}

/* ---- end --------------------------------------------------------------- */

/* Reaps the child if it has exited by `deadline`; 1 when reaped. */
static int reap_by(pipe_proc *p, double deadline) {
  if (p->reaped || p->pid <= 0)
    return p->reaped;
  for (;;) {
    int st;
    pid_t r = waitpid(p->pid, &st, WNOHANG);
    if (r == p->pid) {
      p->reaped = 1;
      p->wstatus = st;
      return 1;
    }
    if (r < 0 && errno != EINTR) {
      /* Someone else reaped it (a host that waits for any child): it is
       * gone, how it ended is unknown. */
      p->reaped = 1;
      p->wstatus = -1;
      return 1;
    }
    if (plugin_now() >= deadline)
      return 0;
    struct timespec ts = {0, 5 * 1000000};
    nanosleep(&ts, NULL);
  }
}

void pipe_proc_exit_text(pipe_proc *p, double wait_s, char *buf, size_t cap) {
  double deadline = plugin_now() + wait_s;
  if (!reap_by(p, deadline)) {
    snprintf(buf, cap, "is still running");
    return;
  }
  relay_wait(p->relay, deadline);
  int st = p->wstatus;
  if (st == -1)
    snprintf(buf, cap, "has ended");
  else if (WIFEXITED(st))
    snprintf(buf, cap, "exited with status %d", WEXITSTATUS(st));
  else if (WIFSIGNALED(st)) {
    const char *abbrev = sigabbrev_np(WTERMSIG(st));
    snprintf(buf, cap, "was killed by signal %d (SIG%s)", WTERMSIG(st),
             abbrev ? abbrev : "?");
  } else
    snprintf(buf, cap, "ended (wait status %d)", st);
}

/* Sends `sig` to the child's process group (it made one at start), or to
 * the child alone when the group is gone already. */
static void signal_child(pipe_proc *p, int sig) {
  if (kill(-p->pid, sig) != 0)
    kill(p->pid, sig);
}

void pipe_proc_stop(pipe_proc *p, double grace_s) {
  double t0 = plugin_now();
  close_fd(&p->in_fd);
  if (p->pid > 0) {
    p->stopped = 1;
    p->stop_signal = 0;
  }
  if (p->pid > 0 && !p->reaped) {
    if (!reap_by(p, plugin_now() + grace_s)) {
      p->stop_signal = SIGTERM;
      signal_child(p, SIGTERM);
      if (!reap_by(p, plugin_now() + 1.0)) {
        p->stop_signal = SIGKILL;
        signal_child(p, SIGKILL);
        reap_by(p, plugin_now() + 1e9);
      }
    }
  }
  /* Children the program left behind in its group may hold the stderr pipe
   * open (the relay has not seen its end yet); they go with it.  The group
   * outlives the reaped child while they exist, so its id is still ours. */
  if (p->pid > 0 && p->relay) {
    relay_wait(p->relay, plugin_now() + 0.05);
    pthread_mutex_lock(&p->relay->mu);
    int open = !p->relay->done;
    pthread_mutex_unlock(&p->relay->mu);
    if (open)
      kill(-p->pid, SIGKILL);
  }
  relay_stop(p->relay);
  p->relay = NULL;
  close_fd(&p->out_fd);
  free(p->buf);
  p->buf = NULL;
  p->start = p->len = p->cap = p->scan = 0;
  if (p->pid > 0)
    p->stop_s = plugin_now() - t0;
  p->pid = 0;
}
