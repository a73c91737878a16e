/* The tensor-core GEMM for NVIDIA GPUs from sm_80 on: the tiled kernel's ABI
 * and semantics (gemm_common.cl), its products on mma.sync through inline PTX.
 * GMLP_GEMM_PRECISION picks the instruction: TF32 mma.m16n8k8 .tf32, FP16 and
 * BF16 mma.m16n8k16 .f16 / .bf16, all accumulating in fp32.
 *
 * Work-item t = y * RX + x is lane t % 32 of warp t / 32 (NVIDIA numbers a
 * group's threads x fastest); the warps tile the TM x TN block WARPS_M x
 * WARPS_N, each a WTM x WTN tile of 16 x 8 mma tiles.  Per TK-deep slice the
 * group stages op(A) and op(B) in local memory as 32-bit words in the
 * instruction's operand format (a tf32, or a pair of 16-bit values adjacent
 * in k), double-buffered with one barrier per slice as gemm_tiled.cl: the
 * next slice's global loads are in flight into registers while this one is
 * multiplied, then rounded (precision.cl's gmlp_round, as the portable
 * variants round: gmlp_mma_word), packed and stored; no cp.async, which copies bytes
 * unchanged where the words need the rounding and packing.
 * Operands contiguous along k are stored k-contiguous ([W][TK words + 4]),
 * the others transposed ([TK words][W + 8]); either pad puts the 32 lanes'
 * fragment reads on 32 distinct banks.  Edges are zero-padded on load and
 * masked on store: any m, n, k; the epilogue runs on the accumulators.
 * That staging: gmlp_mma_stage_fetch and gmlp_mma_stage_stash, below.
 *
 * GMLP_MMA_STAGES=S (2 or more) stages the operands instead with cp.async
 * (sm_80), S slices in flight: the copies go global to local untouched
 * (float; half storage through registers) and the rounding and packing
 * move to the fragment loads, so that no register holds a slice in flight
 * and the loads' latency hides behind S - 1 slices of products, not one:
 * gmlp_mma_raw_issue and gmlp_mma_raw_word, below.  Either way each pair of
 * elements passes the hook gmlp_mma_word as it becomes an operand word.
 *
 * GMLP_MMA_LDSM=1 (16-bit formats) loads the fragments of operands stored
 * along k by ldmatrix (sm_75): one instruction gives a lane four words, an A
 * fragment or the B fragments of two n-tiles, in place of four loads of a
 * word each.  With cp.async, of operands stored as the instruction's bits
 * (bfloat16 in BF16, half in FP16): slices copied, fragments loaded,
 * nothing computed but FP16's saturation (two instructions a word).
 *
 * GMLP_MMA_SWIZZLE=1 (with cp.async) stores the slices of operands held as
 * the instruction's 16-bit bits unpadded, each 16-byte chunk of a row at
 * its index XOR the row's (CUTLASS sm80's layout: the 8 rows an ldmatrix
 * matrix reads fall on 8 distinct 16-byte bank groups), and loads their
 * fragments by ldmatrix whichever way they are stored: .trans for those
 * stored across k (NN's B, TN's A), in place of a load a 16-bit element.
 * GMLP_MMA_FRAG2=1 (with cp.async) pipelines the slice loop as CUTLASS's
 * sm80 mainloop: the fragments of k-step s + 1 (the next slice's first
 * after the last) load while step s's mma run, the next slice's copies are
 * issued at the first k-step, and a block inside m and n copies its slices
 * inside k without an edge check in a loop of its own (the edge path, the
 * last slices', in a second).
 *
 * GMLP_MMA_RASTER=R walks the blocks of C in bands of R block rows
 * (gmlp_gemm_block, gemm_common.cl).
 *
 * GMLP_GEMM_ISSUE=1 (emulated) replaces each mma by the instruction's documented
 * semantics (PTX ISA, "Matrix Fragments for mma.m16n8k8 / m16n8k16"): the
 * warp's fragments go through local memory by the documented lane layout,
 * so that a wrong fragment index gives a wrong product on any OpenCL device
 * (tests/test_gemm_mma.c). */
#include "gemm_common.cl"

#if GMLP_GEMM_ISSUE == GMLP_GEMM_ISSUE_SHUFFLES
#error "gemm_mma.cl: emulated through local memory only"
#endif

#if GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_TF32
#define PK 1 /* operand elements per 32-bit word */
#define MMA_K 8
#elif GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_FP16 || GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_BF16
#define PK 2
#define MMA_K 16
#else
#error "gemm_mma.cl: GMLP_GEMM_PRECISION must be TF32, FP16 or BF16"
#endif
#define MMA_KW 8 /* words of k per mma, for every format */
#define TKW (TK / PK)
#define WARPS (NT / 32)
#ifndef GMLP_MMA_WARPS_M
#define GMLP_MMA_WARPS_M (WARPS >= 2 ? 2 : 1)
#endif
#define WARPS_M GMLP_MMA_WARPS_M
#define WARPS_N (WARPS / WARPS_M)
#define WTM (TM / WARPS_M)
#define WTN (TN / WARPS_N)
#define MT (WTM / 16) /* mma tiles per warp along m */
#define NTL (WTN / 8) /* and along n */
#if NT % 32 || WARPS % WARPS_M || TM % (16 * WARPS_M) || TN % (8 * WARPS_N) || TK % (PK * MMA_KW)
#error "gemm_mma.cl: the tiling does not split into warps of 16 x 8 tiles and k-steps of the instruction"
#endif

#ifndef GMLP_MMA_STAGES
#define GMLP_MMA_STAGES 0
#endif
#ifndef GMLP_MMA_LDSM
#define GMLP_MMA_LDSM 0
#endif
#if GMLP_MMA_LDSM && PK != 2
#error "gemm_mma.cl: GMLP_MMA_LDSM takes the 16-bit formats"
#endif
/* Whether storage (GMLP_STORE_*) holds the instruction's operand bits,
 * so that a word is two stored elements side by side: bfloat16 in BF16
 * (rounding a bfloat16 value to bfloat16 changes nothing), half in FP16
 * once saturated (gmlp_mma_sat: half's infinities are +-65504 in the mode;
 * every other half rounds to itself). */
#define MMA_NATIVE(store)                                                                                     \
    ((store) == GMLP_STORE_BF16 ? GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_BF16                              \
                                     : (store) == GMLP_STORE_HALF && GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_FP16)
/* whether op(A) / op(B) fragments come by ldmatrix: stored along k, in the
 * instruction's bits (the register staging packs them so; cp.async's
 * slices hold them as stored, so there only native storage, up to FP16's
 * saturation: gmlp_mma_native_bits, below) */
#define LDSM_A (SWZ_A || (GMLP_MMA_LDSM && !GMLP_GEMM_TA && (!GMLP_MMA_STAGES || MMA_NATIVE(GMLP_GEMM_A))))
#define LDSM_B (SWZ_B || (GMLP_MMA_LDSM && GMLP_GEMM_TB && (!GMLP_MMA_STAGES || MMA_NATIVE(GMLP_GEMM_B))))
#define STAGES GMLP_MMA_STAGES
#if STAGES == 1 || STAGES > 4
#error "gemm_mma.cl: GMLP_MMA_STAGES is 0 (registers) or 2 to 4 (cp.async)"
#endif
#ifndef GMLP_MMA_SWIZZLE
#define GMLP_MMA_SWIZZLE 0
#endif
#ifndef GMLP_MMA_FRAG2
#define GMLP_MMA_FRAG2 0
#endif
#ifndef GMLP_MMA_WGMMA
#define GMLP_MMA_WGMMA 0
#endif
#if (GMLP_MMA_SWIZZLE || GMLP_MMA_FRAG2) && !STAGES
#error "gemm_mma.cl: GMLP_MMA_SWIZZLE and GMLP_MMA_FRAG2 take cp.async (GMLP_MMA_STAGES)"
#endif
/* whether op(A) / op(B)'s slices are swizzled (GMLP_MMA_SWIZZLE): 16-bit
 * formats, stored as the instruction's bits; their fragments by ldmatrix,
 * .trans where stored across k (TRANS_A / TRANS_B) */
