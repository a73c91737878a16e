/* The library's own GEMM (cl_kernels/gemm.cl): float or half operands (which
 * CLBlast cannot read on devices without cl_khr_fp16), with the bias and
 * GELU epilogues fused (a gate factor follows as a kernel of its own).  Each operand-type variant is built on first
 * use, in up to two tilings that the device's work-group and local-memory
 * limits allow, and each call picks one by the size of its product. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "cl/program.h"
#include "ops/args.h"
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
 * fewer work-items unroll into spills (RDNA3, Gen12LP).  The portability
 * test compiles every {tm, tn, tk, wm, wn} in this file. */
static const tiles candidates[] = {
    {64, 64, 16, 4, 4}, /* 16 x 16 work-items */
    {32, 32, 8, 4, 4},  /* 8 x 8 */
    {16, 16, 4, 4, 4},  /* 4 x 4 */
    {4, 4, 1, 4, 4},    /* one work-item, for a device that runs nothing larger */
};

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

static size_t local_bytes(const tiles *t)
{
    return sizeof(float) * (size_t)t->tk * (size_t)(t->tm + 1 + t->tn + 1); /* gemm.cl pads each row by 1 */
}

static int fits_device(const gmlp_devinfo *d, const tiles *t)
{
    size_t rx = (size_t)(t->tn / t->wn), ry = (size_t)(t->tm / t->wm);
    return rx * ry <= d->max_wg && rx <= d->max_wi[0] && ry <= d->max_wi[1] && local_bytes(t) <= d->local_mem;
}

static void release(gmlp_gemm_kernel *g)
{
    if (g->kernel)
        clReleaseKernel(g->kernel);
    if (g->program)
        clReleaseProgram(g->program);
    g->kernel = NULL;
    g->program = NULL;
}

/* Builds one candidate into g; *fits = 0 when the compiled kernel cannot run
 * a whole tile (too many registers for that many work-items, say). */
static gmlp_status build(gmlp_context *ctx, int a_half, int b_half, const tiles *t, gmlp_gemm_kernel *g, int *fits)
{
    char opts[256];
    snprintf(opts, sizeof opts,
             "-cl-std=CL1.2 -DGMLP_GEMM_A_HALF=%d -DGMLP_GEMM_B_HALF=%d -DGMLP_GEMM_TM=%d -DGMLP_GEMM_TN=%d "
             "-DGMLP_GEMM_TK=%d -DGMLP_GEMM_WM=%d -DGMLP_GEMM_WN=%d",
             a_half, b_half, t->tm, t->tn, t->tk, t->wm, t->wn);
    GMLP_TRY(gmlp_program_build(ctx->cl, &ctx->dev, "gemm.cl", opts, &g->program, ctx->err, sizeof ctx->err));
    cl_int e;
    g->kernel = clCreateKernel(g->program, "gmlp_gemm", &e);
    if (e != CL_SUCCESS) {
        g->kernel = NULL;
        release(g);
        return gmlp_ctx_cl_fail(ctx, "clCreateKernel(gmlp_gemm)", e);
    }
    size_t wg;
    cl_ulong local;
    /* an unanswered query is no reason to refuse: the launch would tell */
    if (clGetKernelWorkGroupInfo(g->kernel, ctx->dev.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL))
        wg = SIZE_MAX;
    if (clGetKernelWorkGroupInfo(g->kernel, ctx->dev.device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, NULL))
        local = 0;
    *fits = wg >= (size_t)(t->tn / t->wn * (t->tm / t->wm)) && local <= ctx->dev.local_mem;
    g->tm = t->tm, g->tn = t->tn, g->tk = t->tk, g->wm = t->wm, g->wn = t->wn;
    gmlp_log("gemm kernel (A %s, B %s) on '%s': %dx%dx%d tiles, %dx%d per work-item, %zu work-items allowed%s",
             a_half ? "half" : "float", b_half ? "half" : "float", ctx->dev.name, t->tm, t->tn, t->tk, t->wm, t->wn,
             wg, *fits ? "" : ": too few, trying smaller tiles");
    return GMLP_OK;
}

/* Builds into g the first of list[0..n) that the device and the compiled
 * kernel take; g->kernel stays NULL if none does. */
static gmlp_status build_first(gmlp_context *ctx, int a_half, int b_half, const tiles *list, size_t n,
                               gmlp_gemm_kernel *g)
{
    int fits = 0;
    for (size_t i = 0; i < n && !fits; i++) {
        if (!fits_device(&ctx->dev, &list[i]))
            continue;
        release(g);
        GMLP_TRY(build(ctx, a_half, b_half, &list[i], g, &fits));
    }
    if (!fits)
        release(g);
    return GMLP_OK;
}

