/* The direct GEMM: no local memory and no barrier, for CPUs (the caches do the
 * staging, and PoCL runs a barrier-free work-group as one plain loop).
 * Work-item (x, y) owns the WM x WN block of C at rows i0 + y WM, columns
 * j0 + x WN, in vectors of DV = GMLP_GEMM_VW floats (vloadn: no alignment
 * beyond the element's), the vector unit filled explicitly:
 * - op(B) contiguous along n (TB 0: token mixing, attention's values): per
 *   k step, WN / DV vectors of op(B)'s row times WM broadcast elements of
 *   op(A) into WM x WN / DV vector accumulators (BLIS's outer products);
 * - NT (TA 0, TB 1: the linear layers, contiguous along k on both sides):
 *   DM x DN sub-blocks of dot products over DV elements of k at a time,
 *   summed across the vector at the end, then the epilogue on vectors;
 * - TT (no model product): outer products, op(B)'s row gathered.
 * Rows and columns past the edge read the last one (in bounds; discarded),
 * so the loops carry no masks; the stores are masked.  The block loops are
 * unrolled on every device: the accumulators must be registers.  The
 * operands' loads (its staging): direct_ld1 and direct_ldv, below.
 * It alone has the fused LayerNorm's halves (gemm_common.cl): op(A)
 * normalised as it loads (GMLP_GEMM_PROLOGUE NORM_A, not transposed), and
 * the row statistics of what it stored (where stats is set).
 * GMLP_DIRECT_DPBF16 (the dpbf16 tilings: x86's AVX512_BF16 on a CPU device
 * that runs on the host, PoCL's): BF16's products through vdpbf16ps, NT k
 * 32 at a time (direct_dots_bf16), the others k in pairs against op(B)'s
 * rows interleaved (direct_outer_bf16) or, B stored as pairs along k
 * (GMLP_GEMM_B_PAIRS: element (q, j) at (q / 2) ldb + 2 j + q % 2, an odd
 * k's last pair padded with a zero), one load of B a vdpbf16ps
 * (direct_pairs_bf16); elsewhere such a B is read element by element. */
#define GMLP_GEMM_FUSES 1
/* a tiling for CPUs alone (lib/ops/gemm_variant.c): code shaped for them */
#ifndef GMLP_GEMM_CPU
#define GMLP_GEMM_CPU 0
#endif
/* and its device's compiler takes clang's __builtin_prefetch (the same) */
#ifndef GMLP_GEMM_PREFETCH
#define GMLP_GEMM_PREFETCH 0
#endif
/* and builds a second copy of the epilogue, for whole blocks, quickly (the same) */
#ifndef GMLP_GEMM_WHOLE
#define GMLP_GEMM_WHOLE 0
#endif
#include "gemm_common.cl"

#define DV GMLP_GEMM_VW
#if WN % DV
#error "direct: GMLP_GEMM_WN must be a multiple of GMLP_GEMM_VW"
#endif
#define DCAT_(x, y) x##y
#define DCAT(x, y) DCAT_(x, y)
#define vecf DCAT(float, DV)
#define VLOADF DCAT(vload, DV)
#define VSTOREF DCAT(vstore, DV)
#define vecu DCAT(uint, DV)
/* vecf at a float's alignment, as vloadn and vstoren assume: one load or
 * store where PoCL's vstore16 made three (bench/NOTES.md, "C's rows by one
 * store a vector") */
typedef vecf __attribute__((aligned(4))) direct_vecf_a4;
/* Out of line in the CPUs' tilings (GMLP_GEMM_CPU), inlined elsewhere: a
 * GPU would keep a caller's registers in private memory across a call */
#if GMLP_GEMM_CPU
#define DIRECT_CPU_OUTLINED __attribute__((noinline))
#else
#define DIRECT_CPU_OUTLINED
#endif
GMLP_ROUND_DEFINE(direct_round, vecf, vecu)

/* The staging: an element of operand op at p (direct_ld1), or DV of them
 * along its contiguous extent (direct_ldv; vloadn: no alignment beyond the
 * element's), through the hook gmlp_stage_element (direct_stage_element: the
 * same on DV lanes at once). */
static inline vecf direct_stage_element(vecf x, int op)
{
    (void)op;
    return direct_round(x);
}
static inline vecf direct_vload(const int op, __global const void *p)
{
    if (GMLP_STAGE_STORE(op) == GMLP_STORE_HALF)
        return DCAT(vload_half, DV)(0, (__global const half *)p);
    if (GMLP_STAGE_STORE(op) == GMLP_STORE_BF16)
        return DCAT(as_float, DV)(DCAT(convert_uint, DV)(VLOADF(0, (__global const bf16 *)p)) << 16);
    return VLOADF(0, (__global const float *)p);
}
static inline float direct_ld1(const int op, __global const void *p)
{
    return gmlp_stage_element(gmlp_elem_get(GMLP_STAGE_STORE(op), p, 0), op);
}
static inline vecf direct_ldv(const int op, __global const void *p)
{
    return direct_stage_element(direct_vload(op, p), op);
}

/* The prologues (gemm_common.cl): NORM_A, op(A)'s row normalised by nr
 * (mean, rstd) and scaled and shifted per k; NORM_B, op(B)'s row q
 * normalised by its own nr and scaled and shifted per column.  An element
 * at p whose weight and bias sit at index x (or DV of them from there),
 * then rounded as staged.  pro: the weights, and (NORM_B) the statistics
 * of op(B)'s rows. */