#define SWZ_A (GMLP_MMA_SWIZZLE && PK == 2 && MMA_NATIVE(GMLP_GEMM_A))
#define SWZ_B (GMLP_MMA_SWIZZLE && PK == 2 && MMA_NATIVE(GMLP_GEMM_B))
#define SWZ(op) ((op) ? SWZ_B : SWZ_A)
#define TRANS_A (SWZ_A && GMLP_GEMM_TA)
#define TRANS_B (SWZ_B && !GMLP_GEMM_TB)

/* The staging, inlined however large: clang's NVPTX left the 16-bit
 * formats' fetch a call, its words on the stack (64 bytes a thread) */
#define GMLP_MMA_INLINE static inline __attribute__((always_inline))

/* The inline PTX's spelling in one place: clang's OpenCL C 1.2 knows
 * __asm__, not asm; NVIDIA's own compiler, which builds the real program,
 * takes asm, as KataGo's OpenCL tensor-core kernels (hgemm_wmma.opencl)
 * write it, with separate outputs and inputs as here.  The mma is volatile
 * (never moved into a branch: all 32 lanes must run it), conversions not. */
#ifdef __clang__
#define GMLP_ASM __asm__
#else
#define GMLP_ASM asm
#endif

/* float x, already rounded to the mode's format, as the instruction's
 * operand bits: tf32 is the float's own bits (the low 13 are zero); FP16 and
 * BF16 are exact conversions (NaN made quiet, so that it survives), FP16
 * with half's subnormals (multiples of 2^-24 below 2^-14). */
static inline uint gmlp_mma_bits(float x)
{
    const uint u = as_uint(x), s = u >> 16 & 0x8000u, a = u & 0x7fffffffu;
    if (GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_TF32)
        return u;
    if (GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_BF16)
        return isnan(x) ? s | 0x7fc0u : u >> 16;
    if (isnan(x))
        return s | 0x7e00u;
    /* normal: rebias the exponent (127 - 15), keep 10 mantissa bits; saturated, so never past 0x7bff */
    return s | (a >= 0x38800000u ? (a >> 13) - 0x1c000u : (uint)(as_float(a) * 0x1p24f));
}

/* A word of the local operand slices: element k (k even for 16-bit) and k + 1. */
static inline uint gmlp_mma_pack(float lo, float hi)
{
    return PK == 1 ? gmlp_mma_bits(lo) : gmlp_mma_bits(lo) | gmlp_mma_bits(hi) << 16;
}

/* The staging hook (gemm_common.cl's gmlp_stage_element, two elements at a
 * time): elements lo and hi of operand op, as loaded, rounded to the mode's
 * format (precision.cl's semantics) as one word (gmlp_mma_pack's); the
 * native paths (MMA_NATIVE) bypass it, valid while it only rounds.  On the
 * GPU the 16-bit formats take sm_80's cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32:
 * round to nearest even and pack in one instruction, NaN kept (FP16 clamped
 * first by min / max of sm_80 that keep NaN: saturation), in place of some
 * twenty integer operations an element, which left the staging, not the
 * tensor cores, the bound (H100, 2026-11-26). */
