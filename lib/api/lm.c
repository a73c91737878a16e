/* Public language-model entry points: argument checks, locking, then the
 * forward (model/lm_forward.c) or the decoding state (model/lm_state.c). */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/alloc.h"
#include "model/arch.h"
#include "model/lm_state.h"
#include "sample/sample.h"

static gmlp_status check_lm(gmlp_model *m, const char *fn)
{
    if (!m)
        return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT, "%s: model is NULL", fn);
    if (!gmlp_arch_of(&m->cfg)->lm)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_WRONG_MODEL, "%s: not a language model (use gmlp_classify)", fn);
    return GMLP_OK;
}

gmlp_status gmlp_lm_logits(gmlp_model *m, const int32_t *tokens, size_t batch, size_t n, float *logits)
{
    GMLP_TRY(check_lm(m, "gmlp_lm_logits"));
    const gmlp_config *c = &m->cfg;
    if (!tokens || !logits)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_INVALID_ARGUMENT, "gmlp_lm_logits: %s is NULL",
                             tokens ? "logits" : "tokens");
    if (batch == 0 || n == 0 || n > (size_t)c->seq_len || (!c->causal && n != (size_t)c->seq_len))
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_INVALID_ARGUMENT,
                             "gmlp_lm_logits: batch %zu x length %zu; this %s model takes %s%d tokens per sequence",
                             batch, n, c->causal ? "causal" : "bidirectional", c->causal ? "1 to " : "exactly ",
                             c->seq_len);
    pthread_mutex_lock(&m->ctx->lock);
    size_t chunk = gmlp_workspace_max_seqs(m, n, n);
    gmlp_status st = GMLP_OK;
    for (size_t b = 0; st == GMLP_OK && b < batch; b += chunk) {
        size_t k = batch - b < chunk ? batch - b : chunk;
        st = gmlp_lm_forward(m, tokens + b * n, k, 0, n, NULL, 0, logits + b * n * (size_t)c->vocab_size);
    }
    pthread_mutex_unlock(&m->ctx->lock);
    return st;
}

gmlp_status gmlp_lm_state_create(gmlp_model *m, size_t batch, gmlp_lm_state **out)
{
    if (out)
        *out = NULL;
    GMLP_TRY(check_lm(m, "gmlp_lm_state_create"));
    if (!out || batch == 0)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_INVALID_ARGUMENT, "gmlp_lm_state_create: %s",
                             out ? "batch is 0" : "out is NULL");
    if (!m->cfg.causal)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_WRONG_MODEL,
                             "gmlp_lm_state_create: the model is bidirectional (gmlp.causal false): every position "
                             "sees the whole sequence, so there is nothing to decode incrementally; use gmlp_lm_logits");
    pthread_mutex_lock(&m->ctx->lock);
    gmlp_status st = gmlp_lm_state_make(m, batch, out);
    pthread_mutex_unlock(&m->ctx->lock);
    return st;
}

gmlp_status gmlp_lm_feed(gmlp_lm_state *s, const int32_t *tokens, size_t n, float *logits)
{
    if (!s)
        return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT, "gmlp_lm_feed: state is NULL");
    if (!tokens || n == 0)
        return gmlp_ctx_fail(s->model->ctx, GMLP_ERR_INVALID_ARGUMENT, "gmlp_lm_feed: %s",
                             tokens ? "n is 0" : "tokens is NULL");
    pthread_mutex_lock(&s->model->ctx->lock);
    gmlp_status st = gmlp_lm_state_feed(s, tokens, n, logits);
    pthread_mutex_unlock(&s->model->ctx->lock);
    return st;
}

gmlp_status gmlp_lm_step(gmlp_lm_state *s, const int32_t *tokens, float *logits)
{
    return gmlp_lm_feed(s, tokens, 1, logits);
}

size_t gmlp_lm_state_tokens(const gmlp_lm_state *s)
{
    return s ? s->fed : 0;
}

void gmlp_lm_state_reset(gmlp_lm_state *s)
{
    if (s)
        s->pos = s->fed = s->stale = 0;
}

void gmlp_lm_state_free(gmlp_lm_state *s)
{
    if (!s)
        return;
    gmlp_context *ctx = s->model->ctx;
    pthread_mutex_lock(&ctx->lock);
    gmlp_lm_state_destroy(s);
    pthread_mutex_unlock(&ctx->lock);
}

