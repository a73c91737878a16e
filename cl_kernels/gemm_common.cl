/* What the GEMM kernels share (gemm_tiled.cl and gemm_direct.cl include it):
 * C[p] = epilogue(op(A[p]) . op(B[p]) + beta * C[p]) for batch index p, row-major, with
 * A and/or B optionally stored as IEEE half or as bfloat16 (the upper half of
 * a float's bits, ushort).  Both are storage only: vload_half(N) converts to
 * float without cl_khr_fp16, bfloat16 by a shift, and all arithmetic is fp32.  In a
 * precision mode other than FP32 the operands are rounded to its format as
 * they are loaded (precision.cl): the portable variant of the mode.
 *
 * Each file is a family of kernels, one per set of host #defines (a tiling
 * of lib/ops/gemm_tilings.c, an operand form): the tile (TM x TN outputs per
 * work-group, WM x WN per work-item, TK-deep k-slices), the vector width VW,
 * and the transposes TA / TB (compile-time, as CLBlast's NN/NT/TN/TT entry
 * points: no runtime branch in the loads).
 *
 * Staging: each family loads op(A) and op(B) with one set of functions of
 * the operand op (0: A, 1: B; a constant once inlined, from which its
 * storage, width and layout follow: GMLP_STAGE_*, below): gemm_tiled.cl's
 * gmlp_tiled_fetch and gmlp_tiled_stash, gemm_engine.cl's gmlp_eng_fetch and
 * gmlp_eng_stash, gemm_mma.cl's gmlp_mma_stage_fetch, gmlp_mma_stage_stash,
 * gmlp_mma_raw_issue and gmlp_mma_raw_word, gemm_direct.cl's direct_ld1 and
 * direct_ldv.  Each passes every element through one hook where its value is
 * formed (gmlp_stage_element, below): the one place an operand is
 * transformed on its way in.
 *
 * Epilogue: beta * C, a bias per column (fc layers, stem, head) or per row
 * (token-axis matmuls), an activation (fc1's exact GELU, the gate's), and
 * the SGU's gate (times u), applied to the accumulators in registers before
 * the one store (gmlp_epilogue, common.cl; epilogue.cl runs the same after a
 * CLBlast GEMM). */
#include "precision.cl"

/* The work-group's block of C, (column, row) in blocks: the launch's order
 * (band 0), or the groups, in the order they start, numbered down bands of
 * `band` block rows a column at a time, so that the groups running together
 * read `band` of A's block rows and few of B's block columns, which the cache
 * then holds (CUTLASS's threadblock swizzle); a bijection whatever the grid. */
static inline int2 gmlp_gemm_block(int band)
{
    if (band <= 0)
        return (int2)(get_group_id(0), get_group_id(1));
    const int gx = get_num_groups(0), gy = get_num_groups(1), band_groups = band * gx;
    const int l = get_group_id(1) * gx + get_group_id(0), first = l / band_groups * band, pos = l % band_groups;
    const int rows = min(band, gy - first); /* the last band's may be fewer */
    return (int2)(pos / rows, first + pos % rows);
}

/* The variant's axes (lib/ops/gemm_variant.c writes those that differ from
 * these defaults): the operands' and C's storage, the prologue (none so
 * far), how an engine's instructions issue. */
#ifndef GMLP_GEMM_A
#define GMLP_GEMM_A GMLP_STORE_FLOAT
#endif
#ifndef GMLP_GEMM_B
#define GMLP_GEMM_B GMLP_STORE_FLOAT
#endif
#ifndef GMLP_GEMM_C
#define GMLP_GEMM_C GMLP_STORE_FLOAT
#endif
#ifndef GMLP_GEMM_PROLOGUE
#define GMLP_GEMM_PROLOGUE GMLP_GEMM_PROLOGUE_NONE
#endif
#ifndef GMLP_GEMM_ISSUE
#define GMLP_GEMM_ISSUE GMLP_GEMM_ISSUE_NATIVE
#endif
/* The SGU's gate is stored as the precision mode stores the activations
 * GEMMs read (lib/ops' gmlp_gemm_precision_inputs): a model's [u | v]. */
