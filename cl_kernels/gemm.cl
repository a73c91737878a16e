/* C[p] = epilogue(op(A[p]) . op(B[p]) + beta * C[p]) for batch index p, row-major, with
 * A and/or B optionally stored as IEEE half.  Half is storage only: vload_half(N)
 * converts to float without cl_khr_fp16, and all arithmetic is fp32.
 *
 * A family of kernels, one per set of host #defines (lib/ops/gemm_kernel.c):
 * the tile (TM x TN outputs per work-group, WM x WN per work-item, TK-deep
 * k-slices), the vector width VW of the global loads, the transposes TA / TB
 * (compile-time, as CLBlast's NN/NT/TN/TT entry points: no runtime branch in
 * the loads), and DIRECT (no local memory: CPUs and narrow products; below).
 *
 * Tiled: per slice the group stages op(A) (TK x TM) and op(B) (TK x TN) in
 * local memory as float, double-buffered: while it multiplies out slice s
 * from one buffer, each work-item has already fetched its share of slice s+1
 * into registers, which it stores into the other buffer afterwards; one
 * barrier per slice.  Loads walk memory contiguously whichever way an operand
 * is transposed, VW elements at a time where the host checked that offsets,
 * leading dimensions and strides are multiples of VW (else it builds VW 1);
 * a vector that crosses the matrix's edge is loaded element by element.
 * Work-item (x, y) owns rows and columns in runs of 4 (OWN_ROW / OWN_COL), so
 * that its reads of local memory are float4 and neighbours' runs neighbour.
 * Edges are zero-padded on load and masked on store: any m, n, k.
 *
 * Epilogue: beta * C, a bias per column (fc layers, stem, head) or per row
 * (token-axis matmuls), an activation (fc1's exact GELU, the gate's), and
 * the SGU's gate (times u), applied to the accumulators in registers before
 * the one store (gmlp_epilogue, common.cl; large blocks: EPILOGUE_SWEEP;
 * epilogue.cl runs the same after a CLBlast GEMM). */
#ifndef GMLP_GEMM_A_HALF
#define GMLP_GEMM_A_HALF 0
#endif
#ifndef GMLP_GEMM_B_HALF
#define GMLP_GEMM_B_HALF 0
#endif
#ifndef GMLP_GEMM_TA
#define GMLP_GEMM_TA 0
#endif
#ifndef GMLP_GEMM_TB
#define GMLP_GEMM_TB 0
#endif
#ifndef GMLP_GEMM_VW
#define GMLP_GEMM_VW 1
#endif
#ifndef GMLP_GEMM_DIRECT
#define GMLP_GEMM_DIRECT 0
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

#if GMLP_GEMM_A_HALF
#define A_TYPE half
#else
#define A_TYPE float
#endif
#if GMLP_GEMM_B_HALF
#define B_TYPE half
#else
#define B_TYPE float
#endif

/* The entry point, one ABI for every variant (lib/ops/gemm_kernel.c sets
 * the arguments).  Offsets, leading dimensions and batch strides count
 * elements of the operand's own type.  beta == 0 never reads C.  The
 * epilogue's bias and gate may be NULL. */
#define GMLP_GEMM_KERNEL                                                                                       \
    __kernel __attribute__((reqd_work_group_size(RX, RY, 1))) void gmlp_gemm(                                 \
        int m, int n, int k, __global const A_TYPE *a, ulong a_off, ulong lda, ulong a_stride,                 \
        __global const B_TYPE *b, ulong b_off, ulong ldb, ulong b_stride, float beta, __global float *c,       \
        ulong c_off, ulong ldc, ulong c_stride, GMLP_EPI_PARAMS)

#if GMLP_GEMM_DIRECT
/* Direct: no local memory and no barrier, for CPUs (the caches do the
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
 * unrolled on every device: the accumulators must be registers. */