typedef struct direct_pro {
    __global const float *w, *b, *stats;
    ulong parts;
    size_t row0; /* the statistics' row of op(B)'s row 0 in this matrix */
    float eps;
} direct_pro;
static inline vecf direct_normed_v(const int op, __global const void *p, int x, float2 nr, const direct_pro *pro)
{
    return direct_stage_element((direct_vload(op, p) - nr.x) * nr.y * VLOADF(0, pro->w + x) + VLOADF(0, pro->b + x),
                                op);
}
static inline float direct_normed_1(const int op, __global const void *p, int x, float2 nr, const direct_pro *pro)
{
    return gmlp_stage_element((gmlp_elem_get(GMLP_STAGE_STORE(op), p, 0) - nr.x) * nr.y * pro->w[x] + pro->b[x], op);
}
/* op(A)'s row at p, elements q .. q + DV (or q): under NORM_A normalised */
static inline vecf direct_a_v(__global const A_TYPE *p, int q, float2 nr, const direct_pro *pro)
{
    return NORM_A ? direct_normed_v(0, p + q, q, nr, pro) : direct_ldv(0, p + q);
}
static inline float direct_a_1(__global const A_TYPE *p, int q, float2 nr, const direct_pro *pro)
{
    return NORM_A ? direct_normed_1(0, p + q, q, nr, pro) : direct_ld1(0, p + q);
}
/* op(B)'s row q at row, columns j .. j + DV (or j): under NORM_B normalised by nr */
static inline vecf direct_b_v(__global const B_TYPE *row, int j, float2 nr, const direct_pro *pro)
{
    return NORM_B ? direct_normed_v(1, row + j, j, nr, pro) : direct_ldv(1, row + j);
}
static inline float direct_b_1(__global const B_TYPE *row, int j, float2 nr, const direct_pro *pro)
{
    return NORM_B ? direct_normed_1(1, row + j, j, nr, pro) : direct_ld1(1, row + j);
}
#define DOT (!GMLP_GEMM_TA && GMLP_GEMM_TB)
#ifndef GMLP_GEMM_B_PAIRS
#define GMLP_GEMM_B_PAIRS 0
#endif
#if GMLP_GEMM_B_PAIRS && (GMLP_GEMM_TB || NORM_B)
#error "direct: B as pairs along k is op(B) itself, not normalised"
#endif
/* op(B)'s element (q, j) where B is stored as pairs along k */
static inline size_t direct_pair_at(int q, int j, ulong ldb)
{
    return (size_t)(q >> 1) * ldb + 2 * (size_t)j + (size_t)(q & 1);
}
#define WV (WN / DV) /* vectors per row of a block */

GMLP_GELU_DEFINE(direct_gelu, vecf)
GMLP_ACT_DEFINE(direct_act, vecf, direct_gelu)

/* Columns j .. j + DV of a row: a vector load where all are left of column
 * n (full), else lanes past it repeat column n - 1 (in bounds; discarded).
 * The lane loops are unrolled so that x stays in registers: a loop left
 * rolled put it in a 16-byte stack frame on sm_90 and spilled on tgllp.
 * The whole vector's load inlined, the rest out of line on CPUs: PoCL's
 * LLVM left the whole function out of line, a call each vector. */
DIRECT_CPU_OUTLINED static vecf direct_load_part(__global const float *row, int j, int n)
{
    float x[DV];
    _Pragma("unroll") for (int l = 0; l < DV; l++) x[l] = row[min(j + l, n - 1)];
    return VLOADF(0, x);
}
static inline __attribute__((always_inline)) vecf direct_load(__global const float *row, int j, int n, int full)
{
    return full ? *(__global const direct_vecf_a4 *)(row + j) : direct_load_part(row, j, n);
}
static inline void direct_store(__global float *row, int j, int n, int full, vecf v)
{
    if (full) {
        *(__global direct_vecf_a4 *)(row + j) = v;
        return;
    }
    float x[DV];
    VSTOREF(v, 0, x);
    _Pragma("unroll") for (int l = 0; l < DV; l++) if (j + l < n) row[j + l] = x[l];
}

/* 16-bit rows 8 elements at a time where a vector is whole, by the vector
 * conversions (element by element, gmlp_s16_224's BF16 fc1 took 1.5x as
 * long), else element by element */
#define DIRECT_BY8 (DV % 8 == 0)

/* Columns j .. j + DV of a row stored as store (GMLP_STORE_*, a constant:
 * C's, the gate's), as direct_load */
static inline vecf direct_load_as(int store, __global const void *row, int j, int n, int full)
{
    if (store == GMLP_STORE_FLOAT)
        return direct_load((__global const float *)row, j, n, full);
    float x[DV];
    if (DIRECT_BY8 && full)
        _Pragma("unroll") for (int h = 0; h < DV; h += 8) vstore8(gmlp_elem_get8(store, row, (size_t)(j + h)), 0, x + h);
    else
        _Pragma("unroll") for (int l = 0; l < DV; l++) x[l] = gmlp_elem_get(store, row, (size_t)min(j + l, n - 1));
    return VLOADF(0, x);
}

/* C's columns j .. j + DV of a row, as direct_store (a 16-bit C rounded at
 * the store) */
