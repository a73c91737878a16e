/* The emulated matrix-engine GEMM tests (test_gemm_mma.c,
 * test_gemm_engines_emu.c): stored batches of matrices on the device with
 * their host copies, the error of a result against a reference, and one
 * case run and checked. */
#ifndef GMLP_EMU_CHECK_H
#define GMLP_EMU_CHECK_H

#include <math.h>
#include <string.h>

#include "cl/kernels.h"
#include "core/half.h"
#include "core/precision.h"
#include "kernel_abi.h"
#include "ops/gemm_variant.h"
#include "ops_check.h"
#include "ref/ref.h"

/* A stored rows x cols operand (a batch of them): host holds what the device
 * reads (rounded when stored as half or bfloat16), random values times scale
 * (NaN with nan). */
typedef struct operand {
    float *host;
    size_t off, ld, stride, n;
    cl_mem buf;
} operand;

/* padded: odd offset, leading dimension and stride (vector width 1); else
 * all multiples of 4, the host's vector width 4 */
static inline operand make(size_t rows, size_t cols, size_t batch, int padded, gmlp_elem elem, float scale, int nan)
{
    operand o = {.off = padded ? 5 : 0, .ld = padded ? cols + 3 : (cols + 3) / 4 * 4};
    o.stride = rows * o.ld + (padded ? 2 : 0);
    o.n = o.off + (batch - 1) * o.stride + rows * o.ld;
    o.host = rnd(o.n);
    for (size_t i = 0; i < o.n; i++)
        o.host[i] = nan ? NAN : o.host[i] * scale;
    if (elem != GMLP_ELEM_F32) {
        uint16_t *h = malloc(o.n * sizeof *h);
        gmlp_elem_pack(elem, o.host, o.n, h);
        for (size_t i = 0; i < o.n; i++)
            o.host[i] = gmlp_elem_value(elem, h[i]);
        o.buf = up_bytes(h, o.n * sizeof *h);
        free(h);
    } else {
        o.buf = up(o.host, o.n);
    }
    return o;
}

static inline void release(operand *o)
{
    gmlp_buffer_release(ctx, &o->buf);
    free(o->host);
}

/* max |got - want| / max |want| over the batch's m x n matrices of C's
 * layout c (NaN: infinite) */
static inline double error_of(const float *got, const float *want, size_t m, size_t n, size_t batch, const operand *c)
{
    double maxw = 0, maxd = 0;
    for (size_t p = 0; p < batch; p++)
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                size_t at = c->off + p * c->stride + i * c->ld + j;
                double d = fabs((double)got[at] - want[at]);
                maxw = fmax(maxw, fabs((double)want[at]));
                maxd = d <= maxd ? maxd : d;
            }
    return maxw > 0 ? maxd / maxw : maxd;
}

/* C (c, of elements ec) read back into got as floats; a 16-bit C's
 * reference want rounded as stored first (bfloat16, or half saturated at
 * +-65504: the host's twin of the modes' rounding): the same
 * values but where the sums' last bits decide a tie (at most 1%, one ulp
 * off), values far below C's largest apart (GELU's far tail: its relative
 * error in float is larger); returns the tolerance of error_of that then
 * applies, tol for float (one ulp of the 16-bit format's mantissa else:
 * a tie in the largest binade is that far off relative to its largest). */
static inline double emu_down_c(const operand *c, gmlp_elem ec, float *got, float *want, size_t m, size_t n,
                                size_t batch, double tol, const char *what)
{
    if (ec == GMLP_ELEM_F32) {
        down(c->buf, got, c->n);
        return tol;
    }
    uint16_t *bits = malloc(c->n * sizeof *bits);
    CHECK(clEnqueueReadBuffer(ctx->queue, c->buf, CL_TRUE, 0, c->n * sizeof *bits, bits, 0, NULL, NULL) == CL_SUCCESS,
          "%s: reading C", what);
    for (size_t i = 0; i < c->n; i++)
        got[i] = gmlp_elem_value(ec, bits[i]);
    free(bits);
    double maxw = 0;
    size_t ties = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t p = 0; p < batch; p++)
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    const size_t at = c->off + p * c->stride + i * c->ld + j;
                    if (pass == 0) {
                        want[at] = gmlp_round_operand(want[at], ec == GMLP_ELEM_F16 ? GMLP_GEMM_PREC_FP16
                                                                                    : GMLP_GEMM_PREC_BF16);
                        maxw = fmax(maxw, fabs((double)want[at]));
                    } else {
                        ties += fabs((double)got[at] - want[at]) > tol * maxw;
                    }
                }
    CHECK(ties * 100 <= m * n * batch, "%s: %zu of %zu outputs not the reference rounded to %s", what, ties,
          m * n * batch, gmlp_elem_name(ec));
    return ec == GMLP_ELEM_F16 ? 0x1p-10 : 0x1p-7; /* an ulp of C's largest binade, relative to its largest */
}

