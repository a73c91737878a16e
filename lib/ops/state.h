/* What lib/ops keeps per context (ctx->ops): made by gmlp_ops_open, freed by
 * gmlp_ops_close (ops/state.c). */
#ifndef GMLP_OPS_STATE_H
#define GMLP_OPS_STATE_H

#include <stdbool.h>

#include "ops/gemm_variant.h"
#include "ops/ops.h"

/* The variant a GEMM plan key runs (ops/gemm_kernel.c), planned once. */
typedef struct gmlp_gemm_plan {
    const gmlp_kernel *kernel; /* NULL: not planned yet */
    const gmlp_tiling *tiling;
    bool tuned;                /* the tuning file's choice, not the defaults' */
} gmlp_gemm_plan;

/* Plan keys: size class x the variants' keyed axes (ops/gemm_variant.h). */
#define GMLP_GEMM_PLAN_KEYS (GMLP_GEMM_CLASSES * GMLP_GEMM_VARIANT_KEYS)

/* A matrix-engine variant's capability-ladder verdict (ops/gemm_engines.c). */
#define GMLP_ENGINE_VERDICTS 32
struct gmlp_engine_verdict {
    char defines[400]; /* the variant's -D options */
    bool pass;
};

struct gmlp_ops {
    int reduce_wg;                   /* the reduction kernels' work-group size (the shared program's GMLP_WG) */
    struct gmlp_tuned *tuned;        /* ops/gemm_tune.c: the device's tuned GEMM winners; NULL: none */
    struct gmlp_gemm_record *record; /* ops/gemm_tune.c: non-NULL while gmlp_tune notes a model's GEMMs */
    gmlp_gemm_plan plan[GMLP_GEMM_PLAN_KEYS];
    struct gmlp_engine_verdict verdicts[GMLP_ENGINE_VERDICTS];
    size_t n_verdicts;
    gmlp_context *probe; /* the capability ladder's own context; NULL: none yet */
    /* split-K's partial sums (ops/gemm_split.c), grown on demand; the
     * buffers it outgrew are kept (recorded forwards may bind them) until
     * the context closes */
    cl_mem split_scratch;
    size_t split_bytes;
    cl_mem *split_retired;
    size_t n_split_retired;
    bool split_refused; /* the scratch could not be had once: said, products since unsplit */
};

#endif
