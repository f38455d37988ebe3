/* core/tune/engine_log.c - the run's log (engine.h): claimed (locked, so
 * two runs never write one log, an older one moved aside), resumed (a
 * half-written last line repaired, the trial numbers and the clock
 * continued) and written. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/record/record.h"
#include "core/task/task.h"
#include "core/tune/engine.h"
#include "core/util/util.h"

/* Moves an existing, non-empty log aside instead of overwriting it, so a
 * log already written is never lost. */
static int set_aside(const char *path, run *r, heron_error *err) {
  struct stat st;
  if (stat(path, &st) != 0 || st.st_size == 0)
    return HERON_OK;
  char aside[HERON__PATH_BUF];
  for (int i = 1; i < 10000; i++) {
    snprintf(aside, sizeof aside, "%s.%d", path, i);
    if (access(aside, F_OK) != 0)
      break;
  }
  if (rename(path, aside) != 0)
    return heron_error_set(err, HERON_EIO,
                           "cannot move the old log %s aside: %s", path,
                           strerror(errno));
  heron__tune_progress(
      r,
      "note: %s existed; moved it to %s (use --resume to continue a "
      "log)\n",
      path, aside);
  return HERON_OK;
}

/* The process that holds a flock on the file of inode `ino`, from
 * /proc/locks ("1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF"), or 0
 * when it cannot be told. */
static long lock_holder(ino_t ino) {
  FILE *f = fopen("/proc/locks", "r");
  if (!f)
    return 0;
  char line[256];
  long pid = 0;
  while (!pid && fgets(line, sizeof line, f)) {
    char kind[16], mode[16], dev[64];
    long p = 0;
    unsigned long long lino = 0;
    const char *c = strchr(line, ':');
    if (!c || sscanf(c + 1, "%15s %*s %15s %ld %63s", kind, mode, &p, dev) != 4)
      continue;
    const char *last = strrchr(dev, ':');
    if (last && sscanf(last + 1, "%llu", &lino) == 1 &&
        lino == (unsigned long long)ino && !strcmp(kind, "FLOCK"))
      pid = p;
  }
  fclose(f);
  return pid;
}

/* "process 4242 (heron-search)", or "another process". */
static void describe_process(long pid, char *buf, size_t cap) {
  if (pid <= 0) {
    snprintf(buf, cap, "another process");
    return;
  }
  char path[64], comm[64] = "";
  snprintf(path, sizeof path, "/proc/%ld/comm", pid);
  FILE *f = fopen(path, "r");
  if (f) {
    if (fgets(comm, sizeof comm, f))
      comm[strcspn(comm, "\n")] = '\0';
    fclose(f);
  }
  if (comm[0])
    snprintf(buf, cap, "process %ld (%s)", pid, comm);
  else
    snprintf(buf, cap, "process %ld", pid);
}

/* Opens `path` (created if missing) and takes an exclusive flock on it
 * without waiting.  A file another live run holds is refused, naming that
 * process.  The lock is checked to be on the file the path names now (a
 * run that just moved the file aside may have locked the old one).  *fd
 * gets the descriptor, open for appending. */
static int lock_file(const char *path, int *fd, heron_error *err) {
  for (int tries = 0; tries < 100; tries++) {
    /* O_NONBLOCK: a FIFO at the path must not block the open (a FIFO
     * without a reader fails with ENXIO); whatever is not a regular file
     * is refused, for every caller of the library, not only the tools. */
    int f = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK,
                 0666);
    if (f < 0)
      return heron_error_set(err, HERON_EIO, "cannot open log %s: %s", path,
                             errno == ENXIO ? "it is a FIFO, not a file"
                                            : strerror(errno));
    struct stat held, named;
    if (fstat(f, &held) == 0 && !S_ISREG(held.st_mode)) {
      close(f);
      return heron_error_set(err, HERON_EIO, "log %s is not a regular file",
                             path);
    }
    fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK);
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
      int e = errno;
      char who[128];
      describe_process(fstat(f, &held) == 0 ? lock_holder(held.st_ino) : 0, who,
                       sizeof who);
      close(f);
      if (e == EWOULDBLOCK)
        return heron_error_set(err, HERON_EIO,
                               "log %s is in use by %s, another tuning run; "
                               "wait for it to end, or give another --log",
                               path, who);
      return heron_error_set(err, HERON_EIO, "cannot lock log %s: %s", path,
                             strerror(e));
    }
    if (fstat(f, &held) == 0 && stat(path, &named) == 0 &&
        held.st_ino == named.st_ino && held.st_dev == named.st_dev) {
      *fd = f;
      return HERON_OK;
    }
    close(f); /* moved or removed since it was opened: again */
  }
  return heron_error_set(err, HERON_EIO,
                         "cannot lock log %s: it keeps being replaced", path);
}

/* Takes the log for this run before anything reads or writes it: locked,
 * so that two runs never write one log, and an older log moved aside (when
 * the run does not resume it) so that it is never overwritten.  A dry run
 * only checks that no other run holds it, and creates nothing. */
int heron__tune_claim_log(run *r, heron_error *err) {
  const heron_tune_options *o = r->o;
  r->log_fd = -1;
  if (!o->log_path)
    return HERON_OK;
  if (o->dry_run) {
    if (access(o->log_path, F_OK) != 0)
      return HERON_OK;
    int rc = lock_file(o->log_path, &r->log_fd, err);
    if (rc == HERON_OK) {
      close(r->log_fd);
      r->log_fd = -1;
    }
    return rc;
  }
  int rc = lock_file(o->log_path, &r->log_fd, err);
  int same = o->resume_path && !strcmp(o->resume_path, o->log_path);
  struct stat st;
  if (rc || same || fstat(r->log_fd, &st) != 0 || st.st_size == 0)
    return rc;
  /* Held by this run now, so moving it aside races with nobody. */
  rc = set_aside(o->log_path, r, err);
  close(r->log_fd);
  r->log_fd = -1;
  return rc ? rc : lock_file(o->log_path, &r->log_fd, err);
}

