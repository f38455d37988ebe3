/* plugins/strategies/llm/llm.c - the LLM-prompt proposer: a language model,
 * asked over the OpenAI-compatible chat-completions API, proposes configs.
 *
 * Each propose() asks the model for configs, `per_call` at a time, with a
 * prompt built from the space (prompt.h): the knobs and their domains, the
 * rules, the best measured configs and some failures.  Replies are untrusted
 * input: reply.h parses them strictly, repairs what it can into the nearest
 * valid config (or rejects it) and says what was wrong; this file counts the
 * verdicts.  A call is useful when it yields at least one valid config that
 * is neither measured nor already proposed; after `max_useless` useless
 * calls in a row (HTTP errors, timeouts, rejected or repeated answers) the
 * strategy warns once and falls back to constrained random sampling for the
 * rest of the run, so a tuning run never stalls on a bad endpoint.  When
 * the model falls short in a round, random samples fill the round.
 *
 * Every exchange can be recorded (record=FILE) and replayed (replay=FILE)
 * without a server (chat.h).  The API key is read from the environment
 * variable that api_key_env names and is never logged or recorded.
 *
 * Parameters: see README.md next to this file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "chat.h"
#include "heron/strategy.h"
#include "prompt.h"
#include "reply.h"

/* What the closing line counts; the exchanges themselves are numbered by
 * the chat client (llm_chat_calls). */
typedef struct llm_counts {
  long failed;     /* exchanges with no usable HTTP reply */
  long valid;      /* replies whose every block was valid as written */
  long repaired;   /* replies with something mended */
  long rejected;   /* replies that gave no config (bad body, no block...) */
  long repeated;   /* configs already measured or proposed, dropped */
  long from_model; /* configs proposed from the model's answers */
  long sampled;    /* configs filled in by constrained random sampling */
} llm_counts;

typedef struct llm_state {
  const heron_strategy_env *env;
  int nvars;
  int64_t per_call, examples, failures, max_useless, repair;
  llm_chat *chat;
  char *fixed; /* the prompt's task, knobs and rules (llm_prompt_fixed) */
  llm_counts n;
  int useless_run; /* useless calls in a row */
  int fallback;    /* 1 once the run has fallen back to random sampling */
  int warned_divergence;
  char last_why[200];
} llm_state;

static const heron_param_spec llm_params[] = {
    {.key = "url",
     .kind = HERON_PARAM_STRING,
     .default_value = "http://127.0.0.1:8080/v1",
     .help =
         "OpenAI-compatible API base URL (or the full .../chat/completions)"},
    {.key = "model",
     .kind = HERON_PARAM_STRING,
     .default_value = "default",
     .help = "the model name sent in each request"},
    {.key = "api_key_env",
     .kind = HERON_PARAM_STRING,
     .default_value = "",
     .help = "name of the environment variable holding the API key (empty: no "
             "key; the key itself is never logged)"},
    {.key = "temperature",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.7",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 2,
     .help = "sampling temperature"},
    {.key = "timeout",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "60",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0.001,
     .hi = 86400,
     .help = "seconds to wait for one reply"},
    {.key = "retries",
     .kind = HERON_PARAM_INT,
     .default_value = "1",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 20,
     .help = "further attempts after a timeout, a lost connection, HTTP 408, "
             "429 or 5xx"},
    {.key = "examples",
     .kind = HERON_PARAM_INT,
     .default_value = "8",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1000,
     .help = "best measured configs shown in the prompt"},
    {.key = "failures",
     .kind = HERON_PARAM_INT,
     .default_value = "2",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1000,
     .help = "failed configs shown in the prompt (perf 0)"},
    {.key = "per_call",
     .kind = HERON_PARAM_INT,
     .default_value = "1",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 64,
     .help = "configs asked for in one request"},
    {.key = "max_useless",
     .kind = HERON_PARAM_INT,
     .default_value = "5",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1000000,
     .help = "useless replies in a row before falling back to random sampling"},
    {.key = "repair",
     .kind = HERON_PARAM_BOOL,
     .default_value = "1",
     .help = "mend defective answers into the nearest valid config (false: "
             "reject them)"},
    {.key = "max_tokens",
     .kind = HERON_PARAM_INT,
     .default_value = "0",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1000000,
     .help = "max_tokens of each request (0: not sent)"},
    {.key = "record",
     .kind = HERON_PARAM_STRING,
     .default_value = "",
     .help = "append every prompt and reply to this file (JSONL)"},
    {.key = "replay",
     .kind = HERON_PARAM_STRING,
     .default_value = "",
     .help = "answer from a file written by record=, without a server"},
    {.key = NULL},
};