#define DV GMLP_GEMM_VW
#if WN % DV
#error "direct: GMLP_GEMM_WN must be a multiple of GMLP_GEMM_VW"
#endif
#define DCAT_(x, y) x##y
#define DCAT(x, y) DCAT_(x, y)
#define vecf DCAT(float, DV)
#define VLOADF DCAT(vload, DV)
#define VSTOREF DCAT(vstore, DV)
#if GMLP_GEMM_A_HALF
#define LOAD_A(p) vload_half(0, p)
#define LOADV_A(p) DCAT(vload_half, DV)(0, p)
#else
#define LOAD_A(p) (*(p))
#define LOADV_A(p) VLOADF(0, p)
#endif
#if GMLP_GEMM_B_HALF
#define LOAD_B(p) vload_half(0, p)
#define LOADV_B(p) DCAT(vload_half, DV)(0, p)
#else
#define LOAD_B(p) (*(p))
#define LOADV_B(p) VLOADF(0, p)
#endif
#define DOT (!GMLP_GEMM_TA && GMLP_GEMM_TB)
#define WV (WN / DV) /* vectors per row of a block */

GMLP_GELU_DEFINE(direct_gelu, vecf)
GMLP_ACT_DEFINE(direct_act, vecf, direct_gelu)

/* Columns j .. j + DV of a row: a vector load where all are left of column
 * n (full), else lanes past it repeat column n - 1 (in bounds; discarded).
 * The lane loops are unrolled so that x stays in registers: a loop left
 * rolled put it in a 16-byte stack frame on sm_90 and spilled on tgllp. */
static inline vecf direct_load(__global const float *row, int j, int n, int full)
{
    if (full)
        return VLOADF(0, row + j);
    float x[DV];
    _Pragma("unroll") for (int l = 0; l < DV; l++) x[l] = row[min(j + l, n - 1)];
    return VLOADF(0, x);
}
static inline void direct_store(__global float *row, int j, int n, int full, vecf v)
{
    if (full) {
        VSTOREF(v, 0, row + j);
        return;
    }
    float x[DV];
    VSTOREF(v, 0, x);
    _Pragma("unroll") for (int l = 0; l < DV; l++) if (j + l < n) row[j + l] = x[l];
}

/* the epilogue on C[i, j .. j + DV), on whole vectors */
static inline vecf direct_epilogue(vecf v, int i, int j, int n, int full, const gmlp_epi *e)
{
    if (e->bias_mode == GMLP_BIAS_COLS)
        v += direct_load(e->bias, j, n, full);
    else if (e->bias_mode == GMLP_BIAS_ROWS)
        v += e->bias[i];
    v = direct_act(v, e->act);
    return e->gate ? v * direct_load(e->gate + (size_t)i * e->ldg, j, n, full) : v;
}

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

