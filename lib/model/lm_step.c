/* Cached decoding of one token per sequence as the fused step: per layer
 * three kernels (ops/lm_step.c), the first layer's reading the tokens'
 * embedding, the position and the tokens in a device buffer of the
 * decoding state (one write a token), so that the step is recorded once per
 * state and workspace and replayed for every position (cl/record.h): one
 * command buffer a token where the device offers them.  Models the step
 * does not cover (tiny attention, half weights, a precision mode, rows
 * wider than GMLP_LM_STEP_MAX) decode through gmlp_lm_forward as before. */
#include <string.h>

#include "kernel_abi.h"
#include "model/arch.h"
#include "model/lm_state.h"

int gmlp_lm_step_supported(const gmlp_model *m)
{
    const gmlp_config *c = &m->cfg;
    const size_t d = (size_t)c->dim, g = (size_t)c->ffn_dim / 2;
    return m->ctx->set.lm_step && gmlp_arch_of(c)->lm && c->causal && c->attn_dim == 0 &&
           c->weights == GMLP_WEIGHTS_F32 && m->precision == GMLP_GEMM_FP32 && gmlp_lm_step_fits(d) &&
           gmlp_lm_step_fits(g) && c->heads >= 1 && g % (size_t)c->heads == 0 && (size_t)c->shift_tokens + 1 <= d;
}

/* The step's commands: the layers (the first reading the tokens' embedding), to_logits into ws.out. */
gmlp_status gmlp_lm_step_commands(gmlp_model *m, void *arg)
{
    gmlp_lm_state *s = arg;
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    const gmlp_workspace *w = &m->ws;
    const int B = (int)s->batch, d = c->dim, h = c->ffn_dim, S = c->seq_len;
    for (int l = 0; l < c->depth; l++) {
        const gmlp_block_weights *wt = &m->blocks[l];
        /* z = [u | v] = mlp_act(shift(LN(x)) . W_in^T + b_in), x the tokens' embedding in the first */
        GMLP_TRY(gmlp_op_lm_step_in(ctx, &(gmlp_lm_step_in_args){
            .step = s->step, .seq_len = S, .embed = l ? NULL : m->embed_w, .x = w->x, .gamma = wt->norm_w,
            .beta = wt->norm_b, .d = d,
            .eps = c->norm_eps, .hist = c->shift_tokens ? s->cache.ln[l] : NULL,
            .segments = c->shift_tokens ? c->shift_tokens + 1 : 0, .w = wt->fc1_w, .bias = wt->fc1_b, .n_out = h,
            .act = gmlp_arch_of(c)->mlp_act, .out = w->z, .rows = B}));
        /* y = act(W_h[pos, 0 .. pos] . LN(v)[0 .. pos] + b_h[pos]) * u */
        GMLP_TRY(gmlp_op_lm_step_sgu(ctx, &(gmlp_lm_step_sgu_args){
            .step = s->step, .seq_len = S, .z = w->z, .h = h, .gamma = wt->sgu_norm_w,
            .beta = wt->sgu_norm_b, .eps = c->sgu_eps, .hist = s->cache.gate[l], .w = wt->sgu_w, .bias = wt->sgu_b,
            .heads = c->heads, .act = c->gate_act, .out = w->y, .rows = B}));
        /* x += y . W_out^T + b_out */
        GMLP_TRY(gmlp_op_lm_step_out(ctx, w->y, h / 2, wt->fc2_w, wt->fc2_b, d, w->x, B));
    }
    /* logits = LN(x) . W_head^T + b_head */
    return gmlp_op_lm_step_in(ctx, &(gmlp_lm_step_in_args){
        .step = s->step, .seq_len = S, .x = w->x, .gamma = m->norm_w, .beta = m->norm_b, .d = d,
        .eps = c->norm_eps, .w = m->head_w, .bias = m->head_b, .n_out = c->vocab_size, .act = GMLP_ACT_IDENTITY,
        .out = w->out, .rows = B});
}

gmlp_status gmlp_lm_step_replay(gmlp_lm_state *s, gmlp_recording **rec, size_t *generation,
                                gmlp_status (*commands)(gmlp_model *, void *))
{
    gmlp_model *m = s->model;
    gmlp_context *ctx = m->ctx;
    if (ctx->set.profiling)
        return commands(m, s);
    if (*rec && *generation != m->ws.generation) { /* recorded on buffers since replaced */
        gmlp_record_free(*rec);
        *rec = NULL;
    }
    if (!*rec) {
        GMLP_TRY(gmlp_record_begin(ctx));
        GMLP_TRY(gmlp_record_end(ctx, commands(m, s), rec));
        *generation = m->ws.generation;
    }
    return *rec ? gmlp_record_replay(ctx, *rec) : commands(m, s);
}

gmlp_status gmlp_lm_step_load(gmlp_lm_state *s, const int32_t *tokens)
{
    gmlp_model *m = s->model;
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    const size_t B = s->batch;
    for (size_t b = 0; b < B; b++)
        if (tokens[b] < 0 || tokens[b] >= c->vocab_size)
            return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "token 0 of sequence %zu is %ld, outside 0 .. %d",
                             b, (long)tokens[b], c->vocab_size - 1);
    GMLP_TRY(gmlp_workspace_reserve(m, B, B, 1, B));
    if (!s->step)
        GMLP_TRY(gmlp_buffer_create(ctx, (1 + B) * sizeof(cl_int), NULL, "the decoding position and tokens", &s->step));
    /* from the state's staging, which outlives the non-blocking write */
    s->step_host[0] = (int32_t)s->pos;
    memcpy(s->step_host + 1, tokens, B * sizeof *tokens);
    cl_int e = clEnqueueWriteBuffer(ctx->queue, s->step, CL_FALSE, 0, (1 + B) * sizeof(cl_int), s->step_host, 0,
                                    NULL, NULL);
    return e == CL_SUCCESS ? GMLP_OK : gmlp_fail_cl(&ctx->err, "clEnqueueWriteBuffer(the step)", e);
}

static gmlp_status step(gmlp_lm_state *s, const int32_t *tokens, float *logits)
{
    gmlp_model *m = s->model;
    gmlp_context *ctx = m->ctx;
    GMLP_TRY(gmlp_lm_step_load(s, tokens));
    GMLP_TRY(gmlp_lm_step_replay(s, &s->step_rec, &s->step_generation, gmlp_lm_step_commands));
    if (!logits)
        return GMLP_OK;
    const size_t n = s->batch * (size_t)m->cfg.vocab_size;
    cl_int e = clEnqueueReadBuffer(ctx->queue, m->ws.out, CL_TRUE, 0, n * sizeof(float), logits, 0, NULL, NULL);
    return e == CL_SUCCESS ? GMLP_OK : gmlp_fail_cl(&ctx->err, "clEnqueueReadBuffer(logits)", e);
}

gmlp_status gmlp_lm_step_run(gmlp_lm_state *s, const int32_t *tokens, float *logits)
{
    gmlp_status st = step(s, tokens, logits);
    if ((st != GMLP_OK || !logits) && clFinish(s->model->ctx->queue) != CL_SUCCESS && st == GMLP_OK)
        st = gmlp_fail(&s->model->ctx->err, GMLP_ERR_OPENCL, "clFinish failed");
    return st;
}
