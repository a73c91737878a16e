/* The tiled GEMM (what it shares with the direct one: gemm_common.cl).  Per
 * slice the group stages op(A) (TK x TM) and op(B) (TK x TN) in local memory
 * as float, double-buffered: while it multiplies out slice s from one buffer,
 * each work-item has already fetched its share of slice s+1 into registers,
 * which it stores into the other buffer afterwards; one barrier per slice.
 * Loads walk memory contiguously whichever way an operand is transposed, VW
 * elements at a time where the host checked that offsets, leading dimensions
 * and strides are multiples of VW (else it builds VW 1); a vector that
 * crosses the matrix's edge is loaded element by element.  Work-item (x, y)
 * owns rows and columns in runs of 4 (OWN_ROW / OWN_COL), so that its reads
 * of local memory are float4 and neighbours' runs neighbour.  Edges are
 * zero-padded on load and masked on store: any m, n, k.  Large blocks apply
 * the epilogue in a second sweep (EPILOGUE_SWEEP).  The staging:
 * gmlp_tiled_fetch and gmlp_tiled_stash, below.
 * It has the fused LayerNorm's halves (gemm_common.cl) as the direct kernel
 * has them: a prologue that normalises op(A)'s rows (NORM_A) or op(B)'s
 * (NORM_B) as they are fetched, by (mean, rstd) that the group merges once
 * into local memory (its TM rows of A; all k rows of B, at most
 * GMLP_NORM_B_ROWS: lib/ops refuses deeper products), and the row
 * statistics of what it stored. */
#define GMLP_GEMM_FUSES 1
#include "gemm_common.cl"
#define NORM_OP (NORM_B ? 1 : 0) /* the operand the prologue normalises */
#define NORM_ROWS (NORM_A ? TM : NORM_B ? GMLP_NORM_B_ROWS : 1)
#if NORM_A && GMLP_GEMM_TA || NORM_B && GMLP_GEMM_TB
#error "gemm_tiled.cl: the prologue normalises an operand's rows as stored: not transposed"
#endif

/* The prologue's weight and bias per element along the normalised rows, and
 * the rows' (mean, rstd) in local memory, from row nr0 of the operand */
typedef struct tiled_pro {
    __global const float *w, *b;
    __local const float2 *nr;
    int nr0;
} tiled_pro;

/* v (1, 2 or 4: a constant once inlined) floats from p into d through a
 * vector pointer: p is v-aligned (global memory: host-checked; local: the
 * arrays are 16-byte aligned). */
#define GMLP_LDV_DEFINE(name, space)                                                                            \
    static inline void name(space const float *p, float *d, const int v)                                        \
    {                                                                                                            \
        if (v == 4) {                                                                                            \
            const float4 x = *(space const float4 *)p;                                                           \
            d[0] = x.s0, d[1] = x.s1, d[2] = x.s2, d[3] = x.s3;                                                  \
        } else if (v == 2) {                                                                                     \
            const float2 x = *(space const float2 *)p;                                                           \
            d[0] = x.s0, d[1] = x.s1;                                                                            \
        } else {                                                                                                 \
            d[0] = *p;                                                                                           \
        }                                                                                                        \
    }
GMLP_LDV_DEFINE(gmlp_ldv_float, __global)
GMLP_LDV_DEFINE(gmlp_ldl, __local)
/* the same from half storage (vload_half: no alignment needed) */
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
/* and from bfloat16 storage (vloadn of the bits: no alignment beyond 2 bytes) */
static inline void gmlp_ldv_bf16(__global const bf16 *p, float *d, const int v)
{
    if (v == 4) {
        const uint4 x = convert_uint4(vload4(0, p)) << 16;
        d[0] = as_float(x.s0), d[1] = as_float(x.s1), d[2] = as_float(x.s2), d[3] = as_float(x.s3);
    } else if (v == 2) {
        const uint2 x = convert_uint2(vload2(0, p)) << 16;
        d[0] = as_float(x.s0), d[1] = as_float(x.s1);
    } else {
        d[0] = gmlp_bf16_value(*p);
    }
}
/* v of operand op's elements from p into d (gmlp_ldv_*) */
static inline void gmlp_tiled_ldv(const int op, __global const void *p, float *d, const int v)
{
    if (GMLP_STAGE_STORE(op) == GMLP_STORE_HALF)
        gmlp_ldv_half(p, d, v);
    else if (GMLP_STAGE_STORE(op) == GMLP_STORE_BF16)
        gmlp_ldv_bf16(p, d, v);
    else
        gmlp_ldv_float(p, d, v);
}

