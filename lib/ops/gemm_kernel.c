/* The library's own GEMM (cl_kernels/gemm.cl): float or half operands (which
 * CLBlast cannot read on devices without cl_khr_fp16), bias and GELU fused.
 * A variant is the kernel compiled for one operand-type pair and one tiling;
 * each call picks the tiling by the size of its product, among those the
 * device's limits and the compiled kernel allow.  The tilings are data
 * (gmlp_gemm_variants lists them for the portability suite). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernel_abi.h"
#include "ops/ops.h"

typedef struct tiles {
    int tm, tn, tk, wm, wn;
} tiles;

/* 8 x 8 outputs per work-item use each staged value most (on PoCL, twice the
 * speed of 4 x 4); tk 2 because with the epilogue sweep tk 4 spilled on Intel
 * Arc (dg2), and deeper slices on RDNA3 (PoCL: tk 2 as fast as tk 4). */
static const tiles large = {128, 128, 2, 8, 8}; /* 16 x 16 work-items */

/* For products too small to keep the device busy with large tiles, and for
 * devices that do not take them: in order of preference.  tk keeps the
 * staging loads at 4 per operand and work-item per slice: deeper slices on
 * fewer work-items unroll into spills (RDNA3, Gen12LP). */
static const tiles candidates[] = {
    {64, 64, 16, 4, 4}, /* 16 x 16 work-items */
    {32, 32, 8, 4, 4},  /* 8 x 8 */
    {16, 16, 4, 4, 4},  /* 4 x 4 */
    {4, 4, 1, 4, 4},    /* one work-item, for a device that runs nothing larger */
};
#define N_CANDIDATES (sizeof candidates / sizeof *candidates)

/* Products with at most this many rows or columns (a decoding step, a head
 * of few classes) take the first of these that fits, so that little of each
 * tile is padding: with 64 x 64 tiles a one-row product wastes 63/64. */
#define NARROW 16
static const tiles *const narrow = &candidates[2];

/* Large tiles once they give each compute unit this many work-groups: on
 * a GPU a few, to switch between while others wait on memory (a guess, not
 * measured); a CPU core runs one at a time, and on PoCL large tiles beat
 * small ones even at one per core. */
#define LARGE_GROUPS_PER_GPU_CU 4
#define LARGE_GROUPS_PER_CPU_CU 1

typedef enum size_class { SMALL, LARGE, NARROW_CLASS } size_class;

static const gmlp_kernel_spec gemm = {"gemm.cl", "gmlp_gemm"};
static const gmlp_kernel_spec epilogue = {"gemm.cl", "gmlp_epilogue_only"};

static int defines(char *buf, size_t size, int a_half, int b_half, const tiles *t)
{
    return snprintf(buf, size,
                    "-DGMLP_GEMM_A_HALF=%d -DGMLP_GEMM_B_HALF=%d -DGMLP_GEMM_TM=%d -DGMLP_GEMM_TN=%d "
                    "-DGMLP_GEMM_TK=%d -DGMLP_GEMM_WM=%d -DGMLP_GEMM_WN=%d",
                    a_half, b_half, t->tm, t->tn, t->tk, t->wm, t->wn);
}

static size_t local_bytes(const tiles *t)
{
    return sizeof(float) * (size_t)t->tk * (size_t)(t->tm + 1 + t->tn + 1); /* gemm.cl pads each row by 1 */
}

static int fits_device(const gmlp_devinfo *d, const tiles *t)
{
    size_t rx = (size_t)(t->tn / t->wn), ry = (size_t)(t->tm / t->wm);
    return rx * ry <= d->max_wg && rx <= d->max_wi[0] && ry <= d->max_wi[1] && local_bytes(t) <= d->local_mem;
}

/* Tiling t's variant; *k NULL when the compiled kernel cannot run a whole
 * tile (too many registers for that many work-items, say). */
