/* C[p] = epilogue(op(A[p]) . op(B[p]) + beta * C[p]) for batch index p, row-major, with
 * A and/or B optionally stored as IEEE half.  Half is storage only: vload_half
 * converts to float without cl_khr_fp16, and all arithmetic is fp32 (scalar
 * loads: vloada_half would need alignment that arbitrary offsets and leading
 * dimensions do not give).
 *
 * Work-group: (TN / WN) x (TM / WM) work-items compute a TM x TN tile of C,
 * each a WM x WN block in registers.  Per TK-deep slice of the product the
 * group stages A (TM x TK) and B (TK x TN) in local memory as float; loads
 * walk memory contiguously whichever way an operand is transposed.  Work-item
 * (x, y) owns rows y + r * (TM / WM) and columns x + c * (TN / WN), so that
 * neighbours read neighbouring local words and write neighbouring C words.
 * Edges are zero-padded on load and masked on store: any m, n, k.
 *
 * Epilogue (gmlp_epilogue): a bias per column (fc layers, stem, head) or per
 * row (the token-axis matmuls) and the exact GELU (fc1), applied in a second
 * sweep over each work-item's outputs so that neither needs a pass of its
 * own over memory; the residual comes in as C with beta 1.
 * gmlp_epilogue_only runs the same after a CLBlast GEMM. */
#ifndef GMLP_GEMM_A_HALF
#define GMLP_GEMM_A_HALF 0
#endif
#ifndef GMLP_GEMM_B_HALF
#define GMLP_GEMM_B_HALF 0
#endif
/* tile sizes: the host (lib/ops/gemm_kernel.c) picks them from the device's
 * limits and the product's size; these defaults are its small tiling */
#ifndef GMLP_GEMM_TM
#define GMLP_GEMM_TM 64
#endif
#ifndef GMLP_GEMM_TN
#define GMLP_GEMM_TN 64
#endif
#ifndef GMLP_GEMM_TK
#define GMLP_GEMM_TK 16
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

#if GMLP_GEMM_A_HALF
#define A_TYPE half
#define LOAD_A(p, i) vload_half((i), (p))
#else
#define A_TYPE float
#define LOAD_A(p, i) (p)[i]
#endif
#if GMLP_GEMM_B_HALF
#define B_TYPE half
#define LOAD_B(p, i) vload_half((i), (p))
#else
#define B_TYPE float
#define LOAD_B(p, i) (p)[i]
#endif

/* Element (i, j) of C, whose pre-epilogue value is v (bias_mode: GMLP_BIAS_*). */
static float gmlp_epilogue(float v, int i, int j, __global const float *bias, int bias_mode, int gelu)
{
    if (bias_mode == GMLP_BIAS_COLS)
        v += bias[j];
    else if (bias_mode == GMLP_BIAS_ROWS)
        v += bias[i];
    return gelu ? gmlp_gelu(v) : v;
}

/* The epilogue alone, in place on C = m x n (batch in dimension 2), for
 * products computed elsewhere (CLBlast). */
__kernel void gmlp_epilogue_only(int m, int n, __global float *c, ulong c_off, ulong ldc, ulong c_stride,
                                 __global const float *bias, int bias_mode, int gelu)
{
    const int j = get_global_id(0), i = get_global_id(1);
    const size_t at = c_off + get_global_id(2) * c_stride + (size_t)i * ldc + j;
    if (i < m && j < n)
        c[at] = gmlp_epilogue(c[at], i, j, bias, bias_mode, gelu);
}

/* Offsets, leading dimensions and batch strides count elements of the
 * operand's own type.  beta == 0 never reads C.  bias may be NULL. */
__kernel __attribute__((reqd_work_group_size(RX, RY, 1)))
void gmlp_gemm(int m, int n, int k,
               __global const A_TYPE *a, ulong a_off, ulong lda, ulong a_stride, int ta,
               __global const B_TYPE *b, ulong b_off, ulong ldb, ulong b_stride, int tb,
               float beta, __global float *c, ulong c_off, ulong ldc, ulong c_stride,
               __global const float *bias, int bias_mode, int gelu)
{
    /* +1 column: a column-wise fill of a non-transposed operand would
     * otherwise hit one local memory bank TK times */
    __local float as[TK][TM + 1];
    __local float bs[TK][TN + 1];
    const int x = get_local_id(0), y = get_local_id(1), t = y * RX + x;
    const int i0 = get_group_id(1) * TM, j0 = get_group_id(0) * TN;
    const size_t p = get_global_id(2);
    a += a_off + p * a_stride;
    b += b_off + p * b_stride;
    c += c_off + p * c_stride;

    float acc[WM][WN];
    for (int r = 0; r < WM; r++)
        for (int s = 0; s < WN; s++)
            acc[r][s] = 0.0f;

    for (int q0 = 0; q0 < k; q0 += TK) {
        for (int l = 0; l < (TM * TK + NT - 1) / NT; l++) {
            const int e = t + l * NT;
            if (e < TM * TK) {
                /* consecutive work-items take consecutive memory: along k
                 * for a plain A, along m for a transposed one */
                const int i = ta ? e % TM : e / TK, q = ta ? e / TM : e % TK;
                const int gi = i0 + i, gq = q0 + q;
                float v = 0.0f;
                if (gi < m && gq < k)
                    v = LOAD_A(a, ta ? (size_t)gq * lda + gi : (size_t)gi * lda + gq);
                as[q][i] = v;
            }
        }
        for (int l = 0; l < (TN * TK + NT - 1) / NT; l++) {
            const int e = t + l * NT;
            if (e < TN * TK) {
                const int j = tb ? e / TK : e % TN, q = tb ? e % TK : e / TN;
                const int gj = j0 + j, gq = q0 + q;
                float v = 0.0f;
                if (gj < n && gq < k)
                    v = LOAD_B(b, tb ? (size_t)gj * ldb + gq : (size_t)gq * ldb + gj);
                bs[q][j] = v;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int q = 0; q < TK; q++) {
            float av[WM], bv[WN];
            for (int r = 0; r < WM; r++)
                av[r] = as[q][y + r * RY];
            for (int s = 0; s < WN; s++)
                bv[s] = bs[q][x + s * RX];
            for (int r = 0; r < WM; r++)
                for (int s = 0; s < WN; s++)
                    acc[r][s] += av[r] * bv[s]; /* contracted to an FMA where the device has one */
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* stmt for each of this work-item's outputs inside C, with gi, gj and
     * cv (its address) in scope */
#define FOR_OWN_OUTPUTS(stmt)                                                                                 \
    for (int r = 0; r < WM; r++) {                                                                            \
        const int gi = i0 + y + r * RY;                                                                       \
        for (int s = 0; s < WN; s++) {                                                                        \
            const int gj = j0 + x + s * RX;                                                                   \
            if (gi < m && gj < n) {                                                                           \
                __global float *cv = c + (size_t)gi * ldc + gj;                                               \
                stmt;                                                                                         \
            }                                                                                                 \
        }                                                                                                     \
    }
    FOR_OWN_OUTPUTS(*cv = beta == 0.0f ? acc[r][s] : acc[r][s] + beta * *cv)
    /* the epilogue as a second sweep over this work-item's own outputs, once
     * the accumulators are dead: in the loop above, the large tiles spilled
     * on Intel Gen12LP */
    if (bias_mode == GMLP_BIAS_NONE && !gelu)
        return;
    FOR_OWN_OUTPUTS(*cv = gmlp_epilogue(*cv, gi, gj, bias, bias_mode, gelu))
}