/* C[i0 .. i0+DM, j0 .. j0+4) = A[i, :] . B[j, :] + beta * C, no epilogue yet */
static inline void direct_dots(int m, int n, int k, __global const A_TYPE *a, ulong lda, __global const B_TYPE *b,
                               ulong ldb, float beta, __global float *c, ulong ldc, int i0, int j0)
{
    __global const A_TYPE *ar[DM];
    __global const B_TYPE *br[4];
    vecf acc[DM][4];
    _Pragma("unroll") for (int r = 0; r < DM; r++) ar[r] = a + (size_t)min(i0 + r, m - 1) * lda;
    _Pragma("unroll") for (int s = 0; s < 4; s++) br[s] = b + (size_t)min(j0 + s, n - 1) * ldb;
    _Pragma("unroll") for (int r = 0; r < DM; r++)
        _Pragma("unroll") for (int s = 0; s < 4; s++) acc[r][s] = (vecf)0.0f;
    int q = 0;
    for (; q + DV <= k; q += DV) {
        vecf bv[4];
        _Pragma("unroll") for (int s = 0; s < 4; s++) bv[s] = LOADV_B(br[s] + q);
        _Pragma("unroll") for (int r = 0; r < DM; r++)
        {
            const vecf av = LOADV_A(ar[r] + q);
            _Pragma("unroll") for (int s = 0; s < 4; s++) acc[r][s] += av * bv[s];
        }
    }
    _Pragma("unroll") for (int r = 0; r < DM; r++)
    {
        float4 sum = direct_sum4(direct_fold4(acc[r][0]), direct_fold4(acc[r][1]), direct_fold4(acc[r][2]),
                                 direct_fold4(acc[r][3]));
        for (int t = q; t < k; t++) /* k's tail */
            sum += LOAD_A(ar[r] + t) *
                   (float4)(LOAD_B(br[0] + t), LOAD_B(br[1] + t), LOAD_B(br[2] + t), LOAD_B(br[3] + t));
        __global float *cv = c + (size_t)(i0 + r) * ldc + j0;
        if (i0 + r < m && j0 + 4 <= n) {
            vstore4(beta == 0.0f ? sum : sum + beta * vload4(0, cv), 0, cv);
        } else if (i0 + r < m) {
            float e[4];
            vstore4(sum, 0, e);
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
/* C[i, j .. j + DV) = epilogue(v + beta * C), the part left of column n */
static inline void direct_put(__global float *c, ulong ldc, int m, int n, int i, int j, vecf v, float beta,
                              const gmlp_epi *e)
{
    __global float *row = c + (size_t)i * ldc;
    const int full = j + DV <= n;
    if (i >= m)
        return;
    if (beta != 0.0f)
        v += beta * direct_load(row, j, n, full);
    direct_store(row, j, n, full, direct_epilogue(v, i, j, n, full, e));
}

/* acc = op(A)[i0 .. i0+WM, :] . op(B)[:, j0 .. j0+WN); contiguous (a
 * constant once inlined): op(B)'s rows are read as vectors, else gathered */
static inline void direct_outer(int m, int n, int k, __global const A_TYPE *a, ulong lda, __global const B_TYPE *b,
                                ulong ldb, int i0, int j0, vecf acc[WM][WV], const int contiguous)
{
    __global const A_TYPE *ar[WM]; /* op(A)[i0 + r, q] at ar[r] + q * sa */
    const size_t sa = GMLP_GEMM_TA ? lda : 1;
    _Pragma("unroll") for (int r = 0; r < WM; r++) ar[r] = a + (size_t)min(i0 + r, m - 1) * (GMLP_GEMM_TA ? 1 : lda);
    _Pragma("unroll") for (int r = 0; r < WM; r++)
        _Pragma("unroll") for (int s = 0; s < WV; s++) acc[r][s] = (vecf)0.0f;
    for (int q = 0; q < k; q++) {
        vecf bv[WV];
        if (contiguous) {
            _Pragma("unroll") for (int s = 0; s < WV; s++) bv[s] = LOADV_B(b + (size_t)q * ldb + j0 + s * DV);
        } else {
            float e[WN];
            _Pragma("unroll") for (int s = 0; s < WN; s++)
            {
                const size_t j = (size_t)min(j0 + s, n - 1);
                e[s] = LOAD_B(b + (GMLP_GEMM_TB ? j * ldb + q : (size_t)q * ldb + j));
            }
            _Pragma("unroll") for (int s = 0; s < WV; s++) bv[s] = VLOADF(s, e);
        }
        _Pragma("unroll") for (int r = 0; r < WM; r++)
        {
            const float av = LOAD_A(ar[r] + (size_t)q * sa);
            _Pragma("unroll") for (int s = 0; s < WV; s++) acc[r][s] += av * bv[s];
        }
    }
}
#endif

GMLP_GEMM_KERNEL
{
    const int i0 = get_group_id(1) * TM + get_local_id(1) * WM, j0 = get_group_id(0) * TN + get_local_id(0) * WN;
    const size_t p = get_global_id(2);
    if (i0 >= m || j0 >= n) /* no barrier to reach */
        return;
    a += a_off + p * a_stride;
    b += b_off + p * b_stride;
    c += c_off + p * c_stride;
    const gmlp_epi e = GMLP_EPI_OF(p);
#if DOT
    for (int r = 0; r < WM; r += DM)
        for (int s = 0; s < WN; s += 4)
            direct_dots(m, n, k, a, lda, b, ldb, beta, c, ldc, i0 + r, j0 + s);
    if (gmlp_epi_any(&e))
        for (int r = 0; r < WM; r++)
            for (int s = 0; s < WN; s += DV)
                direct_finish(c, ldc, m, n, i0 + r, j0 + s, &e);
#else
    vecf acc[WM][WV];
    if (!GMLP_GEMM_TB && j0 + WN <= n)
        direct_outer(m, n, k, a, lda, b, ldb, i0, j0, acc, 1);
    else
        direct_outer(m, n, k, a, lda, b, ldb, i0, j0, acc, 0);
    _Pragma("unroll") for (int r = 0; r < WM; r++)
        _Pragma("unroll") for (int s = 0; s < WV; s++)
            direct_put(c, ldc, m, n, i0 + r, j0 + s * DV, acc[r][s], beta, &e);
#endif
}
#else
/* v (1, 2 or 4: a constant once inlined) elements from p into d.  The
 * float path dereferences a vector pointer: p is v-aligned (host-checked). */
static inline void gmlp_ldv_float(__global const float *p, float *d, const int v)
{
    if (v == 4) {
        const float4 x = *(__global const float4 *)p;
        d[0] = x.s0, d[1] = x.s1, d[2] = x.s2, d[3] = x.s3;
    } else if (v == 2) {
        const float2 x = *(__global const float2 *)p;
        d[0] = x.s0, d[1] = x.s1;
    } else {
        d[0] = *p;
    }
}
static inline void gmlp_ldv_half(__global const half *p, float *d, const int v)
{
    if (v == 4) {
        const float4 x = vload_half4(0, p);
        d[0] = x.s0, d[1] = x.s1, d[2] = x.s2, d[3] = x.s3;
    } else if (v == 2) {
        const float2 x = vload_half2(0, p);
        d[0] = x.s0, d[1] = x.s1;
    } else {
        d[0] = vload_half(0, p);
    }
}
static inline float gmlp_ld1_float(__global const float *p)
{
    return *p;
}
static inline float gmlp_ld1_half(__global const half *p)
{
    return vload_half(0, p);
}
/* v floats of local memory at p (v-aligned: the arrays are 16-byte aligned) into d */
static inline void gmlp_ldl(__local const float *p, float *d, const int v)
{
    if (v == 4) {
        const float4 x = *(__local const float4 *)p;
        d[0] = x.s0, d[1] = x.s1, d[2] = x.s2, d[3] = x.s3;
    } else if (v == 2) {
        const float2 x = *(__local const float2 *)p;
        d[0] = x.s0, d[1] = x.s1;
    } else {
        d[0] = *p;
    }
}

/* An operand's staging: NAME_fetch reads this work-item's share of one
 * TK x W slice of op(X) (W = TM or TN; the matrix dim wide, k deep, stored
 * contiguously along k if CONTIG_K) into registers r, NAME_stash writes them
 * into the local slice (TK rows of W + 4: the pad spreads a contiguous-k
 * operand's transposing stores over the banks and keeps rows 16-byte
 * aligned).  V: the vector width, VW where it divides the contiguous extent. */
#define GMLP_STAGE(NAME, TYPE, W, CONTIG_K)                                                                   \
    enum { NAME##_V = (CONTIG_K ? TK : W) % GMLP_GEMM_VW ? 1 : GMLP_GEMM_VW, NAME##_LD = W + 4,             \
           NAME##_VECS = W * TK / NAME##_V, NAME##_PER = (NAME##_VECS + NT - 1) / NT };                     \
    static inline void NAME##_fetch(__global const TYPE *p, ulong ld, int base, int dim, int q0, int k, int t, \
                                    float *r)                                                                 \
    {                                                                                                         \
        GMLP_UNROLL for (int l = 0; l < NAME##_PER; l++)                                               \
        {                                                                                                     \
            const int e = t + l * NT;                                                                         \
            if (NAME##_VECS % NT == 0 || e < NAME##_VECS) {                                                   \
                const int w = CONTIG_K ? e / (TK / NAME##_V) : e % (W / NAME##_V) * NAME##_V;                 \
                const int q = CONTIG_K ? e % (TK / NAME##_V) * NAME##_V : e / (W / NAME##_V);                 \
                const int gw = base + w, gq = q0 + q;                                                         \
                __global const TYPE *src = p + (CONTIG_K ? (size_t)gw * ld + gq : (size_t)gq * ld + gw);      \
                if (CONTIG_K ? gw < dim && gq + NAME##_V <= k : gq < k && gw + NAME##_V <= dim) {             \
                    gmlp_ldv_##TYPE(src, r + l * NAME##_V, NAME##_V);                                         \
                } else {                                                                                      \
                    GMLP_UNROLL for (int v = 0; v < NAME##_V; v++) r[l * NAME##_V + v] =                \
                        (CONTIG_K ? gw < dim && gq + v < k : gq < k && gw + v < dim) ? gmlp_ld1_##TYPE(src + v) \
                                                                                     : 0.0f;                  \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
    }                                                                                                         \
    static inline void NAME##_stash(__local float *lds, const float *r, int t)                               \
    {                                                                                                         \
        GMLP_UNROLL for (int l = 0; l < NAME##_PER; l++)                                               \
        {                                                                                                     \
            const int e = t + l * NT;                                                                         \
            if (NAME##_VECS % NT == 0 || e < NAME##_VECS) {                                                   \
                const int w = CONTIG_K ? e / (TK / NAME##_V) : e % (W / NAME##_V) * NAME##_V;                 \
                const int q = CONTIG_K ? e % (TK / NAME##_V) * NAME##_V : e / (W / NAME##_V);                 \
                GMLP_UNROLL for (int v = 0; v < NAME##_V; v++)                                         \
                    lds[CONTIG_K ? (q + v) * NAME##_LD + w : q * NAME##_LD + w + v] = r[l * NAME##_V + v];    \
            }                                                                                                 \
        }                                                                                                     \
    }
#define GMLP_STAGE_OF(NAME, TYPE, W, CONTIG_K) GMLP_STAGE(NAME, TYPE, W, CONTIG_K) /* TYPE expanded first */
GMLP_STAGE_OF(stage_a, A_TYPE, TM, !GMLP_GEMM_TA)
GMLP_STAGE_OF(stage_b, B_TYPE, TN, GMLP_GEMM_TB)

/* Blocks of more than 16 outputs per work-item store the accumulators (with
 * beta * C) first and apply the epilogue in a second sweep: with the
 * epilogue in registers the 8 x 8 blocks spilled 2 KiB per thread on Intel
 * Gen12LP (tgllp, ocloc; forcing SIMD8 did not help). */
#define EPILOGUE_SWEEP (WM * WN > 16)

GMLP_GEMM_KERNEL
{
    const int x = get_local_id(0), y = get_local_id(1);
    const int i0 = get_group_id(1) * TM, j0 = get_group_id(0) * TN;
    const size_t p = get_global_id(2);
    a += a_off + p * a_stride;
    b += b_off + p * b_stride;
    c += c_off + p * c_stride;
    const gmlp_epi e = GMLP_EPI_OF(p);

    float acc[WM][WN];
GMLP_UNROLL
    for (int r = 0; r < WM; r++)
GMLP_UNROLL
        for (int s = 0; s < WN; s++)
            acc[r][s] = 0.0f;

    /* 16-byte aligned for gmlp_ldl's float4 reads: a float array is only
     * 4-aligned by the language, and NVIDIA places it so (its PTX: .shared
     * .align 4); every tiled variant faulted on an H100 (misaligned shared
     * address: CL_OUT_OF_RESOURCES at the next read), 2026-11-24 */
    __local float as[2 * TK * stage_a_LD] __attribute__((aligned(16)));
    __local float bs[2 * TK * stage_b_LD] __attribute__((aligned(16)));
    const int t = y * RX + x;
    float pa[stage_a_PER * stage_a_V], pb[stage_b_PER * stage_b_V];
    const int slices = (k + TK - 1) / TK;
    if (slices > 0) {
        stage_a_fetch(a, lda, i0, m, 0, k, t, pa);
        stage_b_fetch(b, ldb, j0, n, 0, k, t, pb);
        stage_a_stash(as, pa, t);
        stage_b_stash(bs, pb, t);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int sl = 0; sl < slices; sl++) {
        const int cur = sl & 1, more = sl + 1 < slices;
        if (more) { /* the next slice's global loads, in flight while this one is multiplied */
            stage_a_fetch(a, lda, i0, m, (sl + 1) * TK, k, t, pa);
            stage_b_fetch(b, ldb, j0, n, (sl + 1) * TK, k, t, pb);
        }
        __local const float *la = as + cur * TK * stage_a_LD, *lb = bs + cur * TK * stage_b_LD;
GMLP_UNROLL
        for (int q = 0; q < TK; q++) {
            float av[WM], bv[WN];
GMLP_UNROLL
            for (int r = 0; r < WM; r += LVM)
                gmlp_ldl(la + q * stage_a_LD + OWN_ROW(y, r), av + r, LVM);
GMLP_UNROLL
            for (int s = 0; s < WN; s += LVN)
                gmlp_ldl(lb + q * stage_b_LD + OWN_COL(x, s), bv + s, LVN);
GMLP_UNROLL
            for (int r = 0; r < WM; r++)
GMLP_UNROLL
                for (int s = 0; s < WN; s++)
                    acc[r][s] += av[r] * bv[s]; /* contracted to an FMA where the device has one */
        }
        /* the other buffer's last readers passed the previous barrier */
        if (more) {
            stage_a_stash(as + (cur ^ 1) * TK * stage_a_LD, pa, t);
            stage_b_stash(bs + (cur ^ 1) * TK * stage_b_LD, pb, t);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

GMLP_UNROLL
    for (int r = 0; r < WM; r++) {
        const int gi = i0 + OWN_ROW(y, r);
GMLP_UNROLL
        for (int s = 0; s < WN; s++) {
            const int gj = j0 + OWN_COL(x, s);
            if (gi < m && gj < n) {
                __global float *cv = c + (size_t)gi * ldc + gj;
                const float v = beta == 0.0f ? acc[r][s] : acc[r][s] + beta * *cv;
                *cv = EPILOGUE_SWEEP ? v : gmlp_epilogue(v, gi, gj, &e);
            }
        }
    }
#if EPILOGUE_SWEEP
    /* the epilogue as a second sweep over this work-item's outputs, once the
     * accumulators are dead (a loop not unrolled: GELU 64 times over spilled) */
    if (!gmlp_epi_any(&e))
        return;
    for (int r = 0; r < WM; r++)
        for (int s = 0; s < WN; s++) {
            const int gi = i0 + OWN_ROW(y, r), gj = j0 + OWN_COL(x, s);
            if (gi < m && gj < n) {
                __global float *cv = c + (size_t)gi * ldc + gj;
                *cv = gmlp_epilogue(*cv, gi, gj, &e);
            }
        }
#endif
}
#endif