/* The staging: gmlp_tiled_fetch reads this work-item's share of one TK x W
 * slice of op(X) (operand op: gemm_common.cl's GMLP_STAGE_*) into
 * registers r, each element through the hook gmlp_stage_element;
 * gmlp_tiled_stash writes them into the local slice (TK rows of W + 4: the
 * pad spreads a contiguous-k operand's transposing stores over the banks
 * and keeps rows 16-byte aligned). */
#define TILED_LD(op) (GMLP_STAGE_W(op) + 4)
#define TILED_SIZE(op) (TK * TILED_LD(op))
#define TILED_VECS(op) (GMLP_STAGE_W(op) * TK / GMLP_STAGE_V(op))
#define TILED_PER(op) ((TILED_VECS(op) + NT - 1) / NT)
/* The loops over an operand's vectors and their elements run to the larger
 * operand's count, skipping past op's (GMLP_STAGE_MAX): trip counts that
 * do not depend on op unroll before the functions are inlined, and the
 * registers r stay registers (with the elements' loop to op's width, the
 * FP16 128 x 128 x 2 tile kept them in 1 KiB of scratch a thread on Intel
 * Gen12LP, ocloc). */
#define VMAX GMLP_STAGE_MAX(GMLP_STAGE_V)
/* whether work-item t has an l-th vector, at column w of row q of the slice */
static inline int gmlp_tiled_at(const int op, int t, int l, int *w, int *q)
{
    const int e = t + l * NT, v = GMLP_STAGE_V(op);
    *w = GMLP_STAGE_CONTIG_K(op) ? e / (TK / v) : e % (GMLP_STAGE_W(op) / v) * v;
    *q = GMLP_STAGE_CONTIG_K(op) ? e % (TK / v) * v : e / (GMLP_STAGE_W(op) / v);
    return TILED_VECS(op) % NT == 0 || e < TILED_VECS(op);
}
static inline void gmlp_tiled_fetch(const int op, __global const void *p, ulong ld, int base, int dim, int q0, int k,
                                    int t, float *r, const tiled_pro *pro)
{
    const int normed = GMLP_GEMM_PROLOGUE != GMLP_GEMM_PROLOGUE_NONE && op == NORM_OP;
    const int contig = GMLP_STAGE_CONTIG_K(op), nv = GMLP_STAGE_V(op);
    GMLP_UNROLL for (int l = 0; l < GMLP_STAGE_MAX(TILED_PER); l++)
    {
        int w, q;
        if (l < TILED_PER(op) && gmlp_tiled_at(op, t, l, &w, &q)) {
            /* the vector's first element: row gr, column gc of the stored matrix */
            const int gw = base + w, gq = q0 + q, gr = contig ? gw : gq, gc = contig ? gq : gw;
            const int rows = contig ? dim : k, cols = contig ? k : dim;
            __global const void *src = gmlp_stage_addr(GMLP_STAGE_STORE(op), p, (size_t)gr * ld + gc);
            if (gr < rows && gc + nv <= cols) {
                gmlp_tiled_ldv(op, src, r + l * nv, nv);
            } else {
                GMLP_UNROLL for (int v = 0; v < VMAX; v++) if (v < nv) r[l * nv + v] =
                    gr < rows && gc + v < cols ? gmlp_elem_get(GMLP_STAGE_STORE(op), src, v) : 0.0f;
            }
            /* the prologue: the stored row gr, its element gc + v (the padding stays 0) */
            GMLP_UNROLL for (int v = 0; v < VMAX; v++) if (normed && v < nv && gr < rows && gc + v < cols)
            {
                const float2 s = pro->nr[gr - pro->nr0];
                r[l * nv + v] = (r[l * nv + v] - s.x) * s.y * pro->w[gc + v] + pro->b[gc + v];
            }
            GMLP_UNROLL for (int v = 0; v < VMAX; v++) if (v < nv) r[l * nv + v] =
                gmlp_stage_element(r[l * nv + v], op);
        }
    }
}
static inline void gmlp_tiled_stash(const int op, __local float *lds, const float *r, int t)
{
    const int nv = GMLP_STAGE_V(op);
    GMLP_UNROLL for (int l = 0; l < GMLP_STAGE_MAX(TILED_PER); l++)
    {
        int w, q;
        if (l < TILED_PER(op) && gmlp_tiled_at(op, t, l, &w, &q)) {
            GMLP_UNROLL for (int v = 0; v < VMAX; v++) if (v < nv)
                lds[GMLP_STAGE_CONTIG_K(op) ? (q + v) * TILED_LD(op) + w : q * TILED_LD(op) + w + v] = r[l * nv + v];
        }
    }
}