#if GMLP_GEMM_C_16
static inline void direct_store_c(__global C_TYPE *row, int j, int n, int full, vecf v)
{
    float x[DV];
    VSTOREF(v, 0, x);
    if (DIRECT_BY8 && full)
        _Pragma("unroll") for (int h = 0; h < DV; h += 8) gmlp_elem_put8(GMLP_GEMM_C, row, (size_t)(j + h), vload8(0, x + h));
    else
        _Pragma("unroll") for (int l = 0; l < DV; l++) if (j + l < n) gmlp_c_put(row + j + l, x[l]);
}
#else
#define direct_store_c direct_store
#endif

/* The epilogue's steps on C[i, j .. j + DV), on whole vectors: the bias,
 * then the activation, then the gate */
static inline vecf direct_biased(vecf v, int i, int j, int n, int full, const gmlp_epi *e)
{
    if (e->bias_mode == GMLP_BIAS_COLS)
        return v + direct_load(e->bias, j, n, full);
    return e->bias_mode == GMLP_BIAS_ROWS ? v + e->bias[i] : v;
}
static inline vecf direct_gated(vecf v, int i, int j, int n, int full, const gmlp_epi *e)
{
    if (!e->gate)
        return v;
    return v * direct_load_as(GMLP_GEMM_GATE, gmlp_elem_at(GMLP_GEMM_GATE, e->gate, (size_t)i * e->ldg), j, n, full);
}
static inline vecf direct_epilogue(vecf v, int i, int j, int n, int full, const gmlp_epi *e)
{
    return direct_gated(direct_act(direct_biased(v, i, j, n, full, e), e->act), i, j, n, full, e);
}

/* C[i, j .. j + DV) = epilogue(v + beta * C), the part left of column n */
static inline void direct_put(__global C_TYPE *c, ulong ldc, int m, int n, int i, int j, vecf v, float beta,
                              const gmlp_epi *e)
{
    __global C_TYPE *row = c + (size_t)i * ldc;
    const int full = j + DV <= n;
    if (i >= m)
        return;
    if (beta != 0.0f)
        v += beta * direct_load_as(GMLP_GEMM_C, row, j, n, full);
    direct_store_c(row, j, n, full, direct_epilogue(v, i, j, n, full, e));
}

/* x86's AVX512_BF16 (GMLP_DIRECT_DPBF16, issued natively; emulated in tests:
 * the portable loop): vdpbf16ps adds the products of 16 pairs of bfloat16
 * to 16 floats, each product exact, as the BF16 mode's rounded operands
 * multiplied and accumulated in fp32 (its denormals flushed); float
 * operands round to bfloat16 by vcvtne2ps2bf16 (to nearest even), so that
 * float and bfloat16 storage give the same bits.  Half operands, and the
 * prologues, take the portable loop. */
#ifndef GMLP_DIRECT_DPBF16
#define GMLP_DIRECT_DPBF16 0
#endif
#define DPBF16                                                                                                         \
    (GMLP_DIRECT_DPBF16 && GMLP_GEMM_ISSUE == GMLP_GEMM_ISSUE_NATIVE && GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_BF16 &&  \
     !GMLP_GEMM_A_HALF && !GMLP_GEMM_B_HALF && GMLP_GEMM_PROLOGUE == GMLP_GEMM_PROLOGUE_NONE && DV == 16)
#if DPBF16
#define DPBF16_TARGET __attribute__((target("avx512f,avx512bw,avx512bf16")))
/* 32 bfloat16 from p (2-byte aligned) as vdpbf16ps takes them */
DPBF16_TARGET static inline int16 dpbf16_ld(__global const bf16 *p)
{
    return (int16)(as_int8(vload16(0, (__global const ushort *)p)), as_int8(vload16(1, (__global const ushort *)p)));
}
DPBF16_TARGET static inline int16 dpbf16_ld_float(__global const float *p)
{
    return __builtin_astype(__builtin_ia32_cvtne2ps2bf16_512(vload16(1, p), vload16(0, p)), int16);
}
#if GMLP_GEMM_A_BF16
#define dpbf16_a dpbf16_ld
#else
#define dpbf16_a dpbf16_ld_float
#endif
#if GMLP_GEMM_B_BF16
#define dpbf16_b dpbf16_ld
#else
#define dpbf16_b dpbf16_ld_float
#endif
#endif

#if DOT
/* Sub-blocks of DM rows x 4 columns: at most 12 accumulators (AVX2 has 16
 * vector registers), and a row's four sums come out as one float4. */
#if WN % 4
#error "direct NT: GMLP_GEMM_WN must be a multiple of 4"
#endif
#define DM (WM % 3 == 0 ? 3 : WM % 2 == 0 ? 2 : 1)

/* the sum of v's lanes folded into 4 */
static inline float4 direct_fold4(vecf v)
{
#if DV == 16
    return v.lo.lo + v.lo.hi + v.hi.lo + v.hi.hi;
#elif DV == 8
    return v.lo + v.hi;
#elif DV == 4
    return v;
#else
#error "direct NT: GMLP_GEMM_VW must be 4, 8 or 16"
#endif
}

