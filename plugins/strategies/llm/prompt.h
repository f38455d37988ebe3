/* plugins/strategies/llm/prompt.h - the prompt, built from the space.
 *
 * Nothing here is written per op or per target: the prompt states the task
 * (its key names op, shape, dtype and target), every knob with its
 * candidates or range, every constraint of the space in readable form (the
 * target's limits appear there as constants: registers, cache or shared
 * memory bytes, threads per block), the best measured configs and a few
 * failures as examples in Heron's "Configuration i (perf: X): ..." form, the
 * configs already proposed in this round, and the request for `want` new
 * configs in the "## knob: value, ... ##" format that reply.h parses.
 */
#ifndef HERON_LLM_PROMPT_H
#define HERON_LLM_PROMPT_H

#include <stdint.h>

#include "heron/strategy.h"

/* The fixed system message of every request. */
extern const char llm_system_message[];

/* The part of every user message that depends only on the task: the task,
 * the knobs and their domains, the rules.  Built once per run.  Returns a
 * malloc'ed string (the caller frees it), NULL when out of memory. */
char *llm_prompt_fixed(const heron_strategy_env *env);

/* The user message asking for `want` configs: `fixed` (llm_prompt_fixed's)
 * followed by the examples and the request.  examples: how many of the best
 * ok measurements to show; failures: how many failed ones (shown with perf
 * 0).  pending[npending * nvars]: configs proposed this round and not
 * measured yet, listed so the model does not repeat them.  Returns a
 * malloc'ed string (the caller frees it), NULL when out of memory. */
char *llm_prompt(const heron_strategy_env *env, const char *fixed, int want,
                 int examples, int failures, const int64_t *pending,
                 int npending);

#endif