/* Blocks of more than 16 outputs per work-item store the accumulators (with
 * beta * C) first and apply the epilogue in a second sweep: with the
 * epilogue in registers the 8 x 8 blocks spilled 2 KiB per thread on Intel
 * Gen12LP (tgllp, ocloc; forcing SIMD8 did not help).  A 16-bit C, which
 * holds the value rounded once, after the epilogue, takes smaller blocks
 * (gmlp_gemm_tiling_stores). */
#define EPILOGUE_SWEEP (WM * WN > 16)
#if EPILOGUE_SWEEP && GMLP_GEMM_C_16
#error "gemm_tiled.cl: a 16-bit C needs the epilogue in registers: at most 16 outputs a work-item"
#endif

/* The row statistics (gemm_common.cl) of this work-item's outputs in C's
 * rows (its part: get_global_id(0) of get_global_size(0)), from column col0
 * on: two passes over the values as stored. */
static inline void tiled_stats(__global const C_TYPE *c, ulong ldc, int m, int n, size_t p, int i0, int j0, int x,
                               int y, int col0, __global float *stats)
{
    const size_t part = get_global_id(0), parts = get_global_size(0);
    for (int r = 0; r < WM; r++) {
        const int gi = i0 + OWN_ROW(y, r);
        if (gi >= m)
            continue;
        __global const C_TYPE *row = c + (size_t)gi * ldc;
        float sum = 0.0f, m2 = 0.0f;
        int count = 0;
        for (int s = 0; s < WN; s++) {
            const int gj = j0 + OWN_COL(x, s);
            if (gj >= col0 && gj < n)
                sum += gmlp_c_get(row + gj), count++;
        }
        const float mean = count ? sum / (float)count : 0.0f;
        for (int s = 0; s < WN; s++) {
            const int gj = j0 + OWN_COL(x, s);
            if (gj >= col0 && gj < n) {
                const float d = gmlp_c_get(row + gj) - mean;
                m2 += d * d;
            }
        }
        vstore3((float3)((float)count, mean, m2), (p * (size_t)m + (size_t)gi) * parts + part, stats);
    }
}

/* the staging of the k loop, the prologue's state in scope */
#define TILED_FETCH(op, p, ld, base, dim, q0, k, t, r) gmlp_tiled_fetch(op, p, ld, base, dim, q0, k, t, r, &pro)