static inline uint gmlp_mma_word(float lo, float hi, int op)
{
#if GMLP_GEMM_ISSUE || PK == 1
    return gmlp_mma_pack(gmlp_stage_element(lo, op), gmlp_stage_element(hi, op));
#else
    uint w; /* hi into the upper half; gmlp_stage_element's rounding, in the conversion */
    (void)op;
    if (GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_FP16) /* clamped to +-65504 by min / max that keep NaN */
        GMLP_ASM("{\n\t.reg .f32 l, h;\n\t"
                "max.NaN.f32 l, %2, 0fC77FE000;\n\tmin.NaN.f32 l, l, 0f477FE000;\n\t"
                "max.NaN.f32 h, %1, 0fC77FE000;\n\tmin.NaN.f32 h, h, 0f477FE000;\n\t"
                "cvt.rn.f16x2.f32 %0, h, l;\n\t}"
                : "=r"(w)
                : "f"(hi), "f"(lo));
    else
        GMLP_ASM("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
    return w;
#endif
}

/* The value of IEEE half bits h (exact; no cl_khr_fp16 needed). */
static inline float gmlp_mma_half_value(uint h)
{
    const uint e = h >> 10 & 0x1fu, m = h & 0x3ffu;
    const float a = e == 0    ? (float)m * 0x1p-24f /* subnormal */
                    : e == 31 ? (m ? NAN : INFINITY)
                              : as_float(((h & 0x7fffu) << 13) + 0x38000000u); /* rebias 15 to 127 */
    return as_float(as_uint(a) | (h & 0x8000u) << 16);
}

/* An operand element as fetched: a float's value, 16-bit storage's bits
 * (as_float of them: decoded at the stash, so that the fetch's loads are not
 * waited for before the slice's mma); element i from p, of storage store
 * (a constant once inlined).  Then its value. */
static inline float gmlp_mma_ld1(int store, __global const void *p, int i)
{
    if (store == GMLP_STORE_FLOAT)
        return ((__global const float *)p)[i];
    return as_float((uint)((__global const ushort *)p)[i]);
}
static inline float gmlp_mma_fetched_value(int store, float x)
{
    if (store == GMLP_STORE_FLOAT)
        return x;
    if (store == GMLP_STORE_BF16)
        return as_float(as_uint(x) << 16);
#if GMLP_GEMM_ISSUE
    return gmlp_mma_half_value(as_uint(x));
#else
    float v; /* one instruction in place of the decoding's eight or so */
    GMLP_ASM("cvt.f32.f16 %0, %1;" : "=f"(v) : "h"((ushort)as_uint(x)));
    return v;
#endif
}

/* A word of two half operands saturated at +-65504, NaN kept: on the GPU
 * sm_80's max / min of f16x2 that keep NaN, two instructions a word where
 * the decoding, clamping and rounding of each half took some fifteen. */
static inline uint gmlp_mma_sat(uint w)
{
#if GMLP_GEMM_ISSUE
    const uint lo = w & 0xffffu, hi = w >> 16;
    return ((lo & 0x7fffu) == 0x7c00u ? (lo & 0x8000u) | 0x7bffu : lo) |
           ((hi & 0x7fffu) == 0x7c00u ? (hi & 0x8000u) | 0x7bffu : hi) << 16;
#else
    uint d;
    GMLP_ASM("{\n\t.reg .b32 t;\n\tmax.NaN.f16x2 t, %1, %2;\n\tmin.NaN.f16x2 %0, t, %3;\n\t}"
             : "=r"(d)
             : "r"(w), "r"(0xfbfffbffu), "r"(0x7bff7bffu));
    return d;
#endif
}
/* A word of two stored elements of native storage (MMA_NATIVE) as the
 * instruction's operand: half saturated, bfloat16 as it is. */
static inline uint gmlp_mma_native_bits(int store, uint w)
{
    return store == GMLP_STORE_HALF ? gmlp_mma_sat(w) : w;
}

/* Element (r, c) of a row-major matrix of storage store at p: row r's
 * address, then c along it (two steps, as the kernel always computed it). */
static inline __global const void *gmlp_mma_addr(int store, __global const void *p, ulong ld, int r, int c)
{
    return gmlp_stage_addr(store, gmlp_stage_addr(store, p, (size_t)r * ld), c);
}

/* Whether the register staging holds slices in flight of storage store as
 * words of two elements as loaded (gmlp_mma_ldw_bits16): 16-bit storage in
 * the 16-bit formats (a word a pair along k there; TF32's are one element). */
#define MMA_PAIRED(store) ((store) != GMLP_STORE_FLOAT && PK == 2)
/* v (1, 2 or 4: a constant once inlined) elements from p into d as fetched,
 * through a vector pointer: p is v-aligned (host-checked); element by element
 * into d (with vstoren, PoCL's code read d back with a 16-byte aligned load
 * at an address 12 mod 16: a segfault, 2026-11-26) */
static inline void gmlp_mma_ldv_float(__global const float *p, float *d, const int v)
{
    const float4 x = v == 4 ? *(__global const float4 *)p : v == 2 ? (float4)(*(__global const float2 *)p, 0.0f, 0.0f) : (float4)(*p);
    d[0] = x.s0;
    if (v > 1)
        d[1] = x.s1;
    if (v > 2)
        d[2] = x.s2, d[3] = x.s3;
}
/* 16-bit storage's bits through a vector pointer: p is v-aligned, as for
 * floats (host-checked for every storage since bfloat16 weights; before,
 * half operands were only 2-byte aligned and loads of whole words faulted
 * on the H100, 2026-11-26). */
static inline void gmlp_mma_ldv_bits16(__global const ushort *h, float *d, const int v)
{
    const ushort4 x = v == 4   ? *(__global const ushort4 *)h
                      : v == 2 ? (ushort4)(*(__global const ushort2 *)h, 0, 0)
                               : (ushort4)(*h, 0, 0, 0);
    d[0] = as_float((uint)x.s0);
    if (v > 1)
        d[1] = as_float((uint)x.s1);
    if (v > 2)
        d[2] = as_float((uint)x.s2), d[3] = as_float((uint)x.s3);
}
/* The same of storage holding the instruction's operand bits: adjacent
 * element pairs loaded whole as words into d[0], d[2], zeros in d[1], d[3]
 * (a single element as its bits).  Along k (an operand stored so) the words
 * are those the instruction takes (the first element in the low half, as
 * memory holds them), which the stash ORs the zeros into; across k, pairs
 * along the W, whose halves the stash pairs with the next k's: either way
 * a slice in flight takes half the registers of the elements one by one. */
static inline void gmlp_mma_ldw_bits16(__global const ushort *h, float *d, const int v)
{
    if (v == 4) {
        const uint2 w = *(__global const uint2 *)h;
        d[0] = as_float(w.x), d[1] = 0.0f, d[2] = as_float(w.y), d[3] = 0.0f;
    } else if (v == 2) {
        d[0] = as_float(*(__global const uint *)h), d[1] = 0.0f;
    } else {
        d[0] = as_float((uint)*h);
    }
}
/* The same where only the first n (0 to v) lie inside the matrix, the rest
 * zero: the same words from single loads, so that the edge path holds a
 * slice in flight in no more registers than the fast path (162 registers
 * a thread before, 128 after: BF16, mma_64x64x32_4x8, bfloat16 A and B,
 * sm_90). */
static inline void gmlp_mma_ldw_part_bits16(__global const ushort *h, float *d, const int v, int n)
{
    GMLP_UNROLL for (int i = 0; i < v; i += 2)
    {
        const uint lo = i < n ? h[i] : 0u, hi = i + 1 < v && i + 1 < n ? h[i + 1] : 0u;
        d[i] = as_float(lo | hi << 16);
        if (i + 1 < v)
            d[i + 1] = 0.0f;
    }
}

#if !STAGES
/* The register staging of operand op (0: A, 1: B; gemm_common.cl's
 * GMLP_STAGE_*).  gmlp_mma_stage_fetch reads this work-item's units of one
 * TK x W slice of op(X) from global memory into floats f as fetched
 * (gmlp_mma_ld1), zero past the edges; gmlp_mma_stage_stash takes their
 * values through the hook gmlp_mma_word (rounded to the mode's format,
 * packed into words) and writes these into the local slice, where word
 * (r, kw) (row r of the W, word kw of k) is at gmlp_mma_stage_idx(op, r, kw).
 * The rounding waits for the stash, after the slice's mma: done at the
 * fetch, it would wait there for the loads.  A unit is KR x WR elements
 * (along k, along the W), RUNS runs of RL contiguous in memory (run r,
 * element c: f[r RL + c]), read V at a time (GMLP_STAGE_V): contiguous along
 * k, one run of KR >= PK elements along k; else PK runs (k, k + 1) of V along
 * the W, which pair up into V words. */
#define MMA_STAGE_KR(op) (GMLP_STAGE_CONTIG_K(op) ? (GMLP_STAGE_V(op) > PK ? GMLP_STAGE_V(op) : PK) : PK)
#define MMA_STAGE_WR(op) (GMLP_STAGE_CONTIG_K(op) ? 1 : GMLP_STAGE_V(op))
#define MMA_STAGE_RUNS(op) (GMLP_STAGE_CONTIG_K(op) ? 1 : PK)
#define MMA_STAGE_RL(op) (GMLP_STAGE_CONTIG_K(op) ? MMA_STAGE_KR(op) : GMLP_STAGE_V(op))
#define MMA_STAGE_KW(op) (MMA_STAGE_KR(op) / PK)                /* words a unit's column */
#define MMA_STAGE_ELEMS(op) (MMA_STAGE_KR(op) * MMA_STAGE_WR(op))
#define MMA_STAGE_UNITS(op) (GMLP_STAGE_W(op) * TK / MMA_STAGE_ELEMS(op))
#define MMA_STAGE_PER(op) ((MMA_STAGE_UNITS(op) + NT - 1) / NT)
#define MMA_STAGE_LD(op) (GMLP_STAGE_CONTIG_K(op) ? TKW + 4 : GMLP_STAGE_W(op) + 8)
#define MMA_STAGE_SIZE(op) ((GMLP_STAGE_CONTIG_K(op) ? GMLP_STAGE_W(op) : TKW) * MMA_STAGE_LD(op))
static inline int gmlp_mma_stage_idx(const int op, int r, int kw)
{
    return GMLP_STAGE_CONTIG_K(op) ? r * MMA_STAGE_LD(op) + kw : kw * MMA_STAGE_LD(op) + r;
}
/* whether work-item t has an l-th unit, at row w of the W and element q of k */
static inline int gmlp_mma_stage_at(const int op, int t, int l, int *w, int *q)
{
    const int e = t + l * NT, kr = MMA_STAGE_KR(op), wr = MMA_STAGE_WR(op);
    *w = GMLP_STAGE_CONTIG_K(op) ? e / (TK / kr) : e % (GMLP_STAGE_W(op) / wr) * wr;
    *q = GMLP_STAGE_CONTIG_K(op) ? e % (TK / kr) * kr : e / (GMLP_STAGE_W(op) / wr) * kr;
    return MMA_STAGE_UNITS(op) % NT == 0 || e < MMA_STAGE_UNITS(op);
}
/* checked (a constant once inlined): whether elements may lie past the edges */
GMLP_MMA_INLINE void gmlp_mma_stage_load(const int op, __global const void *p, ulong ld, int base, int dim, int q0,
                                         int k, int t, float *f, const int checked)
{
    const int store = GMLP_STAGE_STORE(op), contig = GMLP_STAGE_CONTIG_K(op), v = GMLP_STAGE_V(op);
    GMLP_UNROLL for (int l = 0; l < GMLP_STAGE_MAX(MMA_STAGE_PER); l++)
    {
        int w, q;
        if (l < MMA_STAGE_PER(op) && gmlp_mma_stage_at(op, t, l, &w, &q)) {
            GMLP_UNROLL for (int r = 0; r < GMLP_STAGE_MAX(MMA_STAGE_RUNS); r++)
                GMLP_UNROLL for (int c = 0; c < MMA_STAGE_RL(op); c += v)
            {
                if (r >= MMA_STAGE_RUNS(op))
                    continue;
                /* the vector's first element: row gr, column gc of the stored matrix */
                const int gr = contig ? base + w : q0 + q + r, gc = contig ? q0 + q + c : base + w + c;
                const int rows = contig ? dim : k, cols = contig ? k : dim;
                __global const void *src = gmlp_mma_addr(store, p, ld, gr, gc);
                float *d = f + l * MMA_STAGE_ELEMS(op) + r * MMA_STAGE_RL(op) + c;
                if (!checked || (gr < rows && gc + v <= cols)) {
                    if (MMA_PAIRED(store))
                        gmlp_mma_ldw_bits16(src, d, v);
                    else if (store == GMLP_STORE_FLOAT)
                        gmlp_mma_ldv_float(src, d, v);
                    else
                        gmlp_mma_ldv_bits16(src, d, v);
                } else if (MMA_PAIRED(store)) {
                    const int n = gr < rows ? clamp(cols - gc, 0, v) : 0;
                    gmlp_mma_ldw_part_bits16(src, d, v, n);
                } else {
                    GMLP_UNROLL for (int i = 0; i < v; i++) d[i] =
                        gr < rows && gc + i < cols ? gmlp_mma_ld1(store, src, i) : 0.0f;
                }
            }
        }
    }
}
/* a slice wholly inside the matrix (most) loads without a check an element where the loops are unrolled
 * (GPUs); on CPUs the second copy made PoCL's build of a variant take minutes */
GMLP_MMA_INLINE void gmlp_mma_stage_fetch(const int op, __global const void *p, ulong ld, int base, int dim, int q0,
                                          int k, int t, float *f)
{
    if (GMLP_GEMM_UNROLL && base + GMLP_STAGE_W(op) <= dim && q0 + TK <= k)
        gmlp_mma_stage_load(op, p, ld, base, dim, q0, k, t, f, 0);
    else
        gmlp_mma_stage_load(op, p, ld, base, dim, q0, k, t, f, 1);
}
/* Word (kw, j) of unit l in f: the unit's elements PK kw and PK kw + 1 along k at its column j, as the
 * operand (through the hook gmlp_mma_word, or native storage's bits) */
static inline uint gmlp_mma_stage_word(const int op, const float *f, int l, int kw, int j)
{
    const int store = GMLP_STAGE_STORE(op), wr = MMA_STAGE_WR(op), elems = MMA_STAGE_ELEMS(op);
    const float *u = f + l * elems + PK * kw * wr + j;
    if (!MMA_PAIRED(store))
        return gmlp_mma_word(gmlp_mma_fetched_value(store, u[0]), gmlp_mma_fetched_value(store, u[(PK - 1) * wr]), op);
    /* paired: along k a word with zeros ORed in; across k the runs' words hold pairs along the W, element j's
     * halves */
    const uint r0 = as_uint(f[l * elems + (j & ~1)]), r1 = as_uint(f[l * elems + wr + (j & ~1)]);
    const uint bits = GMLP_STAGE_CONTIG_K(op) ? as_uint(u[0]) | as_uint(u[(PK - 1) * wr]) << 16
                      : j & 1                 ? r0 >> 16 | (r1 & 0xffff0000u)
                                              : (r0 & 0xffffu) | r1 << 16;
    if (MMA_NATIVE(store))
        return gmlp_mma_native_bits(store, bits);
    return gmlp_mma_word(gmlp_mma_fetched_value(store, as_float(bits & 0xffffu)),
                         gmlp_mma_fetched_value(store, as_float(bits >> 16)), op);
}
GMLP_MMA_INLINE void gmlp_mma_stage_stash(const int op, __local uint *lds, const float *f, int t)
{
    GMLP_UNROLL for (int l = 0; l < GMLP_STAGE_MAX(MMA_STAGE_PER); l++)
    {
        int w, q;
        if (l < MMA_STAGE_PER(op) && gmlp_mma_stage_at(op, t, l, &w, &q)) {
            GMLP_UNROLL for (int kw = 0; kw < GMLP_STAGE_MAX(MMA_STAGE_KW); kw++)
                GMLP_UNROLL for (int j = 0; j < GMLP_STAGE_MAX(MMA_STAGE_WR); j++)
                    if (kw < MMA_STAGE_KW(op) && j < MMA_STAGE_WR(op))
                        lds[gmlp_mma_stage_idx(op, w + j, q / PK + kw)] = gmlp_mma_stage_word(op, f, l, kw, j);
        }
    }
}
#else
/* The cp.async staging.  A slice holds the stored elements untouched:
 * floats, or 16-bit storage's bits (RAW_A, RAW_B). */
#if GMLP_GEMM_A_HALF || GMLP_GEMM_A_BF16
#define RAW_A ushort
#else
#define RAW_A float
#endif
#if GMLP_GEMM_B_HALF || GMLP_GEMM_B_BF16
#define RAW_B ushort
#else
#define RAW_B float
#endif

/* v (1, 2, 4, or 8 of 16-bit storage: a constant once inlined) stored elements from s to d, of
 * which the first n (0 to v) lie inside the matrix and the rest read as
 * zero.  By cp.async: s and d are v-element aligned (host-checked; local
 * rows of multiples of 4 elements), s is a valid address even for n = 0
 * (src-size 0 copies nothing and fills zeros); single 16-bit elements,
 * below cp.async's 4 bytes, are loaded and stored in turn.
 * The local address is the pointer's value in the shared window
 * (addrspace 3), which cp.async's .shared operand wants. */
static inline void gmlp_mma_copy_float(__local float *d, __global const float *s, int n, const int v)
{
#if GMLP_GEMM_ISSUE
    for (int i = 0; i < v; i++)
        d[i] = i < n ? s[i] : 0.0f;
#else
    const uint to = (uint)(size_t)d, bytes = 4u * (uint)n;
    if (v == 4)
        GMLP_ASM volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(to), "l"(s), "r"(bytes) : "memory");
    else if (v == 2)
        GMLP_ASM volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(to), "l"(s), "r"(bytes) : "memory");
    else
        GMLP_ASM volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(to), "l"(s), "r"(bytes) : "memory");
