/* The g-mlp-pytorch language-model forward: the token embedding, the gMLP
 * blocks (model/block.c) and to_logits (LayerNorm, then Linear), over
 * positions p0 .. p0+n-1 of a batch of sequences: the whole sequence for
 * gmlp_lm_logits, the new tokens for cached decoding. */
#include "model/arch.h"
#include "model/model.h"

static gmlp_status forward(gmlp_model *m, const int32_t *tokens, size_t batch, size_t p0, size_t n,
                           const gmlp_lm_cache *cache, int last_only, float *logits)
{
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    const size_t rows = batch * n, d = (size_t)c->dim, V = (size_t)c->vocab_size;
    const size_t out_rows = last_only ? batch : rows;
    for (size_t i = 0; i < rows; i++)
        if (tokens[i] < 0 || tokens[i] >= c->vocab_size)
            return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "token %zu of sequence %zu is %ld, outside 0 .. %d",
                             i % n, i / n, (long)tokens[i], c->vocab_size - 1);
    GMLP_TRY(gmlp_workspace_reserve(m, rows, batch, p0 + n, out_rows));
    const gmlp_workspace *w = &m->ws;
    /* not blocking: the read of the logits, or gmlp_lm_forward's clFinish, waits for it */
    cl_int e = clEnqueueWriteBuffer(ctx->queue, w->input, CL_FALSE, 0, rows * sizeof(cl_int), tokens, 0, NULL, NULL);
    if (e != CL_SUCCESS)
        return gmlp_fail_cl(&ctx->err, "clEnqueueWriteBuffer(tokens)", e);
    GMLP_TRY(gmlp_op_embed(ctx, w->input, m->embed_w, w->x, (int)rows, (int)d));
    gmlp_pass p = gmlp_pass_of(m, batch, p0, n, cache);
    p.tail_stats = out_rows == rows; /* the head's rows are x's: the final LayerNorm may go into its prologue */
    for (int l = 0; l < c->depth; l++)
        GMLP_TRY(gmlp_arch_of(c)->block(&p, l));
    /* to_logits on every row, or on each sequence's last:
     * logits (out_rows x V) = LN(x) . W_head^T + b_head */
    const gmlp_view x = gmlp_held(&p, GMLP_HELD_X), y = gmlp_held(&p, GMLP_HELD_FINAL);
    gmlp_gemm head = {.m = out_rows, .n = V, .k = d, .a = y, .b = gmlp_linear_weight(m, m->head_w, V, d),
                      .c = {.buf = w->out, .ld = V}, .bias = m->head_b};
    if (p.tail_stats) {
        GMLP_TRY(gmlp_normed(&p, m->norm_w, m->norm_b, GMLP_NORM_OF_A, &head));
    } else { /* each sequence's last row */
        gmlp_rows from = gmlp_rows_of(x);
        from.off += (n - 1) * x.ld, from.ld = n * x.ld;
        GMLP_TRY(gmlp_op_layernorm(ctx, from, gmlp_rows_of(y), m->norm_w, m->norm_b, (int)out_rows, (int)d,
                                   c->norm_eps));
    }
    GMLP_TRY(gmlp_model_gemm(m, head));
    if (!logits)
        return GMLP_OK;
    e = clEnqueueReadBuffer(ctx->queue, w->out, CL_TRUE, 0, out_rows * V * sizeof(float), logits, 0, NULL, NULL);
    return e == CL_SUCCESS ? GMLP_OK : gmlp_fail_cl(&ctx->err, "clEnqueueReadBuffer(logits)", e);
}

gmlp_status gmlp_lm_forward(gmlp_model *m, const int32_t *tokens, size_t batch, size_t p0, size_t n,
                            const gmlp_lm_cache *cache, int last_only, float *logits)
{
    gmlp_status st = forward(m, tokens, batch, p0, n, cache, last_only, logits);
    /* without the blocking read of the logits (none wanted, or a failure on
     * the way), the write of the caller's tokens may still be pending */
    if ((st != GMLP_OK || !logits) && clFinish(m->ctx->queue) != CL_SUCCESS && st == GMLP_OK)
        st = gmlp_fail(&m->ctx->err, GMLP_ERR_OPENCL, "clFinish failed");
    return st;
}
