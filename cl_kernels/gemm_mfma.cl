/* The GEMM on AMD's matrix cores: CDNA's MFMA (gfx908, gfx90a, gfx94x;
 * wave64) or RDNA3's WMMA (gfx11: GMLP_MFMA_WMMA=1, in waves of
 * GMLP_MFMA_WAVE = 32 or 64, as the device runs them), the ABI of
 * gemm_common.cl on the skeleton of gemm_engine.cl.  One 16 x 16 output
 * tile per instruction, fp32 accumulators:
 *   FP32, TF32 (rounded as it is staged; gfx90a has no xf32 instruction):
 *              v_mfma_f32_16x16x4f32, k 4;
 *   FP16, BF16: v_mfma_f32_16x16x16f16 / _16x16x16bf16_1k (gfx90a on), k 16;
 *   WMMA:      v_wmma_f32_16x16x16_f16 / _bf16 (FP16, BF16), k 16.
 * The lane layouts, from AMD's matrix instruction calculator (CDNA2, CDNA3,
 * RDNA3), lane l, element e of its fragment, KE elements of k per lane:
 *   MFMA  A[l % 16][KE (l / 16) + e], B[KE (l / 16) + e][l % 16],
 *         D[4 (l / 16) + e][l % 16] (e < 4);
 *   WMMA  A[l % 16][e], B[e][l % 16] (each 16 lanes repeat the first 16),
 *         D[W e + l / 16][l % 16] (e < 16 / W), W = wave size / 16.
 *
 * GMLP_GEMM_ISSUE=1 (emulated) replaces the instruction by those documented
 * semantics, the wave's fragments through local memory
 * (tests/test_gemm_engines_emu.c). */
#include "gemm_common.cl"

#if GMLP_GEMM_ISSUE == GMLP_GEMM_ISSUE_SHUFFLES
#error "gemm_mfma.cl: emulated through local memory only"
#endif

#ifndef GMLP_MFMA_WMMA
#define GMLP_MFMA_WMMA 0
#endif
#ifndef GMLP_MFMA_WAVE
#define GMLP_MFMA_WAVE 32
#endif
#define GMLP_MFMA_16BIT (GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_FP16 || GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_BF16)
#if GMLP_MFMA_WMMA && (!GMLP_MFMA_16BIT || (GMLP_MFMA_WAVE != 32 && GMLP_MFMA_WAVE != 64))
#error "gemm_mfma.cl: WMMA takes FP16 or BF16, in waves of 32 or 64"
#endif

#define ENG_SG (GMLP_MFMA_WMMA ? GMLP_MFMA_WAVE : 64)
#define ENG_M 16
#define ENG_N 16
#define ENG_CE (GMLP_MFMA_WMMA ? 256 / GMLP_MFMA_WAVE : 4)
#define ENG_PK (GMLP_MFMA_16BIT ? 2 : 1)
#define ENG_KE (GMLP_MFMA_WMMA ? 16 : GMLP_MFMA_16BIT ? 4 : 1) /* elements of k per lane */
#define ENG_MK (GMLP_MFMA_WMMA ? 16 : 4 * ENG_KE)             /* the instruction's k */
#define ENG_KW (ENG_MK / ENG_PK)
#define ENG_AW (ENG_KE / ENG_PK)
#define ENG_BW ENG_AW
#define ENG_EMULATE GMLP_GEMM_ISSUE
#define ENG_EMU ((GMLP_MFMA_WMMA ? ENG_SG / 8 : 2) * 16 * ENG_MK) /* A and B dense; WMMA: a copy per 16 lanes */
#define GMLP_ENG_NAME gmlp_gemm_mfma
#define GMLP_ENG_ATTR

#include "gemm_engine.cl"

/* A's rows and B's columns are alike: lane l takes row (column) r0 + l % 16
 * and the words of its KE elements of k */
static inline void gmlp_eng_a(uint *f, __local const uint *l, int ld, int r0, int kw, int lane)
{
    GMLP_UNROLL for (int w = 0; w < ENG_AW; w++) f[w] =
        l[(kw + (GMLP_MFMA_WMMA ? 0 : lane / 16 * ENG_AW) + w) * ld + r0 + lane % 16];
}
static inline void gmlp_eng_b(uint *f, __local const uint *l, int ld, int c0, int kw, int lane)
{
    gmlp_eng_a(f, l, ld, c0, kw, lane);
}
static inline int gmlp_eng_c_row(int lane, int r)
{
    return GMLP_MFMA_WMMA ? ENG_SG / 16 * r + lane / 16 : 4 * (lane / 16) + r;
}
static inline int gmlp_eng_c_col(int lane, int r)
{
    (void)r;
    return lane % 16;
}