#endif
}
static inline void gmlp_mma_copy_bits16(__local ushort *d, __global const ushort *s, int n, const int v)
{
#if !GMLP_GEMM_ISSUE
    const uint to = (uint)(size_t)d, bytes = 2u * (uint)n; /* cp.async copies 4, 8 or 16 bytes */
    if (v == 8) { /* 16 bytes: around L1, as the float copies */
        GMLP_ASM volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(to), "l"(s), "r"(bytes) : "memory");
        return;
    }
    if (v == 4) {
        GMLP_ASM volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(to), "l"(s), "r"(bytes) : "memory");
        return;
    }
    if (v == 2) {
        GMLP_ASM volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(to), "l"(s), "r"(bytes) : "memory");
        return;
    }
#endif
    for (int i = 0; i < v; i++)
        d[i] = i < n ? s[i] : (ushort)0;
}
/* the copies issued since the last commit: one group */
static inline void gmlp_mma_commit(void)
{
#if !GMLP_GEMM_ISSUE
    GMLP_ASM volatile("cp.async.commit_group;" ::: "memory");
#endif
}
/* this work-item's groups but the newest STAGES - 2 landed */
static inline void gmlp_mma_wait(void)
{
#if GMLP_GEMM_ISSUE
#elif STAGES == 2
    GMLP_ASM volatile("cp.async.wait_group 0;" ::: "memory");
#elif STAGES == 3
    GMLP_ASM volatile("cp.async.wait_group 1;" ::: "memory");
#else
    GMLP_ASM volatile("cp.async.wait_group 2;" ::: "memory");
#endif
}
/* two adjacent stored elements (an even index: 2 v-byte aligned) in one load */
static inline void gmlp_mma_ld2_float(__local const float *at, float *lo, float *hi)
{
    const float2 v = vload2(0, at);
    *lo = v.x, *hi = v.y;
}
static inline void gmlp_mma_ld2_bits16(__local const ushort *at, ushort *lo, ushort *hi)
{
    const ushort2 v = vload2(0, at);
    *lo = v.x, *hi = v.y;
}
/* A stored 16-bit element's value (storage store). */
static inline float gmlp_mma_raw_value(int store, ushort h)
{
    return gmlp_mma_fetched_value(store, as_float((uint)h));
}

/* Operand op's slices: TK x W of op(X), stored along k ([W][TK + pad]) if
 * contiguous along k, else across ([TK][W + pad]), the pads putting a warp's
 * fragment reads on distinct banks (TF32: rows g, columns tg; 16-bit: a
 * float2 of (2 tg, 2 tg + 1) along k, or two loads across).
 * gmlp_mma_raw_issue copies this work-item's chunks (V elements contiguous
 * in memory) of the slice at k q0 (checked, a constant: 0 where it lies
 * inside the matrix, no edge computed); gmlp_mma_raw_word gives word kw of row r
 * of the W (elements PK kw and PK kw + 1 along k) through the hook
 * gmlp_mma_word, rounded and packed for the instruction. */
