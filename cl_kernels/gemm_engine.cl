/* The skeleton of the Intel and AMD matrix-engine GEMMs (a part: gemm_xmx.cl
 * and gemm_mfma.cl include it after gemm_common.cl, whose ABI and semantics
 * it keeps).  The includer describes its instruction first:
 *   ENG_SG            lanes of a sub-group (Intel) or wave (AMD): the group's
 *                     work-items t = y * RX + x, ENG_SG consecutive ones each,
 *                     unless GMLP_ENG_SG_ID and GMLP_ENG_LANE say otherwise
 *   ENG_M, ENG_N      the instruction's output tile, ENG_CE floats per lane
 *   ENG_KW            its depth in 32-bit words of k, ENG_PK elements a word
 *   ENG_AW, ENG_BW    words of a lane's A and B fragments
 *   ENG_EMULATE       whether the instruction is emulated, with ENG_EMU
 *                     words of local scratch per sub-group
 *   GMLP_ENG_ATTR, GMLP_ENG_NAME  the kernel's extra attributes and its name;
 * and after it the hooks declared below.
 * The sub-groups tile the TM x TN block SG_M x SG_N (GMLP_ENG_SG_M), each a
 * WTM x WTN tile of instruction tiles.  Per TK-deep slice the group stages
 * op(A) and op(B) in local memory as words in the instruction's operand
 * format, rounded as precision.cl rounds them (so results equal the portable
 * variants' within accumulation order), k-major with rows of W + 1 words:
 * the odd stride spreads both the staging stores and the lanes' fragment
 * reads over the banks.  Double-buffered, one barrier per slice, as
 * gemm_tiled.cl.  Edges are zero-padded on load and masked on store: any m,
 * n, k.  Loads are scalar, coalesced across neighbouring work-items (VW is
 * accepted and unused).  The staging: gmlp_eng_fetch and gmlp_eng_stash,
 * below. */

#ifndef GMLP_ENG_SG_ID
#define GMLP_ENG_SG_ID (t / ENG_SG)
#define GMLP_ENG_LANE (t % ENG_SG)
#endif
#define TKW (TK / ENG_PK)
#define NSG (NT / ENG_SG)
#ifndef GMLP_ENG_SG_M
#define GMLP_ENG_SG_M (NSG >= 2 ? 2 : 1)
#endif
#define SG_M GMLP_ENG_SG_M
#define SG_N (NSG / SG_M)
#define WTM (TM / SG_M)
#define WTN (TN / SG_N)
#define MT (WTM / ENG_M) /* instruction tiles per sub-group along m */
#define NTL (WTN / ENG_N) /* and along n */
#if NT % ENG_SG || NSG % SG_M || TM % (ENG_M * SG_M) || TN % (ENG_N * SG_N) || TK % (ENG_PK * ENG_KW)
#error "the tiling does not split into sub-groups of the instruction's tiles and k-steps"
#endif
#if GMLP_GEMM_TA
#error "the matrix-engine GEMMs take op(A) = A only"
#endif

/* float x, already rounded to the mode's format, as the instruction's
 * operand bits: fp32 / tf32 its own bits, else a 16-bit value (exact: the
 * rounding left nothing to round; a NaN made quiet, so that it stays one) */
static inline uint gmlp_eng_bits(float x)
{
    if (ENG_PK == 1)
        return as_uint(x);
    if (GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_BF16)
        return isnan(x) ? (as_uint(x) >> 16) | 0x40u : as_uint(x) >> 16;
    ushort h;
    vstore_half(x, 0, (__private half *)&h);
    return h;
}
/* the inverse, for the emulations (local scratch or sub-group shuffles): a 16-bit operand's value */
static inline float gmlp_eng_value16(uint h)
{
    if (GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_BF16)
        return as_float(h << 16);
    const ushort s = (ushort)h;
    return vload_half(0, (__private const half *)&s);
}

/* The staging: gmlp_eng_fetch reads this work-item's words of one TK x W
 * slice of op(X) (operand op: gemm_common.cl's GMLP_STAGE_*; stored
 * contiguously along k, neighbouring work-items take neighbouring words
 * along k, else along the W) into registers wd, each element through the
 * hook gmlp_stage_element; gmlp_eng_stash writes them into the local slice. */
