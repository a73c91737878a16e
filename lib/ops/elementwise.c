/* The element-wise and reduction ops: each declares its kernel and binds its
 * arguments.  Adding one: a kernel file (cl_kernels/meson.build), a spec and
 * wrapper here with its prototype in ops.h, a C reference (tests/ref/) and a
 * test case (tests/test_ops.c). */
#include "cl/clerr.h"
#include "ops/ops.h"
#include "ops/state.h"

/* Launches k over global (local NULL: any), its operands moving bytes
 * (gmlp_launch_moves), unless binding its arguments failed (bound:
 * gmlp_kernel_args' status). */
static gmlp_status launch_bound(gmlp_status bound, gmlp_context *ctx, const gmlp_kernel *k, cl_uint dims,
                                const size_t *global, const size_t *local, size_t bytes)
{
    if (bound != GMLP_OK)
        return bound;
    gmlp_launch_moves(ctx, bytes);
    return gmlp_kernel_launch(ctx, k, dims, global, local);
}

/* Sets k's arguments ((kind, value) pairs), then launches it: an expression,
 * the status of the first step that failed.  The arguments are bound first
 * (they are launch_bound's argument). */
#define LAUNCH(ctx, k, dims, global, local, bytes, ...)                                                           \
    launch_bound(gmlp_kernel_args(ctx, k, __VA_ARGS__, GMLP_ARG_END), ctx, k, dims, global, local, bytes)

/* x and y of any storage (gmlp_elem): the kernels take it as an argument
 * (gmlp_elem_get / _put, common.cl), one entry point for all */
static gmlp_status norm_elems(gmlp_context *ctx, const char *op, gmlp_rows x, gmlp_rows y)
{
    if ((unsigned)x.elem >= GMLP_ELEMS || (unsigned)y.elem >= GMLP_ELEMS)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "%s: element types %d in, %d out (float, half or bf16)",
                         op, (int)x.elem, (int)y.elem);
    return GMLP_OK;
}

/* a normalisation's x read, y written, its two vectors read */
static size_t norm_moves(gmlp_rows x, gmlp_rows y, int rows, int cols)
{
    return (size_t)rows * (size_t)cols * (gmlp_elem_size(x.elem) + gmlp_elem_size(y.elem)) +
           2 * (size_t)cols * sizeof(float);
}

static const gmlp_kernel_spec layernorm = {"layernorm.cl", "gmlp_layernorm"};
static const gmlp_kernel_spec layernorm_rows = {"layernorm.cl", "gmlp_layernorm_rows"};
/* Rows per work-group of gmlp_layernorm_rows: PoCL's own choice (local size
 * NULL) ran batch 1's 196 rows of 768 (gmlp_s16_224's gate) in 58 us, groups
 * of 4 in 42; 1568 rows the same either way, Intel's runtime within 5%
 * (bench/NOTES.md, "GELU without exp, LayerNorm's groups, ..."). */
#define GMLP_ROWS_WG 4

gmlp_status gmlp_op_layernorm(gmlp_context *ctx, gmlp_rows x, gmlp_rows y, cl_mem gamma, cl_mem beta, int rows,
                              int cols, float eps)
{
    GMLP_TRY(norm_elems(ctx, "layernorm", x, y));
    /* CPUs: a work-item per row (barriers are loops there), in groups of
     * GMLP_ROWS_WG rows; GPUs: a work-group per row */
    const int cpu = (ctx->dev.type & CL_DEVICE_TYPE_CPU) != 0;
    const size_t wg = cpu ? GMLP_ROWS_WG : (size_t)ctx->ops->reduce_wg;
    size_t global[1] = {cpu ? ((size_t)rows + wg - 1) / wg * wg : (size_t)rows * wg}, local[1] = {wg};
    const size_t moves = norm_moves(x, y, rows, cols);
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, cpu ? &layernorm_rows : &layernorm, NULL, NULL, &k));
    if (cpu)
        return LAUNCH(ctx, k, 1, global, local, moves, ARG_MEM(x.buf), ARG_ULONG(x.off), ARG_ULONG(x.ld),
            ARG_INT(x.elem), ARG_MEM(y.buf), ARG_ULONG(y.off), ARG_ULONG(y.ld), ARG_INT(y.elem), ARG_MEM(gamma),
            ARG_MEM(beta), ARG_INT(cols), ARG_FLOAT(eps), ARG_INT(rows));
    return LAUNCH(ctx, k, 1, global, local, moves, ARG_MEM(x.buf), ARG_ULONG(x.off), ARG_ULONG(x.ld), ARG_INT(x.elem),
        ARG_MEM(y.buf), ARG_ULONG(y.off), ARG_ULONG(y.ld), ARG_INT(y.elem), ARG_MEM(gamma), ARG_MEM(beta),
        ARG_INT(cols), ARG_FLOAT(eps));
}

