/* The blocks, on the workspace of one pass (gmlp_pass): x the residual
 * stream, rows = sequences x positions.
 *
 * The gMLP block, as g-mlp-pytorch's layer (timm's SpatialGatingBlock is the
 * case of one head, no token shift, no tiny attention, no cache):
 *   y  = LN(x)                                   PreNorm
 *   ys = shift_tokens(y)                         PreShiftTokens (optional)
 *   ao = softmax(q k^T / sqrt(a)) v              tiny attention on ys (optional)
 *   z  = GELU(ys W_in^T + b_in) = [u | v]        fc1 / proj_in
 *   v  = act(W_h[pos, :] . LN(v) (per head) + ao W_o^T + b_o + b_sgu[h, pos]) * u
 *                                                the gate: the spatial GEMM's epilogue
 *   x += v W_out^T + b_out                       fc2 / proj_out
 * What a later position reads (LN(x) rows for the shift, LN(v) for the
 * spatial matmul, keys and values) comes from "history" buffers holding all
 * positions of each sequence: the activations themselves in a stand-alone
 * pass, the decoding state's caches otherwise. */
#include <math.h>

#include "model/arch.h"
#include "model/model.h"

gmlp_pass gmlp_pass_of(gmlp_model *m, size_t seqs, size_t p0, size_t n, const gmlp_lm_cache *cache)
{
    const gmlp_config *c = &m->cfg;
    return (gmlp_pass){.m = m, .seqs = seqs, .p0 = p0, .n = n, .rows = seqs * n, .len = p0 + n, .cache = cache,
                       .d = (size_t)c->dim, .h = (size_t)c->ffn_dim, .N = (size_t)c->seq_len,
                       .t = (size_t)c->token_dim, .a = (size_t)c->attn_dim, .heads = (size_t)c->heads};
}

/* Rows of width floats of this pass's activations (ld floats apart) into the
 * cache's history (positions p0.. of each sequence, seq_len rows apart). */
static gmlp_status to_cache(const gmlp_pass *p, cl_mem src, size_t src_off, size_t ld, size_t width, cl_mem hist)
{
    gmlp_seq_rows from = {src, src_off, ld, p->n * ld};
    gmlp_seq_rows to = {hist, p->p0 * width, width, p->N * width};
    return gmlp_op_copy_rows(p->m->ctx, from, to, width, p->n, p->seqs);
}

/* ao = softmax(q k^T / sqrt(a), causal) v over the visible positions; in
 * holds elements of type e. */
static gmlp_status attention(const gmlp_pass *p, int l, cl_mem in, gmlp_elem e)
{
    gmlp_model *m = p->m;
    gmlp_context *ctx = m->ctx;
    const gmlp_workspace *w = &m->ws;
    const size_t a = p->a, d = p->d, n = p->n, L = p->len, S = p->N, B = p->seqs;
    /* qkv (rows x 3a) = in . W_qkv^T */
    GMLP_TRY(gmlp_model_gemm(m, (gmlp_gemm){.m = p->rows, .n = 3 * a, .k = d, .a = {.buf = in, .ld = d, .elem = e},
                                            .b = gmlp_linear_weight(m, m->blocks[l].qkv_w, d),
                                            .c = {.buf = w->qkv, .ld = 3 * a}}));
    /* per sequence: keys (L x a, used transposed) and values (L x a) */
    gmlp_view k = {.buf = w->qkv, .off = a, .ld = 3 * a, .stride = n * 3 * a, .trans = 1};
    gmlp_view v = {.buf = w->qkv, .off = 2 * a, .ld = 3 * a, .stride = n * 3 * a};
    if (p->cache) {
        GMLP_TRY(to_cache(p, w->qkv, a, 3 * a, 2 * a, p->cache->kv[l]));
        k = (gmlp_view){.buf = p->cache->kv[l], .ld = 2 * a, .stride = S * 2 * a, .trans = 1};
        v = (gmlp_view){.buf = p->cache->kv[l], .off = a, .ld = 2 * a, .stride = S * 2 * a};
    }
    /* per sequence: sim (n x L) = q (n x a) . k^T */
    const gmlp_view sim = {.buf = w->sim, .ld = L, .stride = n * L};
    GMLP_TRY(gmlp_model_gemm(m, (gmlp_gemm){.m = n, .n = L, .k = a, .batch = B,
                                            .a = {.buf = w->qkv, .ld = 3 * a, .stride = n * 3 * a}, .b = k, .c = sim}));
    GMLP_TRY(gmlp_op_softmax_rows(ctx, w->sim, p->rows, L, L, p->p0, p->n, m->cfg.causal,
                                  (float)(1.0 / sqrt((double)a))));
    /* per sequence: ao (n x a) = softmax(sim) . v */
    return gmlp_model_gemm(m, (gmlp_gemm){.m = n, .n = a, .k = L, .batch = B, .a = sim, .b = v,
                                          .c = {.buf = w->ao, .ld = a, .stride = n * a}});
}