/* Starts writing the claimed log: a fresh one gets the resumed history
 * first; a resumed one already holds it. */
int heron__tune_open_log(run *r, heron_error *err) {
  const heron_tune_options *o = r->o;
  /* The machine measuring, on every line; none for simulated answers. */
  r->log_ctx.hardware = r->simulated ? NULL : r->task->hw.name;
  if (r->log_fd < 0)
    return HERON_OK;
  int same = o->resume_path && !strcmp(o->resume_path, o->log_path);
  /* The stream gets a descriptor of its own, so that closing it leaves the
   * lock, held by log_fd, in place until the run ends.  Close-on-exec like
   * log_fd: a compiler started by this run must not inherit the file (and
   * with it the lock, which would outlive a killed run). */
  int fd = fcntl(r->log_fd, F_DUPFD_CLOEXEC, 0);
  r->log = fd >= 0 ? fdopen(fd, "a") : NULL;
  if (!r->log) {
    if (fd >= 0)
      close(fd);
    return heron_error_set(err, HERON_EIO, "cannot open log %s: %s",
                           o->log_path, strerror(errno));
  }
  if (same)
    return HERON_OK;
  for (int i = 0; i < r->hist.n; i++) {
    r->log_ctx.elapsed = r->elapsed ? r->elapsed[i] : 0;
    int rc =
        heron__log_write(r->log, r->sp, &r->log_ctx, r->hist.items[i], err);
    if (rc)
      return rc;
  }
  if (fflush(r->log) != 0)
    return heron_error_set(err, HERON_EIO, "cannot write log %s: %s",
                           o->log_path, strerror(errno));
  return HERON_OK;
}

/* The highest "trial" of the log at `path` (0 when none): its lines that
 * are not JSON objects with an integer trial are left to the reader, which
 * has accepted the log already. */
static int log_last_trial(const char *path, int *last, heron_error *err) {
  char *text = NULL;
  size_t len = 0;
  *last = 0;
  int rc = heron__read_file(path, &text, &len, err);
  if (rc)
    return rc;
  for (char *line = text; line < text + len;) {
    char *nl = memchr(line, '\n', (size_t)(text + len - line));
    size_t n = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
    json_t *o = json_loadb(line, n, 0, NULL);
    json_t *trial = json_object_get(o, "trial");
    if (json_is_integer(trial) && json_integer_value(trial) > *last &&
        json_integer_value(trial) < INT_MAX / 2)
      *last = (int)json_integer_value(trial);
    json_decref(o);
    line += n + 1;
  }
  free(text);
  return HERON_OK;
}

/* Reads the log to resume from, cutting a half-written last line off the
 * file so appends continue a well-formed log. */
int heron__tune_resume(run *r, heron_error *err) {
  const char *path = r->o->resume_path;
  if (!path)
    return HERON_OK;
  int dropped = 0;
  long valid = 0;
  /* A timed run measures again what was only built or emulated; every run
   * measures again what the environment failed. */
  heron__log_retry retry = {.untimed = !r->compile_only && !r->emulate};
  int rc = heron__log_read_resume(path, r->sp, heron_task_key(r->task),
                                  &r->hist, &r->rng, &dropped, &valid,
                                  &r->elapsed, &retry, err);
  if (rc)
    return rc;
  r->retry = retry.cfgs;
  r->nretry = retry.n;
  /* New trials are numbered after every record of the log, those set
   * aside to measure again included: a number is never given twice. */
  rc = log_last_trial(path, &r->trial_last, err);
  if (rc)
    return rc;
  if (r->trial_last < r->hist.n)
    r->trial_last = r->hist.n;
  /* New trials continue the resumed log's clock. */
  r->elapsed_cap = r->hist.n;
  for (int i = 0; i < r->hist.n; i++)
    if (r->elapsed[i] > r->elapsed_base)
      r->elapsed_base = r->elapsed[i];
  if (dropped) {
    heron__tune_progress(
        r,
        "note: %s ended with a half-written line (a killed run); "
        "dropped it\n",
        path);
    if (r->o->log_path && !strcmp(r->o->log_path, path) && !r->o->dry_run &&
        truncate(path, valid) != 0)
      return heron_error_set(err, HERON_EIO, "cannot repair %s: %s", path,
                             strerror(errno));
  }
  /* A last line cut before its newline parses but must not run into the
   * next record. */
  if (r->o->log_path && !strcmp(r->o->log_path, path) && !r->o->dry_run &&
      valid > 0) {
    FILE *f = fopen(path, "r+");
    if (f && fseek(f, valid - 1, SEEK_SET) == 0 && fgetc(f) != '\n') {
      fseek(f, 0, SEEK_END);
      fputc('\n', f);
    }
    if (f)
      fclose(f);
  }
  r->res->resumed = r->hist.n;
  heron__tune_progress(r, "resumed %d trials from %s\n", r->hist.n, path);
  if (r->nretry)
    heron__tune_progress(
        r,
        "note: %d resumed config%s will be measured again first "
        "(untimed by --compile-only or --emulate, or failed by the "
        "environment)\n",
        r->nretry, r->nretry > 1 ? "s" : "");
  return HERON_OK;
}

int heron__tune_flush_log(run *r, heron_error *err) {
  if (r->log && fflush(r->log) != 0)
    return heron_error_set(err, HERON_EIO, "cannot write log %s: %s",
                           r->o->log_path, strerror(errno));
  return HERON_OK;
}