#define MMA_RAW_LEN(op) (GMLP_STAGE_CONTIG_K(op) ? TK : GMLP_STAGE_W(op)) /* elements of a stored row */
#define MMA_RAW_LD(op) (SWZ(op) ? MMA_RAW_LEN(op) : MMA_RAW_LEN(op) + (GMLP_STAGE_CONTIG_K(op) == (PK == 1) ? 4 : 8))
#define MMA_RAW_SIZE(op) ((GMLP_STAGE_CONTIG_K(op) ? GMLP_STAGE_W(op) : TK) * MMA_RAW_LD(op))
#define MMA_RAW_CHUNKS(op) (GMLP_STAGE_W(op) * TK / GMLP_STAGE_V(op))
#define MMA_RAW_PER(op) ((MMA_RAW_CHUNKS(op) + NT - 1) / NT)
/* The swizzle: a stored row's C 16-byte chunks (8 elements), C a power of
 * two; rows of 128 bytes or less share a 128-byte line L = 8 / C at a time,
 * and line y's chunks are XORed with y mod C (mod 8 past 8 chunks), so
 * that 8 consecutive rows' chunk c lie on 8 distinct 16-byte bank groups. */
#define MMA_SWZ_C(op) (MMA_RAW_LEN(op) / 8)
#define MMA_SWZ_L(op) (MMA_SWZ_C(op) < 8 ? 8 / MMA_SWZ_C(op) : 1)
#define MMA_SWZ_X(op) (MMA_SWZ_C(op) < 8 ? MMA_SWZ_C(op) : 8)
#if (SWZ_A && (MMA_RAW_LEN(0) % 8 || MMA_SWZ_C(0) & (MMA_SWZ_C(0) - 1))) ||                                    \
    (SWZ_B && (MMA_RAW_LEN(1) % 8 || MMA_SWZ_C(1) & (MMA_SWZ_C(1) - 1)))
#error "gemm_mma.cl: GMLP_MMA_SWIZZLE takes stored rows of a power of two of 16-byte chunks"
#endif
/* element q of k in row r of the W, stored along k or across */
static inline int gmlp_mma_raw_idx(const int op, int r, int q)
{
    const int row = GMLP_STAGE_CONTIG_K(op) ? r : q, col = GMLP_STAGE_CONTIG_K(op) ? q : r;
    if (!SWZ(op))
        return row * MMA_RAW_LD(op) + col;
    if (GMLP_MMA_WGMMA && !GMLP_STAGE_CONTIG_K(op)) /* wgmma's MN-major layout: blocks of 64 of the W, each TK
                                                      * rows of k of 128 bytes, swizzled alike (gemm_wgmma.cl) */
        return col / 64 * (TK * 64) + row * 64 + ((col >> 3 & 7 ^ row % 8) << 3) + (col & 7);
    return row * MMA_RAW_LD(op) + ((col >> 3 ^ row / MMA_SWZ_L(op) % MMA_SWZ_X(op)) << 3) + (col & 7);
}
/* Work-item t's chunk l of a slice: whether it has one, and where (row *w
 * of the W, element *q of k) */
static inline bool gmlp_mma_raw_chunk(const int op, int t, int l, int *w, int *q)
{
    const int contig = GMLP_STAGE_CONTIG_K(op), v = GMLP_STAGE_V(op), e = t + l * NT;
    *w = contig ? e / (TK / v) : e % (GMLP_STAGE_W(op) / v) * v;
    *q = contig ? e % (TK / v) * v : e / (GMLP_STAGE_W(op) / v);
    return l < MMA_RAW_PER(op) && (MMA_RAW_CHUNKS(op) % NT == 0 || e < MMA_RAW_CHUNKS(op));
}
GMLP_MMA_INLINE void gmlp_mma_raw_issue(const int op, __local void *s, __global const void *p, ulong ld, int base,
                                        int dim, int q0, int k, int t, const int checked)
{
    const int store = GMLP_STAGE_STORE(op), contig = GMLP_STAGE_CONTIG_K(op), v = GMLP_STAGE_V(op);
    GMLP_UNROLL for (int l = 0; l < GMLP_STAGE_MAX(MMA_RAW_PER); l++)
    {
        int w, q;
        if (gmlp_mma_raw_chunk(op, t, l, &w, &q)) {
            const int gr = contig ? base + w : q0 + q, gc = contig ? q0 + q : base + w;
            const int rows = contig ? dim : k, cols = contig ? k : dim;
            const int n = !checked ? v : gr < rows ? clamp(cols - gc, 0, v) : 0, i = gmlp_mma_raw_idx(op, w, q);
            __local void *d = store == GMLP_STORE_FLOAT ? (__local void *)((__local float *)s + i)
                                                             : (__local void *)((__local ushort *)s + i);
            __global const void *src = n ? gmlp_mma_addr(store, p, ld, gr, gc) : p;
            if (store == GMLP_STORE_FLOAT)
                gmlp_mma_copy_float(d, src, n, v);
            else
                gmlp_mma_copy_bits16(d, src, n, v);
        }
    }
}
static inline uint gmlp_mma_raw_word(const int op, __local const void *s, int r, int kw)
{
    const int store = GMLP_STAGE_STORE(op), contig = GMLP_STAGE_CONTIG_K(op);
    if (store == GMLP_STORE_FLOAT) {
        __local const float *x = s;
        float lo, hi;
        if (PK == 1)
            return gmlp_mma_word(x[gmlp_mma_raw_idx(op, r, kw)], 0.0f, op);
        if (contig) /* adjacent: one load */
            gmlp_mma_ld2_float(x + gmlp_mma_raw_idx(op, r, 2 * kw), &lo, &hi);
        else
            lo = x[gmlp_mma_raw_idx(op, r, 2 * kw)], hi = x[gmlp_mma_raw_idx(op, r, 2 * kw + 1)];
        return gmlp_mma_word(lo, hi, op);
    }
    __local const ushort *x = s;
    ushort lo, hi;
    if (PK == 1)
        return gmlp_mma_word(gmlp_mma_raw_value(store, x[gmlp_mma_raw_idx(op, r, kw)]), 0.0f, op);
    if (contig)
        gmlp_mma_ld2_bits16(x + gmlp_mma_raw_idx(op, r, 2 * kw), &lo, &hi);
    else
        lo = x[gmlp_mma_raw_idx(op, r, 2 * kw)], hi = x[gmlp_mma_raw_idx(op, r, 2 * kw + 1)];
    if (MMA_NATIVE(store)) /* the bits are the operand already (half once saturated) */
        return gmlp_mma_native_bits(store, (uint)lo | (uint)hi << 16);
    return gmlp_mma_word(gmlp_mma_raw_value(store, lo), gmlp_mma_raw_value(store, hi), op);
}
#endif

#if GMLP_GEMM_ISSUE
/* A 16-bit operand's float value (the emulation's decoding). */
static inline float gmlp_mma_value(uint h)
{
    return GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_BF16 ? as_float(h << 16) : gmlp_mma_half_value(h);
}
/* element i of a fragment as the instruction reads it */
static inline float gmlp_mma_elem(const uint *r, int i)
{
    return PK == 1 ? as_float(r[i]) : gmlp_mma_value(r[i / 2] >> (i % 2 * 16) & 0xffffu);
}
/* The documented fragment layouts (g = lane >> 2, c = lane % 4): where
 * element i of a lane's A, B and C/D fragments sits in the 16 x MMA_K,
 * MMA_K x 8 and 16 x 8 matrices. */