/* Columns col.. of rows of floats (v, in floats) that hold elements of e
 * instead, from each row's first byte on.  A BF16 or FP16 model's products
 * that only GEMMs read (fc1's GELU outputs but gMLP's, the gated products)
 * are stored so in the workspace: half the bytes, the values the reading
 * GEMM rounds them to. */
static gmlp_view stored_as(gmlp_view v, size_t col, gmlp_elem e)
{
    const size_t per = sizeof(float) / gmlp_elem_size(e);
    return (gmlp_view){.buf = v.buf, .off = v.off * per + col, .ld = v.ld * per, .stride = v.stride * per, .elem = e};
}

gmlp_status gmlp_norm_rows(const gmlp_model *m, gmlp_rows from, gmlp_rows to, cl_mem w, cl_mem b, size_t rows)
{
    const gmlp_config *c = &m->cfg;
    return gmlp_arch_of(c)->norm == GMLP_NORM_AFFINE
               ? gmlp_op_affine(m->ctx, from, to, w, b, rows, c->dim)
               : gmlp_op_layernorm(m->ctx, from, to, w, b, rows, c->dim, c->norm_eps);
}

/* The channel MLP's two halves, shared by the blocks:
 * z (rows x h) = act(in . W_1^T + b_1), act the row's mlp_act, in of elements e, z stored as ze */
static gmlp_status fc1(const gmlp_pass *p, const gmlp_block_weights *wt, cl_mem in, gmlp_elem e, gmlp_elem ze)
{
    const size_t d = p->d, h = p->h;
    return gmlp_model_gemm(p->m, (gmlp_gemm){.m = p->rows, .n = h, .k = d, .a = {.buf = in, .ld = d, .elem = e},
                                                .b = gmlp_linear_weight(p->m, wt->fc1_w, d),
                                                .c = stored_as((gmlp_view){.buf = p->m->ws.z, .ld = h}, 0, ze),
                                                .bias = wt->fc1_b, .act = gmlp_arch_of(&p->m->cfg)->mlp_act});
}

/* x (rows x d) += z[:, off .. off+k) . W_2^T + b_2: the residual as C with beta 1; z stored as ze */
static gmlp_status fc2(const gmlp_pass *p, const gmlp_block_weights *wt, size_t off, size_t k, gmlp_elem ze)
{
    const size_t d = p->d, h = p->h;
    const gmlp_view z = {.buf = p->m->ws.z, .off = off, .ld = h};
    return gmlp_model_gemm(p->m, (gmlp_gemm){.m = p->rows, .n = d, .k = k, .a = stored_as(z, 0, ze),
                                                .b = gmlp_linear_weight(p->m, wt->fc2_w, k),
                                                .c = {.buf = p->m->ws.x, .ld = d}, .beta = 1.0f, .bias = wt->fc2_b});
}

