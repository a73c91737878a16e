/* The ops' state in a context: made when the context opens (it chooses the
 * shared program's build options), freed when it closes. */
#include <stdio.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "ops/ops.h"
#include "ops/state.h"

/* The work-group LayerNorm's size (GMLP_WG): 1 on CPUs, where PoCL runs each
 * barrier of a work-group reduction as a loop over the work-items (LayerNorm
 * of gmlp_ti16_224's forward: 97 ms at 64, 37 ms at 1; 2-core EPYC,
 * 2026-11-23).  CPUs now take gmlp_layernorm_rows instead (elementwise.c);
 * the tests still run this one there. */
static int pick_reduce_wg(const gmlp_devinfo *d)
{
    if (d->type & CL_DEVICE_TYPE_CPU)
        return 1;
    int wg = GMLP_REDUCE_WG_MAX;
    while (wg > 1 && (size_t)wg > d->max_wg)
        wg /= 2;
    return wg;
}

gmlp_status gmlp_ops_open(gmlp_context *ctx)
{
    ctx->ops = gmlp_calloc(1, sizeof *ctx->ops);
    if (!ctx->ops)
        return gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory creating a context");
    ctx->ops->reduce_wg = pick_reduce_wg(&ctx->dev);
    gmlp_engines_detect(ctx);
    char options[64];
    snprintf(options, sizeof options, "-DGMLP_WG=%d", ctx->ops->reduce_wg);
    GMLP_TRY(gmlp_kernels_init(ctx, options));
    gmlp_gemm_tune_load(ctx);
    return GMLP_OK;
}

void gmlp_ops_close(gmlp_context *ctx)
{
    if (!ctx->ops)
        return;
    gmlp_gemm_context_closed(ctx);
    gmlp_engines_close(ctx);
    gmlp_gemm_tune_free(ctx);
    free(ctx->ops);
    ctx->ops = NULL;
}