static int llm_create(const heron_strategy_env *env, const heron_param *params,
                      int nparams, void **self, heron_error *err) {
  if (!env || !env->space || !env->rng || !self)
    return heron_error_set(err, HERON_EINVAL,
                           "llm: env without a space or an rng");
  int64_t per_call, examples, failures, max_useless, repair, retries,
      max_tokens;
  double temperature, timeout;
  int rc = HERON_OK;
  if (!rc)
    rc = heron_param_int(params, nparams, "per_call", 1, 1, 64, &per_call, err);
  if (!rc)
    rc = heron_param_int(params, nparams, "examples", 8, 0, 1000, &examples,
                         err);
  if (!rc)
    rc = heron_param_int(params, nparams, "failures", 2, 0, 1000, &failures,
                         err);
  if (!rc)
    rc = heron_param_int(params, nparams, "max_useless", 5, 1, 1000000,
                         &max_useless, err);
  if (!rc)
    rc = heron_param_int(params, nparams, "repair", 1, 0, 1, &repair, err);
  if (!rc)
    rc = heron_param_int(params, nparams, "retries", 1, 0, 20, &retries, err);
  if (!rc)
    rc = heron_param_int(params, nparams, "max_tokens", 0, 0, 1000000,
                         &max_tokens, err);
  if (!rc)
    rc = heron_param_double(params, nparams, "temperature", 0.7, 0, 2,
                            &temperature, err);
  if (!rc)
    rc = heron_param_double(params, nparams, "timeout", 60, 0.001, 86400,
                            &timeout, err);
  if (rc)
    return rc;
  const char *url =
      heron_param_get(params, nparams, "url", "http://127.0.0.1:8080/v1");
  const char *replay = heron_param_get(params, nparams, "replay", "");
  if (!*replay && strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
    return heron_error_set(err, HERON_EINVAL,
                           "llm: parameter url = '%s' is not an http:// or "
                           "https:// URL",
                           url);
  const char *key_env = heron_param_get(params, nparams, "api_key_env", "");
  const char *key = NULL;
  if (*key_env) {
    key = getenv(key_env);
    if (!key || !*key)
      return heron_error_set(err, HERON_EINVAL,
                             "llm: parameter api_key_env names the "
                             "environment variable %s, which is not set",
                             key_env);
  }
  llm_state *st = calloc(1, sizeof *st);
  if (!st)
    return heron_error_set(err, HERON_ENOMEM, "llm: out of memory");
  st->env = env;
  st->nvars = heron_space_nvars(env->space);
  st->per_call = per_call;
  st->examples = examples;
  st->failures = failures;
  st->max_useless = max_useless;
  st->repair = repair;
  llm_chat_opts o = {
      .url = url,
      .model = heron_param_get(params, nparams, "model", "default"),
      .api_key = key,
      .temperature = temperature,
      .timeout_s = timeout,
      .retries = (int)retries,
      .max_tokens = (int)max_tokens,
      .record = heron_param_get(params, nparams, "record", ""),
      .replay = replay,
  };
  st->fixed = llm_prompt_fixed(env);
  if (!st->fixed) {
    free(st);
    return heron_error_set(err, HERON_ENOMEM, "llm: out of memory");
  }
  rc = llm_chat_open(&o, &st->chat, err);
  if (rc) {
    free(st->fixed);
    free(st);
    return rc;
  }
  *self = st;
  return HERON_OK;
}

/* 1 when cfg is measured already or among out[0..n), by the space's key
 * (the knob values; auxiliary variables follow from them). */
static int seen(const llm_state *st, const int64_t *cfg, const int64_t *out,
                int n) {
  const heron_space *sp = st->env->space;
  char key[32], other[32];
  heron_space_key(sp, cfg, key, sizeof key);
  if (st->env->history && heron_history_contains(st->env->history, key))
    return 1;
  for (int i = 0; i < n; i++) {
    heron_space_key(sp, out + (size_t)i * st->nvars, other, sizeof other);
    if (!strcmp(key, other))
      return 1;
  }
  return 0;
}

/* One exchange asking for k configs; appends the new valid ones to
 * out[*n..want) and returns how many it added. */
static int ask_once(llm_state *st, int k, int64_t *out, int *n, int want) {
  const heron_strategy_env *env = st->env;
  int call = llm_chat_calls(st->chat) + 1;
  char *prompt = llm_prompt(env, st->fixed, k, (int)st->examples,
                            (int)st->failures, out, *n);
  if (!prompt) {
    snprintf(st->last_why, sizeof st->last_why, "out of memory");
    return 0;
  }
  llm_exchange x;
  int rc = llm_chat_ask(st->chat, llm_system_message, prompt, &x);
  free(prompt);
  if (x.diverged && !st->warned_divergence) {
    st->warned_divergence = 1;
    env->log(env, HERON_LOG_WARN,
             "replay: the prompt of call %d differs from the recorded "
             "one; the run no longer follows the recording",
             call);
  }
  if (rc) {
    st->n.failed++;
    snprintf(st->last_why, sizeof st->last_why, "%s", x.error);
    env->log(env, HERON_LOG_DEBUG, "call %d failed after %d attempt%s: %s",
             call, x.attempts, x.attempts == 1 ? "" : "s", x.error);
    llm_exchange_clear(&x);
    return 0;
  }
  char retried[200];
  memcpy(retried, x.retried, sizeof retried);
  char *content = NULL;
  char why[160];
  if (llm_reply_content(x.body, &content, why, sizeof why)) {
    llm_exchange_clear(&x);
    st->n.rejected++;
    snprintf(st->last_why, sizeof st->last_why, "%s", why);
    env->log(env, HERON_LOG_DEBUG, "call %d: reply rejected: %s", call, why);
    return 0;
  }
  llm_exchange_clear(&x);
  int64_t *cfgs = malloc((size_t)k * (size_t)st->nvars * sizeof *cfgs);
  llm_verdict *blocks = malloc((size_t)k * sizeof *blocks);
  llm_verdict reply;
  int got = 0;
  if (!cfgs || !blocks ||
      llm_reply_parse(env->space, env->rng, content, (int)st->repair, k, cfgs,
                      blocks, &got, &reply)) {
    free(cfgs);
    free(blocks);
    free(content);
    snprintf(st->last_why, sizeof st->last_why, "out of memory");
    return 0;
  }
  free(content);
  if (reply.outcome == LLM_VALID)
    st->n.valid++;
  else if (reply.outcome == LLM_REPAIRED)
    st->n.repaired++;
  else
    st->n.rejected++;
  int added = 0;
  for (int i = 0; i < got && *n < want; i++) {
    const int64_t *c = cfgs + (size_t)i * st->nvars;
    if (seen(st, c, out, *n)) {
      st->n.repeated++;
      continue;
    }
    memcpy(out + (size_t)*n * st->nvars, c, (size_t)st->nvars * sizeof *c);
    (*n)++;
    added++;
  }
  static const char *const outcome_name[] = {"valid", "repaired", "rejected"};
  env->log(env, HERON_LOG_DEBUG,
           "call %d: reply %s, %d config%s (%d new)%s%s%s%s", call,
           outcome_name[reply.outcome], got, got == 1 ? "" : "s", added,
           reply.why[0] ? ": " : "", reply.why,
           retried[0] ? "; an earlier attempt: " : "", retried);
  if (added == 0)
    snprintf(st->last_why, sizeof st->last_why, "%s",
             reply.outcome == LLM_REJECTED
                 ? reply.why
                 : "every config it gave was measured or proposed already");
  st->n.from_model += added;
  free(cfgs);
  free(blocks);
  return added;
}

static int llm_propose(void *self, int want, int64_t *out, int *got,
                       heron_error *err) {
  llm_state *st = self;
  const heron_strategy_env *env = st->env;
  int n = 0;
  /* A round stops asking after a few more calls than it needs, so answers
   * that repeat earlier ones cannot keep it asking. */
  int max_calls = (want + (int)st->per_call - 1) / (int)st->per_call + 2;
  for (int calls = 0; !st->fallback && n < want && calls < max_calls; calls++) {
    int k = want - n < st->per_call ? want - n : (int)st->per_call;
    if (ask_once(st, k, out, &n, want) > 0) {
      st->useless_run = 0;
      continue;
    }
    if (++st->useless_run >= st->max_useless) {
      st->fallback = 1;
      env->log(env, HERON_LOG_WARN,
               "%d useless replies in a row (the last: %s); falling "
               "back to constrained random sampling for the rest of the run",
               st->useless_run, st->last_why);
    }
  }
  int sampled = 0;
  for (int tries = 0; n < want && tries < 100 * want; tries++) {
    heron_error e = {0};
    int64_t *c = out + (size_t)n * st->nvars;
    int rc = heron_space_sample(env->space, env->rng, c, &e);
    if (rc == HERON_EUNSAT)
      continue;
    if (rc)
      return heron_error_set(err, rc, "llm: sampling failed: %s", e.text);
    if (seen(st, c, out, n))
      continue;
    n++;
    sampled++;
  }
  st->n.sampled += sampled;
  if (sampled > 0 && !st->fallback)
    env->log(env, HERON_LOG_DEBUG,
             "%d of %d configs of this round sampled at random", sampled, want);
  *got = n;
  return HERON_OK;
}

static int llm_observe(void *self, const heron_measurement *results, int n,
                       heron_error *err) {
  /* The prompt reads the history the engine keeps; nothing to copy. */
  (void)self;
  (void)results;
  (void)n;
  (void)err;
  return HERON_OK;
}

static void llm_destroy(void *self) {
  llm_state *st = self;
  if (!st)
    return;
  const llm_counts *c = &st->n;
  st->env->log(st->env, HERON_LOG_INFO,
               "%ld calls (%ld failed); replies: %ld valid, %ld "
               "repaired, %ld rejected; configs: %ld from the model, %ld "
               "repeats dropped, %ld sampled at random%s",
               (long)llm_chat_calls(st->chat), c->failed, c->valid, c->repaired,
               c->rejected, c->from_model, c->repeated, c->sampled,
               st->fallback ? " (fell back to random sampling)" : "");
  llm_chat_close(st->chat);
  free(st->fixed);
  free(st);
}

/* The state a resumed run needs: the counts, whether it had fallen back,
 * and the number of exchanges (so replay continues where it stopped). */
static int llm_save_state(void *self, const char *path, heron_error *err) {
  llm_state *st = self;
  const llm_counts *c = &st->n;
  json_t *o = json_pack(
      "{s:i, s:i, s:b, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}}", "calls",
      llm_chat_calls(st->chat), "useless_run", st->useless_run, "fallback",
      st->fallback, "counts", "failed", (json_int_t)c->failed, "valid",
      (json_int_t)c->valid, "repaired", (json_int_t)c->repaired, "rejected",
      (json_int_t)c->rejected, "repeated", (json_int_t)c->repeated,
      "from_model", (json_int_t)c->from_model, "sampled",
      (json_int_t)c->sampled);
  int rc = o && json_dump_file(o, path, JSON_COMPACT) == 0
               ? HERON_OK
               : heron_error_set(err, HERON_EIO,
                                 "llm: cannot write state to %s", path);
  json_decref(o);
  return rc;
}

static int llm_load_state(void *self, const char *path, heron_error *err) {
  llm_state *st = self;
  json_error_t je;
  json_t *o = json_load_file(path, 0, &je);
  json_int_t calls, useless, cc[7];
  int fallback;
  if (!o || json_unpack(o,
                        "{s:I, s:I, s:b, s:{s:I, s:I, s:I, s:I, s:I, s:I, "
                        "s:I}}",
                        "calls", &calls, "useless_run", &useless, "fallback",
                        &fallback, "counts", "failed", &cc[0], "valid", &cc[1],
                        "repaired", &cc[2], "rejected", &cc[3], "repeated",
                        &cc[4], "from_model", &cc[5], "sampled", &cc[6])) {
    json_decref(o);
    return heron_error_set(err, HERON_EPARSE,
                           "llm: %s is not an llm state file", path);
  }
  llm_chat_set_calls(st->chat, (int)calls);
  st->useless_run = (int)useless;
  st->fallback = fallback;
  long *dst[7] = {&st->n.failed,   &st->n.valid,    &st->n.repaired,
                  &st->n.rejected, &st->n.repeated, &st->n.from_model,
                  &st->n.sampled};
  for (int i = 0; i < 7; i++)
    *dst[i] = (long)cc[i];
  json_decref(o);
  return HERON_OK;
}

static const heron_strategy_plugin llm_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "llm",
    .summary = "a language model proposes configs (OpenAI-compatible chat "
               "API; strict parsing, repair, random fallback)",
    HERON_PARAM_SPECS(llm_params),
    .create = llm_create,
    .propose = llm_propose,
    .observe = llm_observe,
    .destroy = llm_destroy,
    .save_state = llm_save_state,
    .load_state = llm_load_state,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &llm_plugin;
}
