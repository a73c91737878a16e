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
 * The layout (PTX ISA, "Shared Memory Matrix Layout", K-major with the
 * 128-byte swizzle): a slice of 64 k is 128 bytes a row of op(A) or of
 * op(B)'s columns, 8 rows an atom of 1024 bytes, the 16-byte chunk c of row
 * r stored at c ^ (r mod 8): gemm_mma.cl's GMLP_MMA_SWIZZLE of 64-deep
 * slices, the slices 1024-byte aligned.  A descriptor names an operand's
 * first row and k step: its start address, the stride between atoms (SBO,
 * 1024 bytes) and the swizzle; a k step of 16 moves the start by 32 bytes
 * and the hardware swizzles the address it computes.
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
#if !(STAGES && SWZ_A && SWZ_B && !TRANS_A && !TRANS_B && !GMLP_MMA_FRAG2 && TK == 64 && WARPS % 4 == 0 &&           \
      TM == 64 * WGS && (TN == 64 || TN == 128))
#error "gemm_mma.cl: GMLP_MMA_WGMMA takes NT products of the instruction's 16-bit operands through cp.async, \
64-deep slices, a warp group per 64 rows and 64 or 128 columns"
#endif

/* The descriptor of a K-major operand with the 128-byte swizzle whose row 0
 * and k step start at local address addr (1024-byte aligned, plus 32 a k
 * step): start >> 4 (bits 0-13), LBO 16 bytes (bits 16-29; unused by this
 * layout), SBO 1024 bytes (bits 32-45), base offset 0 (bits 49-51),
 * swizzle 1 = 128 bytes (bits 62-63). */
static inline ulong gmlp_wg_desc(uint addr)
{
    return (ulong)(addr >> 4 & 0x3fffu) | (ulong)(16 >> 4) << 16 | (ulong)(1024 >> 4) << 32 | (ulong)1 << 62;
}

#if GMLP_GEMM_ISSUE
/* The address a descriptor is given: the offset from the tiles' base (the
 * tiles 1024-byte aligned, so the offset's bits are the address's). */
#define GMLP_WG_ADDR(p) ((uint)((__local const uchar *)(p) - wg_tiles))

/* Element (mn, kk) of the operand desc names (kk < 16), as the instruction
 * reads it: the address of the unswizzled layout, then the 128-byte
 * swizzle on its bits (16-byte chunk bits 4-6 XOR row bits 7-9); NaN for a
 * descriptor of any other layout or swizzle, so that it fails the test. */
static inline float gmlp_wg_element(__local const uchar *base, ulong desc, int mn, int kk)
{
    if (desc >> 62 != 1 || (desc >> 49 & 7))
        return NAN;
    const uint start = (uint)(desc & 0x3fffu) << 4, sbo = (uint)(desc >> 32 & 0x3fffu) << 4;
    uint addr = start + (uint)(mn / 8) * sbo + (uint)(mn % 8) * WG_SLICE_BYTES + (uint)kk * 2;
    addr ^= (addr >> 7 & 7u) << 4;
    return gmlp_mma_value(*(__local const ushort *)(base + addr));
}
/* d += A . B for work-item w of a warp group, A 64 x 16 and B 16 x TN at
 * their descriptors (both K-major: no transpose); every work-item of the
 * group calls it alike. */
static inline void gmlp_wg_mma(float *d, ulong adesc, ulong bdesc, __local const uchar *base, int w)
{
    GMLP_UNROLL for (int i = 0; i < WG_ACCS; i++)
    {
        const int row = 16 * (w / 32) + w % 32 / 4 + 8 * (i / 2 % 2), col = 8 * (i / 4) + 2 * (w % 4) + i % 2;
        float s = d[i];
        for (int kk = 0; kk < 16; kk++)
            s = fma(gmlp_wg_element(base, adesc, row, kk), gmlp_wg_element(base, bdesc, col, kk), s);
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
#if TN == 64
#define GMLP_WG_ACCS(d) GMLP_WG_ACC32(0)
#define GMLP_WG_MMA_TEXT "mma m64n64k16" GMLP_WG_TYPES " {" GMLP_WG_LIST32 "}, %32, %33, 0, 0"
#else
#define GMLP_WG_ACCS(d) GMLP_WG_ACC32(0), GMLP_WG_ACC32(32)
#define GMLP_WG_MMA_TEXT "mma m64n128k16" GMLP_WG_TYPES " {" GMLP_WG_LIST32 ", " GMLP_WG_LIST32_HI "}, %64, %65, 0, 0"
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
            for (int j = 0; j < v; j += 2) { /* v 1: the element and a zero */
                const uint lo = x[j], hi = v > 1 ? x[j + 1] : 0u, d = gmlp_mma_sat(lo | hi << 16);
                x[j] = (ushort)d;
                if (v > 1)
                    x[j + 1] = (ushort)(d >> 16);
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
 * op(A) at la, op(B)'s TN columns at lb, four k steps; then waited for, so
 * that the slice's buffer may be refilled after the next barrier. */
#define GMLP_WG_SLICE(d, la, lb, wg)                                                                          \
    do {                                                                                                      \
        const uint a0 = GMLP_WG_ADDR(la) + (uint)(wg) * 64 * WG_SLICE_BYTES, b0 = GMLP_WG_ADDR(lb);           \
        GMLP_WG_FENCE();                                                                                      \
        GMLP_UNROLL for (int kk = 0; kk < TK / 16; kk++) GMLP_WG_MMA(d, gmlp_wg_desc(a0 + 32 * kk),            \
                                                                     gmlp_wg_desc(b0 + 32 * kk));             \
        GMLP_WG_COMMIT();                                                                                     \
        GMLP_WG_WAIT0(d);                                                                                     \
    } while (0)