static inline int gmlp_mma_a_row(int g, int i)
{
    return PK == 1 ? g + 8 * (i & 1) : g + 8 * (i >> 1 & 1); /* tf32: a1, a3 below; 16-bit: a2, a3, a6, a7 */
}
static inline int gmlp_mma_a_col(int c, int i)
{
    return PK == 1 ? c + 4 * (i >> 1) : 2 * c + (i & 1) + 8 * (i >> 2);
}
static inline int gmlp_mma_b_row(int c, int i)
{
    return PK == 1 ? c + 4 * i : 2 * c + (i & 1) + 8 * (i >> 1);
}
static inline int gmlp_mma_c_row(int g, int i)
{
    return g + 8 * (i >> 1);
}
static inline int gmlp_mma_c_col(int c, int i)
{
    return 2 * c + (i & 1);
}
#define EMU_SIZE (16 * MMA_K + MMA_K * 8) /* floats of a warp's scratch: A dense, then B */
/* d += a . b for one warp; every work-item of the group calls it alike */
static inline void gmlp_mma(float *d, const uint *a, const uint *b, __local float *emu, int lane)
{
    const int g = lane >> 2, c = lane & 3;
    __local float *as = emu, *bs = emu + 16 * MMA_K;
    for (int i = 0; i < 4 * PK; i++)
        as[gmlp_mma_a_row(g, i) * MMA_K + gmlp_mma_a_col(c, i)] = gmlp_mma_elem(a, i);
    for (int i = 0; i < 2 * PK; i++)
        bs[gmlp_mma_b_row(c, i) * 8 + g] = gmlp_mma_elem(b, i);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < 4; i++) {
        const int row = gmlp_mma_c_row(g, i), col = gmlp_mma_c_col(c, i);
        float s = d[i];
        for (int q = 0; q < MMA_K; q++)
            s = fma(as[row * MMA_K + q], bs[q * 8 + col], s);
        d[i] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
#else
#if GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_TF32
#define GMLP_MMA_OP "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
#elif GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_FP16
#define GMLP_MMA_OP "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
#else
#define GMLP_MMA_OP "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
#endif
/* d += a . b for one warp: four b32 words of A, two of B, in every format */
static inline void gmlp_mma(float *d, const uint *a, const uint *b)
{
    float e0, e1, e2, e3;
    GMLP_ASM volatile(GMLP_MMA_OP " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
             : "=f"(e0), "=f"(e1), "=f"(e2), "=f"(e3)
             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(d[0]), "f"(d[1]), "f"(d[2]),
               "f"(d[3]));
    d[0] = e0, d[1] = e1, d[2] = e2, d[3] = e3;
}
#endif

/* ldmatrix .x4 (.b16): lane l gives the row address of matrix l / 8 (8
 * rows of 16 bytes: four words of 16-bit pairs), and d[i] gets word l % 4
 * of row l / 4 of matrix i; with .trans (trans, a constant) the matrix
 * transposed: elements l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1 (PTX ISA,
 * "Warp-level matrix load instruction: ldmatrix").  The emulation passes
 * the rows' word offsets from base through the warp's scratch, so that a
 * wrong lane-to-row mapping gives wrong fragments there too; every
 * work-item of the group calls it alike. */
#if GMLP_GEMM_ISSUE
static inline void gmlp_mma_ldsm4(__local const uint *base, __local const uint *row, uint *d, const int trans,
                                  __local int *rows, int lane)
{
    rows[lane] = (int)(row - base);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < 4; i++) {
        __local const ushort *lo = (__local const ushort *)(base + rows[8 * i + lane % 4 * 2]) + lane / 4,
                             *hi = (__local const ushort *)(base + rows[8 * i + lane % 4 * 2 + 1]) + lane / 4;
        d[i] = trans ? (uint)*lo | (uint)*hi << 16 : base[rows[8 * i + lane / 4] + lane % 4];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
#define GMLP_MMA_LDSM4(base, row, d, trans)                                                                  \
    gmlp_mma_ldsm4((__local const uint *)(base), row, d, trans, ldsm_rows, lane)
#else
static inline void gmlp_mma_ldsm4(__local const uint *row, uint *d, const int trans)
{
    /* after the slice's barrier, before the next one's stores: the memory clobber keeps it between them */
    if (trans)
        GMLP_ASM volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                          : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                          : "r"((uint)(size_t)row)
                          : "memory");
    else
        GMLP_ASM volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                          : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                          : "r"((uint)(size_t)row)
                          : "memory");
}
#define GMLP_MMA_LDSM4(base, row, d, trans) gmlp_mma_ldsm4(row, d, trans)
#endif

/* The warp's fragments fa, fb of the k-step at word kw of the slices at
 * la / lb (the documented layouts, in words: A (g, tg), (g + 8, tg),
 * (g, tg + 4), (g + 8, tg + 4), B (g, tg), (g, tg + 4)) through WORD_A (l,
 * row of op(A), word of k) and WORD_B (l, column of op(B), word of k); by
 * ldmatrix (LDSM_A / LDSM_B) through ROW_A / ROW_B (l, row, word of k: its
 * address), or across k ROWT_A / ROWT_B (l, row, element of k): along k
 * A's four 8 x 8 matrices are rows 0-7 and 8-15 of the tile at words kw
 * and kw + 4 (lanes 0-7, 8-15, 16-23, 24-31), B's two
 * n-tiles' words kw and kw + 4 each; across k (.trans) the matrices are 8
 * rows of k of 8 elements of the W, A's at m + 8 (lanes 8-15) and k + 8
 * (16-23), B's at k + 8 (lanes 8-15) and n + 8 (16-23). */
#define GMLP_MMA_FRAGS(fa, fb, la, lb, kw, WORD_A, WORD_B, ROW_A, ROW_B, ROWT_A, ROWT_B)                        \
    do {                                                                                                        \
        /* ldmatrix of cp.async's slices: the stored bits (the register staging stores operands) */             \
        if (LDSM_A) {                                                                                           \
            GMLP_UNROLL for (int i = 0; i < MT; i++)                                                            \
            {                                                                                                   \
                if (TRANS_A)                                                                                    \
                    GMLP_MMA_LDSM4(la,                                                                          \
                                   ROWT_A(la, wm0 + i * 16 + (lane >> 3 & 1) * 8, 2 * (kw) + (lane & 7) + (lane >> 4) * 8), \
                                   fa[i], 1);                                                                   \
                else                                                                                            \
                    GMLP_MMA_LDSM4(la, ROW_A(la, wm0 + i * 16 + (lane & 15), (kw) + (lane >> 4) * 4), fa[i], 0); \
                GMLP_UNROLL for (int r = 0; r < 4 && STAGES; r++) fa[i][r] =                                    \
                    gmlp_mma_native_bits(GMLP_GEMM_A, fa[i][r]);                                                \
            }                                                                                                   \
        } else {                                                                                                \
            GMLP_UNROLL for (int i = 0; i < MT; i++) GMLP_UNROLL for (int r = 0; r < 4; r++) fa[i][r] =          \
                WORD_A(la, wm0 + i * 16 + g + 8 * (r & 1), (kw) + tg + 4 * (r >> 1));                           \
        }                                                                                                       \
        GMLP_UNROLL for (int j = 0; j < NTL; j++)                                                               \
        {                                                                                                       \
            if (LDSM_B && j % 2 == 0 && j + 1 < NTL) {                                                          \
                uint w[4];                                                                                      \
                if (TRANS_B)                                                                                    \
                    GMLP_MMA_LDSM4(lb, ROWT_B(lb, wn0 + j * 8 + (lane >> 4) * 8, 2 * (kw) + (lane & 15)), w, 1); \
                else                                                                                            \
                    GMLP_MMA_LDSM4(lb, ROW_B(lb, wn0 + j * 8 + (lane & 7) + (lane >> 4) * 8, (kw) + (lane >> 3 & 1) * 4), w, \
                                   0);                                                                       \
                GMLP_UNROLL for (int r = 0; r < 4 && STAGES; r++) w[r] = gmlp_mma_native_bits(GMLP_GEMM_B, w[r]); \
                fb[j][0] = w[0], fb[j][1] = w[1], fb[j + 1][0] = w[2], fb[j + 1][1] = w[3];                     \
            } else if (!LDSM_B || j % 2 == 0) { /* an odd last n-tile by words */                              \
                GMLP_UNROLL for (int r = 0; r < 2; r++) fb[j][r] = WORD_B(lb, wn0 + j * 8 + g, (kw) + tg + 4 * r); \
            }                                                                                                   \
        }                                                                                                       \
    } while (0)
