/* Prelude of every kernel program (after kernel_abi.h): the maths more than
 * one kernel needs.  Offsets and leading dimensions are ulong throughout;
 * sizes (rows, columns, tokens) int. */

/* Exact GELU, as nn.GELU(): 0.5 v (1 + erf(v / sqrt 2)), written with erfc
 * so that negative v does not lose its digits to 1 + erf cancelling. */
#define GMLP_GELU(v) (0.5f * (v) * erfc(-(v) * 0.70710678118654752f)) /* also on vectors */
static inline float gmlp_gelu(float v)
{
    return GMLP_GELU(v);
}

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