static int is_stop(const gmlp_generate_options *o, int32_t t)
{
    for (size_t i = 0; i < o->n_stop_tokens; i++)
        if (o->stop_tokens[i] == t)
            return 1;
    return 0;
}

gmlp_status gmlp_lm_generate(gmlp_model *m, const int32_t *prompt, size_t n_prompt,
                             const gmlp_generate_options *opts, int32_t *out, size_t *n_out)
{
    if (n_out)
        *n_out = 0;
    GMLP_TRY(check_lm(m, "gmlp_lm_generate"));
    gmlp_generate_options given;
    gmlp_generate_options_default(&given);
    const gmlp_generate_options *o = &given;
    if (opts && !gmlp_options_in(&given, sizeof given, opts))
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_lm_generate: gmlp_generate_options.size is %zu: fill the options with "
                         "gmlp_generate_options_default", opts->size);
    if (!prompt || !n_prompt || !opts || !n_out || (!out && o->max_tokens) || (o->n_stop_tokens && !o->stop_tokens))
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_lm_generate: needs a prompt of at least one token, options, out and n_out");
    pthread_mutex_lock(&m->ctx->lock); /* for ctx->err */
    gmlp_status bad = gmlp_sample_check(o, "gmlp_lm_generate", &m->ctx->err);
    pthread_mutex_unlock(&m->ctx->lock);
    if (bad)
        return bad;
    gmlp_lm_state *s;
    GMLP_TRY(gmlp_lm_state_create(m, 1, &s));
    const size_t S = (size_t)m->cfg.seq_len;
    const int draws = !gmlp_sample_greedy(o->temperature, o->top_k);
    /* where the device samples: steps run ahead in rounds of 1, 2, 4 .. 32 */
    int ahead = gmlp_lm_sample_supported(s, o);
    enum { AHEAD_MAX = 32 };
    int32_t run[AHEAD_MAX];
    size_t depth = 1;
    float *logits = gmlp_malloc((size_t)m->cfg.vocab_size * sizeof *logits);
    gmlp_status st = logits ? gmlp_lm_feed(s, prompt, n_prompt, logits)
                            : gmlp_ctx_fail(m->ctx, GMLP_ERR_HOST_MEMORY, "gmlp_lm_generate: out of host memory");
    uint64_t rng = o->seed;
    int32_t t = 0;
    size_t got = 0, n = 0; /* run's tokens: got of n walked */
    /* the state is never locked across the callback, which may call the library */
    while (st == GMLP_OK && *n_out < o->max_tokens) {
        if (got < n) {
            t = run[got++];
            rng = gmlp_sample_skip(rng, (size_t)draws);
        } else if (*n_out && ahead && s->pos < S && !s->stale) { /* the prompt's token comes from its logits */
            size_t k = o->max_tokens - *n_out < depth ? o->max_tokens - *n_out : depth;
            k = S - s->pos < k ? S - s->pos : k;
            depth = depth < AHEAD_MAX ? 2 * depth : AHEAD_MAX;
            pthread_mutex_lock(&m->ctx->lock);
            st = gmlp_lm_sample_run(s, o, t, rng, k, run, &n);
            pthread_mutex_unlock(&m->ctx->lock);
            got = 0;
            ahead = n == k; /* else a non-finite logit after n tokens: the host's sampler reports it */
            continue;
        } else {
            if (*n_out)
                st = gmlp_lm_step(s, &t, logits);
            pthread_mutex_lock(&m->ctx->lock); /* for ctx->err */
            if (st == GMLP_OK)
                st = gmlp_sample_token(logits, m->cfg.vocab_size, o, &rng, &t, &m->ctx->err);
            pthread_mutex_unlock(&m->ctx->lock);
            if (st != GMLP_OK)
                break;
        }
        out[(*n_out)++] = t;
        if ((o->on_token && o->on_token(o->user, t)) || is_stop(o, t))
            break;
    }
    /* tokens run ahead but not taken: the state as if they were never fed */
    s->pos -= n - got, s->fed -= n - got;
    free(logits);
    gmlp_lm_state_free(s);
    return st;
}
