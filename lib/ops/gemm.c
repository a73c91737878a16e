/* GEMMs: argument checks shared by the backends, and gmlp_op_gemm's choice
 * among them (gemm_backend.c): the library's kernel (gemm_kernel.c) or
 * CLBlast (gemm_clblast.c). */
#include <limits.h>

#include "kernel_abi.h"
#include "ops/ops.h"
#include "ops/gemm_variant.h"

/* The elements an operand stored as rows x cols (ld apart) spans over batch
 * matrices fit its buffer, and ld is no narrower than a row. */
static gmlp_status check_operand(gmlp_context *ctx, const char *name, gmlp_view x, size_t rows, size_t cols,
                                 size_t batch)
{
    if (rows == 0 || cols == 0)
        return GMLP_OK;
    size_t bytes = 0, elem = gmlp_elem_size(x.elem);
    if (!x.buf || clGetMemObjectInfo(x.buf, CL_MEM_SIZE, sizeof bytes, &bytes, NULL) != CL_SUCCESS)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gemm: %s is not a valid buffer", name);
    size_t last = x.off + (batch - 1) * x.stride + (rows - 1) * x.ld + cols - 1;
    if (x.ld < cols || last >= bytes / elem)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT,
                         "gemm: %s (%zu x %zu, ld %zu, offset %zu, stride %zu, batch %zu) does not fit its "
                         "%zu-byte buffer of %s",
                         name, rows, cols, x.ld, x.off, x.stride, batch, bytes, gmlp_elem_name(x.elem));
    return GMLP_OK;
}

gmlp_status gmlp_gemm_check_stats(gmlp_context *ctx, const char *name, cl_mem stats, size_t rows, size_t parts,
                                  size_t batch)
{
    if (!parts)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gemm: %s of no parts", name);
    const gmlp_view s = {.buf = stats, .ld = 3 * parts, .stride = rows * 3 * parts};
    return check_operand(ctx, name, s, rows, 3 * parts, batch ? batch : 1);
}

/* The prologue's operands: its operand not transposed, a weight and bias per
 * element along the normalised rows (k of A's, n of B's), the statistics of
 * the rows (m of A's, k of B's) */
static gmlp_status check_norm(gmlp_context *ctx, const gmlp_gemm *g)
{
    const gmlp_gemm_norm *nm = &g->norm;
    const bool of_a = nm->of == GMLP_NORM_OF_A;
    if (nm->of != GMLP_NORM_OF_A && nm->of != GMLP_NORM_OF_B)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gemm: the prologue's operand %d is neither A nor B",
                         (int)nm->of);
    if (of_a ? g->a.trans : g->b.trans)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gemm: the prologue normalises %s: %s not transposed",
                         of_a ? "A's rows along k" : "B's rows across n", of_a ? "A" : "B");
    const size_t along = of_a ? g->k : g->n, rows = of_a ? g->m : g->k;
    GMLP_TRY(check_operand(ctx, "the prologue's weight", (gmlp_view){.buf = nm->w, .ld = 1}, along, 1, 1));
    GMLP_TRY(check_operand(ctx, "the prologue's bias", (gmlp_view){.buf = nm->b, .ld = 1}, along, 1, 1));
    if (nm->stats)
        GMLP_TRY(gmlp_gemm_check_stats(ctx, "the prologue's statistics", nm->stats, rows, nm->parts, g->batch));
    return GMLP_OK;
}

