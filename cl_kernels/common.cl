/* Prelude of every kernel program (after kernel_abi.h): the maths more than
 * one kernel needs.  Offsets and leading dimensions are ulong throughout;
 * sizes (rows, columns, tokens) int. */

/* x rounded to (23 - DROP) mantissa bits, for type F (float or a float
 * vector) with U its uint type: add half an ulp of the result less one, plus
 * the kept part's lowest bit (ties to even), then clear the dropped bits. */
#define GMLP_RNE_DEFINE(NAME, F, U, DROP)                                                                    \
    static inline F NAME(F x)                                                                                \
    {                                                                                                        \
        const U u = as_##U(x);                                                                               \
        const U r = (u + ((1u << (DROP - 1)) - 1u) + ((u >> DROP) & 1u)) & ~((1u << DROP) - 1u);             \
        return isnan(x) ? x : as_##F(r);                                                                     \
    }
/* bfloat16 stores (a BF16 model's activations that only GEMMs read): the
 * value rounded to 7 mantissa bits, as precision.cl's BF16 mode rounds, its
 * upper 16 bits; NaN made quiet (its payload may lie in the low bits). */
GMLP_RNE_DEFINE(gmlp_rne7, float, uint, 16)
GMLP_RNE_DEFINE(gmlp_rne7_8, float8, uint8, 16)
static inline ushort gmlp_to_bf16(float v)
{
    return (ushort)((as_uint(gmlp_rne7(v)) | (isnan(v) ? 0x400000u : 0u)) >> 16);
}
static inline ushort8 gmlp_to_bf16_8(float8 v)
{
    return convert_ushort8((as_uint8(gmlp_rne7_8(v)) | select((uint8)0u, (uint8)0x400000u, isnan(v))) >> 16);
}
/* half's largest finite value, where precision.cl's FP16 mode saturates */
#define GMLP_HALF_MAX 65504.0f
/* half stores (an FP16 model's activations that only GEMMs read): the value
 * saturated as the FP16 mode saturates (NaN kept), then vstore_half_rte's
 * rounding to nearest even: the mode's rounding. */
static inline void gmlp_store_fp16(float v, size_t at, __global half *p)
{
    vstore_half_rte(isnan(v) ? v : clamp(v, -GMLP_HALF_MAX, GMLP_HALF_MAX), at, p);
}
static inline void gmlp_store_fp16_8(float8 v, __global half *p)
{
    vstore_half8_rte(select(clamp(v, -GMLP_HALF_MAX, GMLP_HALF_MAX), v, isnan(v)), 0, p);
}

/* A buffer's elements as stored (GMLP_STORE_*: lib/core's gmlp_elem; a
 * constant once inlined, or an argument uniform over the launch): float;
 * half; bfloat16, a float's upper 16 bits (its value exact in float).
 * gmlp_elem_get reads element i as float, gmlp_elem_put stores v there
 * (half as the FP16 mode rounds it, bfloat16 as the BF16 mode); the 8-wide
 * ones elements i..i+7.  A new storage is a case in each. */
typedef ushort bf16;
static inline float gmlp_bf16_value(ushort h)
{
    return as_float((uint)h << 16);
}
/* element i's address */
static inline __global const void *gmlp_elem_at(int store, __global const void *p, size_t i)
{
    return (__global const uchar *)p + i * (store == GMLP_STORE_FLOAT ? sizeof(float) : sizeof(ushort));
}
static inline float gmlp_elem_get(int store, __global const void *p, size_t i)
{
    if (store == GMLP_STORE_HALF)
        return vload_half(i, (__global const half *)p);
    if (store == GMLP_STORE_BF16)
        return gmlp_bf16_value(((__global const bf16 *)p)[i]);
    return ((__global const float *)p)[i];
}
static inline float8 gmlp_elem_get8(int store, __global const void *p, size_t i)
{
    if (store == GMLP_STORE_HALF)
        return vload_half8(0, (__global const half *)p + i);
    if (store == GMLP_STORE_BF16)
        return as_float8(convert_uint8(vload8(0, (__global const bf16 *)p + i)) << 16);
    return vload8(0, (__global const float *)p + i);
}
static inline void gmlp_elem_put(int store, __global void *p, size_t i, float v)
{
    if (store == GMLP_STORE_HALF)
        gmlp_store_fp16(v, i, (__global half *)p);
    else if (store == GMLP_STORE_BF16)
        ((__global bf16 *)p)[i] = gmlp_to_bf16(v);
    else
        ((__global float *)p)[i] = v;
}
static inline void gmlp_elem_put8(int store, __global void *p, size_t i, float8 v)
{
    if (store == GMLP_STORE_HALF)
        gmlp_store_fp16_8(v, (__global half *)p + i);
    else if (store == GMLP_STORE_BF16)
        vstore8(gmlp_to_bf16_8(v), 0, (__global bf16 *)p + i);
    else
        vstore8(v, 0, (__global float *)p + i);
}

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