/* (sum of t0, sum of t1, sum of t2, sum of t3) by two rounds of pairwise adds */
static inline float4 direct_sum4(float4 t0, float4 t1, float4 t2, float4 t3)
{
    const float4 x = (float4)(t0.s02, t1.s02) + (float4)(t0.s13, t1.s13);
    const float4 y = (float4)(t2.s02, t3.s02) + (float4)(t2.s13, t3.s13);
    return (float4)(x.s02, y.s02) + (float4)(x.s13, y.s13);
}

#if DPBF16
/* sum[r] = A[row r, 0 .. 32 k32) . B[rows 0 .. 4, 0 .. 32 k32).  Out of line:
 * PoCL inlines into its work-group function, whose target lacks the
 * features, a callee whose target has them and then fails instruction
 * selection; a call per block costs nothing. */
DPBF16_TARGET __attribute__((noinline)) static void direct_dots_bf16(__global const A_TYPE *const ar[DM],
                                                                      __global const B_TYPE *const br[4], int k32,
                                                                      float4 sum[DM])
{
    float16 acc[DM][4];
    _Pragma("unroll") for (int r = 0; r < DM; r++)
        _Pragma("unroll") for (int s = 0; s < 4; s++) acc[r][s] = (float16)0.0f;
    for (int q = 0; q < 32 * k32; q += 32) {
        int16 bv[4];
        _Pragma("unroll") for (int s = 0; s < 4; s++) bv[s] = dpbf16_b(br[s] + q);
        _Pragma("unroll") for (int r = 0; r < DM; r++)
        {
            const int16 av = dpbf16_a(ar[r] + q);
            _Pragma("unroll") for (int s = 0; s < 4; s++) acc[r][s] =
                __builtin_ia32_dpbf16ps_512(acc[r][s], av, bv[s]);
        }
    }
    _Pragma("unroll") for (int r = 0; r < DM; r++) sum[r] =
        direct_sum4(direct_fold4(acc[r][0]), direct_fold4(acc[r][1]), direct_fold4(acc[r][2]),
                    direct_fold4(acc[r][3]));
}
#endif

/* sum[r] = A[i0 + r, :] . B[j0 .. j0+4, :] for r < DM, A's rows normalised
 * by nr[r] under the prologue */
static inline void direct_dots(int m, int n, int k, __global const A_TYPE *a, ulong lda, __global const B_TYPE *b,
                               ulong ldb, int i0, int j0, const float2 nr[DM], const direct_pro *pro, float4 sum[DM])
{
    __global const A_TYPE *ar[DM];
    __global const B_TYPE *br[4];
    vecf acc[DM][4];
    _Pragma("unroll") for (int r = 0; r < DM; r++) ar[r] = a + (size_t)min(i0 + r, m - 1) * lda;
    _Pragma("unroll") for (int s = 0; s < 4; s++) br[s] = b + (size_t)min(j0 + s, n - 1) * ldb;
    _Pragma("unroll") for (int r = 0; r < DM; r++)
        _Pragma("unroll") for (int s = 0; s < 4; s++) acc[r][s] = (vecf)0.0f;
    int q = 0;
#if DPBF16
    direct_dots_bf16(ar, br, k / 32, sum);
    q = k / 32 * 32;
#endif
    for (; !DPBF16 && q + DV <= k; q += DV) {
        vecf bv[4];
        _Pragma("unroll") for (int s = 0; s < 4; s++) bv[s] = direct_ldv(1, br[s] + q);
        _Pragma("unroll") for (int r = 0; r < DM; r++)
        {
            const vecf av = direct_a_v(ar[r], q, nr[r], pro);
            _Pragma("unroll") for (int s = 0; s < 4; s++) acc[r][s] += av * bv[s];
        }
    }
    _Pragma("unroll") for (int r = 0; r < DM; r++)
    {
        if (!DPBF16)
            sum[r] = direct_sum4(direct_fold4(acc[r][0]), direct_fold4(acc[r][1]), direct_fold4(acc[r][2]),
                                 direct_fold4(acc[r][3]));
        for (int t = q; t < k; t++) /* k's tail */
            sum[r] += direct_a_1(ar[r], t, nr[r], pro) * (float4)(direct_ld1(1, br[0] + t), direct_ld1(1, br[1] + t),
                                                          direct_ld1(1, br[2] + t), direct_ld1(1, br[3] + t));
    }
}

/* C[i0 .. i0+DM, j0 .. j0+4) = sum + beta * C, no epilogue yet (a float C) */
static inline void direct_dots_store(__global float *c, ulong ldc, int m, int n, float beta, int i0, int j0,
                                     const float4 sum[DM])
{
    _Pragma("unroll") for (int r = 0; r < DM; r++)
    {
        __global float *cv = c + (size_t)(i0 + r) * ldc + j0;
        if (i0 + r < m && j0 + 4 <= n) {
            vstore4(beta == 0.0f ? sum[r] : sum[r] + beta * vload4(0, cv), 0, cv);
        } else if (i0 + r < m) {
            float e[4];
            vstore4(sum[r], 0, e);
            for (int l = 0; l < 4 && j0 + l < n; l++)
                cv[l] = beta == 0.0f ? e[l] : e[l] + beta * cv[l];
        }
    }
}

/* the epilogue over C[i, j .. j + DV) in place, the part left of column n */
static inline void direct_finish(__global float *c, ulong ldc, int m, int n, int i, int j, const gmlp_epi *e)
{
    __global float *row = c + (size_t)i * ldc;
    const int full = j + DV <= n;
    if (i < m)
        direct_store(row, j, n, full, direct_epilogue(direct_load(row, j, n, full), i, j, n, full, e));
}
#else