#if GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_FP16
#define GMLP_GEMM_GATE GMLP_STORE_HALF
#elif GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_BF16
#define GMLP_GEMM_GATE GMLP_STORE_BF16
#else
#define GMLP_GEMM_GATE GMLP_STORE_FLOAT
#endif
#define GMLP_GEMM_EPI_OF(p) GMLP_EPI_OF(p, GMLP_GEMM_GATE)
/* The fused LayerNorm's two halves (the prologue and the row statistics)
 * are written for the portable kernels, direct and tiled, which define
 * GMLP_GEMM_FUSES; the planner asks no matrix engine's family for them
 * (lib/ops/gemm_kernel.c), and those ignore the stats argument. */
#if !defined(GMLP_GEMM_FUSES) && GMLP_GEMM_PROLOGUE != GMLP_GEMM_PROLOGUE_NONE
#error "gemm_common.cl: this kernel family has no prologue"
#endif
#define GMLP_GEMM_A_HALF (GMLP_GEMM_A == GMLP_STORE_HALF)
#define GMLP_GEMM_B_HALF (GMLP_GEMM_B == GMLP_STORE_HALF)
#define GMLP_GEMM_A_BF16 (GMLP_GEMM_A == GMLP_STORE_BF16)
#define GMLP_GEMM_B_BF16 (GMLP_GEMM_B == GMLP_STORE_BF16)
#define GMLP_GEMM_C_BF16 (GMLP_GEMM_C == GMLP_STORE_BF16)
#define GMLP_GEMM_C_HALF (GMLP_GEMM_C == GMLP_STORE_HALF)
#define GMLP_GEMM_C_16 (GMLP_GEMM_C_BF16 || GMLP_GEMM_C_HALF)
#ifndef GMLP_GEMM_TA
#define GMLP_GEMM_TA 0
#endif
#ifndef GMLP_GEMM_TB
#define GMLP_GEMM_TB 0
#endif
#ifndef GMLP_GEMM_VW
#define GMLP_GEMM_VW 1
#endif
/* #pragma unroll on every fixed-trip loop: GPUs keep the accumulators in
 * registers only when the loops are unrolled (clang's NVPTX: a 288-byte stack
 * frame without).  Off on CPUs: PoCL 3.1 vectorises across work-items and,
 * fully unrolled, ran the large tiling at 1 GFLOP/s instead of 13 (SGEMM
 * 1024^3, 2-core EPYC, 2026-11-23). */
#ifndef GMLP_GEMM_UNROLL
#define GMLP_GEMM_UNROLL 1
#endif
#if GMLP_GEMM_UNROLL
#define GMLP_UNROLL _Pragma("unroll")
#else
#define GMLP_UNROLL
#endif
#ifndef GMLP_GEMM_TM
#define GMLP_GEMM_TM 64
#endif
#ifndef GMLP_GEMM_TN
#define GMLP_GEMM_TN 64
#endif
#ifndef GMLP_GEMM_TK
#define GMLP_GEMM_TK 8
#endif
#ifndef GMLP_GEMM_WM
#define GMLP_GEMM_WM 4
#endif
#ifndef GMLP_GEMM_WN
#define GMLP_GEMM_WN 4
#endif

#define TM GMLP_GEMM_TM
#define TN GMLP_GEMM_TN
#define TK GMLP_GEMM_TK
#define WM GMLP_GEMM_WM
#define WN GMLP_GEMM_WN
#define RX (TN / WN) /* work-items along n */
#define RY (TM / WM) /* work-items along m */
#define NT (RX * RY)
#if TM % WM || TN % WN
#error "GMLP_GEMM_TM / TN must be multiples of WM / WN"
#endif

/* runs of a work-item's own rows / columns: 4 where its block allows */
#define LVM (WM % 4 == 0 ? 4 : WM % 2 == 0 ? 2 : 1)
#define LVN (WN % 4 == 0 ? 4 : WN % 2 == 0 ? 2 : 1)
#define OWN_ROW(y, r) ((((r) / LVM) * RY + (y)) * LVM + (r) % LVM)
#define OWN_COL(x, s) ((((s) / LVN) * RX + (x)) * LVN + (s) % LVN)

#if GMLP_GEMM_A_BF16
#define A_TYPE bf16
#elif GMLP_GEMM_A_HALF
#define A_TYPE half
#else
#define A_TYPE float
#endif
#if GMLP_GEMM_B_BF16
#define B_TYPE bf16
#elif GMLP_GEMM_B_HALF
#define B_TYPE half
#else
#define B_TYPE float
#endif

