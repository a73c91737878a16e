/* Generation's steps run ahead on the device: the fused step and the
 * sampler (ops/sample.c) recorded together, replayed n times back to back,
 * each writing the next token into the step buffer for the following one,
 * then one read of the tokens logged: no logits cross to the host. */
#include <string.h>

#include "model/lm_state.h"

int gmlp_lm_sample_supported(const gmlp_lm_state *s, const gmlp_generate_options *o)
{
    gmlp_model *m = s->model;
    return s->batch == 1 && m->ctx->set.sample_device && gmlp_lm_step_supported(m) &&
           gmlp_sample_device_covers(m->ctx, m->cfg.vocab_size, o->temperature, o->top_k);
}

/* The step's commands, then the sampler's under the options recorded. */
static gmlp_status commands(gmlp_model *m, void *arg)
{
    gmlp_lm_state *s = arg;
    GMLP_TRY(gmlp_lm_step_commands(m, s));
    return gmlp_op_sample(m->ctx, &(gmlp_sample_args){
        .logits = m->ws.out, .V = m->cfg.vocab_size, .rows = (int)s->batch, .temperature = s->samp_t,
        .top_p = s->samp_p, .top_k = s->samp_k, .rng = s->samp_rng, .step = s->step, .seq_len = m->cfg.seq_len,
        .tokens = s->samp_log, .flags = s->samp_flags});
}

/* The sampler's buffers, made on first use; a recording of other options dropped. */
static gmlp_status prepare(gmlp_lm_state *s, const gmlp_generate_options *o)
{
    gmlp_context *ctx = s->model->ctx;
    const size_t B = s->batch, S = (size_t)s->model->cfg.seq_len;
    if (s->samp_rec && (s->samp_t != o->temperature || s->samp_p != o->top_p || s->samp_k != o->top_k)) {
        gmlp_record_free(s->samp_rec);
        s->samp_rec = NULL;
    }
    s->samp_t = o->temperature, s->samp_p = o->top_p, s->samp_k = o->top_k;
    const cl_int zeros[2] = {0, 0};
    if (!s->samp_flags)
        GMLP_TRY(gmlp_buffer_create(ctx, sizeof zeros, zeros, "the sampler's flags", &s->samp_flags));
    if (!s->samp_rng)
        GMLP_TRY(gmlp_buffer_create(ctx, B * sizeof(cl_ulong), NULL, "the generator states", &s->samp_rng));
    if (!s->samp_log)
        GMLP_TRY(gmlp_buffer_create(ctx, B * S * sizeof(cl_int), NULL, "the sampled tokens", &s->samp_log));
    return GMLP_OK;
}

static gmlp_status run(gmlp_lm_state *s, const gmlp_generate_options *o, int32_t token, uint64_t rng, size_t n,
                       int32_t *out, size_t *taken)
{
    gmlp_context *ctx = s->model->ctx;
    GMLP_TRY(prepare(s, o));
    GMLP_TRY(gmlp_lm_step_load(s, &token));
    s->samp_rng_host = rng; /* staging that outlives the non-blocking write */
    cl_int e = clEnqueueWriteBuffer(ctx->queue, s->samp_rng, CL_FALSE, 0, sizeof(cl_ulong), &s->samp_rng_host, 0,
                                    NULL, NULL);
    if (e != CL_SUCCESS)
        return gmlp_fail_cl(&ctx->err, "clEnqueueWriteBuffer(the generator state)", e);
    for (size_t i = 0; i < n; i++)
        GMLP_TRY(gmlp_lm_step_replay(s, &s->samp_rec, &s->samp_generation, commands));
    cl_int flags[2];
    e = clEnqueueReadBuffer(ctx->queue, s->samp_flags, CL_FALSE, 0, sizeof flags, flags, 0, NULL, NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueReadBuffer(ctx->queue, s->samp_log, CL_TRUE, s->pos * sizeof(cl_int), n * sizeof(cl_int), out,
                                0, NULL, NULL);
    if (e != CL_SUCCESS)
        return gmlp_fail_cl(&ctx->err, "clEnqueueReadBuffer(the sampled tokens)", e);
    /* a non-finite logit: the tokens before its step stand, and the host
     * samples that step again, failing as gmlp_sample does (with the value) */
    *taken = flags[0] ? (size_t)flags[1] - s->pos : n;
    return GMLP_OK;
}

gmlp_status gmlp_lm_sample_run(gmlp_lm_state *s, const gmlp_generate_options *o, int32_t token, uint64_t rng,
                               size_t n, int32_t *out, size_t *taken)
{
    const size_t S = (size_t)s->model->cfg.seq_len;
    if (!n || s->stale || s->pos + n > S)
        return gmlp_fail(&s->model->ctx->err, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_lm_sample_run: %zu steps from position %zu of %zu", n, s->pos, S);
    *taken = 0;
    gmlp_status st = run(s, o, token, rng, n, out, taken);
    if (st != GMLP_OK) {
        clFinish(s->model->ctx->queue); /* nothing left running on the state's buffers */
        return st; /* positions >= pos are simply rewritten next time */
    }
    if (!*taken)
        return GMLP_OK;
    s->window[s->pos] = token;
    memcpy(s->window + s->pos + 1, out, (*taken - 1) * sizeof *out);
    s->pos += *taken;
    s->fed += *taken;
    return GMLP_OK;
}
