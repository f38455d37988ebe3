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
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->text, sizeof err->text, fmt, ap);
  va_end(ap);
  return code;
}

HERON_API void heron_free(void *p) { free(p); }