/* Operand op of a product (0: A, 1: B; a constant once inlined): its
 * storage (GMLP_STORE_*), the slice's width W (TM or TN), whether
 * op(X) is stored contiguously along k, and the vector width of its loads
 * (VW where it divides the contiguous extent). */
#define GMLP_STAGE_STORE(op) ((op) ? GMLP_GEMM_B : GMLP_GEMM_A)
#define GMLP_STAGE_W(op) ((op) ? TN : TM)
#define GMLP_STAGE_CONTIG_K(op) ((op) ? GMLP_GEMM_TB : !GMLP_GEMM_TA)
#define GMLP_STAGE_V(op) ((GMLP_STAGE_CONTIG_K(op) ? TK : GMLP_STAGE_W(op)) % GMLP_GEMM_VW ? 1 : GMLP_GEMM_VW)
/* The larger of X(0) and X(1).  The staging's loops over operand op's units
 * (and gemm_mma.cl's runs and words) run to it and skip the items past
 * X(op): a trip count that does not depend on op lets a loop unroll before
 * its function is inlined; unrolled after (op a constant only then), the
 * BF16 64 x 64 x 32 tile of gemm_mma.cl took 150 registers a thread, not
 * 128 (clang 15, ptxas 13). */
#define GMLP_STAGE_MAX(X) (X(0) > X(1) ? X(0) : X(1))

/* Operand storage (GMLP_STORE_*, a constant once inlined) at p: element
 * i's address (its value: common.cl's gmlp_elem_get). */
static inline __global const void *gmlp_stage_addr(int store, __global const void *p, size_t i)
{
    if (store == GMLP_STORE_HALF)
        return (__global const half *)p + i;
    if (store == GMLP_STORE_BF16)
        return (__global const bf16 *)p + i;
    return (__global const float *)p + i;
}

/* The staging hook: element x of operand op as it is staged, rounded to
 * the precision mode's format (after the direct kernel's prologue, which
 * needs the element's row and k: direct_norm_a).  gemm_mma.cl's hook, gmlp_mma_word, calls it or does the
 * same rounding in the instruction that packs two elements;
 * gemm_direct.cl's vectors take direct_stage_element. */
static inline float gmlp_stage_element(float x, int op)
{
    (void)op;
    return gmlp_round(x);
}

/* C as float, or as the mode's 16-bit format (a product only GEMMs read, in
 * BF16 or FP16: the value rounded as the next product's operand rounding
 * rounds it, once, after the epilogue; bfloat16 as gmlp_to_bf16, half
 * saturated at +-65504 as FP16's rounding saturates.  So the kernels that
 * apply the epilogue in a second sweep over C apply it to the accumulators
 * instead when C is 16-bit, EPILOGUE_SWEEP) */
#if GMLP_GEMM_C_BF16
#define C_TYPE bf16
static inline float gmlp_c_get(__global const bf16 *p)
{
    return gmlp_bf16_value(*p);
}
static inline void gmlp_c_put(__global bf16 *p, float v)
{
    *p = gmlp_to_bf16(v);
}
#elif GMLP_GEMM_C_HALF
#define C_TYPE half
static inline float gmlp_c_get(__global const half *p)
{
    return vload_half(0, p);
}
static inline void gmlp_c_put(__global half *p, float v)
{
    gmlp_store_fp16(v, 0, p);
}
#else
#define C_TYPE float
static inline float gmlp_c_get(__global const float *p)
{
    return *p;
}
static inline void gmlp_c_put(__global float *p, float v)
{
    *p = v;
}
#endif

/* The fused LayerNorm (lib/model/block.c): a GEMM whose C a LayerNorm
 * would read writes its rows' partial statistics (its stats argument), and
 * the GEMM that would read the LayerNorm's output normalises its operand
 * as it stages it (GMLP_GEMM_PROLOGUE), so the LayerNorm's own pass over
 * memory and its launch go.
 * Statistics (where stats is not NULL: no define, so that a product with
 * them runs its twin's program; a branch per work-item): per row r of C (r = p m + i over a batch) and part (a work-item
 * along n: get_global_id(0) of get_global_size(0) parts), the (count, mean,
 * M2) of the row's values as stored in that work-item's columns from
 * stats_col0 on, 3 floats at (r parts + part) 3; a part without such
 * columns writes count 0.  Merged in part order by Chan et al.'s pairwise
 * update: every run merges alike, and no sum of squares cancels.
 * Prologue NORM_A: op(A)[i, q] becomes (A[i, q] - mean_i) rstd_i w[q] + b[q]
 * before the precision's rounding, mean_i and rstd_i = 1 / sqrt(M2 / count
 * + eps) from pro_stats' row p m + i (pro_parts parts); pro_stats NULL: mean
 * 0, rstd 1 (ResMLP's Affine).
 * Prologue NORM_B: op(B)[q, j] becomes (B[q, j] - mean_q) rstd_q w[j] + b[j],
 * the statistics' row p k + q: the LayerNorm (or Affine) whose output a
 * token-axis GEMM reads as B (the SGU's LN(v), the Mixer's and ResMLP's
 * token MLPs). */