/* C[i0 .. i0+WM, j0 .. j0+WN) = epilogue(acc + beta * C), the part inside
 * m x n, step by step over the whole block: each step's vectors are
 * independent, so the activation's long chains (GELU's: some 40
 * operations, each waiting on the last) interleave in one basic block
 * (vector by vector, fc1 of gmlp_ti16_224 took 1.3x as long).  Rows past m
 * read row m - 1 (in bounds) and store nothing.  whole (a constant): the
 * block lies inside m x n, its vectors full: no test a vector (on CPUs:
 * BF16's forwards 1.05-1.08x on PoCL, Zen 4). */
static inline __attribute__((always_inline)) void direct_block_put_as(__global C_TYPE *c, ulong ldc, int m, int n,
                                                                      int i0, int j0, vecf acc[WM][WV], float beta,
                                                                      const gmlp_epi *e, const int whole)
{
    _Pragma("unroll") for (int r = 0; r < WM; r++)
        _Pragma("unroll") for (int s = 0; s < WV; s++)
        {
            const int i = whole ? i0 + r : min(i0 + r, m - 1), j = j0 + s * DV, full = whole || j + DV <= n;
            if (beta != 0.0f)
                acc[r][s] += beta * direct_load_as(GMLP_GEMM_C, c + (size_t)i * ldc, j, n, full);
            acc[r][s] = direct_biased(acc[r][s], i, j, n, full, e);
        }
    if (e->act == GMLP_ACT_GELU) /* fc1's: its branch out of the block */
        _Pragma("unroll") for (int r = 0; r < WM; r++)
            _Pragma("unroll") for (int s = 0; s < WV; s++) acc[r][s] = direct_gelu(acc[r][s]);
    else
        _Pragma("unroll") for (int r = 0; r < WM; r++)
            _Pragma("unroll") for (int s = 0; s < WV; s++) acc[r][s] = direct_act(acc[r][s], e->act);
    _Pragma("unroll") for (int r = 0; r < WM; r++)
        _Pragma("unroll") for (int s = 0; s < WV; s++)
        {
            const int i = whole ? i0 + r : min(i0 + r, m - 1), j = j0 + s * DV, full = whole || j + DV <= n;
            const vecf v = direct_gated(acc[r][s], i, j, n, full, e);
            if (whole || i0 + r < m)
                direct_store_c(c + (size_t)i * ldc, j, n, full, v);
        }
}
static inline void direct_block_put(__global C_TYPE *c, ulong ldc, int m, int n, int i0, int j0, vecf acc[WM][WV],
                                    float beta, const gmlp_epi *e)
{
    /* GMLP_GEMM_WHOLE (gmlp_gemm_code): CPUs compiling by clang alone; on GPUs two copies put sm_80's 2x8 in
     * a stack frame, through rusticl's SPIR-V they took the cold build 4x as long */
    if (GMLP_GEMM_WHOLE && i0 + WM <= m && j0 + WN <= n)
        direct_block_put_as(c, ldc, m, n, i0, j0, acc, beta, e, 1);
    else
        direct_block_put_as(c, ldc, m, n, i0, j0, acc, beta, e, 0);
}

/* Where GMLP_GEMM_PREFETCH, before the k loop: C's lines of the block for
 * writing and the gate's for reading, so that they arrive while the block
 * accumulates, not when direct_block_put needs them (they left the cache
 * long before: C's lines were last read by another product, and are not
 * read here unless beta is set).  gmlp_s16_224 at batch 8 1.05x on PoCL,
 * 1.07x on Intel's runtime (Zen 4; bench/NOTES.md, "The epilogue's lines
 * fetched ahead").  Elsewhere nothing. */
static inline void direct_block_prefetch(__global C_TYPE *c, ulong ldc, int m, int n, int i0, int j0,
                                         const gmlp_epi *e)
{
#if GMLP_GEMM_PREFETCH
    _Pragma("unroll") for (int r = 0; r < WM; r++)
        _Pragma("unroll") for (int s = 0; s < WV; s++)
        {
            const size_t i = (size_t)min(i0 + r, m - 1), j = (size_t)min(j0 + s * DV, n - 1);
            __builtin_prefetch(gmlp_elem_at(GMLP_GEMM_C, c, i * ldc + j), 1);
            if (e->gate)
                __builtin_prefetch(gmlp_elem_at(GMLP_GEMM_GATE, e->gate, i * e->ldg + j), 0);
        }
#else
    (void)c, (void)ldc, (void)m, (void)n, (void)i0, (void)j0, (void)e;
#endif
}

/* a block's accumulators zeroed, or copied out (unrolled: registers) */
static inline void direct_block_zero(vecf acc[WM][WV])
{
    _Pragma("unroll") for (int r = 0; r < WM; r++)
        _Pragma("unroll") for (int s = 0; s < WV; s++) acc[r][s] = (vecf)0.0f;
}
static inline void direct_block_copy(vecf out[WM][WV], vecf acc[WM][WV])
{
    _Pragma("unroll") for (int r = 0; r < WM; r++)
        _Pragma("unroll") for (int s = 0; s < WV; s++) out[r][s] = acc[r][s];
}

