/* Hopper's warp-group matrix instruction (issue #53), a part of gemm_mma.cl
 * (GMLP_MMA_WGMMA=1): the products of a slice on wgmma.mma_async, which
 * reads both operands from local memory by 64-bit descriptors.
 *
 * NVIDIA's OpenCL writes `.target sm_90`, where wgmma needs sm_90a, so the
 * kernel writes each instruction as a marker, a PTX comment that carries
 * its real operands (lib/ops/wgmma_splice.h), and the library splices the
 * instructions into the program's PTX before building it again; unspliced
 * the markers are comments and the kernel would compute nothing, which the
 * splice and the capability ladder refuse.
 *
 * The layouts (PTX ISA, "Shared Memory Matrix Layout", the 128-byte
 * swizzle; CUTLASS's canonical GMMA layouts): atoms of 8 rows of 128
 * bytes (1024 bytes, the slices 1024-byte aligned), the 16-byte chunk c of
 * row r stored at c ^ (r mod 8).  An operand stored along k (op(A) of NN
 * and NT, op(B) of NT) is K-major: a row of 64 k a row of the operand,
 * gemm_mma.cl's GMLP_MMA_SWIZZLE of 64-deep slices; the stride between
 * atoms (SBO) 1024 bytes; a k step of 16 moves the start by 32 bytes.  One
 * stored across k (NN's B, TN's A) is MN-major, the instruction's
 * transpose: rows of 64 elements of m or n, a row a k, the 64 rows of a
 * slice one block of 8 KiB per 64 of m or n (LBO 8192 bytes apart), SBO
 * 1024 between groups of 8 k; a k step moves the start by two atoms.  A
 * descriptor names an operand's first row and k step by its start
 * address, LBO, SBO and the swizzle; the hardware swizzles the address it
 * computes.
 *
 * A warp group (4 warps, 128 work-items) computes 64 rows of C by TN
 * columns, m64nTNk16 a k step; the work-group's WGS warp groups tile TM.
 * Accumulator i of work-item w of a warp group (PTX ISA, "Register
 * fragments for wgmma .m64nNk16"): row 16 (w / 32) + (w % 32) / 4 +
 * 8 ((i / 2) % 2), column 8 (i / 4) + 2 (w % 4) + i % 2.
 *
 * Emulated (GMLP_GEMM_ISSUE), each mma decodes its descriptors and reads
 * local memory by the documented layout and swizzle, so that a wrong
 * descriptor, layout or fragment index gives a wrong product on any OpenCL
 * device (tests/test_gemm_mma.c); the instruction itself is proven only by
 * a GPU's self-test (the capability ladder). */

#define WGS (WARPS / 4)    /* warp groups */
#define WG_ACCS (TN / 2)   /* accumulators a work-item */
#define WG_SLICE_BYTES 128 /* a row of a 64-deep slice of 16-bit elements */
#if !(STAGES && SWZ_A && SWZ_B && !GMLP_MMA_FRAG2 && TK == 64 && WARPS % 4 == 0 && TM == 64 * WGS &&                \
      (TN == 64 || TN == 128))
#error "gemm_mma.cl: GMLP_MMA_WGMMA takes the instruction's 16-bit operands through cp.async, 64-deep slices, \
a warp group per 64 rows and 64 or 128 columns"
#endif
/* the instruction's transposes: an operand stored across k, MN-major */
#define WG_MN_A GMLP_GEMM_TA
#define WG_MN_B (!GMLP_GEMM_TB)
#define WG_KSTEP(mn) ((mn) ? 2048u : 32u) /* bytes a k step of 16 moves an operand's start */

/* The descriptor of an operand in the 128-byte swizzle, K-major or (mn)
 * MN-major, whose row 0 and k step start at local address addr: start >> 4
 * (bits 0-13), LBO (bits 16-29: K-major's unused, 16; MN-major's the 64-row
 * blocks' 8192), SBO 1024 bytes (bits 32-45), base offset 0 (bits 49-51),
 * swizzle 1 = 128 bytes (bits 62-63). */
static inline ulong gmlp_wg_desc(uint addr, const int mn)
{
    return (ulong)(addr >> 4 & 0x3fffu) | (ulong)((mn ? 8192 : 16) >> 4) << 16 | (ulong)(1024 >> 4) << 32 |
           (ulong)1 << 62;
}

#if GMLP_GEMM_ISSUE
/* The address a descriptor is given: the offset from the tiles' base (the
 * tiles 1024-byte aligned, so the offset's bits are the address's). */
#define GMLP_WG_ADDR(p) ((uint)((__local const uchar *)(p) - wg_tiles))

