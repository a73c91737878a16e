/* The fused decoding step's kernels (cl_kernels/lm_step.cl): a causal LM's
 * layer for one new token per sequence in three launches, the position read
 * from device memory. */
#include "ops/ops.h"

/* Work-items per group: each group normalises its row once, so fewer groups
 * normalise less often, but a CPU runs one group on one core (2 groups at
 * least for the bundled LM's 128 proj_in items, 64 of to_logits, 32 of the
 * gate and of proj_out). */
#define GMLP_LM_STEP_GROUP_IN 32
#define GMLP_LM_STEP_GROUP_SGU 16
#define GMLP_LM_STEP_GROUP_OUT 16

static const gmlp_kernel_spec step_in = {"lm_step.cl", "gmlp_lm_step_in"};
static const gmlp_kernel_spec step_sgu = {"lm_step.cl", "gmlp_lm_step_sgu"};
static const gmlp_kernel_spec step_out = {"lm_step.cl", "gmlp_lm_step_out"};

int gmlp_lm_step_fits(size_t width)
{
    return width > 0 && width <= GMLP_LM_STEP_MAX;
}

/* Work-items for n values, per of them each. */
static size_t items(int n, int per)
{
    return ((size_t)n + (size_t)per - 1) / (size_t)per;
}

/* A range of rows x cols work-items in work-groups of `group` items along a
 * row (at most what the compiled kernel allows), cols rounded up to them. */
static gmlp_status launch_rows(gmlp_context *ctx, const gmlp_kernel *k, size_t cols, size_t rows, size_t group)
{
    while (group > 1 && group > k->wg_max)
        group /= 2;
    size_t global[2] = {(cols + group - 1) / group * group, rows}, local[2] = {group, 1};
    return gmlp_kernel_launch(ctx, k, 2, global, local);
}

gmlp_status gmlp_op_lm_step_in(gmlp_context *ctx, const gmlp_lm_step_in_args *a)
{
    if (!gmlp_lm_step_fits((size_t)a->d))
        return gmlp_fail(&ctx->err, GMLP_ERR_UNSUPPORTED, "lm step: rows of %d values, more than %d", a->d,
                         GMLP_LM_STEP_MAX);
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &step_in, NULL, NULL, &k));
    GMLP_TRY(gmlp_kernel_args(ctx, k, ARG_MEM(a->step), ARG_INT(a->seq_len), ARG_MEM(a->embed), ARG_MEM(a->x),
                              ARG_MEM(a->gamma), ARG_MEM(a->beta), ARG_INT(a->d), ARG_FLOAT(a->eps),
                              ARG_MEM(a->hist), ARG_INT(a->segments), ARG_MEM(a->w), ARG_MEM(a->bias),
                              ARG_INT(a->n_out), ARG_INT(a->act), ARG_MEM(a->out), GMLP_ARG_END));
    return launch_rows(ctx, k, items(a->n_out, GMLP_LM_STEP_OUTS), (size_t)a->rows, GMLP_LM_STEP_GROUP_IN);
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
    return launch_rows(ctx, k, items(a->h / 2, GMLP_LM_STEP_LANES), (size_t)a->rows, GMLP_LM_STEP_GROUP_SGU);
}

gmlp_status gmlp_op_lm_step_out(gmlp_context *ctx, cl_mem v, int k_in, cl_mem w, cl_mem bias, int n, cl_mem x,
                                int rows)
{
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &step_out, NULL, NULL, &k));
    GMLP_TRY(gmlp_kernel_args(ctx, k, ARG_MEM(v), ARG_INT(k_in), ARG_MEM(w), ARG_MEM(bias), ARG_INT(n), ARG_MEM(x),
                              GMLP_ARG_END));
    return launch_rows(ctx, k, items(n, GMLP_LM_STEP_OUTS), (size_t)rows, GMLP_LM_STEP_GROUP_OUT);
}
