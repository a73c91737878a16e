/* Argument binding and launch of the library's own kernels (cl_kernels/). */
#include "ops/args.h"
#include "ops/ops.h"

#define set_args(ctx, id, ...) gmlp_set_args(ctx, (ctx)->kernels[id], __VA_ARGS__)

static gmlp_status launch(gmlp_context *ctx, gmlp_kernel_id id, size_t gx, size_t gy, const size_t *local)
{
    if (gx == 0 || gy == 0)
        return GMLP_OK;
    size_t global[2] = {gx, gy};
    cl_int e = clEnqueueNDRangeKernel(ctx->queue, ctx->kernels[id], 2, NULL, global, local, 0, NULL, NULL);
    return e == CL_SUCCESS ? GMLP_OK : gmlp_ctx_cl_fail(ctx, "clEnqueueNDRangeKernel", e);
}

gmlp_status gmlp_op_layernorm(gmlp_context *ctx, cl_mem x, int x_off, int x_stride, cl_mem y, int y_off,
                              int y_stride, cl_mem gamma, cl_mem beta, int rows, int cols, float eps)
{
    GMLP_TRY(set_args(ctx, GMLP_K_LAYERNORM, A_MEM, x, A_INT, x_off, A_INT, x_stride, A_MEM, y, A_INT, y_off, A_INT,
                 y_stride, A_MEM, gamma, A_MEM, beta, A_INT, cols, A_FLOAT, (double)eps, A_END));
    size_t local[2] = {(size_t)ctx->wg, 1};
    return launch(ctx, GMLP_K_LAYERNORM, (size_t)rows * (size_t)ctx->wg, 1, local);
}

gmlp_status gmlp_op_sgu_gate(gmlp_context *ctx, cl_mem z, int rows, int half, const gmlp_gate *g)
{
    cl_mem cb = g->cb ? g->cb : g->bias; /* any valid buffer: unread without has_cb */
    GMLP_TRY(set_args(ctx, GMLP_K_SGU_GATE, A_MEM, z, A_INT, half, A_MEM, g->bias, A_INT, g->bstride, A_INT, g->dh,
                      A_INT, g->p0, A_INT, g->m, A_MEM, cb, A_INT, g->cb != NULL, A_INT, g->act, A_END));
    return launch(ctx, GMLP_K_SGU_GATE, (size_t)half, (size_t)rows, NULL);
}

gmlp_status gmlp_op_embed(gmlp_context *ctx, cl_mem tokens, cl_mem table, cl_mem x, int rows, int dim)
{
    GMLP_TRY(set_args(ctx, GMLP_K_EMBED, A_MEM, tokens, A_MEM, table, A_MEM, x, A_INT, dim, A_END));
    return launch(ctx, GMLP_K_EMBED, (size_t)dim, (size_t)rows, NULL);
}

gmlp_status gmlp_op_shift_tokens(gmlp_context *ctx, cl_mem hist, int hist_rows, int p0, int m, cl_mem out,
                                 int rows, int dim, int segments, int first)
{
    GMLP_TRY(set_args(ctx, GMLP_K_SHIFT_TOKENS, A_MEM, hist, A_INT, hist_rows, A_INT, p0, A_INT, m, A_MEM, out,
                      A_INT, dim, A_INT, segments, A_INT, dim / segments, A_INT, first, A_END));
    return launch(ctx, GMLP_K_SHIFT_TOKENS, (size_t)dim, (size_t)rows, NULL);
}

gmlp_status gmlp_op_softmax_rows(gmlp_context *ctx, cl_mem sim, int rows, int ld, int len, int p0, int m,
                                 int causal, float scale)
{
    GMLP_TRY(set_args(ctx, GMLP_K_SOFTMAX_ROWS, A_MEM, sim, A_INT, ld, A_INT, len, A_INT, p0, A_INT, m, A_INT,
                      causal, A_FLOAT, (double)scale, A_END));
    return launch(ctx, GMLP_K_SOFTMAX_ROWS, (size_t)rows, 1, NULL);
}

gmlp_status gmlp_op_copy_rows(gmlp_context *ctx, gmlp_rows src, gmlp_rows dst, size_t width, size_t rows,
                              size_t seqs)
{
    if (!width || !rows || !seqs)
        return GMLP_OK;
    const size_t f = sizeof(float);
    size_t so[3] = {src.off * f, 0, 0}, dof[3] = {dst.off * f, 0, 0}, region[3] = {width * f, rows, seqs};
    cl_int e = clEnqueueCopyBufferRect(ctx->queue, src.buf, dst.buf, so, dof, region, src.ld * f, src.seq * f,
                                       dst.ld * f, dst.seq * f, 0, NULL, NULL);
    return e == CL_SUCCESS ? GMLP_OK : gmlp_ctx_cl_fail(ctx, "clEnqueueCopyBufferRect", e);
}

gmlp_status gmlp_op_patchify(gmlp_context *ctx, cl_mem images, size_t img_off, cl_mem patches, int batch, int chans,
                             int height, int width, int ph, int pw)
{
    int grid_w = width / pw, ntok = (height / ph) * grid_w;
    GMLP_TRY(set_args(ctx, GMLP_K_PATCHIFY, A_MEM, images, A_ULONG, (cl_ulong)img_off, A_MEM, patches, A_INT, chans,
                      A_INT, height, A_INT, width, A_INT, ph, A_INT, pw, A_INT, grid_w, A_INT, ntok, A_END));
    return launch(ctx, GMLP_K_PATCHIFY, (size_t)chans * ph * pw, (size_t)batch * ntok, NULL);
}

gmlp_status gmlp_op_mean_tokens(gmlp_context *ctx, cl_mem x, cl_mem out, size_t out_off, int batch, int ntok,
                                int dim)
{
    GMLP_TRY(set_args(ctx, GMLP_K_MEAN_TOKENS, A_MEM, x, A_MEM, out, A_ULONG, (cl_ulong)out_off, A_INT, ntok, A_INT,
                      dim, A_END));
    return launch(ctx, GMLP_K_MEAN_TOKENS, (size_t)dim, (size_t)batch, NULL);
}
