/* The forward pass, as timm's MlpMixer.forward with SpatialGatingBlock or
 * MixerBlock, on activations of one chunk of images:
 *   x (B*N, d)  the residual stream
 *   y (B*N, max(d, g))  LayerNorm outputs
 *   z (B*N, max(h, K))  fc1 output [u | v]; the SGU works on it in place;
 *                        also the stem's patches and the Mixer token MLP. */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "ops/ops.h"

#define MAX_CHUNK 1024

static size_t max3(size_t a, size_t b, size_t c)
{
    size_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* Floats per image of each workspace buffer. */
typedef struct ws_sizes {
    size_t images, x, y, z;
} ws_sizes;

static ws_sizes sizes_per_image(const gmlp_config *c)
{
    size_t n = (size_t)c->seq_len, d = (size_t)c->dim, h = (size_t)c->ffn_dim;
    size_t k = (size_t)c->in_chans * (size_t)c->patch_h * (size_t)c->patch_w;
    ws_sizes s = {
        .images = (size_t)c->in_chans * (size_t)c->img_h * (size_t)c->img_w,
        .x = n * d,
        .y = n * (c->arch == GMLP_ARCH_GMLP ? max3(d, h / 2, 0) : d), /* gMLP: also the SGU's LN(v) */
        .z = max3(n * h, n * k, (size_t)c->token_dim * d),
    };
    return s;
}

/* Largest chunk whose biggest buffer fits one device allocation and whose
 * buffers together stay within a quarter of device memory, or within what an
 * injected memory limit leaves beside the weights. */
static size_t max_chunk(const gmlp_model *m)
{
    const gmlp_context *ctx = m->ctx;
    ws_sizes s = sizes_per_image(&m->cfg);
    size_t per_image = (s.images + s.x + s.y + s.z + 2 * (size_t)m->cfg.dim + (size_t)m->cfg.num_classes) * 4;
    size_t biggest = max3(s.images, s.x, max3(s.y, s.z, 1)) * 4;
    size_t budget = (size_t)(ctx->dev.global_mem / 4);
    if (ctx->mem_limit) {
        size_t others = ctx->mem_used - m->ws.bytes; /* the workspace itself is replaced */
        size_t left = ctx->mem_limit > others ? ctx->mem_limit - others : 0;
        budget = left < budget ? left : budget;
    }
    size_t cap_alloc = (size_t)ctx->dev.max_alloc / biggest, cap_total = budget / per_image;
    size_t chunk = cap_alloc < cap_total ? cap_alloc : cap_total;
    return chunk < 1 ? 1 : chunk > MAX_CHUNK ? MAX_CHUNK : chunk;
}

void gmlp_workspace_free(gmlp_model *m)
{
    gmlp_workspace *w = &m->ws;
    cl_mem *bufs[] = {&w->images, &w->x, &w->y, &w->z, &w->pooled, &w->logits};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        gmlp_buffer_release(m->ctx, bufs[i]);
    w->batch = 0;
    w->bytes = 0;
}

static gmlp_status ensure_workspace(gmlp_model *m, size_t batch)
{
    if (m->ws.batch >= batch)
        return GMLP_OK;
    gmlp_workspace_free(m);
    ws_sizes s = sizes_per_image(&m->cfg);
    gmlp_workspace *w = &m->ws;
    struct {
        cl_mem *buf;
        size_t floats;
        const char *what;
    } plan[] = {
        {&w->images, s.images, "the input images"},
        {&w->x, s.x, "the residual stream"},
        {&w->y, s.y, "the LayerNorm outputs"},
        {&w->z, s.z, "the MLP activations"},
        {&w->pooled, (size_t)m->cfg.dim, "the pooled features"},
        {&w->logits, (size_t)(m->cfg.num_classes ? m->cfg.num_classes : 1), "the logits"},
    };
    for (size_t i = 0; i < sizeof plan / sizeof *plan; i++) {
        gmlp_status st = gmlp_buffer_create(m->ctx, plan[i].floats * batch * sizeof(float), NULL, plan[i].what,
                                            plan[i].buf);
        if (st != GMLP_OK) {
            gmlp_workspace_free(m);
            return st;
        }
    }
    for (size_t i = 0; i < sizeof plan / sizeof *plan; i++)
        w->bytes += plan[i].floats * batch * sizeof(float);
    w->batch = batch;
    return GMLP_OK;
}

static gmlp_mat mat(cl_mem buf, size_t off, size_t ld, int trans)
{
    gmlp_mat r = {buf, off, ld, 0, trans, 0};
    return r;
}

static gmlp_mat batched(cl_mem buf, size_t off, size_t ld, size_t stride)
{
    gmlp_mat r = {buf, off, ld, stride, 0, 0};
    return r;
}

/* x += SGU-gated MLP(LayerNorm(x)): timm SpatialGatingBlock. */
static gmlp_status gmlp_block(gmlp_model *m, const gmlp_block_weights *w, int b)
{
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    const int n = c->seq_len, d = c->dim, h = c->ffn_dim, g = h / 2, rows = b * n;
    cl_mem x = m->ws.x, y = m->ws.y, z = m->ws.z;
    GMLP_TRY(gmlp_op_layernorm(ctx, x, 0, d, y, 0, d, w->norm_w, w->norm_b, rows, d, c->norm_eps));
    const gmlp_epilogue fc1 = {.bias = w->fc1_b, .gelu = 1};
    GMLP_TRY(gmlp_op_gemm(ctx, rows, h, d, mat(y, 0, d, 0), gmlp_weight_mat(m, w->fc1_w, 0, d, 0, 1), 0.0f,
                          mat(z, 0, h, 0), 1, &fc1));
    /* v = LN(z[:, g:]) into y; then per image z[:, g:] = (W . v + b) * z[:, :g] */
    GMLP_TRY(gmlp_op_layernorm(ctx, z, g, h, y, 0, g, w->sgu_norm_w, w->sgu_norm_b, rows, g, c->sgu_eps));
    const gmlp_epilogue gate = {.bias = w->sgu_b, .bias_rows = 1, .mul = z, .mul_off = 0};
    GMLP_TRY(gmlp_op_gemm(ctx, n, g, n, gmlp_weight_mat(m, w->sgu_w, 0, n, 0, 0), batched(y, 0, g, (size_t)n * g),
                          0.0f, batched(z, g, h, (size_t)n * h), b, &gate));
    /* the residual as C with beta 1 */
    const gmlp_epilogue fc2 = {.bias = w->fc2_b};
    return gmlp_op_gemm(ctx, rows, d, g, mat(z, g, h, 0), gmlp_weight_mat(m, w->fc2_w, 0, g, 0, 1), 1.0f,
                        mat(x, 0, d, 0), 1, &fc2);
}

/* timm MixerBlock: token MLP across the token axis, then a channel MLP. */
static gmlp_status mixer_block(gmlp_model *m, const gmlp_block_weights *w, int b)
{
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    const int n = c->seq_len, d = c->dim, h = c->ffn_dim, t = c->token_dim, rows = b * n;
    cl_mem x = m->ws.x, y = m->ws.y, z = m->ws.z;
    const size_t nd = (size_t)n * d, td = (size_t)t * d;
    GMLP_TRY(gmlp_op_layernorm(ctx, x, 0, d, y, 0, d, w->norm1_w, w->norm1_b, rows, d, c->norm_eps));
    /* per image: z (t x d) = GELU(Wt1 (t x N) . y (N x d) + b per row); no transposes copied */
    const gmlp_epilogue tok1 = {.bias = w->tok1_b, .bias_rows = 1, .gelu = 1}, tok2 = {.bias = w->tok2_b, .bias_rows = 1};
    GMLP_TRY(gmlp_op_gemm(ctx, t, d, n, gmlp_weight_mat(m, w->tok1_w, 0, n, 0, 0), batched(y, 0, d, nd), 0.0f,
                          batched(z, 0, d, td), b, &tok1));
    GMLP_TRY(gmlp_op_gemm(ctx, n, d, t, gmlp_weight_mat(m, w->tok2_w, 0, t, 0, 0), batched(z, 0, d, td), 1.0f,
                          batched(x, 0, d, nd), b, &tok2));
    GMLP_TRY(gmlp_op_layernorm(ctx, x, 0, d, y, 0, d, w->norm_w, w->norm_b, rows, d, c->norm_eps));
    const gmlp_epilogue fc1 = {.bias = w->fc1_b, .gelu = 1}, fc2 = {.bias = w->fc2_b};
    GMLP_TRY(gmlp_op_gemm(ctx, rows, h, d, mat(y, 0, d, 0), gmlp_weight_mat(m, w->fc1_w, 0, d, 0, 1), 0.0f,
                          mat(z, 0, h, 0), 1, &fc1));
    return gmlp_op_gemm(ctx, rows, d, h, mat(z, 0, h, 0), gmlp_weight_mat(m, w->fc2_w, 0, h, 0, 1), 1.0f,
                        mat(x, 0, d, 0), 1, &fc2);
}

/* One chunk of b images from src (floats from src_off) to b rows of logits
 * (or pooled features without a head) in dst from dst_off; enqueued only. */
static gmlp_status run_chunk(gmlp_model *m, cl_mem src, size_t src_off, int b, int want_logits, cl_mem dst,
                             size_t dst_off)
{
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    const gmlp_workspace *w = &m->ws;
    const int n = c->seq_len, d = c->dim, rows = b * n, k = c->in_chans * c->patch_h * c->patch_w;
    /* stem: Conv2d with kernel = stride = patch, as patches . W^T + b */
    GMLP_TRY(gmlp_op_patchify(ctx, src, src_off, w->z, b, c->in_chans, c->img_h, c->img_w, c->patch_h, c->patch_w));
    const gmlp_epilogue stem = {.bias = m->stem_b}, head = {.bias = m->head_b};
    GMLP_TRY(gmlp_op_gemm(ctx, rows, d, k, mat(w->z, 0, k, 0), gmlp_weight_mat(m, m->stem_w, 0, k, 0, 1), 0.0f,
                          mat(w->x, 0, d, 0), 1, &stem));
    for (int l = 0; l < c->depth; l++)
        GMLP_TRY(c->arch == GMLP_ARCH_MIXER ? mixer_block(m, &m->blocks[l], b) : gmlp_block(m, &m->blocks[l], b));
    GMLP_TRY(gmlp_op_layernorm(ctx, w->x, 0, d, w->y, 0, d, m->norm_w, m->norm_b, rows, d, c->norm_eps));
    GMLP_TRY(gmlp_op_mean_tokens(ctx, w->y, want_logits ? w->pooled : dst, want_logits ? 0 : dst_off, b, n, d));
    if (!want_logits)
        return GMLP_OK;
    const int nc = c->num_classes;
    return gmlp_op_gemm(ctx, b, nc, d, mat(w->pooled, 0, d, 0), gmlp_weight_mat(m, m->head_w, 0, d, 0, 1), 0.0f,
                        mat(dst, dst_off, nc, 0), 1, &head);
}

/* The chunk size for batch: at most what the workspace budget allows. */
static gmlp_status prepare(gmlp_model *m, size_t batch, size_t *chunk)
{
    *chunk = max_chunk(m);
    if (*chunk > batch)
        *chunk = batch;
    return ensure_workspace(m, *chunk);
}

static gmlp_status forward_host(gmlp_model *m, const float *images, size_t batch, float *features, float *logits)
{
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    const size_t img = sizes_per_image(c).images, out = logits ? (size_t)c->num_classes : (size_t)c->dim;
    size_t chunk;
    GMLP_TRY(prepare(m, batch, &chunk));
    const gmlp_workspace *w = &m->ws;
    for (size_t i = 0; i < batch; i += chunk) {
        size_t b = batch - i < chunk ? batch - i : chunk;
        cl_int e = clEnqueueWriteBuffer(ctx->queue, w->images, CL_FALSE, 0, img * b * sizeof(float), images + i * img,
                                        0, NULL, NULL);
        if (e != CL_SUCCESS)
            return gmlp_ctx_cl_fail(ctx, "clEnqueueWriteBuffer(images)", e);
        cl_mem dst = logits ? w->logits : w->pooled;
        GMLP_TRY(run_chunk(m, w->images, 0, (int)b, logits != NULL, dst, 0));
        /* the one host synchronisation of the chunk */
        e = clEnqueueReadBuffer(ctx->queue, dst, CL_TRUE, 0, out * b * sizeof(float), (logits ? logits : features) +
                                i * out, 0, NULL, NULL);
        if (e != CL_SUCCESS)
            return gmlp_ctx_cl_fail(ctx, "clEnqueueReadBuffer(result)", e);
    }
    return GMLP_OK;
}

gmlp_status gmlp_forward(gmlp_model *m, const float *images, size_t batch, float *features, float *logits)
{
    gmlp_status st = forward_host(m, images, batch, features, logits);
    if (st != GMLP_OK) /* a chunk's write of the caller's images may still be pending */
        clFinish(m->ctx->queue);
    return st;
}

gmlp_status gmlp_forward_cl(gmlp_model *m, cl_mem images, size_t batch, cl_mem logits)
{
    const size_t img = sizes_per_image(&m->cfg).images, nc = (size_t)m->cfg.num_classes;
    size_t chunk;
    GMLP_TRY(prepare(m, batch, &chunk));
    for (size_t i = 0; i < batch; i += chunk) {
        size_t b = batch - i < chunk ? batch - i : chunk;
        GMLP_TRY(run_chunk(m, images, i * img, (int)b, 1, logits, i * nc));
    }
    return GMLP_OK;
}