#define ENG_STAGE_LD(op) (GMLP_STAGE_W(op) + 1)
#define ENG_STAGE_SIZE(op) (TKW * ENG_STAGE_LD(op))
#define ENG_STAGE_WORDS(op) (GMLP_STAGE_W(op) * TKW)
#define ENG_STAGE_PER(op) ((ENG_STAGE_WORDS(op) + NT - 1) / NT)
/* whether work-item t has an l-th word, at row w of the W and word kw of k */
static inline int gmlp_eng_at(const int op, int t, int l, int *w, int *kw)
{
    const int e = t + l * NT;
    *w = GMLP_STAGE_CONTIG_K(op) ? e / TKW : e % GMLP_STAGE_W(op);
    *kw = GMLP_STAGE_CONTIG_K(op) ? e % TKW : e / GMLP_STAGE_W(op);
    return ENG_STAGE_WORDS(op) % NT == 0 || e < ENG_STAGE_WORDS(op);
}
static inline void gmlp_eng_fetch(const int op, __global const void *p, ulong ld, int base, int dim, int q0, int k,
                                  int t, uint *wd)
{
    GMLP_UNROLL for (int l = 0; l < GMLP_STAGE_MAX(ENG_STAGE_PER); l++)
    {
        int w, kw;
        if (l < ENG_STAGE_PER(op) && gmlp_eng_at(op, t, l, &w, &kw)) {
            const int gw = base + w, gq = q0 + kw * ENG_PK;
            uint word = 0;
            GMLP_UNROLL for (int j = 0; j < ENG_PK; j++)
            {
                const size_t at = GMLP_STAGE_CONTIG_K(op) ? (size_t)gw * ld + gq + j : (size_t)(gq + j) * ld + gw;
                const float f = gw < dim && gq + j < k ? gmlp_elem_get(GMLP_STAGE_STORE(op), p, at) : 0.0f;
                word |= gmlp_eng_bits(gmlp_stage_element(f, op)) << (16 * j);
            }
            wd[l] = word;
        }
    }
}
static inline void gmlp_eng_stash(const int op, __local uint *lds, const uint *wd, int t)
{
    GMLP_UNROLL for (int l = 0; l < GMLP_STAGE_MAX(ENG_STAGE_PER); l++)
    {
        int w, kw;
        if (l < ENG_STAGE_PER(op) && gmlp_eng_at(op, t, l, &w, &kw))
            lds[kw * ENG_STAGE_LD(op) + w] = wd[l];
    }
}

/* The includer's hooks: a lane's fragment of the A (B) tile at row (column)
 * r0, word kw, from the local slice (word (r, kw) at kw * ld + r); where a
 * lane's accumulator e sits in the output tile; c += a . b for the sub-group
 * (every work-item of the group calls it alike; emu: its scratch). */
static inline void gmlp_eng_a(uint *f, __local const uint *l, int ld, int r0, int kw, int lane);
static inline void gmlp_eng_b(uint *f, __local const uint *l, int ld, int c0, int kw, int lane);
static inline int gmlp_eng_c_row(int lane, int e);
static inline int gmlp_eng_c_col(int lane, int e);
static inline void gmlp_eng_mma(float *c, const uint *a, const uint *b, int lane, __local uint *emu);

/* More than 16 outputs per lane: the accumulators (with beta * C) are
 * stored first and the epilogue applied in a second sweep, as gemm_tiled.cl
 * does (an inlined GELU per output spilled there; so a 16-bit C, rounded
 * once after the epilogue, takes smaller blocks: gmlp_gemm_tiling_stores). */
#define EPILOGUE_SWEEP (MT * NTL * ENG_CE > 16)
#if EPILOGUE_SWEEP && GMLP_GEMM_C_16
#error "gemm_engine.cl: a 16-bit C needs the epilogue in registers: at most 16 outputs a lane"
#endif

