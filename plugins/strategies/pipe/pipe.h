/* plugins/strategies/pipe/pipe.h - what the pipe strategy's files share:
 * the protocol's constants, the strategy's state, configs and the space on
 * the wire (wire.c) and the answers to the program's requests (ops.c).
 * pipe.c speaks the protocol; proc.c runs the child process.
 */
#ifndef HERON_PIPE_PIPE_H
#define HERON_PIPE_PIPE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "heron/strategy.h"
#include "proc.h"

/* The protocol version this host speaks; "hello" carries it and "ready"
 * must repeat it. */
#define PIPE_PROTOCOL 1
/* The longest line the program may send: a longer one is a protocol
 * failure, refused after reading this many bytes. */
#define PIPE_MAX_LINE ((size_t)16 << 20)
/* Bytes of the program's output quoted on stderr, and in the (shorter)
 * error text the run ends with. */
#define PIPE_QUOTE_LOG 200
#define PIPE_QUOTE_ERR 60
/* Seconds the program gets to exit after "bye" before it is terminated. */
#define PIPE_BYE_GRACE 2.0
/* Sampling failures tolerated in one round of random proposals. */
#define PIPE_RETRIES 100

typedef struct pipe_strategy {
  const heron_strategy_env *env;
  const heron_space *sp;
  int nvars, nknobs;
  int *knobs;     /* variable index of each knob */
  char name[64];  /* the program's file name, for messages */
  char *path;     /* the program, resolved */
  char **argv;    /* argv[0] = path, then the split args; NULL-terminated */
  double timeout; /* seconds per message */
  int fallback;   /* 1: random proposals after a protocol failure */
  pipe_proc proc;
  int live;      /* the program runs and the conversation is in order */
  int degraded;  /* a protocol failure happened; proposals are random */
  int arrays;    /* the program wants configs as full arrays */
  int has_state; /* the program keeps state across --resume */
  json_int_t next_id;
  /* When the host sent its last request and which ("'propose' (id 4)"),
   * for the debug line that says how long the program took to be ended
   * after it. */
  double sent_at;
  char sent[128];
  /* The start of the last line it sent (one byte more than is ever
   * quoted) and that line's whole length, for quoting should it die before
   * its next line. */
  char last[PIPE_QUOTE_LOG + 1];
  size_t last_n;
  int64_t *cfg, *cfg2, *cfg3; /* scratch configs, nvars each */
  int *vars;                  /* scratch variable list, nvars */
  long proposed, observed, ops, random_proposed;
  long proposals; /* propose() calls */
} pipe_strategy;

/* ---- wire.c: configs, results and the space in JSON ---------------------- */

/* A finite number, or null (JSON has no inf or nan). */
json_t *pipe_num(double x);

/* cfg as the program asked for it in "ready": an object of knob names to
 * values, or an array of all nvars values. */
json_t *pipe_encode(const pipe_strategy *s, const int64_t *cfg);

/* Reads a config the program sent into cfg[nvars], HERON_UNSET where it
 * leaves a variable out.  Returns 0, or -1 with the reason in why. */
int pipe_decode(const pipe_strategy *s, const json_t *j, int64_t *cfg,
                char *why, size_t cap);

/* Completes cfg in place when it leaves variables out (the solver fills
 * them so that every constraint holds).  A full config is left as it is,
 * valid or not. */
int pipe_complete(pipe_strategy *s, int64_t *cfg, heron_error *e);

/* The space as "hello" sends it: variables, knobs, constraints. */
json_t *pipe_space_json(const pipe_strategy *s);

/* One measurement as "observe" sends it. */
json_t *pipe_result_json(const pipe_strategy *s, const heron_measurement *m);

/* ---- ops.c: the program's requests (the space's operations) ------------- */

/* 1 when `type` is one of the requests the program may send for the
 * space's operations (sample, validate, repair, crossover, mutate,
 * features, key, violations). */
int pipe_is_op(const char *type);

/* The answer to the program's request req of such a type: a "result", or
 * an "error" the program can read when the request is bad (its bug, never
 * a protocol failure); req's "id" repeated. */
json_t *pipe_op_answer(pipe_strategy *s, const char *type, const json_t *req);

#endif /* HERON_PIPE_PIPE_H */
