/* core/op/prepack.c - the task option prepack: which of an op's inputs are
 * constant across calls (a network's weights at inference), so that a
 * kernel packing them may do so once, ahead of its calls.  The op carries
 * the set as a bit mask; the code generator and the harness read it. */
#include <stdio.h>
#include <string.h>

#include "core/op/op.h"

/* "data, weight": the op's input names, for messages. */
static void input_names(const heron__op *op, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < op->ninputs && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "",
                          op->in[i].name);
}

int heron__op_set_prepack(heron__op *op, const char *text, heron_error *err) {
  op->prepack = 0;
  if (!text || !*text || !strcmp(text, "none"))
    return HERON_OK;
  char names[128];
  input_names(op, names, sizeof names);
  const char *p = text;
  for (;;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    int found = -1;
    for (int i = 0; i < op->ninputs; i++)
      if (strlen(op->in[i].name) == len && !strncmp(op->in[i].name, p, len))
        found = i;
    if (found < 0)
      return heron_error_set(err, HERON_EINVAL,
                             "--prepack: %s has no input '%.*s' (its inputs: "
                             "%s)",
                             op->name, (int)len, p, names);
    if (op->prepack & (1u << found))
      return heron_error_set(err, HERON_EINVAL,
                             "--prepack: '%s' is given twice in '%s'",
                             op->in[found].name, text);
    op->prepack |= 1u << found;
    if (!end)
      return HERON_OK;
    p = end + 1;
  }
}

const char *heron__prepack_name(const heron__op *op, char *buf, size_t cap) {
  size_t n = 0;
  if (cap)
    buf[0] = '\0';
  for (int i = 0; i < op->ninputs && n < cap; i++)
    if (op->prepack & (1u << i))
      n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "," : "",
                            op->in[i].name);
  return buf;
}
