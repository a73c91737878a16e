/* Prelude of every kernel program (after kernel_abi.h): the maths more than
 * one kernel needs.  Offsets and leading dimensions are ulong throughout;
 * sizes (rows, columns, tokens) int. */

/* Exact GELU, as nn.GELU(): 0.5 v (1 + erf(v / sqrt 2)), written with erfc
 * so that negative v does not lose its digits to 1 + erf cancelling, and
 * erfc as Numerical Recipes' erfcc (a Chebyshev fit: under 1.2e-7 relative
 * error for every argument): one exp, one division and ten FMAs.  The
 * built-in erfc cost PoCL (SLEEF: every range computed and blended on
 * vectors) as much time as the whole fc1 GEMM of gmlp_ti16_224; the tests
 * hold either to the float64 reference.  Defined as NAME for type T: float,
 * and the vector types the GEMM's direct variant works in. */
#define GMLP_GELU_DEFINE(NAME, T)                                                                             \
    static inline T NAME(T v)                                                                                 \
    {                                                                                                         \
        const T x = -v * 0.70710678118654752f, z = fabs(x), t = 1.0f / (1.0f + 0.5f * z);                     \
        const T e = t * exp(-z * z - 1.26551223f +                                                            \
                            t * (1.00002368f +                                                                \
                                 t * (0.37409196f +                                                           \
                                      t * (0.09678418f +                                                      \
                                           t * (-0.18628806f +                                                \
                                                t * (0.27886807f +                                            \
                                                     t * (-1.13520398f +                                      \
                                                          t * (1.48851587f +                                  \
                                                               t * (-0.82215223f + t * 0.17087277f)))))))));   \
        return 0.5f * v * select(2.0f - e, e, x >= 0.0f); /* erfc(x) = 2 - erfc(-x) */                       \
    }
GMLP_GELU_DEFINE(gmlp_gelu, float)

/* act: GMLP_ACT_*. */
static inline float gmlp_act(float v, int act)
{
    if (act == GMLP_ACT_TANH)
        return tanh(v);
    if (act == GMLP_ACT_SIGMOID)
        return 1.0f / (1.0f + exp(-v));
    if (act == GMLP_ACT_GELU)
        return gmlp_gelu(v);
    return v;
}

/* A GEMM's epilogue on element (i, j) of C, whose product is v (bias_mode:
 * GMLP_BIAS_*): gemm.cl applies it in registers, epilogue.cl after CLBlast. */
static inline float gmlp_epilogue(float v, int i, int j, __global const float *bias, int bias_mode, int gelu)
{
    if (bias_mode == GMLP_BIAS_COLS)
        v += bias[j];
    else if (bias_mode == GMLP_BIAS_ROWS)
        v += bias[i];
    return gelu ? gmlp_gelu(v) : v;
}
