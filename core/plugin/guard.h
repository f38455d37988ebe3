/* core/plugin/guard.h - plugin faults are contained and named, internal.
 *
 * A tuning run calls into plugins it did not write.  When one of those
 * calls crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) or does not
 * return within its time limit, the run must stop with exit status 1 and a
 * message that names the plugin file and the function, e.g.
 *
 *   heron: strategy plugin /x/crash.so crashed in propose (SIGSEGV); the
 *   run stops. <where>
 *   heron: model plugin /x/hang.so did not return from fit within 10 s
 *   (--plugin-timeout / --time-limit; found 10.1 s into the call); the run
 *   stops. <where>
 *
 * The time "found ... into the call" is the watchdog's own measure of how
 * long the call had run when it was caught, so a test can bound the
 * detection without timing the whole process.
 *
 * A tool's stop signal (SIGINT / SIGTERM, heron__guard_watch_stop) normally
 * ends the run in order between plugin calls; a call that is still running
 * a grace period after the signal (a plugin that never returns, a pipe
 * program that never answers) would hold the run until its time limit, so
 * the watchdog ends the process then, with status 128 + the signal:
 *
 *   heron: SIGINT: the strategy plugin /x/hang.so is blocked in propose
 *   (for 12.3 s; still 2 s after the signal); the run stops without
 *   waiting for it (exit status 130). <where>
 *
 * rather than with a bare "Segmentation fault" or a tuner that hangs.  The
 * log stays whole because the engine flushes it at each round's end and
 * the guard ends the process with _exit, which writes nothing more.
 *
 * Use: heron__guard_open once per tuning run (after the measurement runner
 * is forked, since it starts a thread), heron__guard_enter /
 * heron__guard_leave around every call into a plugin, heron__guard_close
 * after the last plugin call (after the strategy's destroy and
 * heron__model_close).
 *
 * How it works.  heron__guard_open installs a handler for the five fatal
 * signals with sigaction(SA_SIGINFO | SA_ONSTACK), gives the calling
 * thread an alternate signal stack when it has none (so a plugin's stack
 * overflow is caught, in that thread; other threads are covered for every
 * fault but a stack overflow, unless they have an alternate stack of their
 * own, as under AddressSanitizer), and starts a watchdog thread that looks
 * at the active calls ten times a second.  enter / leave mark calls in a
 * fixed table of frames with atomics only (a clock read, no locks, no
 * system calls), so they may be used around every predict().
 *
 * On a fatal signal in any thread while a guarded call is active, the
 * handler names the innermost active call of the faulting thread, or when
 * that thread has none (a model's OpenMP worker, a thread a strategy
 * started) the most recently entered active call of the process; it writes
 * the message with write(2) alone (async-signal-safe) and calls _exit(1).
 * With no guarded call active it restores the disposition that was there
 * before heron__guard_open (the default, a sanitizer's, the host's) and lets
 * the signal take its course, so libheron's own bugs still crash normally
 * and sanitizers still report them.
 *
 * Global state.  libheron keeps no mutable global state, with this one
 * documented exception: a signal handler can reach nothing but globals, so
 * this module keeps one process-wide atomic pointer to the open guard (and
 * a thread-local index of each thread's innermost call, used by enter and
 * leave only).  Hence only one guard may be open at a time in a process:
 * heron_tune is never run concurrently in one process, and
 * heron__guard_open returns HERON_EINVAL while another guard is open (a
 * process forked from one that had a guard open inherits that state and
 * must not open its own).
 */
#ifndef HERON_CORE_PLUGIN_GUARD_H
#define HERON_CORE_PLUGIN_GUARD_H

#include <signal.h>

#include "heron/status.h"

typedef struct heron__guard heron__guard; /* one per tuning run */

/* Installs the fatal-signal handlers and starts the watchdog.  Messages go
 * to `out_fd` (normally 2).  `where` (may be NULL) is appended to each
 * message after "the run stops. ", e.g. "the log runs/x.jsonl holds every
 * trial measured before this round"; it is copied.  Returns HERON_OK, or
 * HERON_EINVAL when a guard is already open in this process, HERON_ENOMEM,
 * HERON_EIO when a signal handler or the thread cannot be set up (nothing
 * is left installed then). */
int heron__guard_open(heron__guard **g, int out_fd, const char *where,
                      heron_error *err);

/* Has the watchdog look at the tool's stop flag (heron_tune_options.stop,
 * set by its SIGINT / SIGTERM handler to the signal's number; NULL: none):
 * once it is set, a guarded call still running grace_s seconds after both
 * the signal and its own start ends the process, with the message above
 * and status 128 + the flag's value.  Call it after open, before the
 * first guarded call. */
void heron__guard_watch_stop(heron__guard *g, const volatile sig_atomic_t *stop,
                             double grace_s);

/* Stops the watchdog, restores the handlers and the alternate signal stack
 * that were there before, and frees g.  No guarded call may be active
 * (close after the last leave).  NULL is accepted. */
void heron__guard_close(heron__guard *g);

/* Marks the start of a call into a plugin: `kind` "strategy" or "model",
 * `path` the plugin's file, `fn` the member called ("propose", "fit",
 * ...).  The three strings are not copied: they must stay valid until the
 * matching leave (string literals and heron__plugin.path are).  `limit_s`
 * is the call's time limit in seconds; <= 0 means none.  Calls nest, per
 * thread: an inner call (predict inside propose) is the one named and
 * timed while it runs; when it returns, the outer call is timed again from
 * its own start.  Each enter must be paired with one leave in the same
 * thread.  A NULL g makes enter and leave no-ops.  More than 64 calls
 * active at once (across threads) are not guarded beyond the 64th. */
void heron__guard_enter(heron__guard *g, const char *kind, const char *path,
                        const char *fn, double limit_s);

/* Marks the end of the calling thread's innermost guarded call. */
void heron__guard_leave(heron__guard *g);

#endif
