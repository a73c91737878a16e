/* Split-K: a product of few output tiles over a deep k (batch 1 on a big
 * GPU) runs as parts of its k range in one launch, the parts along the
 * launch's third dimension (where batched products keep their matrices:
 * those are never split), each part's work-groups writing their partial sums
 * into the context's scratch (parts x m x n floats, operands rounded as the
 * tiling rounds them); then one kernel (epilogue.cl) adds the parts in order
 * and applies beta * C and the epilogue as the unsplit kernel does.  No
 * atomics: every run sums alike.  How many parts: GMLP_GEMM_SPLIT, else the
 * device's split-K row (gemm_tilings.c). */
#include <stdlib.h>

#include "core/alloc.h"
#include "ops/gemm_split.h"
#include "ops/state.h"

static const gmlp_kernel_spec split_sum = {"epilogue.cl", "gmlp_gemm_split_sum"};

/* How profiles name the parts' launches (the sum's: its entry point). */
static const char parts_label[] = "gmlp_gemm split-K parts";

/* k's parts: full parts chunk deep, then one rest deep (0: none). */
typedef struct partition {
    size_t chunk, full, rest;
} partition;

/* chunk a multiple of 4, so that the parts' operand offsets keep the
 * alignment the variant's vector loads need; an exact division into no
 * fewer than half the parts asked for preferred (one launch), else a
 * shorter last part, which needs a launch of its own. */
static partition partition_of(size_t k, size_t parts)
{
    for (size_t s = parts; s > parts / 2 && s > 1; s--)
        if (k % s == 0 && (k / s) % 4 == 0)
            return (partition){k / s, s, 0};
    const size_t chunk = ((k + parts - 1) / parts + 3) / 4 * 4;
    return (partition){chunk, k / chunk, k % chunk};
}

/* The parts asked for g on tiling t: 1 for none.  A 16-bit C runs
 * whole: the parts' kernel (g's variant) would write 16-bit partial sums;
 * so does a fused LayerNorm's half (the sum would have to write the
 * statistics), and a B stored as pairs along k (only CPUs store it, which
 * never split). */
static size_t parts_for(const gmlp_context *ctx, const gmlp_gemm *g, const gmlp_tiling *t)
{
    if (g->batch > 1 || g->c.elem != GMLP_ELEM_F32 || gmlp_gemm_fused(g) || g->b.pairs)
        return 1;
    if (ctx->set.gemm_split)
        return (size_t)ctx->set.gemm_split;
    const size_t tiles = (g->m + (size_t)t->tm - 1) / (size_t)t->tm * ((g->n + (size_t)t->tn - 1) / (size_t)t->tn);
    return gmlp_gemm_split_parts(&ctx->dev, tiles, g->k);
}

/* The scratch, at least bytes; NULL where it cannot be had (said once: the
 * context's products run unsplit from then on).  An outgrown buffer is
 * kept: a recorded forward may have bound it. */
static cl_mem scratch(gmlp_context *ctx, size_t bytes)
{
    struct gmlp_ops *o = ctx->ops;
    if (bytes <= o->split_bytes)
        return o->split_scratch;
    if (o->split_refused)
        return NULL;
    const size_t size = bytes > 2 * o->split_bytes ? bytes : 2 * o->split_bytes;
    const bool retire = o->split_scratch != NULL;
    cl_mem *retired = retire ? gmlp_realloc(o->split_retired, (o->n_split_retired + 1) * sizeof *retired) : NULL;
    if (retired)
        o->split_retired = retired;
    const char *why = retire && !retired ? "out of host memory" : NULL;
    cl_mem buf = NULL;
    if (!why && gmlp_buffer_create(ctx, size, NULL, "split-K's partial sums", &buf) != GMLP_OK)
        why = ctx->err.msg;
    if (why) {
        o->split_refused = true;
        gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "split-K off on '%s': no %zu bytes for the partial sums (%s); "
                 "products run unsplit", ctx->dev.name, size, why);
        return NULL;
    }
    if (o->split_scratch)
        o->split_retired[o->n_split_retired++] = o->split_scratch;
    o->split_scratch = buf;
    o->split_bytes = size;
    return buf;
}

/* C = epilogue(the parts of partial added + beta * C). */
static gmlp_status sum(gmlp_context *ctx, const gmlp_gemm *g, cl_mem partial, size_t parts)
{
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &split_sum, NULL, NULL, &k));
    GMLP_TRY(gmlp_kernel_args(ctx, k, ARG_INT(g->m), ARG_INT(g->n), ARG_INT(parts), ARG_MEM(partial),
                              ARG_FLOAT(g->beta), ARG_MEM(g->c.buf), ARG_ULONG(g->c.off), ARG_ULONG(g->c.ld),
                              GMLP_EPI_ARGS(g), ARG_INT(g->gate.elem), GMLP_ARG_END));
    const size_t global[2] = {g->n, g->m};
    gmlp_launch_moves(ctx, parts * g->m * g->n * sizeof(float) +
                               gmlp_gemm_moves(g, GMLP_MOVES_EPILOGUE | (g->beta != 0.0f ? GMLP_MOVES_C : 0u)));
    return gmlp_kernel_launch(ctx, k, 2, global, NULL);
}

gmlp_status gmlp_gemm_run(gmlp_context *ctx, const gmlp_gemm *g, const gmlp_kernel *k, const gmlp_tiling *t)
{
    const size_t asked = parts_for(ctx, g, t);
    if (asked < 2 || g->k == 0) /* k 0: nothing to divide (partition_of needs k) */
        return gmlp_gemm_launch(ctx, g, k, t, NULL);
    const partition p = partition_of(g->k, asked);
    const size_t parts = p.full + (p.rest > 0);
    cl_mem s;
    if (parts < 2 || !(s = scratch(ctx, parts * g->m * g->n * sizeof(float))))
        return gmlp_gemm_launch(ctx, g, k, t, NULL);
    /* the full parts as a batch: C's shape, beta 0, no epilogue; the
     * operands' batch strides step from one part's k range to the next */
    gmlp_gemm part = {.m = g->m, .n = g->n, .k = p.chunk, .batch = p.full, .a = g->a, .b = g->b,
                      .c = {.buf = s, .ld = g->n, .stride = g->m * g->n}, .precision = g->precision};
    part.a.stride = g->a.trans ? p.chunk * g->a.ld : p.chunk;
    part.b.stride = g->b.trans ? p.chunk : p.chunk * g->b.ld;
    GMLP_TRY(gmlp_gemm_launch(ctx, &part, k, t, parts_label));
    if (p.rest) {
        part.a.off += p.full * part.a.stride;
        part.b.off += p.full * part.b.stride;
        part.c.off = p.full * part.c.stride;
        part.k = p.rest;
        part.batch = 1;
        GMLP_TRY(gmlp_gemm_launch(ctx, &part, k, t, parts_label));
    }
    return sum(ctx, g, s, parts);
}

void gmlp_gemm_split_close(gmlp_context *ctx)
{
    struct gmlp_ops *o = ctx->ops;
    for (size_t i = 0; i < o->n_split_retired; i++)
        gmlp_buffer_release(ctx, &o->split_retired[i]);
    free(o->split_retired);
    gmlp_buffer_release(ctx, &o->split_scratch);
    o->split_retired = NULL;
    o->n_split_retired = o->split_bytes = 0;
}