/* direct_outer's contiguous case without a prologue, a loop of its own:
 * inside direct_outer's loop, beside the gathered and normalised paths,
 * PoCL's loop strength reduction kept some 30 pointers on the stack, each
 * advanced every k step (108 instructions for the 12 FMAs, gmlp_ti16_224
 * 3.4x slower); here 24 (tests/test_cpu_loop.sh bounds it; bench/NOTES.md,
 * "The direct kernel's k loop on its own").  Out of line on CPUs, as
 * measured there. */
DIRECT_CPU_OUTLINED static void direct_outer_rows(__global const A_TYPE *const ar[WM], size_t sa,
                                                  __global const B_TYPE *b, ulong ldb, int j0, int k,
                                                  vecf out[WM][WV])
{
    vecf acc[WM][WV];
    direct_block_zero(acc);
    __global const B_TYPE *row = b + j0;
    for (int q = 0; q < k; q++, row += ldb) {
        vecf bv[WV];
        _Pragma("unroll") for (int s = 0; s < WV; s++) bv[s] = direct_ldv(1, row + s * DV);
        _Pragma("unroll") for (int r = 0; r < WM; r++)
        {
            const float av = direct_ld1(0, ar[r] + (size_t)q * sa);
            _Pragma("unroll") for (int s = 0; s < WV; s++) acc[r][s] += av * bv[s];
        }
    }
    direct_block_copy(out, acc);
}

#if DPBF16
/* op(A)[row, q] and [row, q + 1] (two 0: none) as vdpbf16ps's pair, to be
 * broadcast: one 32-bit load where A is bfloat16 along k */
DPBF16_TARGET static inline int dpbf16_a_pair(__global const A_TYPE *p, size_t sa, const int two)
{
#if GMLP_GEMM_A_BF16 && !GMLP_GEMM_TA /* the pair adjacent */
    if (two)
        return as_int(vload2(0, (__global const ushort *)p));
#endif
    const float a0 = direct_ld1(0, p), a1 = two ? direct_ld1(0, p + sa) : 0.0f;
    return as_int((as_uint(a0) >> 16) | (as_uint(a1) & 0xffff0000u));
}

/* DV bfloat16 pairs of op(B)'s rows at row and row + ldb (two 0: the
 * second 0): lane j holds (row[j], row[ldb + j]), vdpbf16ps's order; bfloat16
 * B's stored bits as they are (the rounding keeps them), else the floats'
 * rounded as the portable loop rounds them */
DPBF16_TARGET static inline int16 dpbf16_rows(__global const B_TYPE *row, ulong ldb, const int two)
{
#if GMLP_GEMM_B_BF16
    const uint16 x0 = convert_uint16(vload16(0, (__global const ushort *)row)),
                 x1 = two ? convert_uint16(vload16(0, (__global const ushort *)(row + ldb))) : (uint16)0;
    return as_int16(x0 | x1 << 16);
#else
    const vecf x0 = direct_ldv(1, row), x1 = two ? direct_ldv(1, row + ldb) : (vecf)0.0f;
    return as_int16((as_uint16(x0) >> 16) | (as_uint16(x1) & (uint16)0xffff0000u));
#endif
}

/* one pair along k (q, q + 1; two 0: q alone, B's zero beside it): each
 * vdpbf16ps an A row's pair, broadcast, against bv's 16 columns' pairs */
DPBF16_TARGET static inline void dpbf16_step(__global const A_TYPE *const ar[WM], size_t sa, int q, const int two,
                                             const int16 bv[WV], vecf acc[WM][WV])
{
    _Pragma("unroll") for (int r = 0; r < WM; r++)
    {
        const int16 av = (int16)dpbf16_a_pair(ar[r] + (size_t)q * sa, sa, two);
        _Pragma("unroll") for (int s = 0; s < WV; s++) acc[r][s] = __builtin_ia32_dpbf16ps_512(acc[r][s], av, bv[s]);
    }
}

/* op(B)'s rows q and q + 1 from row (two 0: q alone) as WV vectors of pairs,
 * then their step */
DPBF16_TARGET static inline void dpbf16_rows_step(__global const A_TYPE *const ar[WM], size_t sa,
                                                  __global const B_TYPE *row, ulong ldb, int q, const int two,
                                                  vecf acc[WM][WV])
{
    int16 bv[WV];
    _Pragma("unroll") for (int s = 0; s < WV; s++) bv[s] = dpbf16_rows(row + s * DV, ldb, two);
    dpbf16_step(ar, sa, q, two, bv, acc);
}

/* direct_outer's contiguous case, k in pairs, op(B)'s two rows interleaved
 * as they are read (the operands rounded as the portable loop rounds them;
 * an odd k's last pairs with 0): the loop on whole pairs, then the odd
 * one (the pair's test hoisted: 1.1x on gmlp_s16_224's spatial product).
 * Out of line as direct_dots_bf16. */
DPBF16_TARGET __attribute__((noinline)) static void direct_outer_bf16(__global const A_TYPE *const ar[WM], size_t sa,
                                                                       __global const B_TYPE *b, ulong ldb, int j0,
                                                                       int k, vecf out[WM][WV])
{
    vecf acc[WM][WV];
    direct_block_zero(acc);
    __global const B_TYPE *row = b + j0;
    int q = 0;
    for (; q + 1 < k; q += 2, row += 2 * ldb)
        dpbf16_rows_step(ar, sa, row, ldb, q, 1, acc);
    if (q < k)
        dpbf16_rows_step(ar, sa, row, ldb, q, 0, acc);
    direct_block_copy(out, acc);
}
#endif