gmlp_status gmlp_block(const gmlp_pass *p, int l)
{
    gmlp_model *m = p->m;
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    const gmlp_block_weights *wt = &m->blocks[l];
    const gmlp_workspace *w = &m->ws;
    const size_t d = p->d, h = p->h, g = h / 2, a = p->a, dh = g / p->heads;
    const size_t n = p->n, L = p->len, S = p->N, B = p->seqs, rows = p->rows;
    /* LN(x) feeds only GEMMs (fc1, the tiny attention's qkv) unless tokens shift */
    const gmlp_elem ye = c->shift_tokens ? GMLP_ELEM_F32 : gmlp_gemm_input_elem(m);
    const gmlp_rows x = {.buf = w->x, .ld = d}, y = {.buf = w->y, .ld = d, .elem = ye};
    GMLP_TRY(gmlp_op_layernorm(ctx, x, y, wt->norm_w, wt->norm_b, rows, d, c->norm_eps));
    cl_mem in = w->y;
    if (c->shift_tokens) {
        cl_mem hist = w->y;
        size_t hist_rows = n;
        if (p->cache) {
            GMLP_TRY(to_cache(p, w->y, 0, d, d, p->cache->ln[l]));
            hist = p->cache->ln[l];
            hist_rows = S;
        }
        int s = c->shift_tokens;
        GMLP_TRY(gmlp_op_shift_tokens(ctx, hist, hist_rows, p->p0, n, w->ys, rows, d,
                                      c->causal ? s + 1 : 2 * s + 1, c->causal ? 0 : -s));
        in = w->ys;
    }
    if (a)
        GMLP_TRY(attention(p, l, in, ye));
    /* z = [u | v] (rows x h) = GELU(in . W_in^T + b_in): float, LN(v) and the gate read it */
    GMLP_TRY(fc1(p, wt, in, ye, GMLP_ELEM_F32));
    /* LN(v) (rows x g) into y, which fc1 has consumed; only the spatial matmuls read it, but for the cache */
    const gmlp_elem ve = p->cache ? GMLP_ELEM_F32 : gmlp_gemm_input_elem(m);
    const gmlp_rows v = {.buf = w->z, .off = g, .ld = h}, lnv = {.buf = w->y, .ld = g, .elem = ve};
    GMLP_TRY(gmlp_op_layernorm(ctx, v, lnv, wt->sgu_norm_w, wt->sgu_norm_b, rows, g, c->sgu_eps));
    gmlp_view gate = {.buf = w->y, .ld = g, .stride = n * g, .elem = ve};
    if (p->cache) {
        GMLP_TRY(to_cache(p, w->y, 0, g, g, p->cache->gate[l]));
        gate = (gmlp_view){.buf = p->cache->gate[l], .ld = g, .stride = S * g};
    }
    /* v (rows x g) = ao . W_o^T + b_o, which the spatial matmuls add to */
    if (a)
        GMLP_TRY(gmlp_model_gemm(m, (gmlp_gemm){.m = rows, .n = g, .k = a, .a = {.buf = w->ao, .ld = a},
                                                .b = gmlp_linear_weight(m, wt->attn_out_w, a),
                                                .c = {.buf = w->z, .off = g, .ld = h}, .bias = wt->attn_out_b}));
    /* per head and sequence, the gate in the GEMM's epilogue:
     * v[p0 .. p0+n) (n x dh) = act(W_h[p0 .. p0+n, 0 .. L) . LN(v)[0 .. L) (L x dh) + v + b_h[p0 .. p0+n)) * u,
     * which only fc2 reads: stored as gmlp_gemm_prepare chose, but where it adds to the attention's float v
     * (or a decoding step's, whose history is float) */
    const gmlp_elem ge = a || p->cache ? GMLP_ELEM_F32 : m->gemm_outputs;
    const gmlp_view v_rows = {.buf = w->z, .off = g, .ld = h, .stride = n * h};
    for (size_t hd = 0; hd < p->heads; hd++) {
        gmlp_view gh = gate;
        gh.off += hd * dh;
        GMLP_TRY(gmlp_model_gemm(m, (gmlp_gemm){.m = n, .n = dh, .k = L, .batch = B,
                                                .a = gmlp_weight(m, wt->sgu_w, (hd * S + p->p0) * S, S),
                                                .b = gh, .c = stored_as(v_rows, hd * dh, ge),
                                                .beta = a ? 1.0f : 0.0f, .bias = wt->sgu_b,
                                                .bias_off = hd * S + p->p0, .bias_rows = 1, .act = c->gate_act,
                                                .gate = {.buf = w->z, .off = hd * dh, .ld = h, .stride = n * h}}));
    }
    /* x (rows x d) += v . W_out^T + b_out */
    return fc2(p, wt, g, g, ge);
}

