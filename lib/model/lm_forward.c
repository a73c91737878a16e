/* The g-mlp-pytorch gMLP language model forward, over positions p0 .. p0+n-1
 * of a batch of sequences (the whole sequence for gmlp_lm_logits, one new
 * token for cached decoding).  Per layer (x: the residual stream):
 *   y  = LN(x)                                   PreNorm
 *   ys = shift_tokens(y)                         PreShiftTokens (optional)
 *   ao = softmax(q k^T / sqrt(a)) v              tiny attention on ys (optional)
 *   z  = GELU(ys W_in^T + b_in) = [u | v]
 *   v  = W_h[pos, :] . LN(v) (per head) + ao W_o^T
 *   v  = act(v + b_sgu[h, pos] + b_o) * u        the gate epilogue, in place
 *   x += v W_out^T + b_out
 * Everything a later position reads (LN(x) rows for the shift, LN(v) for the
 * spatial matmul, keys and values) comes from "history" buffers holding all
 * positions of each sequence: the activations themselves in a stand-alone
 * pass, the decoding state's caches otherwise. */
#include <math.h>
#include <stdlib.h>

#include "model/model.h"
#include "ops/ops.h"

typedef struct lm_pass {
    gmlp_model *m;
    int batch, p0, n, rows, len; /* len = p0 + n: positions visible to the last one */
    const gmlp_lm_cache *cache;
} lm_pass;

static gmlp_mat mat(cl_mem buf, size_t off, size_t ld, size_t stride, int trans)
{
    gmlp_mat r = {buf, off, ld, stride, trans, 0};
    return r;
}

/* Floats per row of each workspace buffer, for kv_len attention keys. */
static size_t floats_per_row(const gmlp_config *c, size_t kv_len, int logits)
{
    size_t d = (size_t)c->dim, h = (size_t)c->ffn_dim, a = (size_t)c->attn_dim;
    return 2 * d + (c->shift_tokens ? d : 0) + h + h / 2 + (a ? 4 * a + kv_len : 0) +
           (logits ? (size_t)c->vocab_size : 0) + 1 /* token id */;
}

void gmlp_lm_workspace_free(gmlp_model *m)
{
    gmlp_lm_workspace *w = &m->lm;
    cl_mem *bufs[] = {&w->tokens, &w->x, &w->y, &w->ys, &w->z, &w->gn, &w->qkv, &w->sim, &w->ao, &w->logits};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        gmlp_buffer_release(m->ctx, bufs[i]);
    w->rows = w->kv_len = w->out_rows = w->bytes = 0;
}

static gmlp_status allocate(gmlp_model *m, size_t rows, size_t kv_len, size_t out_rows)
{
    gmlp_lm_workspace *w = &m->lm;
    const gmlp_config *c = &m->cfg;
    size_t d = (size_t)c->dim, h = (size_t)c->ffn_dim, a = (size_t)c->attn_dim, V = (size_t)c->vocab_size;
    struct {
        cl_mem *buf;
        size_t bytes;
        const char *what;
    } plan[] = {
        {&w->tokens, rows * sizeof(cl_int), "the token ids"},
        {&w->x, rows * d * 4, "the residual stream"},
        {&w->y, rows * d * 4, "the LayerNorm outputs"},
        {&w->ys, c->shift_tokens ? rows * d * 4 : 0, "the shifted tokens"},
        {&w->z, rows * h * 4, "the MLP activations"},
        {&w->gn, rows * h / 2 * 4, "the normalised gates"},
        {&w->qkv, rows * 3 * a * 4, "the attention queries, keys and values"},
        {&w->sim, a ? rows * kv_len * 4 : 0, "the attention weights"},
        {&w->ao, rows * a * 4, "the attention outputs"},
        {&w->logits, out_rows * V * 4, "the logits"},
    };
    for (size_t i = 0; i < sizeof plan / sizeof *plan; i++) {
        if (!plan[i].bytes)
            continue;
        gmlp_status st = gmlp_buffer_create(m->ctx, plan[i].bytes, NULL, plan[i].what, plan[i].buf);
        if (st != GMLP_OK) {
            gmlp_lm_workspace_free(m);
            return st;
        }
        w->bytes += plan[i].bytes;
    }
    w->rows = rows;
    w->kv_len = kv_len;
    w->out_rows = out_rows;
    return GMLP_OK;
}

