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

static gmlp_status bias_act(gmlp_context *ctx, cl_mem x, cl_mem bias, int rows, int cols, int rperiod,
                            int rstride, int cstride, gmlp_act act)
{
    GMLP_TRY(set_args(ctx, GMLP_K_BIAS_ACT, A_MEM, x, A_MEM, bias, A_INT, cols, A_INT, rperiod, A_INT, rstride, A_INT,
                 cstride, A_INT, (int)act, A_END));
    return launch(ctx, GMLP_K_BIAS_ACT, (size_t)cols, (size_t)rows, NULL);
}

gmlp_status gmlp_op_bias_act_cols(gmlp_context *ctx, cl_mem x, cl_mem bias, int rows, int cols, gmlp_act act)
{
    return bias_act(ctx, x, bias, rows, cols, 1, 0, 1, act);
}

gmlp_status gmlp_op_bias_act_rows(gmlp_context *ctx, cl_mem x, cl_mem bias, int rows, int cols, int period,
                                  gmlp_act act)
{
    return bias_act(ctx, x, bias, rows, cols, period, 1, 0, act);
}

gmlp_status gmlp_op_sgu_gate(gmlp_context *ctx, cl_mem z, int rows, int half, cl_mem bias, int ntok)
{
    GMLP_TRY(set_args(ctx, GMLP_K_SGU_GATE, A_MEM, z, A_INT, half, A_MEM, bias, A_INT, ntok, A_END));
    return launch(ctx, GMLP_K_SGU_GATE, (size_t)half, (size_t)rows, NULL);
}

gmlp_status gmlp_op_patchify(gmlp_context *ctx, cl_mem images, cl_mem patches, int batch, int chans, int height,
                             int width, int ph, int pw)
{
    int grid_w = width / pw, ntok = (height / ph) * grid_w;
    GMLP_TRY(set_args(ctx, GMLP_K_PATCHIFY, A_MEM, images, A_MEM, patches, A_INT, chans, A_INT, height, A_INT, width,
                 A_INT, ph, A_INT, pw, A_INT, grid_w, A_INT, ntok, A_END));
    return launch(ctx, GMLP_K_PATCHIFY, (size_t)chans * ph * pw, (size_t)batch * ntok, NULL);
}

gmlp_status gmlp_op_mean_tokens(gmlp_context *ctx, cl_mem x, cl_mem out, int batch, int ntok, int dim)
{
    GMLP_TRY(set_args(ctx, GMLP_K_MEAN_TOKENS, A_MEM, x, A_MEM, out, A_INT, ntok, A_INT, dim, A_END));
    return launch(ctx, GMLP_K_MEAN_TOKENS, (size_t)dim, (size_t)batch, NULL);
}