/* Element (mn, kk) of the operand desc names (kk < 16; mn: transposed,
 * MN-major), as the instruction reads it: the address of the unswizzled
 * canonical layout (K-major: rows of k 128 bytes apart in 8-row atoms SBO
 * apart; MN-major: 64 of m or n 2 bytes apart a row, rows of k 128 bytes
 * apart in 8-row atoms SBO apart, the 64-row blocks LBO apart), then the
 * 128-byte swizzle on its bits (16-byte chunk bits 4-6 XOR row bits 7-9);
 * NaN for a descriptor of any other swizzle or a base offset, so that it
 * fails the test. */
static inline float gmlp_wg_element(__local const uchar *base, ulong desc, int mn, int kk, const int mn_major)
{
    if (desc >> 62 != 1 || (desc >> 49 & 7))
        return NAN;
    const uint start = (uint)(desc & 0x3fffu) << 4, lbo = (uint)(desc >> 16 & 0x3fffu) << 4,
               sbo = (uint)(desc >> 32 & 0x3fffu) << 4;
    uint addr = mn_major ? start + (uint)(mn / 64) * lbo + (uint)(mn % 64) * 2 + (uint)(kk / 8) * sbo +
                               (uint)(kk % 8) * WG_SLICE_BYTES
                         : start + (uint)(mn / 8) * sbo + (uint)(mn % 8) * WG_SLICE_BYTES + (uint)kk * 2;
    addr ^= (addr >> 7 & 7u) << 4;
    return gmlp_mma_value(*(__local const ushort *)(base + addr));
}
/* d += A . B for work-item w of a warp group, A 64 x 16 and B 16 x TN at
 * their descriptors, transposed (MN-major) as WG_MN_A and WG_MN_B say;
 * every work-item of the group calls it alike. */
static inline void gmlp_wg_mma(float *d, ulong adesc, ulong bdesc, __local const uchar *base, int w)
{
    GMLP_UNROLL for (int i = 0; i < WG_ACCS; i++)
    {
        const int row = 16 * (w / 32) + w % 32 / 4 + 8 * (i / 2 % 2), col = 8 * (i / 4) + 2 * (w % 4) + i % 2;
        float s = d[i];
        for (int kk = 0; kk < 16; kk++)
            s = fma(gmlp_wg_element(base, adesc, row, kk, WG_MN_A), gmlp_wg_element(base, bdesc, col, kk, WG_MN_B), s);
        d[i] = s;
    }
}
#define GMLP_WG_MMA(d, ad, bd) gmlp_wg_mma(d, ad, bd, wg_tiles, t % 128)
#define GMLP_WG_FENCE()
#define GMLP_WG_PROXY()
#define GMLP_WG_COMMIT()
#define GMLP_WG_WAIT0(d)
#else
/* the local pointer's value is its address in the shared window */
#define GMLP_WG_ADDR(p) ((uint)(size_t)(p))

#if GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_BF16
#define GMLP_WG_TYPES ".f32.bf16.bf16"
#else
#define GMLP_WG_TYPES ".f32.f16.f16"
#endif
#define GMLP_WG_ACC8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
    "+f"(d[i + 6]), "+f"(d[i + 7])
#define GMLP_WG_ACC32(i) GMLP_WG_ACC8(i), GMLP_WG_ACC8(i + 8), GMLP_WG_ACC8(i + 16), GMLP_WG_ACC8(i + 24)
#define GMLP_WG_LIST32                                                                                        \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
    "%23, %24, %25, %26, %27, %28, %29, %30, %31"
#define GMLP_WG_LIST32_HI                                                                                     \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, " \
    "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
/* Every accumulator an in-out operand (separate outputs and inputs read
 * stale values once unrolled), so that the compiler keeps them in
 * registers across the markers and never reads one between an mma and
 * the wait that completes it. */
