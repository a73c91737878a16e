/* The GEMM on Intel's XMX engines (Arc / DG2: SIMD8; Ponte Vecchio, Xe2:
 * SIMD16), dpas: the ABI of gemm_common.cl on the skeleton of
 * gemm_engine.cl.  FP16 and BF16 through cl_intel_subgroup_matrix_multiply_
 * accumulate's intel_sub_group_{f16,bf16}_..._matrix_mad_k16; TF32 (SIMD16
 * only) as the _tf32 extension's intel_sub_group_tf32_tf32_matrix_mad_k8
 * defines it, written as the dpas it is in inline vISA: the IGC that Debian
 * ships leaves that function an unresolved call, yet assembles
 * dpas.tf32.tf32.8.8 (acc, B, A: the order IGC lowers the function to).
 * GMLP_XMX_SIMD (8 or 16) must be the device's minimum sub-group size (the
 * extension's rule).  One instruction: M = 8 rows (float8), N = SIMD
 * columns, K = 16 (TF32: 8).  The layout, from the extensions'
 * specifications: lane l holds column l of B (b.s_i: k 2i, 2i + 1; TF32: k
 * i) and of C (c.s_r: row r); of A's row r, SIMD8 lane l holds k 2l, 2l + 1
 * (a.s_r, an int), SIMD16 lane l holds k l (a.s_r, a short); TF32 lane l
 * holds A[2e + l / 8][l % 8] in a.s_e (a float4: the rows' 64 values in
 * order over the lanes).
 *
 * GMLP_GEMM_ISSUE=1 (emulated) replaces the instruction by the specification's own
 * sample implementation (each lane's a.s_r paired with b.s_i of lane i,
 * sub_group_broadcast(a, i)), the lanes' vectors exchanged through local
 * memory instead of sub-group functions: tests/test_gemm_engines_emu.c.
 * GMLP_GEMM_ISSUE=2 (shuffles) is the same sample through the sub-group itself
 * (intel_sub_group_shuffle, the kernel's sub-groups of the required SIMD
 * size as on the GPU): on devices with cl_intel_subgroups that offer that
 * size (Intel's OpenCL CPU runtime). */
#include "gemm_common.cl"

#ifndef GMLP_XMX_SIMD
#define GMLP_XMX_SIMD 8
#endif
#if GMLP_XMX_SIMD != 8 && GMLP_XMX_SIMD != 16
#error "gemm_xmx.cl: GMLP_XMX_SIMD must be 8 or 16"
#endif
#define XMX_TF32 (GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_TF32)
#if GMLP_GEMM_PRECISION != GMLP_GEMM_PREC_FP16 && GMLP_GEMM_PRECISION != GMLP_GEMM_PREC_BF16 && !XMX_TF32
#error "gemm_xmx.cl: GMLP_GEMM_PRECISION must be TF32, FP16 or BF16"
#endif
#if XMX_TF32 && GMLP_XMX_SIMD != 16
#error "gemm_xmx.cl: TF32 takes SIMD16 (the _tf32 extension's N = 16)"
#endif

#define ENG_SG GMLP_XMX_SIMD
#define ENG_M 8
#define ENG_N GMLP_XMX_SIMD
#define ENG_CE 8
#define ENG_PK (XMX_TF32 ? 1 : 2)
#define ENG_KW 8
#define ENG_AW (XMX_TF32 ? 4 : 8) /* a.s_r: a word (SIMD8) or a 16-bit value (SIMD16) per row; TF32 a float4 */
#define ENG_BW 8
#define ENG_EMULATE (GMLP_GEMM_ISSUE == GMLP_GEMM_ISSUE_EMULATED) /* local scratch */
#define ENG_EMU (16 * GMLP_XMX_SIMD) /* the sub-group's a and b vectors */
#define GMLP_ENG_NAME gmlp_gemm_xmx
#if GMLP_GEMM_ISSUE == GMLP_GEMM_ISSUE_EMULATED
#define GMLP_ENG_ATTR
#else
#define GMLP_ENG_ATTR __attribute__((intel_reqd_sub_group_size(GMLP_XMX_SIMD)))
/* the sub-groups the driver formed: OpenCL does not promise consecutive work-items */
#define GMLP_ENG_SG_ID ((int)get_sub_group_id())
#define GMLP_ENG_LANE ((int)get_sub_group_local_id())
#endif