gmlp_status gmlp_gemm_kernel_get(gmlp_context *ctx, int a_half, int b_half, gmlp_tiles size,
                                 const gmlp_gemm_kernel **out)
{
    gmlp_gemm_kernel *slots = ctx->gemm[(a_half != 0) | (b_half != 0) << 1], *g = &slots[size];
    if (size != GMLP_TILES_SMALL && !g->tried) {
        g->tried = 1;
        if (size == GMLP_TILES_LARGE)
            GMLP_TRY(build_first(ctx, a_half != 0, b_half != 0, &large, 1, g));
        else
            GMLP_TRY(build_first(ctx, a_half != 0, b_half != 0, narrow,
                                 (size_t)(candidates + sizeof candidates / sizeof *candidates - narrow), g));
    }
    if (g->kernel) {
        *out = g;
        return GMLP_OK;
    }
    g = &slots[GMLP_TILES_SMALL];
    if (!g->kernel)
        GMLP_TRY(build_first(ctx, a_half != 0, b_half != 0, candidates, sizeof candidates / sizeof *candidates, g));
    if (!g->kernel)
        return gmlp_ctx_fail(ctx, GMLP_ERR_UNSUPPORTED,
                             "no GEMM tiling fits '%s' (work-group size %zu, local memory %llu bytes)", ctx->dev.name,
                             ctx->dev.max_wg, (unsigned long long)ctx->dev.local_mem);
    *out = g;
    return GMLP_OK;
}

/* The elements an operand stored as rows x cols (ld apart) spans over batch
 * matrices fit its buffer, and ld is no narrower than a row. */
static gmlp_status check_operand(gmlp_context *ctx, const char *name, gmlp_mat x, size_t rows, size_t cols,
                                 size_t batch)
{
    if (rows == 0 || cols == 0)
        return GMLP_OK;
    size_t bytes = 0, elem = x.half ? 2 : 4;
    if (clGetMemObjectInfo(x.buf, CL_MEM_SIZE, sizeof bytes, &bytes, NULL) != CL_SUCCESS)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "gemm: %s is not a valid buffer", name);
    size_t last = x.off + (batch - 1) * x.stride + (rows - 1) * x.ld + cols - 1;
    if (x.ld < cols || last >= bytes / elem)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT,
                             "gemm: %s (%zu x %zu, ld %zu, offset %zu, stride %zu, batch %zu) does not fit its "
                             "%zu-byte buffer of %s",
                             name, rows, cols, x.ld, x.off, x.stride, batch, bytes, x.half ? "half" : "float");
    return GMLP_OK;
}

static int bias_mode(const gmlp_epilogue *epi)
{
    return !epi || !epi->bias ? 0 : epi->bias_rows ? 2 : 1; /* GMLP_BIAS_* in gemm.cl */
}

/* Checks what the epilogue reads against C's extent (m x n over batch). */
static gmlp_status check_epilogue(gmlp_context *ctx, const gmlp_epilogue *epi, gmlp_mat c, size_t m, size_t n,
                                  size_t batch)
{
    if (!epi)
        return GMLP_OK;
    if (epi->bias) {
        gmlp_mat bias = {epi->bias, 0, 1, 0, 0, 0};
        GMLP_TRY(check_operand(ctx, "the bias", bias, epi->bias_rows ? m : n, 1, 1));
    }
    if (epi->mul) {
        gmlp_mat mul = c;
        mul.buf = epi->mul;
        mul.off = epi->mul_off;
        GMLP_TRY(check_operand(ctx, "the gate factor", mul, m, n, batch));
    }
    return GMLP_OK;
}

/* The stand-alone epilogue kernel on C, arguments already checked. */
static gmlp_status enqueue_epilogue(gmlp_context *ctx, size_t m, size_t n, gmlp_mat c, size_t batch,
                                    const gmlp_epilogue *epi)
{
    if (!ctx->epilogue) { /* gemm.cl holds it: take it from the float variant's program */
        const gmlp_gemm_kernel *g = NULL;
        GMLP_TRY(gmlp_gemm_kernel_get(ctx, 0, 0, GMLP_TILES_SMALL, &g));
        cl_int e;
        ctx->epilogue = clCreateKernel(g->program, "gmlp_epilogue_only", &e);
        if (e != CL_SUCCESS) {
            ctx->epilogue = NULL;
            return gmlp_ctx_cl_fail(ctx, "clCreateKernel(gmlp_epilogue_only)", e);
        }
    }
    GMLP_TRY(gmlp_set_args(ctx, ctx->epilogue, A_INT, (int)m, A_INT, (int)n, A_MEM, c.buf, A_ULONG, (cl_ulong)c.off,
                           A_ULONG, (cl_ulong)c.ld, A_ULONG, (cl_ulong)c.stride, A_MEM, epi->bias, A_INT,
                           bias_mode(epi), A_INT, epi->gelu, A_MEM, epi->mul, A_ULONG, (cl_ulong)epi->mul_off, A_END));
    size_t global[3] = {n, m, batch};
    cl_int e = clEnqueueNDRangeKernel(ctx->queue, ctx->epilogue, 3, NULL, global, NULL, 0, NULL, NULL);
    return e == CL_SUCCESS ? GMLP_OK : gmlp_ctx_cl_fail(ctx, "clEnqueueNDRangeKernel(gmlp_epilogue_only)", e);
}

