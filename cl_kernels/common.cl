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
/* ushort8 at an element's alignment: one store where PoCL's vstore8 made
 * eight (bench/NOTES.md, "... and 16-bit stores") */
typedef ushort8 __attribute__((aligned(2))) gmlp_ushort8_a2;
static inline void gmlp_elem_put8(int store, __global void *p, size_t i, float8 v)
{
    if (store == GMLP_STORE_HALF)
        gmlp_store_fp16_8(v, (__global half *)p + i);
    else if (store == GMLP_STORE_BF16)
        *(__global gmlp_ushort8_a2 *)((__global bf16 *)p + i) = gmlp_to_bf16_8(v);
    else
        vstore8(v, 0, (__global float *)p + i);
}

/* Exact GELU, as nn.GELU(): 0.5 v (1 + erf(v / sqrt 2)), with erf as a
 * rational function, x P(x^2) / Q(x^2) on x clamped to [-4, 4] (past it erf
 * is +-1 in float): one division and eleven FMAs, no exp.  A float64 fit
 * (tools/erf_fit.py) within 5.5e-8 of erf, 4.2e-7 evaluated in float
 * (clamped to [-1, 1], so 1 + erf never turns negative).  PyTorch's float
 * erf cancels in 1 + erf as this does: GELU within 2.5e-7 max(|v|, 1) of
 * float64.  The exp an erfc form needs cost CPUs most of GELU's time
 * (bench/NOTES.md, "GELU without exp, ..."); the built-in erfc (SLEEF on
 * PoCL) cost as much as fc1's whole GEMM.  Defined as NAME for type T:
 * float, and the vector types the GEMM's direct variant works in. */
#define GMLP_GELU_DEFINE(NAME, T)                                                                             \
    static inline T NAME(T v)                                                                                 \
    {                                                                                                         \
        const T x = clamp(v * 0.70710678118654752f, -4.0f, 4.0f), s = x * x;                                  \
        const T p = 1.128378630f +                                                                            \
                    s * (2.139526159e-1f +                                                                    \
                         s * (5.243452638e-2f +                                                               \
                              s * (4.293390084e-3f +                                                          \
                                   s * (1.555446070e-4f + s * (-1.990338433e-6f + s * 1.921676329e-8f)))));   \
        const T q = 1.0f + s * (5.229382515e-1f + s * (1.208029017e-1f + s * (1.555177476e-2f + s * 1.098119072e-3f))); \
        const T h = 0.5f * v;                                                                                 \
        return h + h * clamp(x * p / q, -1.0f, 1.0f);                                                         \
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