/* Capacity for rows rows seeing kv_len keys, logits for out_rows of them. */
static gmlp_status ensure_workspace(gmlp_model *m, size_t rows, size_t kv_len, size_t out_rows)
{
    gmlp_lm_workspace *w = &m->lm;
    if (w->rows >= rows && w->kv_len >= kv_len && w->out_rows >= out_rows)
        return GMLP_OK;
    /* grow at least twofold, never shrink: sequences that lengthen by one
     * token per call reallocate O(log n) times, not n */
    size_t S = (size_t)m->cfg.seq_len;
    size_t r2 = rows > 2 * w->rows ? rows : 2 * w->rows, k2 = kv_len > 2 * w->kv_len ? kv_len : 2 * w->kv_len;
    size_t o2 = out_rows > 2 * w->out_rows ? out_rows : 2 * w->out_rows;
    size_t exact[3] = {rows > w->rows ? rows : w->rows, kv_len > w->kv_len ? kv_len : w->kv_len,
                       out_rows > w->out_rows ? out_rows : w->out_rows};
    gmlp_lm_workspace_free(m);
    if (allocate(m, r2, k2 < S ? k2 : S, o2) == GMLP_OK)
        return GMLP_OK;
    return allocate(m, exact[0], exact[1], exact[2]); /* the doubled size did not fit */
}

size_t gmlp_lm_max_batch(const gmlp_model *m, size_t n)
{
    size_t per_seq = n * floats_per_row(&m->cfg, n, 1) * sizeof(float);
    size_t budget = gmlp_mem_budget(m->ctx, m->lm.bytes);
    size_t biggest = n * (size_t)(m->cfg.vocab_size > m->cfg.ffn_dim ? m->cfg.vocab_size : m->cfg.ffn_dim) * 4;
    size_t cap_alloc = (size_t)m->ctx->dev.max_alloc / biggest, cap_total = budget / per_seq;
    size_t b = cap_alloc < cap_total ? cap_alloc : cap_total;
    return b < 1 ? 1 : b;
}

/* Rows of width floats of this pass's activations (ld floats apart) into the
 * cache's history (positions p0.. of each sequence, seq_len rows apart). */
static gmlp_status to_cache(const lm_pass *p, cl_mem src, size_t src_off, size_t ld, size_t width, cl_mem hist)
{
    size_t S = (size_t)p->m->cfg.seq_len;
    gmlp_rows from = {src, src_off, ld, (size_t)p->n * ld};
    gmlp_rows to = {hist, (size_t)p->p0 * width, width, S * width};
    return gmlp_op_copy_rows(p->m->ctx, from, to, width, (size_t)p->n, (size_t)p->batch);
}

/* ao = softmax(q k^T / sqrt(a), causal) v over the visible positions. */
static gmlp_status attention(const lm_pass *p, int l, cl_mem in)
{
    gmlp_model *m = p->m;
    gmlp_context *ctx = m->ctx;
    const gmlp_lm_workspace *w = &m->lm;
    const size_t a = (size_t)m->cfg.attn_dim, d = (size_t)m->cfg.dim, n = (size_t)p->n, L = (size_t)p->len;
    const size_t S = (size_t)m->cfg.seq_len, B = (size_t)p->batch;
    GMLP_TRY(gmlp_op_gemm(ctx, (size_t)p->rows, 3 * a, d, mat(in, 0, d, 0, 0), gmlp_weight_mat(m, m->blocks[l].qkv_w, 0, d, 0, 1),
                          0.0f, mat(w->qkv, 0, 3 * a, 0, 0), 1, NULL));
    gmlp_mat k = mat(w->qkv, a, 3 * a, n * 3 * a, 1), v = mat(w->qkv, 2 * a, 3 * a, n * 3 * a, 0);
    if (p->cache) {
        GMLP_TRY(to_cache(p, w->qkv, a, 3 * a, 2 * a, p->cache->kv[l]));
        k = mat(p->cache->kv[l], 0, 2 * a, S * 2 * a, 1);
        v = mat(p->cache->kv[l], a, 2 * a, S * 2 * a, 0);
    }
    GMLP_TRY(gmlp_op_gemm(ctx, n, L, a, mat(w->qkv, 0, 3 * a, n * 3 * a, 0), k, 0.0f, mat(w->sim, 0, L, n * L, 0), B, NULL));
    GMLP_TRY(gmlp_op_softmax_rows(ctx, w->sim, p->rows, (int)L, (int)L, p->p0, p->n, m->cfg.causal,
                                  (float)(1.0 / sqrt((double)a))));
    return gmlp_op_gemm(ctx, n, a, L, mat(w->sim, 0, L, n * L, 0), v, 0.0f, mat(w->ao, 0, a, n * a, 0), B, NULL);
}

