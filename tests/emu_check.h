/* The emulated matrix-engine GEMM tests' operands (test_gemm_mma.c,
 * test_gemm_engines_emu.c): stored batches of matrices on the device with
 * their host copies, and the error of a result against a reference. */
#ifndef GMLP_EMU_CHECK_H
#define GMLP_EMU_CHECK_H

#include <math.h>

#include "core/half.h"
#include "core/precision.h"
#include "kernel_abi.h"
#include "ops_check.h"

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

#endif