#if WG_MN_A
#define GMLP_WG_TRANS_A "1"
#else
#define GMLP_WG_TRANS_A "0"
#endif
#if WG_MN_B
#define GMLP_WG_TRANS_B "1"
#else
#define GMLP_WG_TRANS_B "0"
#endif
#define GMLP_WG_TRANS ", " GMLP_WG_TRANS_A ", " GMLP_WG_TRANS_B
#if TN == 64
#define GMLP_WG_ACCS(d) GMLP_WG_ACC32(0)
#define GMLP_WG_MMA_TEXT "mma m64n64k16" GMLP_WG_TYPES " {" GMLP_WG_LIST32 "}, %32, %33" GMLP_WG_TRANS
#else
#define GMLP_WG_ACCS(d) GMLP_WG_ACC32(0), GMLP_WG_ACC32(32)
#define GMLP_WG_MMA_TEXT "mma m64n128k16" GMLP_WG_TYPES " {" GMLP_WG_LIST32 ", " GMLP_WG_LIST32_HI "}, %64, %65" GMLP_WG_TRANS
#endif
static inline void gmlp_wg_mma(float *d, ulong adesc, ulong bdesc)
{
    GMLP_ASM volatile("// gmlp.wgmma.v1 " GMLP_WG_MMA_TEXT : GMLP_WG_ACCS(d) : "l"(adesc), "l"(bdesc) : "memory");
}
static inline void gmlp_wg_wait0(float *d)
{
    GMLP_ASM volatile("// gmlp.wgmma.v1 wait 0" : GMLP_WG_ACCS(d) : : "memory");
}
#define GMLP_WG_MMA(d, ad, bd) gmlp_wg_mma(d, ad, bd)
#define GMLP_WG_FENCE() GMLP_ASM volatile("// gmlp.wgmma.v1 fence" ::: "memory")
/* this work-item's writes of the slices (cp.async's, generic) made visible
 * to wgmma's reads (the async proxy) */
#define GMLP_WG_PROXY() GMLP_ASM volatile("// gmlp.wgmma.v1 proxy" ::: "memory")
#define GMLP_WG_COMMIT() GMLP_ASM volatile("// gmlp.wgmma.v1 commit" ::: "memory")
#define GMLP_WG_WAIT0(d) gmlp_wg_wait0(d)
#endif

/* FP16's half operands saturated in place (half's infinities are +-65504
 * in the mode; wgmma reads local memory as it is, where mma.sync's
 * fragments pass gmlp_mma_native_bits): work-item t's own chunks of the
 * slices at la and lb, after its copies landed, before the proxy fence.
 * Nothing in BF16. */
static inline void gmlp_wg_saturate_op(const int op, __local ushort *s, int t)
{
    const int v = GMLP_STAGE_V(op);
    GMLP_UNROLL for (int l = 0; l < GMLP_STAGE_MAX(MMA_RAW_PER); l++)
    {
        int w, q;
        if (gmlp_mma_raw_chunk(op, t, l, &w, &q)) {
            __local ushort *x = s + gmlp_mma_raw_idx(op, w, q);
            if (v == 8) { /* a 16-byte chunk: one load and store (its local address is 16-byte aligned) */
                uint4 c = *(__local uint4 *)x;
                c = (uint4)(gmlp_mma_sat(c.x), gmlp_mma_sat(c.y), gmlp_mma_sat(c.z), gmlp_mma_sat(c.w));
                *(__local uint4 *)x = c;
            } else if (v == 4) {
                uint2 c = *(__local uint2 *)x;
                *(__local uint2 *)x = (uint2)(gmlp_mma_sat(c.x), gmlp_mma_sat(c.y));
            } else if (v == 2) {
                *(__local uint *)x = gmlp_mma_sat(*(__local uint *)x);
            } else {
                x[0] = (ushort)gmlp_mma_sat(x[0]); /* with a zero above it */
            }
        }
    }
}
static inline void gmlp_wg_saturate(__local RAW_A *la, __local RAW_B *lb, int t)
{
    if (GMLP_GEMM_PRECISION == GMLP_GEMM_PREC_FP16) {
        gmlp_wg_saturate_op(0, (__local ushort *)la, t);
        gmlp_wg_saturate_op(1, (__local ushort *)lb, t);
    }
}

/* A slice's products into warp group wg's accumulators d: its 64 rows of
 * op(A) at la (8 KiB a warp group either way: 64 rows of 128 bytes, or one
 * 64-row block), op(B)'s TN columns at lb, four k steps; then waited for,
 * so that the slice's buffer may be refilled after the next barrier. */
#define GMLP_WG_SLICE(d, la, lb, wg)                                                                          \
    do {                                                                                                      \
        const uint a0 = GMLP_WG_ADDR(la) + (uint)(wg) * 64 * WG_SLICE_BYTES, b0 = GMLP_WG_ADDR(lb);           \
        GMLP_WG_FENCE();                                                                                      \
        GMLP_UNROLL for (int kk = 0; kk < TK / 16; kk++) GMLP_WG_MMA(                                          \
            d, gmlp_wg_desc(a0 + WG_KSTEP(WG_MN_A) * kk, WG_MN_A), gmlp_wg_desc(b0 + WG_KSTEP(WG_MN_B) * kk, WG_MN_B)); \
        GMLP_WG_COMMIT();                                                                                     \
        GMLP_WG_WAIT0(d);                                                                                     \
    } while (0)