/* act: GMLP_ACT_*, for type T (float, or a vector type whose exact GELU
 * GELU names). */
#define GMLP_ACT_DEFINE(NAME, T, GELU)                                                                        \
    static inline T NAME(T v, int act)                                                                        \
    {                                                                                                         \
        if (act == GMLP_ACT_GELU)                                                                             \
            return GELU(v);                                                                                   \
        if (act == GMLP_ACT_TANH)                                                                             \
            return tanh(v);                                                                                   \
        if (act == GMLP_ACT_SIGMOID || act == GMLP_ACT_SILU) /* one path: a branch more spills on tgllp */    \
            return (act == GMLP_ACT_SILU ? v : (T)1.0f) / (1.0f + exp(-v));                                   \
        if (act == GMLP_ACT_RELU)                                                                             \
            return select(v, (T)0.0f, v < 0.0f); /* NaN stays NaN, as torch */                               \
        return v;                                                                                             \
    }
GMLP_ACT_DEFINE(gmlp_act, float, gmlp_gelu)

/* A GEMM's epilogue on element (i, j) of one matrix of C, whose product
 * (plus beta C) is v, in this order:
 *   v = act(v + bias[j] or bias[i]) * gate[i, j]
 * bias per column (fc layers, stem, head) or per row (token-axis matmuls:
 * the SGU's bias per position), act GELU (fc1) or the gate's activation,
 * and the gate the SGU's un-normalised half u (the spatial matmul: the gate
 * fused into its GEMM), stored as gate_store: a GEMM variant's constant
 * (its precision's, gemm_common.cl), epilogue.cl's argument.  gemm.cl
 * applies it in registers, epilogue.cl after CLBlast.  GMLP_EPI_PARAMS are
 * the kernels' parameters for it (the host's GMLP_EPI_ARGS),
 * GMLP_EPI_OF(p, gate_store) the initialiser for matrix p of a batch. */
typedef struct gmlp_epi {
    __global const float *bias; /* NULL: none */
    __global const void *gate;  /* NULL: none; else element i * ldg + j */
    ulong ldg;
    int bias_mode, act, gate_store;
} gmlp_epi;
#define GMLP_EPI_PARAMS                                                                                       \
    __global const float *bias, ulong bias_off, int bias_mode, int act, __global const void *gate,            \
        ulong gate_off, ulong ldg, ulong gate_stride
#define GMLP_EPI_OF(p, gate_store)                                                                            \
    {bias ? bias + bias_off : 0, gate ? gmlp_elem_at(gate_store, gate, gate_off + (p) * gate_stride) : 0, ldg,  \
     bias_mode, act, gate_store}

/* whether the epilogue does anything beyond storing v */
static inline int gmlp_epi_any(const gmlp_epi *e)
{
    return e->bias_mode != GMLP_BIAS_NONE || e->act != GMLP_ACT_IDENTITY || e->gate;
}

static inline float gmlp_epilogue(float v, int i, int j, const gmlp_epi *e)
{
    if (e->bias_mode == GMLP_BIAS_COLS)
        v += e->bias[j];
    else if (e->bias_mode == GMLP_BIAS_ROWS)
        v += e->bias[i];
    v = gmlp_act(v, e->act);
    return e->gate ? v * gmlp_elem_get(e->gate_store, e->gate, (size_t)i * e->ldg + j) : v;
}

/* Row statistics (count, mean, M2), as the GEMMs write them for a LayerNorm
 * fused into their consumer (gemm_common.cl says how). */
/* (count, mean, M2) of two sets of values, as of their union */
static inline float3 gmlp_stats_merge(float3 a, float3 b)
{
    if (b.x == 0.0f)
        return a;
    if (a.x == 0.0f)
        return b;
    const float n = a.x + b.x, d = b.y - a.y, f = b.x / n;
    return (float3)(n, a.y + d * f, a.z + b.z + d * d * a.x * f);
}

/* (mean, rstd) of statistics row r: its parts merged in order, as the
 * LayerNorm kernel's 1 / sqrt(variance + eps); without statistics (stats
 * NULL: an Affine) (0, 1) */
static inline float2 gmlp_stats_norm(__global const float *stats, ulong parts, size_t r, float eps)
{
    if (!stats)
        return (float2)(0.0f, 1.0f);
    __global const float *s = stats + r * parts * 3;
    float3 t = vload3(0, s);
    for (ulong q = 1; q < parts; q++)
        t = gmlp_stats_merge(t, vload3(q, s));
    return (float2)(t.y, 1.0f / sqrt(t.z / t.x + eps));
}
