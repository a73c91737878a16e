/* Token sampling on the device (cl_kernels/sample.cl): one work-group, the
 * rows of logits in turn, the tokens into the decoding step's buffer. */
#include "cl/device.h"
#include "ops/ops.h"
#include "sample/sample.h"

/* Work-items per group: within what rusticl's llvmpipe allows (32) and a
 * CPU's core count; the compiled kernel may lower it. */
#define GMLP_SAMPLE_GROUP 32

static const gmlp_kernel_spec sample_kernel = {"sample.cl", "gmlp_sample"};

/* The candidates the kernel keeps for a row of V: 1 greedy, top_k, or the
 * whole row; 0 where they do not fit its local memory. */
static int candidates(int V, float temperature, int top_k)
{
    if (gmlp_sample_greedy(temperature, top_k))
        return 1;
    const int k = top_k > 0 && top_k < V ? top_k : V;
    return k <= GMLP_SAMPLE_MAX ? k : 0;
}

int gmlp_sample_device_able(const gmlp_context *ctx)
{
    return gmlp_device_has_extension(ctx->dev.device, "cl_khr_fp64");
}

int gmlp_sample_device_covers(gmlp_context *ctx, int V, float temperature, int top_k)
{
    return V >= 1 && candidates(V, temperature, top_k) > 0 && gmlp_sample_device_able(ctx);
}

gmlp_status gmlp_op_sample(gmlp_context *ctx, const gmlp_sample_args *a)
{
    const int k = candidates(a->V, a->temperature, a->top_k);
    if (a->V < 1 || !k)
        return gmlp_fail(&ctx->err, GMLP_ERR_UNSUPPORTED, "device sampling: top_k %d over %d logits (at most %d)",
                         a->top_k, a->V, GMLP_SAMPLE_MAX);
    const gmlp_kernel *kn;
    GMLP_TRY(gmlp_kernel_get(ctx, &sample_kernel, NULL, NULL, &kn));
    GMLP_TRY(gmlp_kernel_args(ctx, kn, ARG_MEM(a->logits), ARG_INT(a->V), ARG_INT(a->rows), ARG_INT(k),
                              ARG_INT(gmlp_sample_greedy(a->temperature, a->top_k)), ARG_FLOAT(a->temperature),
                              ARG_FLOAT(a->top_p), ARG_MEM(a->rng), ARG_MEM(a->step), ARG_INT(a->seq_len),
                              ARG_MEM(a->tokens), ARG_MEM(a->flags), GMLP_ARG_END));
    size_t group = GMLP_SAMPLE_GROUP;
    while (group > 1 && group > kn->wg_max)
        group /= 2;
    return gmlp_kernel_launch(ctx, kn, 1, &group, &group); /* one group: the rows in turn */
}
