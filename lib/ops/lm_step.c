/* The fused decoding step's kernels (cl_kernels/lm_step.cl): a causal LM's
 * layer for one new token per sequence in three launches, the position read
 * from device memory. */
#include "ops/ops.h"

static const gmlp_kernel_spec step_in = {"lm_step.cl", "gmlp_lm_step_in"};
static const gmlp_kernel_spec step_sgu = {"lm_step.cl", "gmlp_lm_step_sgu"};
static const gmlp_kernel_spec step_out = {"lm_step.cl", "gmlp_lm_step_out"};

int gmlp_lm_step_fits(size_t width)
{
    return width > 0 && width <= GMLP_LM_STEP_MAX;
}

/* A range of rows x cols work-items. */
static gmlp_status launch_rows(gmlp_context *ctx, const gmlp_kernel *k, size_t cols, size_t rows)
{
    size_t global[2] = {cols, rows};
    return gmlp_kernel_launch(ctx, k, 2, global, NULL);
}

gmlp_status gmlp_op_lm_step_in(gmlp_context *ctx, const gmlp_lm_step_in_args *a)
{
    if (!gmlp_lm_step_fits((size_t)a->d))
        return gmlp_fail(&ctx->err, GMLP_ERR_UNSUPPORTED, "lm step: rows of %d values, more than %d", a->d,
                         GMLP_LM_STEP_MAX);
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &step_in, NULL, NULL, &k));
    GMLP_TRY(gmlp_kernel_args(ctx, k, ARG_MEM(a->step), ARG_INT(a->seq_len), ARG_MEM(a->x), ARG_MEM(a->gamma),
                              ARG_MEM(a->beta), ARG_INT(a->d), ARG_FLOAT(a->eps), ARG_MEM(a->hist),
                              ARG_INT(a->segments), ARG_MEM(a->w), ARG_MEM(a->bias), ARG_INT(a->n_out),
                              ARG_INT(a->act), ARG_MEM(a->out), GMLP_ARG_END));
    return launch_rows(ctx, k, (size_t)a->n_out, (size_t)a->rows);
}

gmlp_status gmlp_op_lm_step_sgu(gmlp_context *ctx, const gmlp_lm_step_sgu_args *a)
{
    if (!gmlp_lm_step_fits((size_t)a->h / 2) || a->heads < 1 || (a->h / 2) % a->heads)
        return gmlp_fail(&ctx->err, GMLP_ERR_UNSUPPORTED, "lm step: a gate of %d values in %d heads", a->h / 2,
                         a->heads);
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &step_sgu, NULL, NULL, &k));
    GMLP_TRY(gmlp_kernel_args(ctx, k, ARG_MEM(a->step), ARG_INT(a->seq_len), ARG_MEM(a->z), ARG_INT(a->h),
                              ARG_MEM(a->gamma), ARG_MEM(a->beta), ARG_FLOAT(a->eps), ARG_MEM(a->hist),
                              ARG_MEM(a->w), ARG_MEM(a->bias), ARG_INT(a->heads), ARG_INT(a->act), ARG_MEM(a->out),
                              GMLP_ARG_END));
    return launch_rows(ctx, k, (size_t)a->h / 2, (size_t)a->rows);
}

gmlp_status gmlp_op_lm_step_out(gmlp_context *ctx, cl_mem v, int k_in, cl_mem w, cl_mem bias, int n, cl_mem x,
                                int rows)
{
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &step_out, NULL, NULL, &k));
    GMLP_TRY(gmlp_kernel_args(ctx, k, ARG_MEM(v), ARG_INT(k_in), ARG_MEM(w), ARG_MEM(bias), ARG_INT(n), ARG_MEM(x),
                              GMLP_ARG_END));
    size_t global[2] = {(size_t)n, (size_t)rows};
    return gmlp_kernel_launch(ctx, k, 2, global, NULL);
}