static const gmlp_kernel_spec affine = {"affine.cl", "gmlp_affine"};

gmlp_status gmlp_op_affine(gmlp_context *ctx, gmlp_rows x, gmlp_rows y, cl_mem alpha, cl_mem beta, int rows, int cols,
                           gmlp_outer add)
{
    GMLP_TRY(norm_elems(ctx, "affine", x, y));
    if (add.r && (!add.s || !add.period || (size_t)rows % add.period))
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "affine: an outer product over %d rows of period %zu",
                         rows, add.period);
    size_t global[2] = {(size_t)cols, (size_t)rows};
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &affine, NULL, NULL, &k));
    size_t moves = norm_moves(x, y, rows, cols);
    if (add.r) /* x written back, r and s read */
        moves += (size_t)rows * (size_t)cols * gmlp_elem_size(x.elem) + (add.period + (size_t)cols) * sizeof(float);
    return LAUNCH(ctx, k, 2, global, NULL, moves, ARG_MEM(x.buf), ARG_ULONG(x.off), ARG_ULONG(x.ld), ARG_INT(x.elem),
        ARG_MEM(y.buf), ARG_ULONG(y.off), ARG_ULONG(y.ld), ARG_INT(y.elem), ARG_MEM(alpha), ARG_MEM(beta),
        ARG_MEM(add.r), ARG_MEM(add.s), ARG_ULONG(add.r ? add.period : 1));
}

static const gmlp_kernel_spec patchify = {"patchify.cl", "gmlp_patchify"};

gmlp_status gmlp_op_patchify(gmlp_context *ctx, cl_mem images, size_t img_off, gmlp_rows patches, int batch, int chans,
                             int height, int width, int ph, int pw)
{
    GMLP_TRY(norm_elems(ctx, "patchify", (gmlp_rows){.elem = GMLP_ELEM_F32}, patches));
    int grid_w = width / pw, ntok = (height / ph) * grid_w;
    size_t global[2] = {(size_t)chans * ph, (size_t)batch * ntok}; /* a patch's rows, the patches */
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &patchify, NULL, NULL, &k));
    /* each pixel read, its patch element written */
    const size_t moves = global[0] * (size_t)pw * global[1] * (sizeof(float) + gmlp_elem_size(patches.elem));
    return LAUNCH(ctx, k, 2, global, NULL, moves, ARG_MEM(images), ARG_ULONG(img_off), ARG_MEM(patches.buf),
        ARG_ULONG(patches.off), ARG_ULONG(patches.ld), ARG_INT(patches.elem), ARG_INT(chans), ARG_INT(height),
        ARG_INT(width), ARG_INT(ph), ARG_INT(pw), ARG_INT(grid_w), ARG_INT(ntok));
}

static const gmlp_kernel_spec mean_tokens = {"mean_tokens.cl", "gmlp_mean_tokens"};

gmlp_status gmlp_op_mean_tokens(gmlp_context *ctx, cl_mem x, cl_mem out, size_t out_off, int batch, int ntok, int dim,
                                const gmlp_gemm_norm *norm)
{
    const gmlp_gemm_norm none = {0}, *nm = norm && norm->w ? norm : &none;
    if (nm->w && nm->stats)
        GMLP_TRY(gmlp_gemm_check_stats(ctx, "the final norm's statistics", nm->stats, (size_t)batch * (size_t)ntok,
                                       nm->parts, 1));
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &mean_tokens, NULL, NULL, &k));
    /* a group: a run of columns of one image (its barriers want the same size in every group) */
    const size_t wg = k->wg_max < GMLP_POOL_GROUP ? k->wg_max : GMLP_POOL_GROUP;
    size_t global[2] = {((size_t)dim + wg - 1) / wg * wg, (size_t)batch}, local[2] = {wg, 1};
    size_t moves = (size_t)batch * (size_t)(ntok + 1) * (size_t)dim * sizeof(float); /* tokens in, means out */
    if (nm->stats) /* each group's statistics */
        moves += global[0] / wg * (size_t)batch * (size_t)ntok * nm->parts * 3 * sizeof(float);
    return LAUNCH(ctx, k, 2, global, local, moves, ARG_MEM(x), ARG_MEM(out), ARG_ULONG(out_off), ARG_INT(ntok),
        ARG_INT(dim), ARG_MEM(nm->stats), ARG_ULONG(nm->stats ? nm->parts : 1), ARG_MEM(nm->w), ARG_MEM(nm->b),
        ARG_FLOAT(nm->eps));
}

