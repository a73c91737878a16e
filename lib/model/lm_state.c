/* Cached incremental decoding: the per-layer caches of a batch of causal
 * sequences and the tokens they were computed from. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "model/lm_state.h"

void gmlp_lm_state_destroy(gmlp_lm_state *s)
{
    gmlp_context *ctx = s->model->ctx;
    for (int l = 0; l < s->model->cfg.depth; l++) {
        if (s->cache.ln)
            gmlp_buffer_release(ctx, &s->cache.ln[l]);
        if (s->cache.gate)
            gmlp_buffer_release(ctx, &s->cache.gate[l]);
        if (s->cache.kv)
            gmlp_buffer_release(ctx, &s->cache.kv[l]);
    }
    gmlp_record_free(s->step_rec);
    gmlp_record_free(s->samp_rec);
    gmlp_buffer_release(ctx, &s->samp_rng);
    gmlp_buffer_release(ctx, &s->samp_log);
    gmlp_buffer_release(ctx, &s->samp_flags);
    gmlp_buffer_release(ctx, &s->step);
    free(s->step_host);
    free(s->cache.ln);
    free(s->cache.gate);
    free(s->cache.kv);
    free(s->window);
    free(s->scratch);
    free(s);
}

/* One history buffer per layer of width floats per position, or none. */
static gmlp_status make_cache(gmlp_lm_state *s, cl_mem **bufs, size_t width, const char *what)
{
    const gmlp_config *c = &s->model->cfg;
    if (!width)
        return GMLP_OK;
    if (!(*bufs = gmlp_calloc((size_t)c->depth, sizeof **bufs)))
        return gmlp_fail(&s->model->ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory for the decoding state");
    for (int l = 0; l < c->depth; l++)
        GMLP_TRY(gmlp_buffer_create(s->model->ctx, s->batch * (size_t)c->seq_len * width * sizeof(float), NULL, what,
                                    &(*bufs)[l]));
    return GMLP_OK;
}

gmlp_status gmlp_lm_state_make(gmlp_model *m, size_t batch, gmlp_lm_state **out)
{
    const gmlp_config *c = &m->cfg;
    gmlp_lm_state *s = gmlp_calloc(1, sizeof *s);
    if (!s)
        return gmlp_fail(&m->ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory for the decoding state");
    s->model = m;
    s->batch = batch;
    size_t S = (size_t)c->seq_len;
    s->window = gmlp_malloc(batch * S * sizeof *s->window);
    s->scratch = gmlp_malloc(batch * S * sizeof *s->scratch);
    s->step_host = gmlp_malloc((1 + batch) * sizeof *s->step_host);
    gmlp_status st = s->window && s->scratch && s->step_host ? GMLP_OK
                                             : gmlp_fail(&m->ctx->err, GMLP_ERR_HOST_MEMORY,
                                                             "out of host memory for %zu x %zu tokens", batch, S);
    if (st == GMLP_OK)
        st = make_cache(s, &s->cache.ln, c->shift_tokens ? (size_t)c->dim : 0, "the token-shift cache");
    if (st == GMLP_OK)
        st = make_cache(s, &s->cache.gate, (size_t)c->ffn_dim / 2, "the gate cache");
    if (st == GMLP_OK)
        st = make_cache(s, &s->cache.kv, 2 * (size_t)c->attn_dim, "the attention key/value cache");
    if (st != GMLP_OK) {
        gmlp_lm_state_destroy(s);
        return st;
    }
    *out = s;
    return GMLP_OK;
}

gmlp_status gmlp_lm_state_feed(gmlp_lm_state *s, const int32_t *tokens, size_t n, float *logits)
{
    const size_t S = (size_t)s->model->cfg.seq_len, B = s->batch;
    gmlp_status st;
    if (!s->stale && s->pos + n <= S) {
        st = n == 1 && gmlp_lm_step_supported(s->model) ? gmlp_lm_step_run(s, tokens, logits)
                                                        : gmlp_lm_forward(s->model, tokens, B, s->pos, n, &s->cache, 1,
                                                                          logits);
        if (st != GMLP_OK)
            return st; /* positions >= pos are simply rewritten next time */
        for (size_t b = 0; b < B; b++)
            memcpy(s->window + b * S + s->pos, tokens + b * n, n * sizeof *tokens);
        s->pos += n;
    } else {
        /* past seq_len (or after a failed recompute): the last seq_len
         * tokens, computed afresh from position 0 */
        size_t total = s->pos + n, keep = total < S ? total : S, from = total - keep;
        for (size_t b = 0; b < B; b++)
            for (size_t i = 0; i < keep; i++) {
                size_t t = from + i;
                s->scratch[b * keep + i] = t < s->pos ? s->window[b * S + t] : tokens[b * n + t - s->pos];
            }
        s->stale = 1; /* the caches are being overwritten */
        st = gmlp_lm_forward(s->model, s->scratch, B, 0, keep, &s->cache, 1, logits);
        if (st != GMLP_OK)
            return st;
        for (size_t b = 0; b < B; b++)
            memcpy(s->window + b * S, s->scratch + b * keep, keep * sizeof *tokens);
        s->pos = keep;
        s->stale = 0;
    }
    s->fed += n;
    return GMLP_OK;
}