#include "gemm_engine.cl"

/* A's 8 rows from r0: a.s_r (TF32: a.s_e) as above */
static inline void gmlp_eng_a(uint *f, __local const uint *l, int ld, int r0, int kw, int lane)
{
    if (XMX_TF32) {
        GMLP_UNROLL for (int e = 0; e < 4; e++) f[e] = l[(kw + lane % 8) * ld + r0 + 2 * e + lane / 8];
        return;
    }
    GMLP_UNROLL for (int r = 0; r < 8; r++)
    {
        const uint w = l[(kw + (GMLP_XMX_SIMD == 8 ? lane : lane / 2)) * ld + r0 + r];
        f[r] = GMLP_XMX_SIMD == 8 ? w : w >> (lane % 2 * 16) & 0xffffu;
    }
}
/* column c0 + lane of B: b.s_i holds the k pair 2i, 2i + 1 (TF32: k i) */
static inline void gmlp_eng_b(uint *f, __local const uint *l, int ld, int c0, int kw, int lane)
{
    GMLP_UNROLL for (int i = 0; i < 8; i++) f[i] = l[(kw + i) * ld + c0 + lane];
}
static inline int gmlp_eng_c_row(int lane, int r)
{
    (void)lane;
    return r;
}
static inline int gmlp_eng_c_col(int lane, int r)
{
    (void)r;
    return lane;
}

/* TF32's A[r][k] (a lane's a.s_e, e = r / 2) is in lane (r % 2) * 8 + k */
#define XMX_TF32_LANE(r, k) ((r) % 2 * 8 + (k))

#if GMLP_GEMM_ISSUE == GMLP_GEMM_ISSUE_SHUFFLES && XMX_TF32
/* the specification's sample: acc.s_r += sum over k of A[r][k] b.s_k, A[r][k] by shuffle */
static inline void gmlp_eng_mma(float *acc, const uint *a, const uint *b, int lane, __local uint *emu)
{
    (void)lane, (void)emu;
    for (int r = 0; r < 8; r++) {
        float s = acc[r];
        for (int k = 0; k < 8; k++)
            s = fma(as_float(intel_sub_group_shuffle(a[r / 2], XMX_TF32_LANE(r, k))), as_float(b[k]), s);
        acc[r] = s;
    }
}
#elif GMLP_GEMM_ISSUE == GMLP_GEMM_ISSUE_SHUFFLES
/* the specification's sample: acc.s_r += sum over i of dot(a.s_r of lane i, b.s_i), each a pair of k (SIMD16: the
 * 16-bit a.s_r of lanes 2i and 2i + 1), lane i's a.s_r by shuffle */
static inline void gmlp_eng_mma(float *acc, const uint *a, const uint *b, int lane, __local uint *emu)
{
    (void)lane, (void)emu;
    for (int r = 0; r < 8; r++) {
        float s = acc[r];
        for (int i = 0; i < 8; i++) {
            const uint bi = b[i];
            const uint lo = intel_sub_group_shuffle(a[r], GMLP_XMX_SIMD == 8 ? i : 2 * i);
            const uint hi = GMLP_XMX_SIMD == 8 ? lo >> 16 : intel_sub_group_shuffle(a[r], 2 * i + 1);
            s = fma(gmlp_eng_value16(lo & 0xffffu), gmlp_eng_value16(bi & 0xffffu), s);
            s = fma(gmlp_eng_value16(hi), gmlp_eng_value16(bi >> 16), s);
        }
        acc[r] = s;
    }
}
#elif GMLP_GEMM_ISSUE
/* the specification's sample: acc.s_r += sum over i of dot(a.s_r of lane i, b.s_i), each a pair of k (SIMD16: the
 * 16-bit a.s_r of lanes 2i and 2i + 1); TF32: acc.s_r += sum over k of A[r][k] b.s_k */