static gmlp_status variant(gmlp_context *ctx, int a_half, int b_half, const tiles *t, const gmlp_kernel **k)
{
    char defs[256], label[160];
    defines(defs, sizeof defs, a_half, b_half, t);
    snprintf(label, sizeof label, "gmlp_gemm %dx%dx%d/%dx%d A:%s B:%s", t->tm, t->tn, t->tk, t->wm, t->wn,
             a_half ? "half" : "float", b_half ? "half" : "float");
    GMLP_TRY(gmlp_kernel_get(ctx, &gemm, defs, label, k));
    if ((*k)->wg_max < (size_t)(t->tn / t->wn * (t->tm / t->wm)) || (*k)->local_mem > ctx->dev.local_mem) {
        gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "%s on '%s': %zu work-items allowed, too few; trying smaller tiles",
                 label, ctx->dev.name, (*k)->wg_max);
        *k = NULL;
    }
    return GMLP_OK;
}

/* The first of list[0..n) that the device and the compiled kernel take; NULL if none. */
static gmlp_status first_fitting(gmlp_context *ctx, int a_half, int b_half, const tiles *list, size_t n,
                                 const gmlp_kernel **k, const tiles **t)
{
    *k = NULL;
    for (size_t i = 0; i < n && !*k; i++)
        if (fits_device(&ctx->dev, &list[i])) {
            GMLP_TRY(variant(ctx, a_half, b_half, &list[i], k));
            *t = &list[i];
        }
    return GMLP_OK;
}

/* The variant for a product of this size class: its own tiling when it
 * fits, else the small one. */
static gmlp_status pick(gmlp_context *ctx, int a_half, int b_half, size_class size, const gmlp_kernel **k,
                        const tiles **t)
{
    *k = NULL;
    if (size == LARGE)
        GMLP_TRY(first_fitting(ctx, a_half, b_half, &large, 1, k, t));
    else if (size == NARROW_CLASS)
        GMLP_TRY(first_fitting(ctx, a_half, b_half, narrow, (size_t)(candidates + N_CANDIDATES - narrow), k, t));
    if (!*k)
        GMLP_TRY(first_fitting(ctx, a_half, b_half, candidates, N_CANDIDATES, k, t));
    if (!*k)
        return gmlp_fail(&ctx->err, GMLP_ERR_UNSUPPORTED,
                         "no GEMM tiling fits '%s' (work-group size %zu, local memory %llu bytes)", ctx->dev.name,
                         ctx->dev.max_wg, (unsigned long long)ctx->dev.local_mem);
    return GMLP_OK;
}

gmlp_status gmlp_gemm_prepare(gmlp_context *ctx, int half_weights)
{
    const int types[][2] = {{0, 0}, {1, 0}, {0, 1}}; /* {a_half, b_half}: activations and weights either side */
    const gmlp_kernel *k;
    const tiles *t;
    if (!half_weights && ctx->set.gemm == GMLP_GEMM_CLBLAST) /* only the stand-alone epilogue */
        return gmlp_kernel_get(ctx, &epilogue, NULL, NULL, &k);
    for (int i = 0; i < (half_weights ? 3 : 1); i++)
        for (int size = SMALL; size <= NARROW_CLASS; size++)
            GMLP_TRY(pick(ctx, types[i][0], types[i][1], (size_class)size, &k, &t));
    return GMLP_OK;
}

gmlp_status gmlp_gemm_describe(gmlp_context *ctx, int a_half, int b_half, char *buf, size_t size)
{
    static const char *const uses[] = {"", "large products", "narrow ones"};
    const gmlp_kernel *k[3];
    const tiles *t[3];
    for (int s = SMALL; s <= NARROW_CLASS; s++)
        GMLP_TRY(pick(ctx, a_half, b_half, (size_class)s, &k[s], &t[s]));
    int n = snprintf(buf, size, "%dx%dx%d tiles (%dx%d per work-item)", t[0]->tm, t[0]->tn, t[0]->tk, t[0]->wm,
                     t[0]->wn);
    for (int s = LARGE; s <= NARROW_CLASS && n > 0 && (size_t)n < size; s++)
        if (k[s] != k[SMALL])
            n += snprintf(buf + n, size - (size_t)n, ", %dx%dx%d (%dx%d) for %s", t[s]->tm, t[s]->tn, t[s]->tk,
                          t[s]->wm, t[s]->wn, uses[s]);
    return GMLP_OK;
}