#define GMLP_NORM_PARAMS                                                                                      \
    __global const float *pro_stats, ulong pro_parts, __global const float *pro_w, __global const float *pro_b, \
        float pro_eps, __global float *stats, int stats_col0

/* which prologue a variant has (the portable kernels') */
#define NORM_A (GMLP_GEMM_PROLOGUE == GMLP_GEMM_PROLOGUE_NORM_A)
#define NORM_B (GMLP_GEMM_PROLOGUE == GMLP_GEMM_PROLOGUE_NORM_B)

/* The entry point, one ABI for every variant (lib/ops/gemm_kernel.c sets
 * the arguments).  Offsets, leading dimensions and batch strides count
 * elements of the operand's own type (C's too).  beta == 0 never reads C.  The
 * epilogue's bias and gate may be NULL; the fused LayerNorm's arguments
 * (GMLP_NORM_PARAMS) are read only by the variants that have it. */
#define GMLP_GEMM_KERNEL(name)                                                                                 \
    __kernel __attribute__((reqd_work_group_size(RX, RY, 1))) void name(                                      \
        int m, int n, int k, __global const A_TYPE *a, ulong a_off, ulong lda, ulong a_stride,                 \
        __global const B_TYPE *b, ulong b_off, ulong ldb, ulong b_stride, float beta, __global C_TYPE *c,      \
        ulong c_off, ulong ldc, ulong c_stride, GMLP_EPI_PARAMS, GMLP_NORM_PARAMS)

/* The tiled kernels' k loop: TK-deep slices of op(A) and op(B), double
 * buffered in local memory with one barrier a slice.  Each slice's global
 * loads (FETCH, the family's staging, into registers pa and pb) are in
 * flight while the one before is multiplied, then stashed (STASH) into the
 * other buffer, whose last readers passed the previous barrier.  Between
 * GMLP_SLICES_BEGIN and GMLP_SLICES_END the kernel multiplies the slice at
 * la and lb (local T: its staged format); SIZE(op) is one slice's elements.
 * FETCH and STASH take the operand first (0: A, 1: B).  Needs a, b, lda,
 * ldb, i0, j0, m, n, k, t, as, bs, pa and pb in scope. */
#define GMLP_SLICES_BEGIN(T, SIZE, FETCH, STASH)                                                              \
    const int slices = (k + TK - 1) / TK;                                                                     \
    if (slices > 0) {                                                                                         \
        FETCH(0, a, lda, i0, m, 0, k, t, pa);                                                                 \
        FETCH(1, b, ldb, j0, n, 0, k, t, pb);                                                                 \
        STASH(0, as, pa, t);                                                                                  \
        STASH(1, bs, pb, t);                                                                                  \
    }                                                                                                         \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                             \
    for (int sl = 0; sl < slices; sl++) {                                                                     \
        const int cur = sl & 1, more = sl + 1 < slices;                                                       \
        if (more) {                                                                                           \
            FETCH(0, a, lda, i0, m, (sl + 1) * TK, k, t, pa);                                                 \
            FETCH(1, b, ldb, j0, n, (sl + 1) * TK, k, t, pb);                                                 \
        }                                                                                                     \
        __local const T *la = as + cur * SIZE(0), *lb = bs + cur * SIZE(1);
#define GMLP_SLICES_END(SIZE, STASH)                                                                          \
        if (more) {                                                                                           \
            STASH(0, as + (cur ^ 1) * SIZE(0), pa, t);                                                        \
            STASH(1, bs + (cur ^ 1) * SIZE(1), pb, t);                                                        \
        }                                                                                                     \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                         \
    }