static gmlp_status lm_layer(const lm_pass *p, int l)
{
    gmlp_model *m = p->m;
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    const gmlp_block_weights *wt = &m->blocks[l];
    const gmlp_lm_workspace *w = &m->lm;
    const size_t d = (size_t)c->dim, h = (size_t)c->ffn_dim, g = h / 2, a = (size_t)c->attn_dim;
    const size_t n = (size_t)p->n, L = (size_t)p->len, S = (size_t)c->seq_len, B = (size_t)p->batch;
    const size_t rows = (size_t)p->rows, dh = g / (size_t)c->heads;
    GMLP_TRY(gmlp_op_layernorm(ctx, w->x, 0, (int)d, w->y, 0, (int)d, wt->norm_w, wt->norm_b, p->rows, (int)d,
                               c->norm_eps));
    cl_mem in = w->y;
    if (c->shift_tokens) {
        cl_mem hist = w->y;
        int hist_rows = p->n;
        if (p->cache) {
            GMLP_TRY(to_cache(p, w->y, 0, d, d, p->cache->ln[l]));
            hist = p->cache->ln[l];
            hist_rows = c->seq_len;
        }
        int s = c->shift_tokens;
        GMLP_TRY(gmlp_op_shift_tokens(ctx, hist, hist_rows, p->p0, p->n, w->ys, p->rows, (int)d,
                                      c->causal ? s + 1 : 2 * s + 1, c->causal ? 0 : -s));
        in = w->ys;
    }
    if (a)
        GMLP_TRY(attention(p, l, in));
    const gmlp_epilogue fc1 = {.bias = wt->fc1_b, .gelu = 1}, fc2 = {.bias = wt->fc2_b};
    GMLP_TRY(gmlp_op_gemm(ctx, rows, h, d, mat(in, 0, d, 0, 0), gmlp_weight_mat(m, wt->fc1_w, 0, d, 0, 1), 0.0f,
                          mat(w->z, 0, h, 0, 0), 1, &fc1));
    GMLP_TRY(gmlp_op_layernorm(ctx, w->z, (int)g, (int)h, w->gn, 0, (int)g, wt->sgu_norm_w, wt->sgu_norm_b, p->rows,
                               (int)g, c->sgu_eps));
    gmlp_mat gate = mat(w->gn, 0, g, n * g, 0);
    if (p->cache) {
        GMLP_TRY(to_cache(p, w->gn, 0, g, g, p->cache->gate[l]));
        gate = mat(p->cache->gate[l], 0, g, S * g, 0);
    }
    /* per head, per sequence: v[p0 .. p0+n) = W_h[p0 .. p0+n, 0 .. len) . LN(v)[0 .. len) */
    for (size_t hd = 0; hd < (size_t)c->heads; hd++) {
        gmlp_mat wh = gmlp_weight_mat(m, wt->sgu_w, (hd * S + (size_t)p->p0) * S, S, 0, 0), gh = gate;
        gh.off += hd * dh;
        GMLP_TRY(gmlp_op_gemm(ctx, n, dh, L, wh, gh, 0.0f, mat(w->z, g + hd * dh, h, n * h, 0), B, NULL));
    }
    if (a)
        GMLP_TRY(gmlp_op_gemm(ctx, rows, g, a, mat(w->ao, 0, a, 0, 0), gmlp_weight_mat(m, wt->attn_out_w, 0, a, 0, 1), 1.0f,
                              mat(w->z, g, h, 0, 0), 1, NULL));
    gmlp_gate gt = {.bias = wt->sgu_b, .cb = a ? wt->attn_out_b : NULL, .bstride = c->seq_len, .dh = (int)dh,
                    .p0 = p->p0, .m = p->n, .act = c->gate_act};
    GMLP_TRY(gmlp_op_sgu_gate(ctx, w->z, p->rows, (int)g, &gt));
    /* the residual as C with beta 1 */
    return gmlp_op_gemm(ctx, rows, d, g, mat(w->z, g, h, 0, 0), gmlp_weight_mat(m, wt->fc2_w, 0, g, 0, 1), 1.0f,
                        mat(w->x, 0, d, 0, 0), 1, &fc2);
}