size_t gmlp_gemm_variants(char *buf, size_t size)
{
    size_t need = 0;
    char line[320];
    if (buf && size)
        buf[0] = 0;
    for (size_t i = 0; i <= N_CANDIDATES; i++) {
        const tiles *t = i < N_CANDIDATES ? &candidates[i] : &large;
        for (int h = 0; h < 4; h++) {
            char defs[256];
            defines(defs, sizeof defs, h & 1, h >> 1, t);
            int n = snprintf(line, sizeof line, "%s %s\n", gemm.file, defs);
            if (buf && need + (size_t)n < size)
                memcpy(buf + need, line, (size_t)n + 1);
            need += (size_t)n;
        }
    }
    return need;
}

gmlp_status gmlp_op_gemm_kernel(gmlp_context *ctx, const gmlp_gemm *g)
{
    const size_t batch = g->batch ? g->batch : 1, m = g->m, n = g->n;
    if (m == 0 || n == 0)
        return GMLP_OK;
    GMLP_TRY(gmlp_gemm_check(ctx, g));
    size_t groups = (m + (size_t)large.tm - 1) / (size_t)large.tm * ((n + (size_t)large.tn - 1) / (size_t)large.tn);
    size_t per_cu = ctx->dev.type & CL_DEVICE_TYPE_CPU ? LARGE_GROUPS_PER_CPU_CU : LARGE_GROUPS_PER_GPU_CU;
    size_class size = m <= NARROW || n <= NARROW                               ? NARROW_CLASS
                      : groups * batch >= per_cu * (size_t)ctx->dev.compute_units ? LARGE
                                                                                 : SMALL;
    const gmlp_kernel *k;
    const tiles *t;
    GMLP_TRY(pick(ctx, g->a.half, g->b.half, size, &k, &t));
    int bias_mode = !g->bias ? GMLP_BIAS_NONE : g->bias_rows ? GMLP_BIAS_ROWS : GMLP_BIAS_COLS;
    GMLP_TRY(gmlp_kernel_args(ctx, k, ARG_INT(m), ARG_INT(n), ARG_INT(g->k), ARG_MEM(g->a.buf), ARG_ULONG(g->a.off),
                              ARG_ULONG(g->a.ld), ARG_ULONG(g->a.stride), ARG_INT(g->a.trans != 0), ARG_MEM(g->b.buf),
                              ARG_ULONG(g->b.off), ARG_ULONG(g->b.ld), ARG_ULONG(g->b.stride),
                              ARG_INT(g->b.trans != 0), ARG_FLOAT(g->beta), ARG_MEM(g->c.buf), ARG_ULONG(g->c.off),
                              ARG_ULONG(g->c.ld), ARG_ULONG(g->c.stride), ARG_MEM(g->bias), ARG_INT(bias_mode),
                              ARG_INT(g->gelu != 0), GMLP_ARG_END));
    size_t rx = (size_t)(t->tn / t->wn), ry = (size_t)(t->tm / t->wm);
    size_t global[3] = {(n + (size_t)t->tn - 1) / (size_t)t->tn * rx, (m + (size_t)t->tm - 1) / (size_t)t->tm * ry,
                        batch};
    size_t local[3] = {rx, ry, 1};
    return gmlp_kernel_launch(ctx, k, 3, global, local);
}

gmlp_status gmlp_op_epilogue(gmlp_context *ctx, const gmlp_gemm *g)
{
    const size_t batch = g->batch ? g->batch : 1;
    if (g->m == 0 || g->n == 0 || (!g->bias && !g->gelu))
        return GMLP_OK;
    GMLP_TRY(gmlp_gemm_check(ctx, g));
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &epilogue, NULL, NULL, &k));
    int bias_mode = !g->bias ? GMLP_BIAS_NONE : g->bias_rows ? GMLP_BIAS_ROWS : GMLP_BIAS_COLS;
    GMLP_TRY(gmlp_kernel_args(ctx, k, ARG_INT(g->m), ARG_INT(g->n), ARG_MEM(g->c.buf), ARG_ULONG(g->c.off),
                              ARG_ULONG(g->c.ld), ARG_ULONG(g->c.stride), ARG_MEM(g->bias), ARG_INT(bias_mode),
                              ARG_INT(g->gelu != 0), GMLP_ARG_END));
    size_t global[3] = {g->n, g->m, batch};
    return gmlp_kernel_launch(ctx, k, 3, global, NULL);
}