gmlp_status gmlp_gemm_check(gmlp_context *ctx, const gmlp_gemm *g)
{
    const size_t batch = g->batch ? g->batch : 1;
    if ((unsigned)g->a.elem >= GMLP_ELEMS || (unsigned)g->b.elem >= GMLP_ELEMS)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gemm: unknown element type of A (%d) or B (%d)",
                         (int)g->a.elem, (int)g->b.elem);
    if ((unsigned)g->c.elem >= GMLP_ELEMS)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gemm: unknown element type of C (%d)", (int)g->c.elem);
    if (g->m > INT_MAX || g->n > INT_MAX || g->k > INT_MAX)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gemm: m=%zu n=%zu k=%zu exceeds the kernels' int range",
                         g->m, g->n, g->k);
    GMLP_TRY(check_operand(ctx, "A", g->a, g->a.trans ? g->k : g->m, g->a.trans ? g->m : g->k, batch));
    if (g->a.pairs || (g->b.pairs && g->b.trans))
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gemm: pairs along k are B's alone, not transposed");
    if (g->b.pairs) /* pair rows of 2 n elements */
        GMLP_TRY(check_operand(ctx, "B", g->b, (g->k + 1) / 2, 2 * g->n, batch));
    else
        GMLP_TRY(check_operand(ctx, "B", g->b, g->b.trans ? g->n : g->k, g->b.trans ? g->k : g->n, batch));
    GMLP_TRY(check_operand(ctx, "C", g->c, g->m, g->n, batch));
    if (g->bias) {
        gmlp_view bias = {.buf = g->bias, .off = g->bias_off, .ld = 1};
        GMLP_TRY(check_operand(ctx, "the bias", bias, g->bias_rows ? g->m : g->n, 1, 1));
    }
    if ((unsigned)g->precision >= GMLP_GEMM_PRECISIONS)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gemm: unknown precision %d", (int)g->precision);
    if (g->act < 0 || g->act >= GMLP_ACTS)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gemm: unknown activation %d", g->act);
    if (g->norm.w)
        GMLP_TRY(check_norm(ctx, g));
    if (g->stats_col0 > g->n)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gemm: statistics from column %zu of %zu",
                         g->stats_col0, g->n);
    if (g->gate.buf) {
        const gmlp_elem gate = gmlp_gemm_precision_inputs(g->precision);
        if (g->gate.elem != gate || g->gate.trans)
            return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT,
                             "gemm: the gate must be stored as %s in this precision (its activations'), not transposed",
                             gmlp_elem_name(gate));
        GMLP_TRY(check_operand(ctx, "the gate", g->gate, g->m, g->n, batch));
    }
    return GMLP_OK;
}

/* An operand's bytes over batch matrices of rows x cols: one matrix where
 * the batch shares it (stride 0). */
static size_t operand_bytes(gmlp_view x, size_t rows, size_t cols, size_t batch)
{
    return (x.stride ? batch : 1) * rows * cols * gmlp_elem_size(x.elem);
}

size_t gmlp_gemm_moves(const gmlp_gemm *g, unsigned parts)
{
    const size_t batch = g->batch ? g->batch : 1, m = g->m, n = g->n;
    const int c_read = (parts & GMLP_MOVES_PRODUCT) ? g->beta != 0.0f : (parts & GMLP_MOVES_C) != 0;
    size_t bytes = (c_read + 1) * operand_bytes(g->c, m, n, batch);
    if (parts & GMLP_MOVES_PRODUCT)
        bytes += operand_bytes(g->a, m, g->k, batch) + operand_bytes(g->b, g->k, n, batch);
    if (parts & GMLP_MOVES_EPILOGUE)
        bytes += (g->bias ? (g->bias_rows ? m : n) * sizeof(float) : 0) +
                 (g->gate.buf ? operand_bytes(g->gate, m, n, batch) : 0);
    return bytes;
}

/* The backend gmlp_op_gemm runs g on: the context's, or a tuned CLBlast win
 * unless the kernel was asked for, where this build has it and it takes g;
 * else the kernel. */
static const gmlp_gemm_backend_i *backend_for(const gmlp_context *ctx, int cls, const gmlp_gemm *g)
{
    const gmlp_tuned_choice *w = ctx->set.gemm_forced ? NULL : gmlp_gemm_tuned(ctx, cls, g);
    const gmlp_gemm_backend_i *b = gmlp_gemm_backend_find(w && w->clblast ? GMLP_GEMM_CLBLAST : ctx->set.gemm);
    return b && b->supports(g) ? b : gmlp_gemm_backend_find(GMLP_GEMM_KERNEL);
}

int gmlp_gemm_on_clblast(const gmlp_context *ctx, int cls, const gmlp_gemm *g)
{
    return backend_for(ctx, cls, g) == gmlp_gemm_backend_find(GMLP_GEMM_CLBLAST);
}

gmlp_status gmlp_op_gemm(gmlp_context *ctx, const gmlp_gemm *g)
{
    gmlp_gemm_record_note(ctx, g);
    const int cls = g->m && g->n ? gmlp_gemm_class(ctx, g) : -1;
    return backend_for(ctx, cls, g)->run(ctx, g);
}