/* timm MixerBlock: a token MLP across the token axis, then a channel MLP.
 * gmixer's GluMlp splits fc1's outputs in two, [x1 | x2], and feeds fc2
 * x1 * act(x2): two GEMMs, the second's epilogue gating with the first. */
gmlp_status gmlp_mixer_block(const gmlp_pass *p, int l)
{
    gmlp_model *m = p->m;
    const gmlp_config *c = &m->cfg;
    const gmlp_block_weights *wt = &m->blocks[l];
    const gmlp_workspace *w = &m->ws;
    const size_t N = p->N, d = p->d, t = p->t, B = p->seqs;
    const gmlp_arch_desc *arch = gmlp_arch_of(c);
    const int glu = arch->halves;
    const size_t tu = glu ? t / 2 : t, h = p->h, g = h / 2; /* tu: the token fc2's inputs */
    /* both LayerNorms feed only GEMMs, and so do the MLPs' hidden products (but the GluMlp's gates) */
    const gmlp_elem ye = gmlp_gemm_input_elem(m), he = m->gemm_outputs;
    const gmlp_rows x = {.buf = w->x, .ld = d}, y = {.buf = w->y, .ld = d, .elem = ye};
    gmlp_context *ctx = m->ctx;
    GMLP_TRY(gmlp_op_layernorm(ctx, x, y, wt->norm1_w, wt->norm1_b, p->rows, d, c->norm_eps));
    /* per image, no transposes copied: z (t x d) = W_t1 (t x N) . y (N x d) + b per row, then
     * Mlp:    z = mlp_act(z) (GELU)
     * GluMlp: z[tu .. t) = z[0 .. tu) * act(z[tu .. t)), the first half (the gate: float, mlp_act identity)
     *         computed first */
    const gmlp_view ys = {.buf = w->y, .ld = d, .stride = N * d, .elem = ye}, x1 = {.buf = w->z, .ld = d, .stride = t * d};
    gmlp_view second = x1; /* what tok2 reads: Mlp's z, GluMlp's second half */
    second.off = glu ? tu * d : 0;
    const gmlp_view tokens = stored_as(second, 0, he);
    GMLP_TRY(gmlp_model_gemm(m, (gmlp_gemm){.m = tu, .n = d, .k = N, .batch = B, .a = gmlp_weight(m, wt->tok1_w, 0, N),
                                            .b = ys, .c = glu ? x1 : tokens, .bias = wt->tok1_b, .bias_rows = 1,
                                            .act = arch->mlp_act}));
    if (glu) {
        GMLP_TRY(gmlp_model_gemm(m, (gmlp_gemm){.m = tu, .n = d, .k = N, .batch = B,
                                                .a = gmlp_weight(m, wt->tok1_w, tu * N, N), .b = ys, .c = tokens,
                                                .bias = wt->tok1_b, .bias_off = tu, .bias_rows = 1, .act = c->gate_act,
                                                .gate = x1}));
    }
    /* per image: x (N x d) += W_t2 (N x tu) . tokens (tu x d) + b per row */
    GMLP_TRY(gmlp_model_gemm(m, (gmlp_gemm){.m = N, .n = d, .k = tu, .batch = B, .a = gmlp_weight(m, wt->tok2_w, 0, tu),
                                            .b = tokens, .c = {.buf = w->x, .ld = d, .stride = N * d}, .beta = 1.0f,
                                            .bias = wt->tok2_b, .bias_rows = 1}));
    GMLP_TRY(gmlp_op_layernorm(ctx, x, y, wt->norm_w, wt->norm_b, p->rows, d, c->norm_eps));
    /* the channel MLP */
    if (!glu) {
        GMLP_TRY(fc1(p, wt, w->y, ye, he));
        return fc2(p, wt, 0, h, he);
    }
    /* z[:, 0 .. g) (rows x g) = y . W_1[0 .. g)^T + b, then z[:, g .. h) = z[:, 0 .. g) * act(y . W_1[g .. h)^T + b) */
    gmlp_view w1 = gmlp_linear_weight(m, wt->fc1_w, d);
    const gmlp_view y_rows = {.buf = w->y, .ld = d, .elem = ye}, u = {.buf = w->z, .ld = h};
    GMLP_TRY(gmlp_model_gemm(m, (gmlp_gemm){.m = p->rows, .n = g, .k = d, .a = y_rows, .b = w1, .c = u,
                                            .bias = wt->fc1_b, .act = arch->mlp_act}));
    w1.off = g * d;
    GMLP_TRY(gmlp_model_gemm(m, (gmlp_gemm){.m = p->rows, .n = g, .k = d, .a = y_rows, .b = w1,
                                            .c = stored_as((gmlp_view){.buf = w->z, .off = g, .ld = h}, 0, he),
                                            .bias = wt->fc1_b, .bias_off = g, .act = c->gate_act, .gate = u}));
    return fc2(p, wt, g, g, he);
}