GMLP_ENG_ATTR GMLP_GEMM_KERNEL(GMLP_ENG_NAME)
{
    const int t = get_local_id(1) * RX + get_local_id(0), sg = GMLP_ENG_SG_ID, lane = GMLP_ENG_LANE;
    const int wm0 = sg / SG_N * WTM, wn0 = sg % SG_N * WTN;
    const int i0 = get_group_id(1) * TM, j0 = get_group_id(0) * TN;
    const size_t p = get_global_id(2);
    a += a_off + p * a_stride;
    b += b_off + p * b_stride;
    c += c_off + p * c_stride;
    const gmlp_epi e = GMLP_GEMM_EPI_OF(p);

    float acc[MT][NTL][ENG_CE];
    GMLP_UNROLL for (int i = 0; i < MT; i++)
        GMLP_UNROLL for (int j = 0; j < NTL; j++)
            GMLP_UNROLL for (int r = 0; r < ENG_CE; r++) acc[i][j][r] = 0.0f;

    __local uint as[2 * ENG_STAGE_SIZE(0)], bs[2 * ENG_STAGE_SIZE(1)];
#if ENG_EMULATE
    __local uint emu_all[NSG * ENG_EMU];
    __local uint *emu = emu_all + sg * ENG_EMU;
#else
    __local uint *emu = 0;
#endif
    uint pa[ENG_STAGE_PER(0)], pb[ENG_STAGE_PER(1)];
    GMLP_SLICES_BEGIN(uint, ENG_STAGE_SIZE, gmlp_eng_fetch, gmlp_eng_stash)
        GMLP_UNROLL for (int kw = 0; kw < TKW; kw += ENG_KW)
        {
            /* B's fragments, then A's one at a time: Intel's are 8 registers each, of 128 on DG2 */
            uint fa[ENG_AW], fb[NTL][ENG_BW];
            GMLP_UNROLL for (int j = 0; j < NTL; j++) gmlp_eng_b(fb[j], lb, ENG_STAGE_LD(1), wn0 + j * ENG_N, kw, lane);
            GMLP_UNROLL for (int i = 0; i < MT; i++)
            {
                gmlp_eng_a(fa, la, ENG_STAGE_LD(0), wm0 + i * ENG_M, kw, lane);
                GMLP_UNROLL for (int j = 0; j < NTL; j++) gmlp_eng_mma(acc[i][j], fa, fb[j], lane, emu);
            }
        }
    GMLP_SLICES_END(ENG_STAGE_SIZE, gmlp_eng_stash)

    GMLP_UNROLL for (int i = 0; i < MT; i++)
        GMLP_UNROLL for (int j = 0; j < NTL; j++)
            GMLP_UNROLL for (int r = 0; r < ENG_CE; r++)
    {
        const int gi = i0 + wm0 + i * ENG_M + gmlp_eng_c_row(lane, r);
        const int gj = j0 + wn0 + j * ENG_N + gmlp_eng_c_col(lane, r);
        if (gi < m && gj < n) {
            __global C_TYPE *cv = c + (size_t)gi * ldc + gj;
            const float v = beta == 0.0f ? acc[i][j][r] : acc[i][j][r] + beta * gmlp_c_get(cv);
            gmlp_c_put(cv, EPILOGUE_SWEEP ? v : gmlp_epilogue(v, gi, gj, &e));
        }
    }
#if EPILOGUE_SWEEP
    /* a loop not unrolled, once the accumulators are dead */
    if (!gmlp_epi_any(&e))
        return;
    for (int i = 0; i < MT; i++)
        for (int j = 0; j < NTL; j++)
            for (int r = 0; r < ENG_CE; r++) {
                const int gi = i0 + wm0 + i * ENG_M + gmlp_eng_c_row(lane, r);
                const int gj = j0 + wn0 + j * ENG_N + gmlp_eng_c_col(lane, r);
                if (gi < m && gj < n) {
                    __global C_TYPE *cv = c + (size_t)gi * ldc + gj;
                    gmlp_c_put(cv, gmlp_epilogue(gmlp_c_get(cv), gi, gj, &e));
                }
            }
#endif
}
