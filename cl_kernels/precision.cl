/* The precision modes' operand rounding (a part: the GEMM kernels include
 * it).  GMLP_GEMM_PRECISION selects the format both operands of a product
 * are rounded to, round to nearest even, before fp32 multiply-accumulate;
 * the values stay in floats.  lib/core/precision.c is the host's twin, and
 * the tests' reference.
 *   FP32 (0): no rounding;
 *   TF32 (1): 10 mantissa bits, fp32's exponent range;
 *   FP16 (2): 10 mantissa bits, saturated at +-65504 (infinities too),
 *             multiples of 2^-24 below 2^-14 (half's subnormals);
 *   BF16 (3): 7 mantissa bits, fp32's exponent range.
 * NaN stays NaN; a finite value past TF32's or BF16's largest rounds to
 * infinity, as the conversion does. */
#ifndef GMLP_GEMM_PRECISION
#define GMLP_GEMM_PRECISION GMLP_GEMM_PREC_FP32
#endif

/* GMLP_RNE_DEFINE (x rounded to 23 - DROP mantissa bits): common.cl. */
/* NAME for F: the mode's rounding (identity for FP32). */
#define GMLP_ROUND_DEFINE(NAME, F, U)                                                                        \
    GMLP_RNE_DEFINE(NAME##_m10, F, U, 13)                                                                    \
    GMLP_RNE_DEFINE(NAME##_m7, F, U, 16)                                                                     \
    static inline F NAME(F x)                                                                                \
    {                                                                                                        \
        if (GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_TF32)                                                      \
            return NAME##_m10(x);                                                                            \
        if (GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_BF16)                                                      \
            return NAME##_m7(x);                                                                             \
        if (GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_FP16) {                                                    \
            const F c = clamp(x, -GMLP_HALF_MAX, GMLP_HALF_MAX);                                             \
            const F sub = rint(c * 0x1p24f) * 0x1p-24f; /* exact scalings: rint rounds ties to even */      \
            return isnan(x) ? x : fabs(c) < 0x1p-14f ? sub : NAME##_m10(c);                                  \
        }                                                                                                    \
        return x;                                                                                            \
    }
GMLP_ROUND_DEFINE(gmlp_round, float, uint)
