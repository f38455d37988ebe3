/* plugins/strategies/llm/reply.h - a language model's reply, parsed strictly.
 *
 * Replies are untrusted input.  The prompt asks for configurations written
 * exactly as
 *
 *     ## knob: value, knob: value, ... ##
 *
 * one block per configuration.  llm_reply_content takes the HTTP body of an
 * OpenAI-compatible chat completion apart; llm_reply_parse turns the message
 * into valid configs of the space, and says for each what was wrong with
 * it.  With repair on, a block with defects is mended into the nearest valid
 * config (unknown names dropped, missing or unreadable knobs completed by
 * the solver, out-of-range values and broken constraints through
 * heron_space_repair) and marked LLM_REPAIRED; with repair off, or when
 * nothing usable is left, it is LLM_REJECTED.
 *
 * Internal to llm.so: names carry the plugin's prefix, nothing is exported.
 */
#ifndef HERON_LLM_REPLY_H
#define HERON_LLM_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "heron/space.h"

/* What can be wrong with a reply or one of its blocks (bits). */
enum {
  LLM_D_PROSE = 1 << 0,        /* text outside the ## ... ## blocks */
  LLM_D_UNKNOWN = 1 << 1,      /* a name that is not a knob of the space */
  LLM_D_MISSING = 1 << 2,      /* a knob the block does not set */
  LLM_D_NOT_NUMBER = 1 << 3,   /* a value that is not a decimal integer */
  LLM_D_OUT_OF_RANGE = 1 << 4, /* a value outside its knob's domain */
  LLM_D_INVALID = 1 << 5,      /* in-range values that break a constraint */
  LLM_D_REPEATED = 1 << 6,     /* a knob set twice in one block */
  LLM_D_TRUNCATED = 1 << 7,    /* a block opened with ## and never closed */
  LLM_D_NO_BLOCK = 1 << 8,     /* no ## ... ## block at all (empty reply too) */
  LLM_D_SYNTAX = 1 << 9,       /* an item that is not "name: value" */
  LLM_D_TOO_MANY = 1 << 10     /* more blocks than asked for (extra ignored) */
};

typedef enum llm_outcome {
  LLM_VALID = 0,    /* exactly as written, a valid config */
  LLM_REPAIRED = 1, /* mended into a valid config */
  LLM_REJECTED = 2  /* nothing usable */
} llm_outcome;

/* The verdict on one block, or on a whole reply. */
typedef struct llm_verdict {
  llm_outcome outcome;
  unsigned defects; /* LLM_D_* bits found */
  char why[160];    /* the first defect, readable ("unknown knob 'foo'",
                       "i.t0 = 3 is not one of {1, 2, 4, 8}"); "" when valid */
} llm_verdict;

/* Quotes untrusted text for a log line: at most `max` bytes of s[0..len)
 * into dst[cap], trailing blanks dropped, other blanks as ' ', other
 * control characters and non-ASCII bytes as '?' (a newline or a cut UTF-8
 * sequence would break the line), and "..." where it was cut. */
void llm_quote(char *dst, size_t cap, const char *s, size_t len, size_t max);

/* Extracts choices[0].message.content from a chat-completion HTTP body.
 * On success returns 0 and *content (malloc'ed, the caller frees it).  On
 * failure returns -1, *content NULL, and a readable reason in why[cap]:
 * "the body is not JSON (line 1: <jansson's text>)", "the body has no
 * choices[0].message.content string", "the body is an error: <its
 * error.message>".  finish_reason is not looked at: a reply cut off by the
 * token limit still goes to llm_reply_parse, which finds the open block
 * (LLM_D_TRUNCATED) and keeps the complete ones. */
int llm_reply_content(const char *body, char **content, char *why, size_t cap);

/* Parses message content `text` into at most `cap` configs of sp, written
 * to out[cap * nvars] (caller-owned): every config written is complete and
 * valid (heron_space_violations == 0).  blocks[cap] (caller-owned) gets the
 * verdict of each block that produced a config, in order; *n their number.
 * *reply gets the verdict on the reply as a whole: LLM_REJECTED when no
 * config came out (why says the first reason), LLM_REPAIRED when any block
 * was repaired or the reply had prose / extra blocks, LLM_VALID when every
 * block was valid as written and nothing else was there.  Rejected blocks
 * produce no config but their defects are ORed into reply->defects.
 * repair 0 rejects every block with a defect (and a reply with prose).
 * rng drives the solver when it completes or repairs.  Returns 0, or -1
 * when out of memory (or sp, rng, n or reply is NULL, or cap > 0 with out
 * or blocks NULL).
 *
 * The details (reply.c's head comment has the grammar):
 *  - Items are separated by ',', ';' or newlines; each is "knob: value"
 *    (only ':'; "knob = value" is LLM_D_SYNTAX); a value is an optional
 *    sign and decimal digits fitting int64_t.  Names match exactly.
 *  - "##" markers pair up left to right: "####" is one empty block.  Only
 *    the first cap blocks are read; later ones give LLM_D_TOO_MANY and are
 *    skipped, with either repair setting.
 *  - A block that sets a knob twice (LLM_D_REPEATED) or where no knob value
 *    could be read is rejected even with repair on: which value was meant,
 *    or what was meant at all, cannot be known.
 *  - A knob named with an unreadable value is LLM_D_NOT_NUMBER, not
 *    LLM_D_MISSING; a knob never named (or only in a syntax error) is
 *    LLM_D_MISSING.  A block whose set values cannot be completed gets
 *    LLM_D_INVALID as well.
 *  - reply->defects ORs every block's defects and the reply's own; the
 *    reply is LLM_VALID only when that is 0, else LLM_REPAIRED when a
 *    config came out (also with repair 0, when a later block was rejected
 *    or cut off, or extra blocks were ignored), else LLM_REJECTED.
 *    reply->why is the first defect in text order ("block 2: ..." for a
 *    block's), or for a rejected reply the reason it was rejected. */
int llm_reply_parse(const heron_space *sp, heron_rng *rng, const char *text,
                    int repair, int cap, int64_t *out, llm_verdict *blocks,
                    int *n, llm_verdict *reply);

#endif
