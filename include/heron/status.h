/* heron/status.h - status codes and the caller-owned error struct.
 *
 * Every libheron function and every plugin callback that can fail returns an
 * int: HERON_OK (0) on success or one of the negative codes below.  The values
 * are fixed by this header and never taken from the platform's errno, so a
 * plugin built against one release reads the same codes in the next.
 *
 * Detail travels in a heron_error that the caller owns (on its stack, usually).
 * The first error recorded wins: later calls to heron_error_set on the same
 * struct leave it unchanged, so the innermost, most specific message survives
 * as the failure unwinds.  Every function that takes a `heron_error *err`
 * accepts NULL when the caller does not want the text.
 */
#ifndef HERON_STATUS_H
#define HERON_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Symbol visibility: libheron is built with -fvisibility=hidden and exports
 * exactly the functions marked HERON_API.  Plugins use HERON_PLUGIN_EXPORT on
 * their one entry symbol. */
#if defined(__GNUC__)
#define HERON_API __attribute__((visibility("default")))
#define HERON_PLUGIN_EXPORT __attribute__((visibility("default")))
#define HERON_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HERON_API
#define HERON_PLUGIN_EXPORT
#define HERON_PRINTF(f, a)
#endif

/* X(name, value, message): the one list of status codes. */
/* Levels of the log function plugins get in their env (strategy.h,
 * model.h).  The host prints info and warnings on its progress stream and
 * debug lines only under --verbose. */
#define HERON_LOG_INFO 0
#define HERON_LOG_WARN 1
#define HERON_LOG_DEBUG 2

#define HERON_STATUS_MAP(X)                                                    \
  X(OK, 0, "success")                                                          \
  X(EINVAL, -1, "invalid argument")                                            \
  X(ENOMEM, -2, "out of memory")                                               \
  X(EIO, -3, "input/output error")                                             \
  X(EPARSE, -4, "malformed input")                                             \
  X(ENOTFOUND, -5, "not found")                                                \
  X(EABI, -6, "plugin ABI mismatch")                                           \
  X(EUNSAT, -7, "no valid configuration exists or could be found")             \
  X(ERANGE, -8, "value out of range")                                          \
  X(EUNSUPPORTED, -9, "not supported")                                         \
  X(ETASK, -10, "log belongs to another task")                                 \
  X(EPLUGIN, -11, "plugin reported a failure")                                 \
  X(EBUILD, -12, "kernel build failed")                                        \
  X(ERUN, -13, "kernel run failed")                                            \
  X(ETIMEOUT, -14, "timed out")                                                \
  X(EWRONG, -15, "kernel output differs from the reference")                   \
  X(EBUDGET, -16, "budget exhausted")                                          \
  X(EINTERNAL, -17, "internal error")

typedef enum heron_status {
#define HERON__STATUS_ENUM(name, value, msg) HERON_##name = value,
  HERON_STATUS_MAP(HERON__STATUS_ENUM)
#undef HERON__STATUS_ENUM
} heron_status;

/* A static, human-readable message for `code` ("invalid argument").
 * Unknown codes give "unknown status". Never NULL, never to be freed. */
HERON_API const char *heron_strerror(int code);

/* The code's name as a static string ("HERON_EINVAL"); "HERON_UNKNOWN" for
 * codes not in the list. */
HERON_API const char *heron_err_name(int code);

/* Error detail owned by the caller.  `code` is HERON_OK until something
 * fails; `text` is always NUL-terminated. */
typedef struct heron_error {
  int code;
  char text[160];
} heron_error;

/* Resets `err` to HERON_OK with empty text. NULL is accepted. */
HERON_API void heron_error_clear(heron_error *err);

/* Records `code` and a printf-formatted message in `err` unless `err` already
 * holds an error (the first error wins) or is NULL.  A message longer than
 * `text` keeps its first 56 and last 100 characters around "...", so the
 * reason at its end survives a long path.  Returns `code`, so a failing
 * function can `return heron_error_set(err, HERON_EINVAL, ...)`. */
HERON_API int heron_error_set(heron_error *err, int code, const char *fmt, ...)
    HERON_PRINTF(3, 4);

/* Frees memory that a libheron function documents as "free with heron_free"
 * (generated source text, for instance). NULL is accepted. */
HERON_API void heron_free(void *p);

#ifdef __cplusplus
}
#endif
#endif /* HERON_STATUS_H */
