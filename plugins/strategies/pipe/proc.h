/* plugins/strategies/pipe/proc.h - the pipe strategy's child process: start
 * it, talk to it in lines with deadlines, relay its stderr, end it.
 *
 * Nothing here knows JSON or the protocol; pipe.c does.  What this module
 * guarantees is that the host never blocks forever on the child and never
 * dies because of it:
 *
 *   - the child is started with fork/exec, in its own process group (a
 *     Ctrl-C at the terminal reaches the host, which ends the run in order,
 *     not the child) and with PR_SET_PDEATHSIG, so it dies with the host even
 *     when the host is killed outright;
 *   - every write and read has a deadline (poll on non-blocking pipes);
 *   - a write to a child that has gone returns HERON_EIO, never SIGPIPE:
 *     SIGPIPE is blocked in the writing thread for the write, and a SIGPIPE
 *     the write raised is taken back with sigtimedwait before unblocking;
 *   - a line longer than the cap is refused (HERON_ERANGE) without reading
 *     more of it than the cap;
 *   - the child's stderr is copied to the host's stderr by a thread, a whole
 *     line at a time, each prefixed "[NAME] ", so its lines never interleave
 *     with the host's or each other's mid-line, its control characters
 *     (escape sequences) made visible (pipe_sanitize);
 *   - pipe_proc_stop ends the child in steps (close its stdin, wait, SIGTERM,
 *     wait, SIGKILL) and always reaps it.
 *
 * One pipe_proc belongs to one strategy; none of it is shared or global.
 */
#ifndef HERON_PIPE_PROC_H
#define HERON_PIPE_PROC_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

#include "heron/status.h"

typedef struct pipe_relay pipe_relay; /* the stderr thread, in proc.c */

typedef struct pipe_proc {
  pid_t pid;   /* 0 when no child runs (never started, or reaped) */
  int in_fd;   /* our end of the child's stdin, non-blocking; -1 closed */
  int out_fd;  /* our end of the child's stdout, non-blocking; -1 closed */
  int reaped;  /* 1 once waitpid collected the child */
  int wstatus; /* its wait status, once reaped */
  /* Bytes read from stdout and not yet handed out: buf[start, len). */
  char *buf;
  size_t start, len, cap;
  size_t scan; /* bytes after start already searched for a newline */
  int eof;     /* the child closed its stdout */
  pipe_relay *relay;
  /* How the last pipe_proc_stop went: the seconds it took and the last
   * signal it had to send (0: the child exited by itself, SIGTERM,
   * SIGKILL); stopped is 1 once it ended a child. */
  int stopped;
  double stop_s;
  int stop_signal;
} pipe_proc;

/* Makes p a pipe_proc with no child (descriptors -1), as pipe_proc_stop
 * leaves it. */
void pipe_proc_init(pipe_proc *p);

/* Starts `path` (a file name with a '/', already resolved) with argv
 * (argv[0] included, NULL-terminated) and the host's environment and
 * working directory.  `name` prefixes the relayed stderr lines ("[name] ").
 * On failure (pipes, fork, or an exec that failed: its errno is reported
 * back through a close-on-exec pipe) nothing is left running and err says
 * why: HERON_EIO, or HERON_EINVAL when the file cannot be executed.  p was
 * made by pipe_proc_init or left by pipe_proc_stop. */
int pipe_proc_start(pipe_proc *p, const char *path, char *const argv[],
                    const char *name, heron_error *err);

/* Writes data[0..n) to the child's stdin by the monotonic `deadline` (in
 * seconds, as pipe_proc_now).  HERON_OK, HERON_EIO when the child closed
 * its stdin or is gone, HERON_ETIMEOUT when it stopped reading. */
int pipe_proc_write(pipe_proc *p, const char *data, size_t n, double deadline);

/* Reads one line of the child's stdout by `deadline`.  On HERON_OK *line
 * points to it (NUL-terminated, without the newline; valid until the next
 * call) and *n is its length.  HERON_EIO: the child closed its stdout
 * (an unfinished last line stays readable through pipe_proc_partial);
 * HERON_ETIMEOUT: no whole line came in time; HERON_ERANGE: the line
 * already holds more than `max` bytes (its first bytes are in
 * pipe_proc_partial). */
int pipe_proc_read_line(pipe_proc *p, double deadline, size_t max, char **line,
                        size_t *n);

/* The bytes read but not handed out (an unfinished or refused line), for
 * quoting in an error message. */
const char *pipe_proc_partial(const pipe_proc *p, size_t *n);

/* 1 when the child has written something not yet read (or closed its
 * stdout): used to catch a message sent out of turn. */
int pipe_proc_pending(pipe_proc *p);

/* Waits up to wait_s seconds for the child to exit and reaps it; then
 * describes how it ended into buf: "exited with status 3", "was killed by
 * signal 11 (SIGSEGV)", or "is still running".  Also waits (up to the same
 * time) for its stderr to be relayed to the end, so a traceback it printed
 * appears before the host's message about it. */
void pipe_proc_exit_text(pipe_proc *p, double wait_s, char *buf, size_t cap);

/* Ends the child: closes its stdin (a well-behaved program exits on EOF),
 * waits up to grace_s, then SIGTERM to its process group, one more second,
 * then SIGKILL; reaps it, stops the stderr relay and frees the buffers.
 * grace_s 0 kills at once.  Safe to call twice and on a never-started
 * pipe_proc.  Records how long it took and how the child ended in
 * stopped / stop_s / stop_signal. */
void pipe_proc_stop(pipe_proc *p, double grace_s);

/* Copies in[0..n) into out (NUL-terminated, at most cap bytes with the
 * NUL) for a terminal: control characters but tab (C0, DEL, and C1 as
 * UTF-8 U+0080..U+009F) become visible escapes ("\x1b"), so a program's
 * text cannot move the cursor, recolour or retitle the user's terminal.
 * Returns the bytes written, without the NUL. */
size_t pipe_sanitize(char *out, size_t cap, const char *in, size_t n);

#endif /* HERON_PIPE_PROC_H */