#define GMLP_MMA_PRODUCTS(fa, fb)                                                                               \
    GMLP_UNROLL for (int i = 0; i < MT; i++) GMLP_UNROLL for (int j = 0; j < NTL; j++)                           \
        GMLP_MMA_DO(acc[i][j], fa[i], fb[j])
/* One TK-deep slice's products into acc, a k-step's fragments at a time. */
#define GMLP_MMA_SLICE(WORD_A, WORD_B, ROW_A, ROW_B, ROWT_A, ROWT_B)                                            \
    GMLP_UNROLL for (int kw = 0; kw < TKW; kw += MMA_KW)                                                        \
    {                                                                                                           \
        uint fa[MT][4], fb[NTL][2];                                                                             \
        GMLP_MMA_FRAGS(fa, fb, la, lb, kw, WORD_A, WORD_B, ROW_A, ROW_B, ROWT_A, ROWT_B);                       \
        GMLP_MMA_PRODUCTS(fa, fb);                                                                              \
    }
#if GMLP_GEMM_ISSUE
#define GMLP_MMA_DO(d, a, b) gmlp_mma(d, a, b, emu, lane)
#else
#define GMLP_MMA_DO(d, a, b) gmlp_mma(d, a, b)
#endif

/* Past 64 outputs a lane (warp tiles of 64 x 64), or past 32 into a half C
 * (libclc's rounding store is long), the epilogue and the store are called,
 * not inlined: with 128 inlined GELUs clang's unrolling of the store loop
 * gave up and left the accumulators on the stack (512 bytes, sm_90); a
 * call keeps the loop small and them in registers.  Its operands as
 * scalars: a pointer to the private gmlp_epi would put that on the stack. */
#define MMA_ACCS (GMLP_MMA_WGMMA ? TN / 2 : MT * NTL * 4) /* accumulators a work-item */
#define EPILOGUE_CALL (MMA_ACCS > 64 || (GMLP_GEMM_C_HALF && MMA_ACCS > 32))
#if EPILOGUE_CALL
static __attribute__((noinline)) void gmlp_mma_finish(__global C_TYPE *cv, float v, int i, int j,
                                                      __global const float *bias, __global const void *gate,
                                                      ulong ldg, int bias_mode, int act)
{
    const gmlp_epi e = {bias, gate, ldg, bias_mode, act, GMLP_GEMM_GATE};
    gmlp_c_put(cv, gmlp_epilogue(v, i, j, &e));
}
#define GMLP_MMA_FINISH(cv, v, i, j, e)                                                                      \
    gmlp_mma_finish(cv, v, i, j, (e)->bias, (e)->gate, (e)->ldg, (e)->bias_mode, (e)->act)
#else
#define GMLP_MMA_FINISH(cv, v, i, j, e) gmlp_c_put(cv, gmlp_epilogue(v, i, j, e))
#endif

#ifndef GMLP_MMA_RASTER
#define GMLP_MMA_RASTER 0
#endif
#if GMLP_MMA_WGMMA
#include "gemm_wgmma.cl"
#endif