static inline void gmlp_eng_mma(float *acc, const uint *a, const uint *b, int lane, __local uint *emu)
{
    __local uint *av = emu, *bv = emu + 8 * GMLP_XMX_SIMD; /* lane l's vectors at 8 l */
    for (int i = 0; i < 8; i++)
        av[8 * lane + i] = i < ENG_AW ? a[i] : 0u, bv[8 * lane + i] = b[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = 0; XMX_TF32 && r < 8; r++) {
        float s = acc[r];
        for (int k = 0; k < 8; k++)
            s = fma(as_float(av[8 * XMX_TF32_LANE(r, k) + r / 2]), as_float(bv[8 * lane + k]), s);
        acc[r] = s;
    }
    for (int r = 0; !XMX_TF32 && r < 8; r++) {
        float s = acc[r];
        for (int i = 0; i < 8; i++) {
            const uint bi = bv[8 * lane + i];
            const uint a0 = GMLP_XMX_SIMD == 8 ? av[8 * i + r] & 0xffffu : av[8 * (2 * i) + r];
            const uint a1 = GMLP_XMX_SIMD == 8 ? av[8 * i + r] >> 16 : av[8 * (2 * i + 1) + r];
            s = fma(gmlp_eng_value16(a0), gmlp_eng_value16(bi & 0xffffu), s);
            s = fma(gmlp_eng_value16(a1), gmlp_eng_value16(bi >> 16), s);
        }
        acc[r] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
#elif XMX_TF32
/* intel_sub_group_tf32_tf32_matrix_mad_k8(a, b, acc) as the dpas it is: the
 * aliases give the vISA operands their exact sizes (A 4 registers of 16
 * lanes, B 8), which the assembler does not check */
static inline void gmlp_eng_mma(float *c, const uint *a, const uint *b, int lane, __local uint *emu)
{
    (void)lane, (void)emu;
    const float4 fa = as_float4(vload4(0, a));
    const float8 fb = as_float8(vload8(0, b));
    float8 acc = vload8(0, c); /* in place: a separate destination spilled (the accumulators alternating) */
    __asm__ volatile("{\n"
                     ".decl XMX_A v_type=G type=ud num_elts=64 align=GRF alias=<%2,0>\n"
                     ".decl XMX_B v_type=G type=ud num_elts=128 align=GRF alias=<%1,0>\n"
                     "dpas.tf32.tf32.8.8 (M1, 16) %0.0 %0.0 XMX_B.0 XMX_A(0,0)\n"
                     "}\n"
                     : "+rw"(acc)
                     : "rw"(fb), "rw"(fa));
    vstore8(acc, 0, c);
}
#else
#if GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_FP16
#define GMLP_XMX_MAD intel_sub_group_f16_f16_matrix_mad_k16
#else
#define GMLP_XMX_MAD intel_sub_group_bf16_bf16_matrix_mad_k16
#endif
/* The extension's prototype, which the compiler's header hides: overloadable,
 * so that it is the builtin's mangled name (plain, ocloc emits a call to an
 * unresolved function). */
#if GMLP_XMX_SIMD == 8
#define GMLP_XMX_A(a) as_int8(vload8(0, a))
__attribute__((overloadable)) float8 GMLP_XMX_MAD(int8 a, int8 b, float8 acc);
#else
#define GMLP_XMX_A(a) as_short8(convert_ushort8(vload8(0, a)))
__attribute__((overloadable)) float8 GMLP_XMX_MAD(short8 a, int8 b, float8 acc);
#endif
static inline void gmlp_eng_mma(float *c, const uint *a, const uint *b, int lane, __local uint *emu)
{
    (void)lane, (void)emu;
    vstore8(GMLP_XMX_MAD(GMLP_XMX_A(a), as_int8(vload8(0, b)), vload8(0, c)), 0, c);
}
#endif