static gmlp_status forward(gmlp_model *m, const int32_t *tokens, size_t batch, size_t p0, size_t n,
                           const gmlp_lm_cache *cache, int last_only, float *logits)
{
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    const size_t rows = batch * n, d = (size_t)c->dim, V = (size_t)c->vocab_size;
    const size_t out_rows = last_only ? batch : rows;
    for (size_t i = 0; i < rows; i++)
        if (tokens[i] < 0 || tokens[i] >= c->vocab_size)
            return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "token %zu of sequence %zu is %ld, outside 0 .. %d",
                                 i % n, i / n, (long)tokens[i], c->vocab_size - 1);
    GMLP_TRY(ensure_workspace(m, rows, p0 + n, out_rows));
    const gmlp_lm_workspace *w = &m->lm;
    lm_pass p = {m, (int)batch, (int)p0, (int)n, (int)rows, (int)(p0 + n), cache};
    /* not blocking: the read of the logits, or gmlp_lm_forward's clFinish, waits for it */
    cl_int e = clEnqueueWriteBuffer(ctx->queue, w->tokens, CL_FALSE, 0, rows * sizeof(cl_int), tokens, 0, NULL, NULL);
    if (e != CL_SUCCESS)
        return gmlp_ctx_cl_fail(ctx, "clEnqueueWriteBuffer(tokens)", e);
    GMLP_TRY(gmlp_op_embed(ctx, w->tokens, m->embed_w, w->x, p.rows, (int)d));
    for (int l = 0; l < c->depth; l++)
        GMLP_TRY(lm_layer(&p, l));
    /* to_logits: LN then Linear, on every row or on each sequence's last */
    size_t first = last_only ? (n - 1) * d : 0, stride = last_only ? n * d : d;
    const gmlp_epilogue head = {.bias = m->head_b};
    GMLP_TRY(gmlp_op_layernorm(ctx, w->x, (int)first, (int)stride, w->y, 0, (int)d, m->norm_w, m->norm_b,
                               (int)out_rows, (int)d, c->norm_eps));
    GMLP_TRY(gmlp_op_gemm(ctx, out_rows, V, d, mat(w->y, 0, d, 0, 0), gmlp_weight_mat(m, m->head_w, 0, d, 0, 1), 0.0f,
                          mat(w->logits, 0, V, 0, 0), 1, &head));
    if (!logits)
        return GMLP_OK;
    e = clEnqueueReadBuffer(ctx->queue, w->logits, CL_TRUE, 0, out_rows * V * sizeof(float), logits, 0, NULL, NULL);
    return e == CL_SUCCESS ? GMLP_OK : gmlp_ctx_cl_fail(ctx, "clEnqueueReadBuffer(logits)", e);
}

gmlp_status gmlp_lm_forward(gmlp_model *m, const int32_t *tokens, size_t batch, size_t p0, size_t n,
                            const gmlp_lm_cache *cache, int last_only, float *logits)
{
    gmlp_status st = forward(m, tokens, batch, p0, n, cache, last_only, logits);
    /* without the blocking read of the logits (none wanted, or a failure on
     * the way), the write of the caller's tokens may still be pending */
    if ((st != GMLP_OK || !logits) && clFinish(m->ctx->queue) != CL_SUCCESS && st == GMLP_OK)
        st = gmlp_ctx_fail(m->ctx, GMLP_ERR_OPENCL, "clFinish failed");
    return st;
}
