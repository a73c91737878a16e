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
 * pass, the decoding state's caches otherwise.
 *
 * The fused LayerNorm (ops.h's gmlp_gemm_norm): where the device's tables
 * and the products' tiling allow (gmlp_gemm_fuses), the product that writes
 * x (the stem, fc2, the Mixer's token fc2) also writes x's row statistics,
 * and the next product that reads LN(x) (fc1; the Mixer's token fc1, whose
 * B it is) normalises x as it loads it (ResMLP's Affine needs no
 * statistics); likewise fc1 writes v's and the spatial GEMM normalises v:
 * a gMLP block in 3 launches.  The LayerNorm's launch and its pass over
 * memory go.  Wherever LN(x) or LN(v) is stored anyway (token shift,
 * attention, the decoding cache, several heads) or a half does not fuse,
 * the LayerNorm runs as its own kernel, as GMLP_FUSE=0 makes every
 * one run. */
#include <math.h>

#include "model/arch.h"
#include "model/model.h"

gmlp_pass gmlp_pass_of(gmlp_model *m, size_t seqs, size_t p0, size_t n, const gmlp_lm_cache *cache)
{
    const gmlp_config *c = &m->cfg;
    m->ws.x_parts = 0;
    return (gmlp_pass){.m = m, .seqs = seqs, .p0 = p0, .n = n, .rows = seqs * n, .len = p0 + n, .cache = cache,
                       .d = (size_t)c->dim, .h = (size_t)c->ffn_dim, .N = (size_t)c->seq_len,
                       .t = (size_t)c->token_dim, .a = (size_t)c->attn_dim, .heads = (size_t)c->heads};
}

/* Rows of width elements of this pass's activation v into the cache's
 * history hist (positions p0.. of each sequence, seq_len rows apart; stored
 * as v is). */
static gmlp_status to_cache(const gmlp_pass *p, gmlp_view v, size_t width, cl_mem hist)
{
    gmlp_seq_rows from = {v.buf, v.off, v.ld, p->n * v.ld, v.elem};
    gmlp_seq_rows to = {hist, p->p0 * width, width, p->N * width, v.elem};
    return gmlp_op_copy_rows(p->m->ctx, from, to, width, p->n, p->seqs);
}

/* ao = softmax(q k^T / sqrt(a), causal) v over the visible positions */
static gmlp_status attention(const gmlp_pass *p, int l, gmlp_view in)
{
    gmlp_model *m = p->m;
    gmlp_context *ctx = m->ctx;
    const gmlp_workspace *w = &m->ws;
    const size_t a = p->a, d = p->d, n = p->n, L = p->len, S = p->N, B = p->seqs;
    /* qkv (rows x 3a) = in . W_qkv^T */
    GMLP_TRY(gmlp_model_gemm(m, (gmlp_gemm){.m = p->rows, .n = 3 * a, .k = d, .a = in,
                                            .b = gmlp_linear_weight(m, m->blocks[l].qkv_w, 3 * a, d),
                                            .c = {.buf = w->qkv, .ld = 3 * a}}));
    /* per sequence: keys (L x a, used transposed) and values (L x a) */
    gmlp_view k = {.buf = w->qkv, .off = a, .ld = 3 * a, .stride = n * 3 * a, .trans = 1};
    gmlp_view v = {.buf = w->qkv, .off = 2 * a, .ld = 3 * a, .stride = n * 3 * a};
    if (p->cache) {
        GMLP_TRY(to_cache(p, (gmlp_view){.buf = w->qkv, .off = a, .ld = 3 * a}, 2 * a, p->cache->kv[l]));
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

gmlp_status gmlp_norm_rows(const gmlp_model *m, gmlp_rows from, gmlp_rows to, cl_mem w, cl_mem b, size_t rows)
{
    const gmlp_config *c = &m->cfg;
    return gmlp_arch_of(c)->norm == GMLP_NORM_AFFINE
               ? gmlp_op_affine(m->ctx, from, to, w, b, rows, c->dim, (gmlp_outer){0})
               : gmlp_op_layernorm(m->ctx, from, to, w, b, rows, c->dim, c->norm_eps);
}

bool gmlp_block_takes_stats(const gmlp_config *c)
{
    const gmlp_arch_desc *arch = gmlp_arch_of(c);
    if (arch->norm != GMLP_NORM_LAYERNORM)
        return false;
    return arch->mix == GMLP_MIX_SGU ? !c->shift_tokens && !c->attn_dim : arch->mix == GMLP_MIX_MLP;
}

gmlp_status gmlp_x_gemm(const gmlp_pass *p, gmlp_gemm g, bool want)
{
    gmlp_model *m = p->m;
    g.precision = m->precision;
    m->ws.x_parts = 0;
    bool fuses = false;
    gmlp_gemm with = g;
    with.stats = m->ws.stats;
    if (want && with.stats)
        GMLP_TRY(gmlp_gemm_fuses(m->ctx, &with, &fuses));
    if (fuses)
        GMLP_TRY(gmlp_gemm_stats_parts(m->ctx, &with, &m->ws.x_parts));
    return gmlp_op_gemm(m->ctx, fuses ? &with : &g);
}

gmlp_status gmlp_normed(const gmlp_pass *p, cl_mem w, cl_mem b, gmlp_gemm_norm_of of, gmlp_gemm *g)
{
    gmlp_model *m = p->m;
    const bool ln = gmlp_arch_of(&m->cfg)->norm == GMLP_NORM_LAYERNORM;
    const gmlp_view x = gmlp_held(p, GMLP_HELD_X);
    gmlp_gemm f = *g;
    gmlp_view *in = of == GMLP_NORM_OF_A ? &f.a : &f.b;
    const gmlp_view y = *in;
    *in = in->stride ? gmlp_per_seq(x, in->stride / in->ld) : x; /* y's rows and pitch, x's storage */
    f.precision = m->precision;
    f.norm = (gmlp_gemm_norm){.w = w, .b = b, .stats = ln ? m->ws.stats : NULL, .parts = m->ws.x_parts,
                              .eps = m->cfg.norm_eps, .of = of};
    bool fuses = !ln || m->ws.x_parts;
    if (fuses)
        GMLP_TRY(gmlp_gemm_fuses(m->ctx, &f, &fuses));
    m->ws.x_parts = 0;
    if (fuses) {
        *g = f;
        return GMLP_OK;
    }
    return gmlp_norm_rows(m, gmlp_rows_of(x), gmlp_rows_of(y), w, b, p->rows);
}

/* Whether the product that writes x last in block l writes x's statistics:
 * for the next block's fused LayerNorm, or the last block's for the
 * forward's tail (the final LayerNorm in the pooling or the LM head). */
static bool stats_after(const gmlp_pass *p, int l)
{
    const gmlp_config *c = &p->m->cfg;
    return l + 1 < c->depth ? gmlp_block_takes_stats(c)
                            : p->tail_stats && gmlp_arch_of(c)->norm == GMLP_NORM_LAYERNORM;
}

/* The channel MLP's two halves, shared by the blocks:
 * out (rows x h) = act(in . W_1^T + b_1), act the row's mlp_act (its A, in,
 * for normed to set) */
static gmlp_gemm fc1(const gmlp_pass *p, const gmlp_block_weights *wt, gmlp_view in, gmlp_view out)
{
    const size_t d = p->d, h = p->h;
    return (gmlp_gemm){.m = p->rows, .n = h, .k = d, .a = in, .b = gmlp_linear_weight(p->m, wt->fc1_w, h, d), .c = out,
                       .bias = wt->fc1_b, .act = gmlp_arch_of(&p->m->cfg)->mlp_act};
}

/* x (rows x d) += in (rows x k) . W_2^T + b_2: the residual as C with beta
 * 1, x's statistics written where want */
static gmlp_status fc2(const gmlp_pass *p, const gmlp_block_weights *wt, gmlp_view in, size_t k, bool want)
{
    const size_t d = p->d;
    return gmlp_x_gemm(p, (gmlp_gemm){.m = p->rows, .n = d, .k = k, .a = in, .b = gmlp_linear_weight(p->m, wt->fc2_w, d, k),
                                      .c = gmlp_held(p, GMLP_HELD_X), .beta = 1.0f, .bias = wt->fc2_b},
                       want);
}

/* The columns col.. of v. */
static gmlp_view cols_from(gmlp_view v, size_t col)
{
    v.off += col;
    return v;
}

/* Head hd's spatial GEMM, per sequence, the gate in its epilogue (beta 1
 * adds the attention's output, gated's already):
 * gated[p0 .. p0+n) (n x dh) = act(W_h[p0 .. p0+n, 0 .. L) . gate[0 .. L) (L x dh) + gated + b_h[..]) * u,
 * gate LN(v)'s rows, or v's where the GEMM normalises them (its norm). */
static gmlp_gemm spatial(const gmlp_pass *p, const gmlp_block_weights *wt, size_t hd, gmlp_view gate,
                         gmlp_view gated)
{
    gmlp_model *m = p->m;
    const size_t g = p->h / 2, dh = g / p->heads, S = p->N;
    const gmlp_view u = gmlp_per_seq(gmlp_held(p, GMLP_HELD_UV), p->n);
    return (gmlp_gemm){.m = p->n, .n = dh, .k = p->len, .batch = p->seqs,
                       .a = gmlp_weight(m, wt->sgu_w, (hd * S + p->p0) * S, S), .b = cols_from(gate, hd * dh),
                       .c = cols_from(gmlp_per_seq(gated, p->n), hd * dh), .beta = p->a ? 1.0f : 0.0f,
                       .bias = wt->sgu_b, .bias_off = hd * S + p->p0, .bias_rows = 1, .act = m->cfg.gate_act,
                       .gate = cols_from(u, hd * dh), .precision = m->precision};
}

/* LN(v) fused into the spatial GEMM, its B normalised as it loads (*vnorm
 * set; none: w NULL), fc1 (*up) writing v's statistics: where one head
 * reads LN(v), no decoding cache keeps it, and both products fuse.  The
 * gated product then goes apart from v (GMLP_HELD_GATED_APART), which the
 * GEMM reads to its end. */
static gmlp_status fuse_v(const gmlp_pass *p, const gmlp_block_weights *wt, gmlp_gemm *up, gmlp_gemm_norm *vnorm)
{
    gmlp_model *m = p->m;
    const size_t g = p->h / 2;
    *vnorm = (gmlp_gemm_norm){0};
    if (p->heads != 1 || p->cache || !m->ws.stats_v)
        return GMLP_OK;
    gmlp_gemm with = *up;
    with.precision = m->precision;
    with.stats = m->ws.stats_v, with.stats_col0 = g;
    bool fuses;
    GMLP_TRY(gmlp_gemm_fuses(m->ctx, &with, &fuses));
    if (!fuses)
        return GMLP_OK;
    gmlp_gemm_norm norm = {.w = wt->sgu_norm_w, .b = wt->sgu_norm_b, .stats = m->ws.stats_v, .eps = m->cfg.sgu_eps,
                           .of = GMLP_NORM_OF_B};
    GMLP_TRY(gmlp_gemm_stats_parts(m->ctx, &with, &norm.parts));
    gmlp_gemm sg = spatial(p, wt, 0, gmlp_per_seq(cols_from(gmlp_held(p, GMLP_HELD_UV), g), p->n),
                           gmlp_held(p, GMLP_HELD_GATED_APART));
    sg.norm = norm;
    GMLP_TRY(gmlp_gemm_fuses(m->ctx, &sg, &fuses));
    if (fuses)
        *up = with, *vnorm = norm;
    return GMLP_OK;
}

gmlp_status gmlp_block(const gmlp_pass *p, int l)
{
    gmlp_model *m = p->m;
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    const gmlp_block_weights *wt = &m->blocks[l];
    const gmlp_workspace *w = &m->ws;
    const size_t d = p->d, h = p->h, g = h / 2, a = p->a;
    const size_t n = p->n, S = p->N, rows = p->rows;
    const gmlp_view y = gmlp_held(p, GMLP_HELD_LN);
    /* [u | v] (rows x h) = GELU(LN(x) (or its shift) . W_in^T + b_in) */
    const gmlp_view uv = gmlp_held(p, GMLP_HELD_UV), v = cols_from(uv, g);
    gmlp_gemm up = fc1(p, wt, y, uv);
    if (gmlp_block_takes_stats(c))
        GMLP_TRY(gmlp_normed(p, wt->norm_w, wt->norm_b, GMLP_NORM_OF_A, &up));
    else /* LN(x) stored: the shift and the attention read it */
        GMLP_TRY(gmlp_op_layernorm(ctx, gmlp_rows_of(gmlp_held(p, GMLP_HELD_X)), gmlp_rows_of(y), wt->norm_w,
                                   wt->norm_b, rows, d, c->norm_eps));
    gmlp_view in = y;
    if (c->shift_tokens) {
        cl_mem hist = y.buf;
        size_t hist_rows = n;
        if (p->cache) {
            GMLP_TRY(to_cache(p, y, d, p->cache->ln[l]));
            hist = p->cache->ln[l];
            hist_rows = S;
        }
        int s = c->shift_tokens;
        in = gmlp_held(p, GMLP_HELD_SHIFTED);
        GMLP_TRY(gmlp_op_shift_tokens(ctx, hist, hist_rows, p->p0, n, in.buf, rows, d, c->causal ? s + 1 : 2 * s + 1,
                                      c->causal ? 0 : -s));
    }
    if (a)
        GMLP_TRY(attention(p, l, in));
    if (c->shift_tokens)
        up.a = in;
    gmlp_gemm_norm vnorm;
    GMLP_TRY(fuse_v(p, wt, &up, &vnorm));
    GMLP_TRY(gmlp_model_gemm(m, up));
    /* the spatial GEMM's B, LN(v): v itself, normalised as it loads, where that fuses; else LN(v) (rows x g)
     * stored first */
    gmlp_view gate = gmlp_per_seq(v, n), gated = gmlp_held(p, vnorm.w ? GMLP_HELD_GATED_APART : GMLP_HELD_GATED);
    if (!vnorm.w) {
        const gmlp_view lnv = gmlp_held(p, GMLP_HELD_LNV);
        GMLP_TRY(gmlp_op_layernorm(ctx, gmlp_rows_of(v), gmlp_rows_of(lnv), wt->sgu_norm_w, wt->sgu_norm_b, rows, g,
                                   c->sgu_eps));
        gate = gmlp_per_seq(lnv, n);
        if (p->cache) {
            GMLP_TRY(to_cache(p, lnv, g, p->cache->gate[l]));
            gate = (gmlp_view){.buf = p->cache->gate[l], .ld = g, .stride = S * g, .elem = lnv.elem};
        }
    }
    /* gated (rows x g) = ao . W_o^T + b_o, which the spatial matmuls add to */
    if (a)
        GMLP_TRY(gmlp_model_gemm(m, (gmlp_gemm){.m = rows, .n = g, .k = a, .a = {.buf = w->ao, .ld = a},
                                                .b = gmlp_linear_weight(m, wt->attn_out_w, g, a), .c = gated,
                                                .bias = wt->attn_out_b}));
    for (size_t hd = 0; hd < p->heads; hd++) {
        gmlp_gemm sg = spatial(p, wt, hd, gate, gated);
        sg.norm = vnorm;
        GMLP_TRY(gmlp_model_gemm(m, sg));
    }
    /* x (rows x d) += gated . W_out^T + b_out, its statistics for the next block's fused LayerNorm */
    return fc2(p, wt, gated, g, stats_after(p, l));
}

/* timm MixerBlock: a token MLP across the token axis, then a channel MLP.
 * gmixer's GluMlp splits fc1's outputs in two, [x1 | x2], and feeds fc2
 * x1 * act(x2): two GEMMs, the second's epilogue gating with the first. */
gmlp_status gmlp_mixer_block(const gmlp_pass *p, int l)
{
    gmlp_model *m = p->m;
    const gmlp_config *c = &m->cfg;
    const gmlp_block_weights *wt = &m->blocks[l];
    const size_t N = p->N, d = p->d, t = p->t, B = p->seqs;
    const gmlp_arch_desc *arch = gmlp_arch_of(c);
    const int glu = arch->halves;
    const size_t tu = glu ? t / 2 : t, h = p->h, g = h / 2; /* tu: the token fc2's inputs */
    const gmlp_view x = gmlp_held(p, GMLP_HELD_X), y = gmlp_held(p, GMLP_HELD_LN);
    /* per image, no transposes copied: tokens (t x d) = W_t1 (t x N) . LN(x) (N x d) + b per row, then
     * Mlp:    tokens = mlp_act(tokens) (GELU)
     * GluMlp: tokens = x1 * act(x2), [x1 | x2] its two halves (tu x d each), x1 (the gate, mlp_act
     *         identity) computed first */
    const gmlp_view ys = gmlp_per_seq(y, N), x1 = gmlp_per_seq(gmlp_held(p, GMLP_HELD_TOKENS_GATE), t);
    const gmlp_view tokens = gmlp_per_seq(gmlp_held(p, GMLP_HELD_TOKENS), t);
    gmlp_gemm tok = {.m = tu, .n = d, .k = N, .batch = B, .a = gmlp_weight(m, wt->tok1_w, 0, N), .b = ys,
                     .c = glu ? x1 : tokens, .bias = wt->tok1_b, .bias_rows = 1, .act = arch->mlp_act};
    GMLP_TRY(gmlp_normed(p, wt->norm1_w, wt->norm1_b, GMLP_NORM_OF_B, &tok)); /* LN(x) as B: x's rows across d */
    GMLP_TRY(gmlp_model_gemm(m, tok));
    if (glu) { /* the same B, and its prologue */
        gmlp_gemm gated = tok;
        gated.a = gmlp_weight(m, wt->tok1_w, tu * N, N);
        gated.c = tokens, gated.bias_off = tu, gated.act = c->gate_act, gated.gate = x1;
        GMLP_TRY(gmlp_model_gemm(m, gated));
    }
    /* per image: x (N x d) += W_t2 (N x tu) . tokens (tu x d) + b per row */
    /* ... its statistics for the channel MLP's fused LayerNorm */
    GMLP_TRY(gmlp_x_gemm(p, (gmlp_gemm){.m = N, .n = d, .k = tu, .batch = B, .a = gmlp_weight(m, wt->tok2_w, 0, tu),
                                        .b = tokens, .c = gmlp_per_seq(x, N), .beta = 1.0f, .bias = wt->tok2_b,
                                        .bias_rows = 1},
                         true));
    /* the channel MLP: hidden (rows x h) = mlp_act(LN(x) . W_1^T + b) */
    const gmlp_view hidden = gmlp_held(p, GMLP_HELD_HIDDEN);
    gmlp_gemm up = fc1(p, wt, y, hidden);
    if (!glu) {
        GMLP_TRY(gmlp_normed(p, wt->norm_w, wt->norm_b, GMLP_NORM_OF_A, &up));
        GMLP_TRY(gmlp_model_gemm(m, up));
        return fc2(p, wt, hidden, h, stats_after(p, l));
    }
    /* GluMlp: u (rows x g) = LN(x) . W_1[0 .. g)^T + b, then hidden (rows x g, over the second half) =
     * u * act(LN(x) . W_1[g .. h)^T + b): the halves as two products (the second's epilogue gates with
     * the first), both normalising x where it fuses */
    up.n = g;
    up.c = gmlp_held(p, GMLP_HELD_UV);
    GMLP_TRY(gmlp_normed(p, wt->norm_w, wt->norm_b, GMLP_NORM_OF_A, &up));
    GMLP_TRY(gmlp_model_gemm(m, up));
    gmlp_gemm gated = up;
    gated.b = gmlp_linear_outputs(up.b, g);
    gated.c = hidden;
    gated.bias_off = g;
    gated.act = c->gate_act;
    gated.gate = up.c;
    GMLP_TRY(gmlp_model_gemm(m, gated));
    return fc2(p, wt, hidden, g, stats_after(p, l));
}

/* timm ResMLP's ResBlock, with Aff(x) = alpha * x + beta:
 *   x += ls1 * linear_tokens(Aff1(x)^T)^T
 *   x += ls2 * Mlp(Aff2(x))
 * ls1 is folded into Aff1 and ls2 into fc2 at upload (tensors.c); what
 * stays of ls1 is linear_tokens' bias times it, a rank-1 term, which Aff1's
 * kernel adds to x as it reads it.  Aff1 stays a kernel of its own: the
 * token GEMM writes x, its C, in place, where a prologue would read x as B
 * in every group. */
gmlp_status gmlp_resmlp_block(const gmlp_pass *p, int l)
{
    gmlp_model *m = p->m;
    const gmlp_block_weights *wt = &m->blocks[l];
    const size_t N = p->N, d = p->d, B = p->seqs;
    const gmlp_view x = gmlp_held(p, GMLP_HELD_X), y = gmlp_held(p, GMLP_HELD_LN);
    /* y = ls1 * Aff1(x), then x += b_tok (N x 1, per image) . ls1 (1 x d) */
    GMLP_TRY(gmlp_op_affine(m->ctx, gmlp_rows_of(x), gmlp_rows_of(y), wt->norm1_w, wt->norm1_b, (int)p->rows, (int)d,
                            (gmlp_outer){.r = wt->tok1_b, .s = wt->ls1, .period = N}));
    /* per image: x (N x d) += W_tok (N x N) . y (N x d) */
    GMLP_TRY(gmlp_model_gemm(m, (gmlp_gemm){.m = N, .n = d, .k = N, .batch = B, .a = gmlp_weight(m, wt->tok1_w, 0, N),
                                            .b = gmlp_per_seq(y, N), .c = gmlp_per_seq(x, N), .beta = 1.0f}));
    /* the channel MLP on Aff2(x) (fc1's prologue where it fuses), ls2 inside fc2:
     * hidden (rows x h) = GELU(Aff2(x) W_1^T + b_1) */
    const gmlp_view hidden = gmlp_held(p, GMLP_HELD_HIDDEN);
    gmlp_gemm up = fc1(p, wt, y, hidden);
    GMLP_TRY(gmlp_normed(p, wt->norm_w, wt->norm_b, GMLP_NORM_OF_A, &up));
    GMLP_TRY(gmlp_model_gemm(m, up));
    return fc2(p, wt, hidden, p->h, false);
}