#if DPBF16 && GMLP_GEMM_B_PAIRS
/* one pair along k from B's pairs at bp: 16 columns' pairs a load */
DPBF16_TARGET static inline void dpbf16_pair_step(__global const A_TYPE *const ar[WM], size_t sa,
                                                  __global const B_TYPE *bp, int q, const int two, vecf acc[WM][WV])
{
    int16 bv[WV];
    _Pragma("unroll") for (int s = 0; s < WV; s++) bv[s] = dpbf16_b(bp + 2 * s * DV);
    dpbf16_step(ar, sa, q, two, bv, acc);
}

/* direct_outer's contiguous case on B's pairs along k.  Out of line as
 * direct_dots_bf16. */
DPBF16_TARGET __attribute__((noinline)) static void direct_pairs_bf16(__global const A_TYPE *const ar[WM], size_t sa,
                                                                       __global const B_TYPE *b, ulong ldb, int j0,
                                                                       int k, vecf out[WM][WV])
{
    vecf acc[WM][WV];
    direct_block_zero(acc);
    __global const B_TYPE *bp = b + 2 * (size_t)j0;
    int q = 0;
    for (; q + 1 < k; q += 2, bp += ldb)
        dpbf16_pair_step(ar, sa, bp, q, 1, acc);
    if (q < k)
        dpbf16_pair_step(ar, sa, bp, q, 0, acc);
    direct_block_copy(out, acc);
}
#endif

/* acc = op(A)[i0 .. i0+WM, :] . op(B)[:, j0 .. j0+WN); contiguous (a
 * constant once inlined): op(B)'s rows are read as vectors, else gathered
 * (B's pairs along k: through vdpbf16ps where contiguous, else element by
 * element) */
static inline void direct_outer(int m, int n, int k, __global const A_TYPE *a, ulong lda, __global const B_TYPE *b,
                                ulong ldb, int i0, int j0, const float2 nr[WM], const direct_pro *pro,
                                vecf acc[WM][WV], const int contiguous)
{
    __global const A_TYPE *ar[WM]; /* op(A)[i0 + r, q] at ar[r] + q * sa */
    const size_t sa = GMLP_GEMM_TA ? lda : 1;
    _Pragma("unroll") for (int r = 0; r < WM; r++) ar[r] = a + (size_t)min(i0 + r, m - 1) * (GMLP_GEMM_TA ? 1 : lda);
#if DPBF16 && GMLP_GEMM_B_PAIRS
    if (contiguous) {
        direct_pairs_bf16(ar, sa, b, ldb, j0, k, acc);
        return;
    }
#elif DPBF16
    if (contiguous) {
        direct_outer_bf16(ar, sa, b, ldb, j0, k, acc);
        return;
    }
#endif
#if !NORM_A && !NORM_B && !GMLP_GEMM_B_PAIRS
    if (contiguous) {
        direct_outer_rows(ar, sa, b, ldb, j0, k, acc);
        return;
    }
#endif
    direct_block_zero(acc);
    for (int q = 0; q < k; q++) {
        vecf bv[WV];
        const float2 nb = NORM_B ? gmlp_stats_norm(pro->stats, pro->parts, pro->row0 + q, pro->eps) : (float2)(0.0f, 1.0f);
        __global const B_TYPE *row = b + (size_t)q * ldb; /* op(B)'s row q, where B is not transposed */
        if (!GMLP_GEMM_B_PAIRS && contiguous) {
            _Pragma("unroll") for (int s = 0; s < WV; s++) bv[s] = direct_b_v(row, j0 + s * DV, nb, pro);
        } else {
            float e[WN];
            _Pragma("unroll") for (int s = 0; s < WN; s++)
            {
                const int j = min(j0 + s, n - 1);
                e[s] = GMLP_GEMM_TB        ? direct_ld1(1, b + (size_t)j * ldb + q)
                       : GMLP_GEMM_B_PAIRS ? direct_ld1(1, b + direct_pair_at(q, j, ldb))
                                           : direct_b_1(row, j, nb, pro);
            }
            _Pragma("unroll") for (int s = 0; s < WV; s++) bv[s] = VLOADF(s, e);
        }
        _Pragma("unroll") for (int r = 0; r < WM; r++)
        {
            const float av = NORM_A ? direct_a_1(ar[r], q, nr[r], pro) : direct_ld1(0, ar[r] + (size_t)q * sa);
            _Pragma("unroll") for (int s = 0; s < WV; s++) acc[r][s] += av * bv[s];
        }
    }
}
#endif

#if NORM_A && GMLP_GEMM_TA
#error "direct: the prologue normalises op(A)'s rows along k: A not transposed"
#endif
#if NORM_B && GMLP_GEMM_TB
#error "direct: the prologue normalises op(B)'s rows across n: B not transposed"
#endif