gmlp_status gmlp_op_gemm_kernel(gmlp_context *ctx, size_t m, size_t n, size_t k, gmlp_mat a, gmlp_mat b, float beta,
                                gmlp_mat c, size_t batch, const gmlp_epilogue *epi)
{
    if (m == 0 || n == 0 || batch == 0)
        return GMLP_OK;
    if (c.half)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "gemm: C must be float, not half");
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "gemm: m=%zu n=%zu k=%zu exceeds the kernel's int range",
                             m, n, k);
    GMLP_TRY(check_operand(ctx, "A", a, a.trans ? k : m, a.trans ? m : k, batch));
    GMLP_TRY(check_operand(ctx, "B", b, b.trans ? n : k, b.trans ? k : n, batch));
    GMLP_TRY(check_operand(ctx, "C", c, m, n, batch));
    GMLP_TRY(check_epilogue(ctx, epi, c, m, n, batch));
    size_t groups = (m + (size_t)large.tm - 1) / (size_t)large.tm * ((n + (size_t)large.tn - 1) / (size_t)large.tn);
    size_t per_cu = ctx->dev.type & CL_DEVICE_TYPE_CPU ? LARGE_GROUPS_PER_CPU_CU : LARGE_GROUPS_PER_GPU_CU;
    gmlp_tiles size = m <= NARROW || n <= NARROW ? GMLP_TILES_NARROW
                      : groups * batch >= per_cu * (size_t)ctx->dev.compute_units ? GMLP_TILES_LARGE
                                                                                  : GMLP_TILES_SMALL;
    const gmlp_gemm_kernel *g;
    GMLP_TRY(gmlp_gemm_kernel_get(ctx, a.half, b.half, size, &g));
    GMLP_TRY(gmlp_set_args(ctx, g->kernel, A_INT, (int)m, A_INT, (int)n, A_INT, (int)k, A_MEM, a.buf, A_ULONG,
                           (cl_ulong)a.off, A_ULONG, (cl_ulong)a.ld, A_ULONG, (cl_ulong)a.stride, A_INT, a.trans != 0,
                           A_MEM, b.buf, A_ULONG, (cl_ulong)b.off, A_ULONG, (cl_ulong)b.ld, A_ULONG,
                           (cl_ulong)b.stride, A_INT, b.trans != 0, A_FLOAT, (double)beta, A_MEM, c.buf, A_ULONG,
                           (cl_ulong)c.off, A_ULONG, (cl_ulong)c.ld, A_ULONG, (cl_ulong)c.stride, A_MEM,
                           epi ? epi->bias : NULL, A_INT, bias_mode(epi), A_INT, epi && epi->gelu, A_END));
    size_t rx = (size_t)(g->tn / g->wn), ry = (size_t)(g->tm / g->wm);
    size_t global[3] = {(n + (size_t)g->tn - 1) / (size_t)g->tn * rx, (m + (size_t)g->tm - 1) / (size_t)g->tm * ry,
                        batch};
    size_t local[3] = {rx, ry, 1};
    cl_int e = clEnqueueNDRangeKernel(ctx->queue, g->kernel, 3, NULL, global, local, 0, NULL, NULL);
    if (e != CL_SUCCESS)
        return gmlp_ctx_cl_fail(ctx, "clEnqueueNDRangeKernel(gmlp_gemm)", e);
    if (!epi || !epi->mul)
        return GMLP_OK;
    const gmlp_epilogue gate = {.mul = epi->mul, .mul_off = epi->mul_off};
    return enqueue_epilogue(ctx, m, n, c, batch, &gate);
}

gmlp_status gmlp_op_epilogue(gmlp_context *ctx, size_t m, size_t n, gmlp_mat c, size_t batch,
                             const gmlp_epilogue *epi)
{
    if (m == 0 || n == 0 || batch == 0 || !epi)
        return GMLP_OK;
    if (c.half || m > INT_MAX || n > INT_MAX)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "epilogue: C must be float and at most INT_MAX square");
    GMLP_TRY(check_operand(ctx, "C", c, m, n, batch));
    GMLP_TRY(check_epilogue(ctx, epi, c, m, n, batch));
    return enqueue_epilogue(ctx, m, n, c, batch, epi);
}