GMLP_GEMM_KERNEL(gmlp_gemm_mma)
{
    const int t = get_local_id(1) * RX + get_local_id(0), warp = t / 32, lane = t % 32;
    const int g = lane >> 2, tg = lane & 3; /* the fragments' groupID and threadID_in_group */
#if !GMLP_MMA_WGMMA
    const int wm0 = warp / WARPS_N * WTM, wn0 = warp % WARPS_N * WTN; /* the warp's tile (wgmma: its group's) */
#endif
    const int2 blk = gmlp_gemm_block(GMLP_MMA_RASTER); /* bands of R block rows: L2 holds their A */
    const int i0 = blk.y * TM, j0 = blk.x * TN;
    const size_t p = get_global_id(2);
    a += a_off + p * a_stride;
    b += b_off + p * b_stride;
    c += c_off + p * c_stride;
    const gmlp_epi e = GMLP_GEMM_EPI_OF(p);

#if GMLP_MMA_WGMMA
    const int wg = warp / 4; /* the warp group: rows 64 wg of the block */
    float acc[WG_ACCS];
GMLP_UNROLL
    for (int i = 0; i < WG_ACCS; i++)
        acc[i] = 0.0f;
#else
    float acc[MT][NTL][4];
GMLP_UNROLL
    for (int i = 0; i < MT; i++)
GMLP_UNROLL
        for (int j = 0; j < NTL; j++)
GMLP_UNROLL
            for (int r = 0; r < 4; r++)
                acc[i][j][r] = 0.0f;
#endif
#if GMLP_GEMM_ISSUE && !GMLP_MMA_WGMMA
    __local float emu_all[WARPS * EMU_SIZE];
    __local float *emu = emu_all + warp * EMU_SIZE;
    __local int ldsm_all[WARPS * 32]; /* ldmatrix's rows (GMLP_MMA_LDSM) */
    __local int *ldsm_rows = ldsm_all + warp * 32;
#endif

#if STAGES
    const int slices = (k + TK - 1) / TK;
#if GMLP_MMA_WGMMA
    /* one array, the descriptors' addresses relative to it in the emulation; 1024-byte aligned: the swizzle's
     * atoms (every slice a multiple of 1024 bytes) */
    __local uchar wg_tiles[STAGES * (MMA_RAW_SIZE(0) + MMA_RAW_SIZE(1)) * 2] __attribute__((aligned(1024)));
    __local RAW_A *as = (__local RAW_A *)wg_tiles;
    __local RAW_B *bs = (__local RAW_B *)(wg_tiles + STAGES * MMA_RAW_SIZE(0) * 2);
#else
    /* 16-byte aligned: cp.async's 16-byte copies */
    __local RAW_A as[STAGES * MMA_RAW_SIZE(0)] __attribute__((aligned(16)));
    __local RAW_B bs[STAGES * MMA_RAW_SIZE(1)] __attribute__((aligned(16)));
#endif
    /* the first STAGES - 1 slices in flight, a group each (empty past the last) */
    for (int sl = 0; sl < STAGES - 1; sl++) {
        if (sl < slices) {
            gmlp_mma_raw_issue(0, as + sl * MMA_RAW_SIZE(0), a, lda, i0, m, sl * TK, k, t, 1);
            gmlp_mma_raw_issue(1, bs + sl * MMA_RAW_SIZE(1), b, ldb, j0, n, sl * TK, k, t, 1);
        }
        gmlp_mma_commit();
    }
#define WORD_A(l, r, kw) gmlp_mma_raw_word(0, l, r, kw)
#define WORD_B(l, r, kw) gmlp_mma_raw_word(1, l, r, kw)
/* the 16-byte row from element 2 kw of k of row r (padded: TK + 8 elements apart; swizzled: a chunk); across
 * k, from element r of the W of row q of k */
#define ROW_A(l, r, kw) ((__local const uint *)((l) + gmlp_mma_raw_idx(0, r, 2 * (kw))))
#define ROW_B(l, r, kw) ((__local const uint *)((l) + gmlp_mma_raw_idx(1, r, 2 * (kw))))
#define ROWT_A(l, r, q) ((__local const uint *)((l) + gmlp_mma_raw_idx(0, r, q)))
#define ROWT_B(l, r, q) ((__local const uint *)((l) + gmlp_mma_raw_idx(1, r, q)))
#if GMLP_MMA_FRAG2
    /* slices below full lie inside the matrix (a block inside m and n; CPUs but the emulation's tests
     * compile one loop, as gmlp_mma_stage_fetch) */
    const int full = (GMLP_GEMM_UNROLL || GMLP_GEMM_ISSUE) && i0 + TM <= m && j0 + TN <= n ? k / TK : 0;
    uint fa[2][MT][4], fb[2][NTL][2]; /* k-step s's fragments in [s % 2] (TK / 16 odd: moved to [0]) */
    gmlp_mma_wait();
    barrier(CLK_LOCAL_MEM_FENCE);
    if (slices > 0)
        GMLP_MMA_FRAGS(fa[0], fb[0], as, bs, 0, WORD_A, WORD_B, ROW_A, ROW_B, ROWT_A, ROWT_B);
    /* Slice sl from buffer sl % STAGES: at its first k-step slice sl + STAGES - 1 issued into slice
     * sl - 1's buffer (everyone past the barrier after its last reads); at its last, slice sl + 1's copies
     * waited for and the next fragments loaded from its buffer after the barrier.  checked: a constant. */
#define GMLP_MMA_PIPE_SLICE(checked)                                                                          \
    {                                                                                                         \
        __local const RAW_A *la = as + sl % STAGES * MMA_RAW_SIZE(0);                                         \
        __local const RAW_B *lb = bs + sl % STAGES * MMA_RAW_SIZE(1);                                         \
        GMLP_UNROLL for (int kw = 0; kw < TKW; kw += MMA_KW)                                                  \
        {                                                                                                     \
            const int cur = kw / MMA_KW % 2, next = sl + STAGES - 1;                                          \
            if (kw == 0) {                                                                                    \
                if (!(checked) || next < slices) {                                                            \
                    gmlp_mma_raw_issue(0, as + next % STAGES * MMA_RAW_SIZE(0), a, lda, i0, m, next * TK, k, t,  \
                                       checked);                                                              \
                    gmlp_mma_raw_issue(1, bs + next % STAGES * MMA_RAW_SIZE(1), b, ldb, j0, n, next * TK, k, t,  \
                                       checked);                                                              \
                }                                                                                             \
                gmlp_mma_commit();                                                                            \
            }                                                                                                 \
            if (kw + MMA_KW < TKW) {                                                                          \
                GMLP_MMA_FRAGS(fa[1 - cur], fb[1 - cur], la, lb, kw + MMA_KW, WORD_A, WORD_B, ROW_A, ROW_B, ROWT_A,   \
                               ROWT_B);                                                                       \
            } else {                                                                                          \
                gmlp_mma_wait();                                                                              \
                barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
                if (sl + 1 < slices)                                                                          \
                    GMLP_MMA_FRAGS(fa[1 - cur], fb[1 - cur], as + (sl + 1) % STAGES * MMA_RAW_SIZE(0),         \
                                   bs + (sl + 1) % STAGES * MMA_RAW_SIZE(1), 0, WORD_A, WORD_B, ROW_A, ROW_B, \
                                   ROWT_A, ROWT_B);                                                           \
            }                                                                                                 \
            GMLP_MMA_PRODUCTS(fa[cur], fb[cur]);                                                              \
        }                                                                                                     \
        if (TKW / MMA_KW % 2)                                                                                 \
            GMLP_UNROLL for (int i = 0; i < MT * 4 || i < NTL * 2; i++)                                       \
            {                                                                                                 \
                if (i < MT * 4)                                                                               \
                    fa[0][i / 4][i % 4] = fa[1][i / 4][i % 4];                                                \
                if (i < NTL * 2)                                                                              \
                    fb[0][i / 2][i % 2] = fb[1][i / 2][i % 2];                                                \
            }                                                                                                 \
    }
    int sl = 0;
    for (; sl + STAGES - 1 < full; sl++)
        GMLP_MMA_PIPE_SLICE(0)
    for (; sl < slices; sl++)
        GMLP_MMA_PIPE_SLICE(1)
#undef GMLP_MMA_PIPE_SLICE
#else
    for (int sl = 0; sl < slices; sl++) {
        gmlp_mma_wait(); /* slice sl's copies, this work-item's */
#if GMLP_MMA_WGMMA
        gmlp_wg_saturate(as + sl % STAGES * MMA_RAW_SIZE(0), bs + sl % STAGES * MMA_RAW_SIZE(1), t);
        GMLP_WG_PROXY();
#endif
        barrier(CLK_LOCAL_MEM_FENCE); /* everyone's; and everyone done with slice sl - 1's buffer */
        const int next = sl + STAGES - 1;
        if (next < slices) { /* into slice sl - 1's buffer */
            gmlp_mma_raw_issue(0, as + next % STAGES * MMA_RAW_SIZE(0), a, lda, i0, m, next * TK, k, t, 1);
            gmlp_mma_raw_issue(1, bs + next % STAGES * MMA_RAW_SIZE(1), b, ldb, j0, n, next * TK, k, t, 1);
        }
        gmlp_mma_commit();
        __local const RAW_A *la = as + sl % STAGES * MMA_RAW_SIZE(0);
        __local const RAW_B *lb = bs + sl % STAGES * MMA_RAW_SIZE(1);
#if GMLP_MMA_WGMMA
        GMLP_WG_SLICE(acc, la, lb, wg);
#else
        GMLP_MMA_SLICE(WORD_A, WORD_B, ROW_A, ROW_B, ROWT_A, ROWT_B)
#endif
    }
#endif
#undef ROW_A
#undef ROW_B
#undef ROWT_A
#undef ROWT_B
#undef WORD_A
#undef WORD_B
#else
    /* 16-byte aligned: NVIDIA faults on a misaligned shared access (gemm_tiled.cl) */
    __local uint as[2 * MMA_STAGE_SIZE(0)] __attribute__((aligned(16)));
    __local uint bs[2 * MMA_STAGE_SIZE(1)] __attribute__((aligned(16)));
    float pa[MMA_STAGE_PER(0) * MMA_STAGE_ELEMS(0)], pb[MMA_STAGE_PER(1) * MMA_STAGE_ELEMS(1)];
    GMLP_SLICES_BEGIN(uint, MMA_STAGE_SIZE, gmlp_mma_stage_fetch, gmlp_mma_stage_stash)
#define WORD_A(l, r, kw) (l)[gmlp_mma_stage_idx(0, r, kw)]
#define WORD_B(l, r, kw) (l)[gmlp_mma_stage_idx(1, r, kw)]
#define ROW_A(l, r, kw) ((l) + gmlp_mma_stage_idx(0, r, kw))
#define ROW_B(l, r, kw) ((l) + gmlp_mma_stage_idx(1, r, kw))
        GMLP_MMA_SLICE(WORD_A, WORD_B, ROW_A, ROW_B, ROW_A, ROW_B) /* stored along k (no .trans) */
#undef WORD_A
#undef WORD_B
#undef ROW_A
#undef ROW_B
    GMLP_SLICES_END(MMA_STAGE_SIZE, gmlp_mma_stage_stash)
#endif

#define GMLP_MMA_STORE(x, gi, gj)                                                                             \
    do {                                                                                                      \
        if ((gi) < m && (gj) < n) {                                                                           \
            __global C_TYPE *cv = c + (size_t)(gi) * ldc + (gj);                                              \
            const float v = beta == 0.0f ? (x) : (x) + beta * gmlp_c_get(cv);                                 \
            GMLP_MMA_FINISH(cv, v, gi, gj, &e);                                                               \
        }                                                                                                     \
    } while (0)
#if GMLP_MMA_WGMMA
    /* accumulator i: row 16 (warp % 4) + g + 8 ((i / 2) % 2) of the warp group's, column 8 (i / 4) + 2 tg + i % 2 */
GMLP_UNROLL
    for (int i = 0; i < WG_ACCS; i++)
        GMLP_MMA_STORE(acc[i], i0 + 64 * wg + 16 * (warp % 4) + g + 8 * (i >> 1 & 1), j0 + 8 * (i >> 2) + 2 * tg + (i & 1));
#else
    /* accumulator r of tile (i, j) is C's element (g + 8 (r / 2), 2 tg + r % 2) of the tile */
GMLP_UNROLL
    for (int i = 0; i < MT; i++)
GMLP_UNROLL
        for (int j = 0; j < NTL; j++)
GMLP_UNROLL
            for (int r = 0; r < 4; r++)
                GMLP_MMA_STORE(acc[i][j][r], i0 + wm0 + i * 16 + g + 8 * (r >> 1), j0 + wn0 + j * 8 + 2 * tg + (r & 1));
#endif
#undef GMLP_MMA_STORE
}