static const gmlp_kernel_spec embed = {"embed.cl", "gmlp_embed"};

gmlp_status gmlp_op_embed(gmlp_context *ctx, cl_mem tokens, cl_mem table, cl_mem x, int rows, int dim)
{
    size_t global[2] = {(size_t)dim, (size_t)rows};
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &embed, NULL, NULL, &k));
    const size_t moves = (size_t)rows * (2 * (size_t)dim * sizeof(float) + sizeof(cl_int)); /* ids, rows in and out */
    return LAUNCH(ctx, k, 2, global, NULL, moves, ARG_MEM(tokens), ARG_MEM(table), ARG_MEM(x), ARG_INT(dim));
}

static const gmlp_kernel_spec shift_tokens = {"shift_tokens.cl", "gmlp_shift_tokens"};

gmlp_status gmlp_op_shift_tokens(gmlp_context *ctx, cl_mem hist, int hist_rows, int p0, int m, cl_mem out, int rows,
                                 int dim, int segments, int first)
{
    size_t global[2] = {(size_t)dim, (size_t)rows};
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &shift_tokens, NULL, NULL, &k));
    const size_t moves = 2 * global[0] * global[1] * sizeof(float);
    return LAUNCH(ctx, k, 2, global, NULL, moves, ARG_MEM(hist), ARG_INT(hist_rows), ARG_INT(p0), ARG_INT(m),
        ARG_MEM(out), ARG_INT(dim), ARG_INT(segments), ARG_INT(dim / segments), ARG_INT(first));
}

static const gmlp_kernel_spec softmax_rows = {"softmax_rows.cl", "gmlp_softmax_rows"};

gmlp_status gmlp_op_softmax_rows(gmlp_context *ctx, cl_mem sim, int rows, size_t ld, int len, int p0, int m,
                                 int causal, float scale)
{
    size_t global[1] = {(size_t)rows};
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &softmax_rows, NULL, NULL, &k));
    const size_t moves = 2 * (size_t)rows * (size_t)len * sizeof(float); /* in place: each read and written */
    return LAUNCH(ctx, k, 1, global, NULL, moves, ARG_MEM(sim), ARG_ULONG(ld), ARG_INT(len), ARG_INT(p0), ARG_INT(m),
        ARG_INT(causal), ARG_FLOAT(scale));
}

gmlp_status gmlp_op_copy_rows(gmlp_context *ctx, gmlp_seq_rows src, gmlp_seq_rows dst, size_t width, size_t rows,
                              size_t seqs)
{
    if ((unsigned)src.elem >= GMLP_ELEMS || src.elem != dst.elem)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT,
                         "copy_rows: element types %d to %d (one of float, half or bf16, both alike)", (int)src.elem,
                         (int)dst.elem);
    if (!width || !rows || !seqs)
        return GMLP_OK;
    const size_t f = gmlp_elem_size(src.elem);
    size_t so[3] = {src.off * f, 0, 0}, dof[3] = {dst.off * f, 0, 0}, region[3] = {width * f, rows, seqs};
    return gmlp_enqueue_copy_rect(ctx, src.buf, dst.buf, so, dof, region, src.ld * f, src.seq * f, dst.ld * f,
                                  dst.seq * f);
}

static const gmlp_kernel_spec epilogue = {"epilogue.cl", "gmlp_epilogue_only"};

gmlp_status gmlp_op_epilogue(gmlp_context *ctx, const gmlp_gemm *g)
{
    if (g->m == 0 || g->n == 0 || !gmlp_gemm_has_epilogue(g))
        return GMLP_OK;
    GMLP_TRY(gmlp_gemm_check(ctx, g));
    size_t global[3] = {g->n, g->m, g->batch ? g->batch : 1};
    const gmlp_kernel *k;
    GMLP_TRY(gmlp_kernel_get(ctx, &epilogue, NULL, NULL, &k));
    return LAUNCH(ctx, k, 3, global, NULL, gmlp_gemm_moves(g, GMLP_MOVES_EPILOGUE | GMLP_MOVES_C), ARG_INT(g->m),
        ARG_INT(g->n), ARG_MEM(g->c.buf), ARG_ULONG(g->c.off), ARG_ULONG(g->c.ld), ARG_ULONG(g->c.stride),
        GMLP_EPI_ARGS(g), ARG_INT(g->gate.elem));
}
