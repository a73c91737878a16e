/* The vision forward, as timm's MlpMixer.forward (and g-mlp-pytorch's
 * gMLPVision.forward): the stem (a patch Conv2d, or gMLPVision's patch
 * Linear, as patches . W^T; timm's stem_norm=True adds its norm), the blocks,
 * the final LayerNorm (ResMLP: Affine), the mean over tokens and the head, on
 * chunks of images that fit the workspace budget. */
#include "model/arch.h"
#include "model/model.h"

/* One chunk of b images from src (floats from src_off) to b rows of logits
 * (or pooled features without a head) in dst from dst_off; enqueued only. */
static gmlp_status run_chunk(gmlp_model *m, cl_mem src, size_t src_off, size_t b, int want_logits, cl_mem dst,
                             size_t dst_off)
{
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    const gmlp_workspace *w = &m->ws;
    const size_t N = (size_t)c->seq_len, d = (size_t)c->dim, rows = b * N;
    const size_t k = (size_t)c->in_chans * (size_t)c->patch_h * (size_t)c->patch_w;
    gmlp_pass p = gmlp_pass_of(m, b, 0, N, NULL);
    p.tail_stats = true;
    const gmlp_view x = gmlp_held(&p, GMLP_HELD_X), patches = gmlp_held(&p, GMLP_HELD_PATCHES);
    const gmlp_view stem = gmlp_held(&p, GMLP_HELD_STEM), y = gmlp_held(&p, GMLP_HELD_FINAL);
    /* x (rows x d) = patches (rows x k) . W_stem^T + b_stem, then (stem_norm) x = norm(that) */
    GMLP_TRY(gmlp_op_patchify(ctx, src, src_off, gmlp_rows_of(patches), b, c->in_chans, c->img_h, c->img_w,
                              c->patch_h, c->patch_w));
    GMLP_TRY(gmlp_x_gemm(&p, (gmlp_gemm){.m = rows, .n = d, .k = k, .a = patches,
                                         .b = gmlp_linear_weight(m, m->stem_w, d, k), .c = c->stem_norm ? stem : x,
                                         .bias = m->stem_b},
                         !c->stem_norm && gmlp_block_takes_stats(c))); /* x's statistics for block 0's fused LN */
    if (c->stem_norm)
        GMLP_TRY(gmlp_norm_rows(m, gmlp_rows_of(stem), gmlp_rows_of(x), m->stem_norm_w, m->stem_norm_b, rows));
    for (int l = 0; l < c->depth; l++)
        GMLP_TRY(gmlp_arch_of(c)->block(&p, l));
    /* pooled (b x d) = the mean over tokens of norm(x): the norm in the pooling where the last product wrote
     * x's statistics (a LayerNorm) or, for ResMLP's Affine, which needs none, where LayerNorms fuse */
    const bool ln = gmlp_arch_of(c)->norm == GMLP_NORM_LAYERNORM;
    const gmlp_gemm_norm norm = {.w = m->norm_w, .b = m->norm_b, .stats = ln ? w->stats : NULL, .parts = w->x_parts,
                                 .eps = c->norm_eps};
    const bool fused = ln ? w->x_parts != 0 : gmlp_gemm_fusing(ctx, GMLP_NORM_OF_A);
    m->ws.x_parts = 0;
    if (!fused)
        GMLP_TRY(gmlp_norm_rows(m, gmlp_rows_of(x), gmlp_rows_of(y), m->norm_w, m->norm_b, rows));
    GMLP_TRY(gmlp_op_mean_tokens(ctx, fused ? x.buf : y.buf, want_logits ? w->pooled : dst, want_logits ? 0 : dst_off,
                                 b, c->seq_len, c->dim, fused ? &norm : NULL));
    if (!want_logits)
        return GMLP_OK;
    /* logits (b x classes) = pooled (b x d) . W_head^T + b_head */
    const size_t nc = (size_t)c->num_classes;
    return gmlp_model_gemm(m, (gmlp_gemm){.m = b, .n = nc, .k = d, .a = {.buf = w->pooled, .ld = d},
                                          .b = gmlp_linear_weight(m, m->head_w, nc, d),
                                          .c = {.buf = dst, .off = dst_off, .ld = nc}, .bias = m->head_b});
}