/* timm ResMLP's ResBlock, with Aff(x) = alpha * x + beta:
 *   x += ls1 * linear_tokens(Aff1(x)^T)^T
 *   x += ls2 * Mlp(Aff2(x))
 * ls1 is folded into Aff1 and ls2 into fc2 at upload (tensors.c); what
 * stays of ls1 is linear_tokens' bias times it, a rank-1 product. */
gmlp_status gmlp_resmlp_block(const gmlp_pass *p, int l)
{
    gmlp_model *m = p->m;
    const gmlp_block_weights *wt = &m->blocks[l];
    const gmlp_workspace *w = &m->ws;
    const size_t N = p->N, d = p->d, B = p->seqs;
    const gmlp_elem ye = gmlp_gemm_input_elem(m); /* both Affines feed only GEMMs */
    const gmlp_rows x = {.buf = w->x, .ld = d}, y = {.buf = w->y, .ld = d, .elem = ye};
    const gmlp_view xs = {.buf = w->x, .ld = d, .stride = N * d};
    gmlp_context *ctx = m->ctx;
    /* y = ls1 * Aff1(x) */
    GMLP_TRY(gmlp_norm_rows(m, x, y, wt->norm1_w, wt->norm1_b, p->rows));
    /* per image: x (N x d) += W_tok (N x N) . y (N x d) */
    GMLP_TRY(gmlp_model_gemm(m, (gmlp_gemm){.m = N, .n = d, .k = N, .batch = B, .a = gmlp_weight(m, wt->tok1_w, 0, N),
                                            .b = {.buf = w->y, .ld = d, .stride = N * d, .elem = ye}, .c = xs,
                                            .beta = 1.0f}));
    /* per image: x (N x d) += b_tok (N x 1) . ls1 (1 x d) */
    GMLP_TRY(gmlp_op_gemm(ctx, &(gmlp_gemm){.m = N, .n = d, .k = 1, .batch = B, .a = {.buf = wt->tok1_b, .ld = 1},
                                            .b = {.buf = wt->ls1, .ld = d}, .c = xs, .beta = 1.0f}));
    /* the channel MLP on y = Aff2(x), ls2 inside fc2 */
    GMLP_TRY(gmlp_norm_rows(m, x, y, wt->norm_w, wt->norm_b, p->rows));
    GMLP_TRY(fc1(p, wt, w->y, ye, m->gemm_outputs)); /* GELU(y W_1^T + b_1): only fc2 reads it */
    return fc2(p, wt, 0, p->h, m->gemm_outputs);
}