/* The order of C's blocks (gmlp_gemm_block): in the CPUs' tilings, bands of
 * as many block rows as 1 MiB of A's rows holds (GMLP_DIRECT_BAND_BYTES: a
 * core's L2 on Zen 4 and 5, where it was measured).  PoCL deals each thread runs
 * of consecutive work-groups, so down a band a thread reuses B's block column
 * and the band's A from its own cache, where the launch's order, along C's
 * rows, read all of B again for every block row (mixer_b16_224's 9.4 MB
 * weights 9 times a product at batch 1; bench/NOTES.md, "C's blocks in bands
 * of rows").  Elsewhere the launch's order. */
#ifndef GMLP_DIRECT_BAND_BYTES /* a build option may set it: test_gemm --oclgrind's bands of a few rows */
#define GMLP_DIRECT_BAND_BYTES (1 << 20)
#endif
static inline int direct_band(int k)
{
    return GMLP_GEMM_CPU ? max(1, GMLP_DIRECT_BAND_BYTES / (TM * max(k, 1) * 4)) : 0;
}

/* The row statistics (gemm_common.cl) of this work-item's
 * columns of C's rows i0 .. i0+WM (those below m), matrix p: two passes over
 * the values as stored (in cache: just written), from column col0 on. */
static inline void direct_stats(__global const C_TYPE *c, ulong ldc, int m, int n, size_t p, int i0, int j0,
                                int col0, __global float *stats)
{
    const size_t part = (size_t)j0 / WN, parts = get_global_size(0); /* the work-item's column of blocks */
    const int lo = max(j0, col0), hi = min(j0 + WN, n), count = max(hi - lo, 0);
    for (int r = 0; r < WM && i0 + r < m; r++) {
        __global const C_TYPE *row = c + (size_t)(i0 + r) * ldc;
        float sum = 0.0f, m2 = 0.0f;
        for (int j = lo; j < hi; j++)
            sum += gmlp_c_get(row + j);
        const float mean = count ? sum / (float)count : 0.0f;
        for (int j = lo; j < hi; j++) {
            const float d = gmlp_c_get(row + j) - mean;
            m2 += d * d;
        }
        vstore3((float3)((float)count, mean, m2), (p * (size_t)m + (size_t)(i0 + r)) * parts + part, stats);
    }
}

GMLP_GEMM_KERNEL(gmlp_gemm_direct)
{
    const int2 blk = gmlp_gemm_block(direct_band(k));
    const int i0 = blk.y * TM + get_local_id(1) * WM, j0 = blk.x * TN + get_local_id(0) * WN;
    const size_t p = get_global_id(2);
    if (i0 >= m) /* no barrier to reach */
        return;
    c += c_off + p * c_stride;
    if (j0 >= n) { /* past the last column: its parts of the statistics count nothing */
        if (stats)
            direct_stats(c, ldc, m, n, p, i0, j0, stats_col0, stats);
        return;
    }
    a += a_off + p * a_stride;
    b += b_off + p * b_stride;
    const gmlp_epi e = GMLP_GEMM_EPI_OF(p);
    const direct_pro pro = {pro_w, pro_b, pro_stats, pro_parts, p * (size_t)k, pro_eps};
    float2 nr[WM]; /* NORM_A's (mean, rstd) of A's rows */
    _Pragma("unroll") for (int r = 0; r < WM; r++) nr[r] =
        NORM_A ? gmlp_stats_norm(pro_stats, pro_parts, p * (size_t)m + (size_t)min(i0 + r, m - 1), pro_eps)
               : (float2)(0.0f, 1.0f);
#if DOT && GMLP_GEMM_C_16
    /* the block's sums kept, then put as direct_finish's vectors: rounded once */
    float x[WM][WN];
    for (int r = 0; r < WM; r += DM)
        for (int s = 0; s < WN; s += 4) {
            float4 sum[DM];
            direct_dots(m, n, k, a, lda, b, ldb, i0 + r, j0 + s, nr + r, &pro, sum);
            _Pragma("unroll") for (int d = 0; d < DM; d++) vstore4(sum[d], 0, &x[r + d][s]);
        }
    for (int r = 0; r < WM; r++)
        for (int s = 0; s < WN; s += DV)
            direct_put(c, ldc, m, n, i0 + r, j0 + s, VLOADF(0, &x[r][s]), beta, &e);
#elif DOT
    for (int r = 0; r < WM; r += DM)
        for (int s = 0; s < WN; s += 4) {
            float4 sum[DM];
            direct_dots(m, n, k, a, lda, b, ldb, i0 + r, j0 + s, nr + r, &pro, sum);
            direct_dots_store(c, ldc, m, n, beta, i0 + r, j0 + s, sum);
        }
    if (gmlp_epi_any(&e))
        for (int r = 0; r < WM; r++)
            for (int s = 0; s < WN; s += DV)
                direct_finish(c, ldc, m, n, i0 + r, j0 + s, &e);
#else
    vecf acc[WM][WV];
    direct_block_prefetch(c, ldc, m, n, i0, j0, &e);
    if (!GMLP_GEMM_TB && j0 + WN <= n)
        direct_outer(m, n, k, a, lda, b, ldb, i0, j0, nr, &pro, acc, 1);
    else
        direct_outer(m, n, k, a, lda, b, ldb, i0, j0, nr, &pro, acc, 0);
    direct_block_put(c, ldc, m, n, i0, j0, acc, beta, &e);
#endif
    if (stats)
        direct_stats(c, ldc, m, n, p, i0, j0, stats_col0, stats);
}