/* run_chunk on the workspace: images in ws.input, the pooled features in
 * ws.pooled, and the logits (want_logits) in ws.out. */
typedef struct chunk_args {
    size_t b;
    int want_logits;
} chunk_args;

static gmlp_status run_ws_chunk(gmlp_model *m, void *arg)
{
    const chunk_args *a = arg;
    return run_chunk(m, m->ws.input, 0, a->b, a->want_logits, a->want_logits ? m->ws.out : m->ws.pooled, 0);
}

/* The chunk size for batch, with the workspace for it. */
static gmlp_status prepare(gmlp_model *m, size_t batch, size_t *chunk)
{
    *chunk = gmlp_workspace_max_seqs(m, (size_t)m->cfg.seq_len, 1);
    if (*chunk > batch)
        *chunk = batch;
    /* a tiny attention (gMLPVision) sees every token */
    return gmlp_workspace_reserve(m, *chunk * (size_t)m->cfg.seq_len, *chunk, (size_t)m->cfg.seq_len, *chunk);
}

/* A chunk's result, read back into the caller's rows from row i: with the
 * head, the pooled features stay in ws.pooled beside the logits in ws.out. */
static gmlp_status read_back(gmlp_context *ctx, cl_mem buf, size_t width, size_t i, size_t b, float *dst, int last)
{
    if (!dst)
        return GMLP_OK;
    cl_int e = clEnqueueReadBuffer(ctx->queue, buf, last ? CL_TRUE : CL_FALSE, 0, width * b * sizeof(float),
                                   dst + i * width, 0, NULL, NULL);
    return e == CL_SUCCESS ? GMLP_OK : gmlp_fail_cl(&ctx->err, "clEnqueueReadBuffer(result)", e);
}

static gmlp_status forward_host(gmlp_model *m, const float *images, size_t batch, float *logits, float *features)
{
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    const size_t img = (size_t)c->in_chans * (size_t)c->img_h * (size_t)c->img_w;
    size_t chunk;
    GMLP_TRY(prepare(m, batch, &chunk));
    const gmlp_workspace *w = &m->ws;
    for (size_t i = 0; i < batch; i += chunk) {
        size_t b = batch - i < chunk ? batch - i : chunk;
        cl_int e = clEnqueueWriteBuffer(ctx->queue, w->input, CL_FALSE, 0, img * b * sizeof(float), images + i * img,
                                        0, NULL, NULL);
        if (e != CL_SUCCESS)
            return gmlp_fail_cl(&ctx->err, "clEnqueueWriteBuffer(images)", e);
        /* recorded once per chunk size, then replayed */
        chunk_args a = {b, logits != NULL};
        GMLP_TRY(gmlp_model_replay(m, (const size_t[4]){b, a.want_logits}, run_ws_chunk, &a));
        /* the one host synchronisation of the chunk: the last read blocks */
        GMLP_TRY(read_back(ctx, w->pooled, (size_t)c->dim, i, b, features, !logits));
        GMLP_TRY(read_back(ctx, w->out, (size_t)c->num_classes, i, b, logits, 1));
    }
    return GMLP_OK;
}

gmlp_status gmlp_vision_forward(gmlp_model *m, const float *images, size_t batch, float *logits, float *features)
{
    gmlp_status st = forward_host(m, images, batch, logits, features);
    if (st != GMLP_OK) /* a chunk's write of the caller's images may still be pending */
        clFinish(m->ctx->queue);
    return st;
}

gmlp_status gmlp_forward_cl(gmlp_model *m, cl_mem images, size_t batch, cl_mem logits)
{
    const gmlp_config *c = &m->cfg;
    const size_t img = (size_t)c->in_chans * (size_t)c->img_h * (size_t)c->img_w, nc = (size_t)c->num_classes;
    size_t chunk;
    GMLP_TRY(prepare(m, batch, &chunk));
    for (size_t i = 0; i < batch; i += chunk) {
        size_t b = batch - i < chunk ? batch - i : chunk;
        GMLP_TRY(run_chunk(m, images, i * img, b, 1, logits, i * nc));
    }
    return GMLP_OK;
}