GMLP_GEMM_KERNEL(gmlp_gemm)
{
    const int x = get_local_id(0), y = get_local_id(1);
    const int i0 = get_group_id(1) * TM, j0 = get_group_id(0) * TN;
    const size_t p = get_global_id(2);
    a += a_off + p * a_stride;
    b += b_off + p * b_stride;
    c += c_off + p * c_stride;
    const gmlp_epi e = GMLP_GEMM_EPI_OF(p);

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
    __local float as[2 * TILED_SIZE(0)] __attribute__((aligned(16)));
    __local float bs[2 * TILED_SIZE(1)] __attribute__((aligned(16)));
    const int t = y * RX + x;
    float pa[TILED_PER(0) * GMLP_STAGE_V(0)], pb[TILED_PER(1) * GMLP_STAGE_V(1)];
#if GMLP_GEMM_PROLOGUE != GMLP_GEMM_PROLOGUE_NONE
    /* the prologue's rows' (mean, rstd), merged once a group: A's TM from i0, op(B)'s k */
    __local float2 nr[NORM_ROWS] __attribute__((aligned(16))); /* the PTX checker, as as and bs below */
    const tiled_pro pro = {pro_w, pro_b, nr, NORM_A ? i0 : 0};
    const int nrows = NORM_A ? min(TM, m - i0) : k;
    const size_t r0 = NORM_A ? p * (size_t)m + (size_t)i0 : p * (size_t)k;
    for (int r = t; r < nrows; r += NT)
        nr[r] = gmlp_stats_norm(pro_stats, pro_parts, r0 + (size_t)r, pro_eps);
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    const tiled_pro pro = {0};
#endif
    GMLP_SLICES_BEGIN(float, TILED_SIZE, TILED_FETCH, gmlp_tiled_stash)
GMLP_UNROLL
        for (int q = 0; q < TK; q++) {
            float av[WM], bv[WN];
GMLP_UNROLL
            for (int r = 0; r < WM; r += LVM)
                gmlp_ldl(la + q * TILED_LD(0) + OWN_ROW(y, r), av + r, LVM);
GMLP_UNROLL
            for (int s = 0; s < WN; s += LVN)
                gmlp_ldl(lb + q * TILED_LD(1) + OWN_COL(x, s), bv + s, LVN);
GMLP_UNROLL
            for (int r = 0; r < WM; r++)
GMLP_UNROLL
                for (int s = 0; s < WN; s++)
                    acc[r][s] += av[r] * bv[s]; /* contracted to an FMA where the device has one */
        }
    GMLP_SLICES_END(TILED_SIZE, gmlp_tiled_stash)

GMLP_UNROLL
    for (int r = 0; r < WM; r++) {
        const int gi = i0 + OWN_ROW(y, r);
GMLP_UNROLL
        for (int s = 0; s < WN; s++) {
            const int gj = j0 + OWN_COL(x, s);
            if (gi < m && gj < n) {
                __global C_TYPE *cv = c + (size_t)gi * ldc + gj;
                const float v = beta == 0.0f ? acc[r][s] : acc[r][s] + beta * gmlp_c_get(cv);
                gmlp_c_put(cv, EPILOGUE_SWEEP ? v : gmlp_epilogue(v, gi, gj, &e));
            }
        }
    }
#if EPILOGUE_SWEEP
    /* the epilogue as a second sweep over this work-item's outputs, once the
     * accumulators are dead (a loop not unrolled: GELU 64 times over spilled) */
    if (gmlp_epi_any(&e))
        for (int r = 0; r < WM; r++)
            for (int s = 0; s < WN; s++) {
                const int gi = i0 + OWN_ROW(y, r), gj = j0 + OWN_COL(x, s);
                if (gi < m && gj < n) {
                    __global C_TYPE *cv = c + (size_t)gi * ldc + gj;
                    gmlp_c_put(cv, gmlp_epilogue(gmlp_c_get(cv), gi, gj, &e));
                }
            }
#endif
    if (stats)
        tiled_stats(c, ldc, m, n, p, i0, j0, x, y, stats_col0, stats);
}