#if GMLP_GEMM_ISSUE
/* element e of a fragment as the instruction reads it: a word, or 16-bit
 * pairs low half first */
static inline float gmlp_mfma_elem(const uint *f, int e)
{
    return ENG_PK == 1 ? as_float(f[e]) : gmlp_eng_value16(f[e / 2] >> (e % 2 * 16) & 0xffffu);
}
/* d += a . b for one wave, every work-item of the group alike: A and B
 * written dense by the calculator's lane layouts, each lane's D elements
 * computed from them.  WMMA's 16-lane quarters (halves in wave32) each hold
 * all of A and B: each writes its own copy, and its D rows come from that
 * copy, so that every copy must be right (and no two lanes write one place) */
static inline void gmlp_eng_mma(float *d, const uint *a, const uint *b, int lane, __local uint *emu)
{
    __local float *am = (__local float *)emu + (GMLP_MFMA_WMMA ? lane / 16 * 2 * 16 * ENG_MK : 0);
    __local float *bm = am + 16 * ENG_MK; /* A[16][MK], B[MK][16] */
    const int kb = GMLP_MFMA_WMMA ? 0 : ENG_KE * (lane / 16);
    for (int e = 0; e < ENG_KE; e++) {
        am[lane % 16 * ENG_MK + kb + e] = gmlp_mfma_elem(a, e);
        bm[(kb + e) * 16 + lane % 16] = gmlp_mfma_elem(b, e);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = 0; e < ENG_CE; e++) {
        const int row = GMLP_MFMA_WMMA ? ENG_SG / 16 * e + lane / 16 : 4 * (lane / 16) + e, col = lane % 16;
        float s = d[e];
        for (int q = 0; q < ENG_MK; q++)
            s = fma(am[row * ENG_MK + q], bm[q * 16 + col], s);
        d[e] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
#else
/* The instructions, one macro each (clang's builtins; LLVM 15 rejects WMMA
 * operands in scalar registers, which per-lane fragments never are). */
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#if GMLP_MFMA_WMMA && GMLP_MFMA_WAVE == 64 && GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_FP16
#define GMLP_MFMA_OP(a, b, c) __builtin_amdgcn_wmma_f32_16x16x16_f16_w64(as_half16(a), as_half16(b), c)
#elif GMLP_MFMA_WMMA && GMLP_MFMA_WAVE == 64
#define GMLP_MFMA_OP(a, b, c) __builtin_amdgcn_wmma_f32_16x16x16_bf16_w64(as_short16(a), as_short16(b), c)
#elif GMLP_MFMA_WMMA && GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_FP16
#define GMLP_MFMA_OP(a, b, c) __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(as_half16(a), as_half16(b), c)
#elif GMLP_MFMA_WMMA
#define GMLP_MFMA_OP(a, b, c) __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(as_short16(a), as_short16(b), c)
#elif GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_FP16
#define GMLP_MFMA_OP(a, b, c) __builtin_amdgcn_mfma_f32_16x16x16f16(as_half4(a), as_half4(b), c, 0, 0, 0)
#elif GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_BF16
#define GMLP_MFMA_OP(a, b, c) __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(as_short4(a), as_short4(b), c, 0, 0, 0)
#else
#define GMLP_MFMA_OP(a, b, c) __builtin_amdgcn_mfma_f32_16x16x4f32(as_float(a), as_float(b), c, 0, 0, 0)
#endif
static inline void gmlp_eng_mma(float *c, const uint *a, const uint *b, int lane, __local uint *emu)
{
    (void)lane, (void)emu;
#if GMLP_MFMA_WMMA && GMLP_MFMA_WAVE == 32
    vstore8(GMLP_MFMA_OP(vload8(0, a), vload8(0, b), vload8(0, c)), 0, c);
#elif GMLP_MFMA_WMMA
    vstore4(GMLP_MFMA_OP(vload8(0, a), vload8(0, b), vload4(0, c)), 0, c);
#elif GMLP_MFMA_16BIT
    vstore4(GMLP_MFMA_OP(vload2(0, a), vload2(0, b), vload4(0, c)), 0, c);
#else
    vstore4(GMLP_MFMA_OP(a[0], b[0], vload4(0, c)), 0, c);
#endif
}
#endif