/* the fused epilogues: a bias along C's columns (with GELU or not), along
 * its rows with GELU, the SGU's gate (with tanh on it or not) */
enum { EPI_NONE, EPI_COLS_GELU, EPI_COLS, EPI_ROWS_GELU, EPI_GATE, EPI_GATE_TANH };

/* One case: C = epilogue(op(A) . op(B) + beta C), m x n x k, a batch */
typedef struct emu_case {
    int prec;           /* GMLP_GEMM_PREC_*: how the reference rounds the operands */
    int ta, nn, padded; /* A transposed; B not (NN); odd offsets and leading dimensions (else vector width 4) */
    gmlp_elem ea, eb, ec;
    float a_scale, b_scale; /* the operands' values (FP16's subnormals and saturation) */
    size_t m, n, k, batch;
    float beta;
    int epi;
    int rounding_seen; /* not vacuous: the result must be far from the unrounded reference */
} emu_case;

/* Runs kern (a tm x tn tile, wm x wn outputs a work-item) on case x against
 * the float64 reference whose operands are rounded as x->prec says, and
 * checks that nothing outside C changed; what names the case. */
static inline void emu_check(const gmlp_kernel *kern, int tm, int tn, int wm, int wn, const emu_case *x,
                             const char *what)
{
    const size_t m = x->m, n = x->n, k = x->k, batch = x->batch;
    const size_t rx = (size_t)(tn / wn), ry = (size_t)(tm / wm);
    if (!fits_groups(kern, rx * ry, what))
        return;
    operand a = x->ta ? make(k, m, batch, x->padded, x->ea, x->a_scale, 0) : make(m, k, batch, x->padded, x->ea, x->a_scale, 0);
    operand b = x->nn ? make(k, n, batch, x->padded, x->eb, x->b_scale, 0) : make(n, k, batch, x->padded, x->eb, x->b_scale, 0);
    operand c = make(m, n, batch, x->padded, x->ec, 1.0f, x->beta == 0.0f); /* beta 0: C's NaN must not be read */
    const int epi = x->epi, gated = epi == EPI_GATE || epi == EPI_GATE_TANH, rows = epi == EPI_ROWS_GELU || gated;
    const int act = epi == EPI_COLS_GELU || epi == EPI_ROWS_GELU ? GMLP_ACT_GELU
                    : epi == EPI_GATE_TANH                      ? GMLP_ACT_TANH
                                                                : GMLP_ACT_IDENTITY;
    const int bias_mode = epi == EPI_NONE ? GMLP_BIAS_NONE : rows ? GMLP_BIAS_ROWS : GMLP_BIAS_COLS;
    operand bias = make(1, rows ? m : n, 1, 0, GMLP_ELEM_F32, 1.0f, 0);
    /* the gate as the mode's activations hold it */
    operand u = make(m, n, batch, x->padded, gmlp_gemm_precision_inputs((gmlp_gemm_precision)x->prec), 1.0f, 0);

    /* the references: operands rounded (and not, for the forgot-to-round check) */
    float *ra = malloc(a.n * sizeof *ra), *rb = malloc(b.n * sizeof *rb);
    for (size_t i = 0; i < a.n; i++)
        ra[i] = gmlp_round_operand(a.host[i], x->prec);
    for (size_t i = 0; i < b.n; i++)
        rb[i] = gmlp_round_operand(b.host[i], x->prec);
    float *want = malloc(c.n * sizeof *want), *plain = malloc(c.n * sizeof *plain), *got = malloc(c.n * sizeof *got);
    memcpy(want, c.host, c.n * sizeof *want);
    memcpy(plain, c.host, c.n * sizeof *plain);
    const ref_epi re = {epi == EPI_NONE ? NULL : bias.host, rows, act, gated ? u.host + u.off : NULL, u.ld, u.stride};
    ref_gemm(m, n, k, ra + a.off, a.ld, a.stride, x->ta, rb + b.off, b.ld, b.stride, !x->nn, x->beta, want + c.off,
             c.ld, c.stride, batch);
    ref_epilogue(want + c.off, m, n, c.ld, c.stride, batch, &re);
    ref_gemm(m, n, k, a.host + a.off, a.ld, a.stride, x->ta, b.host + b.off, b.ld, b.stride, !x->nn, x->beta,
             plain + c.off, c.ld, c.stride, batch);
    ref_epilogue(plain + c.off, m, n, c.ld, c.stride, batch, &re);

    const size_t global[3] = {(n + (size_t)tn - 1) / (size_t)tn * rx, (m + (size_t)tm - 1) / (size_t)tm * ry, batch};
    const size_t local[3] = {rx, ry, 1};
    gmlp_status st = gmlp_kernel_args(
        ctx, kern, ARG_INT(m), ARG_INT(n), ARG_INT(k), ARG_MEM(a.buf), ARG_ULONG(a.off), ARG_ULONG(a.ld),
        ARG_ULONG(a.stride), ARG_MEM(b.buf), ARG_ULONG(b.off), ARG_ULONG(b.ld), ARG_ULONG(b.stride), ARG_FLOAT(x->beta),
        ARG_MEM(c.buf), ARG_ULONG(c.off), ARG_ULONG(c.ld), ARG_ULONG(c.stride),
        ARG_MEM(epi == EPI_NONE ? NULL : bias.buf), ARG_ULONG(0), ARG_INT(bias_mode), ARG_INT(act),
        ARG_MEM(gated ? u.buf : NULL), ARG_ULONG(u.off), ARG_ULONG(u.ld), ARG_ULONG(u.stride),
        GMLP_NORM_ARGS(&(const gmlp_gemm){0}), GMLP_ARG_END); /* no fused LayerNorm */
    if (st == GMLP_OK)
        st = gmlp_kernel_launch(ctx, kern, 3, global, local);
    CHECK(st == GMLP_OK, "%s: launch: %s", what, gmlp_last_error(ctx));
    /* accumulation order apart, the same sums; GELU in float costs a few ulp more */
    const double ftol = act == GMLP_ACT_GELU ? 3e-5 : 1e-5;
    const double tol = emu_down_c(&c, x->ec, got, want, m, n, batch, ftol, what);
    const double err = error_of(got, want, m, n, batch, &c);
    CHECK(err <= tol, "%s: max relative error %.3g > %.3g", what, err, tol);
    int untouched = 1; /* padding, the rows' tails and other matrices' gaps */
    for (size_t i = 0; i < c.n; i++) {
        size_t r = i < c.off ? 0 : (i - c.off) % c.stride;
        int inside = i >= c.off && (i - c.off) / c.stride < batch && r < m * c.ld && r % c.ld < n;
        if (!inside && memcmp(&got[i], &c.host[i], sizeof got[i]))
            untouched = 0;
    }
    CHECK(untouched, "%s: wrote outside C", what);
    double off = 0;
    if (x->rounding_seen) {
        off = error_of(got, plain, m, n, batch, &c);
        CHECK(off > 10 * ftol, "%s: %.3g from the unrounded reference: rounding not seen", what, off);
    }
    if (err <= tol && untouched) {
        printf("ok %s: %.2g", what, err);
        printf(off > 0 ? " (unrounded reference: %.2g)\n" : "\n", off);
    }
    release(&a), release(&b), release(&c), release(&bias), release(&u);
    free(ra), free(rb), free(want), free(plain), free(got);
}

#endif
