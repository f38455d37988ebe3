/* core/util/status.c - status strings and the caller-owned error struct. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "heron/status.h"

HERON_API const char *heron_strerror(int code) {
  switch (code) {
#define HERON__STATUS_MSG(name, value, msg)                                    \
  case value:                                                                  \
    return msg;
    HERON_STATUS_MAP(HERON__STATUS_MSG)
#undef HERON__STATUS_MSG
  }
  return "unknown status";
}

HERON_API const char *heron_err_name(int code) {
  switch (code) {
#define HERON__STATUS_NAME(name, value, msg)                                   \
  case value:                                                                  \
    return "HERON_" #name;
    HERON_STATUS_MAP(HERON__STATUS_NAME)
#undef HERON__STATUS_NAME
  }
  return "HERON_UNKNOWN";
}

HERON_API void heron_error_clear(heron_error *err) {
  if (!err)
    return;
  err->code = HERON_OK;
  err->text[0] = '\0';
}

HERON_API int heron_error_set(heron_error *err, int code, const char *fmt,
                              ...) {
  /* The first error wins: the innermost message is the most specific. */
  if (!err || err->code != HERON_OK)
    return code;
  err->code = code;
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int len = vsnprintf(err->text, sizeof err->text, fmt, ap);
  va_end(ap);
  /* A message longer than text[] keeps its head and its tail: the reason
   * is usually last ("cannot open <a long path>: No such file..."), so
   * cutting the end alone would lose it.  The middle gives way to "...". */
  if (len >= (int)sizeof err->text) {
    char *full = malloc((size_t)len + 1);
    if (full) {
      vsnprintf(full, (size_t)len + 1, fmt, aq);
      const size_t cap = sizeof err->text - 1, tail = 100;
      const size_t head = cap - tail - 3;
      snprintf(err->text, sizeof err->text, "%.*s...%s", (int)head, full,
               full + (size_t)len - tail);
      free(full);
    }
  }
  va_end(aq);
  return code;
}

HERON_API void heron_free(void *p) { free(p); }
