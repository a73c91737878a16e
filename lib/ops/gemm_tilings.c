/* The GEMM engine's tables (gemm_tilings.h): tilings, size classes,
 * defaults.  What chose each entry is in bench/NOTES.md, under "GEMM tilings
 * by name", keyed by the tilings' names; registers and spills per compiler
 * are the portability suite's (tests/test_portability.sh). */
#include "ops/gemm_tilings.h"

#include <stdint.h>
#include <string.h>

const gmlp_kernel_spec gmlp_gemm_tiled = {"gemm_tiled.cl", "gmlp_gemm"};
const gmlp_kernel_spec gmlp_gemm_direct = {"gemm_direct.cl", "gmlp_gemm_direct"};
const gmlp_kernel_spec gmlp_gemm_mma = {"gemm_mma.cl", "gmlp_gemm_mma"};
const gmlp_kernel_spec gmlp_gemm_xmx = {"gemm_xmx.cl", "gmlp_gemm_xmx"};
const gmlp_kernel_spec gmlp_gemm_mfma = {"gemm_mfma.cl", "gmlp_gemm_mfma"};

#define KIB(n) ((size_t)(n) * 1024)
#define K16(k) {[GMLP_GEMM_FP16] = (k), [GMLP_GEMM_BF16] = (k)}
#define NVIDIA GMLP_VENDOR_NVIDIA
#define INTEL GMLP_VENDOR_INTEL
#define AMD GMLP_VENDOR_AMD
/* Intel's are found by their extensions, NVIDIA's by compute capability
 * (gmlp_engines_for): their archs name the offline compilers' targets; gfx12
 * changed WMMA's layout */
static const gmlp_engine engines[] = {
    {GMLP_ENGINE_MMA_SYNC, "mma", NVIDIA, "sm_80 sm_90", 0, 32, 16, 8,
     {[GMLP_GEMM_TF32] = 8, [GMLP_GEMM_FP16] = 16, [GMLP_GEMM_BF16] = 16}, KIB(48),
     {[GMLP_GEMM_TF32] = "mma.sync m16n8k8", [GMLP_GEMM_FP16] = "mma.sync m16n8k16", [GMLP_GEMM_BF16] = "mma.sync m16n8k16"}, 0},
    {GMLP_ENGINE_XMX8, "xmx8", INTEL, "dg2", 0, 8, 8, 8, K16(16), KIB(64),
     {[GMLP_GEMM_FP16] = "dpas (SIMD8)", [GMLP_GEMM_BF16] = "dpas (SIMD8)"}, 0},
    {GMLP_ENGINE_XMX16, "xmx16", INTEL, "pvc", 0, 16, 8, 16, K16(16), KIB(64),
     {[GMLP_GEMM_FP16] = "dpas (SIMD16)", [GMLP_GEMM_BF16] = "dpas (SIMD16)"}, 0},
    {GMLP_ENGINE_XMX16_TF32, "xmx16tf32", INTEL, "pvc", 0, 16, 8, 16, {[GMLP_GEMM_TF32] = 8}, KIB(64),
     {[GMLP_GEMM_TF32] = "dpas tf32 (SIMD16)"}, 0},
    {GMLP_ENGINE_MFMA, "mfma", AMD, "gfx908 gfx90a gfx940 gfx941 gfx942", 0, 64, 16, 16,
     {[GMLP_GEMM_TF32] = 4, [GMLP_GEMM_FP16] = 16}, KIB(64),
     {[GMLP_GEMM_TF32] = "v_mfma_f32_16x16x4f32", [GMLP_GEMM_FP16] = "v_mfma_f32_16x16x16f16"}, 0},
    {GMLP_ENGINE_MFMA_BF16, "mfmabf16", AMD, "gfx90a gfx940 gfx941 gfx942", 0, 64, 16, 16, {[GMLP_GEMM_BF16] = 16},
     KIB(64), {[GMLP_GEMM_BF16] = "v_mfma_f32_16x16x16bf16_1k"}, 0},
    {GMLP_ENGINE_WMMA32, "wmma", AMD, "gfx1100 gfx1101 gfx1102 gfx1103", 32, 32, 16, 16, K16(16), KIB(64),
     {[GMLP_GEMM_FP16] = "v_wmma_f32_16x16x16_f16 (wave32)", [GMLP_GEMM_BF16] = "v_wmma_f32_16x16x16_bf16 (wave32)"}, 0},
    {GMLP_ENGINE_WMMA64, "wmma64", AMD, "gfx1100 gfx1101 gfx1102 gfx1103", 64, 64, 16, 16, K16(16), KIB(64),
     {[GMLP_GEMM_FP16] = "v_wmma_f32_16x16x16_f16 (wave64)", [GMLP_GEMM_BF16] = "v_wmma_f32_16x16x16_bf16 (wave64)"}, 0},
    /* a warp group's m64nNk16 (N 8 to 256), its operands from local memory; NVIDIA's OpenCL reports 48 KiB */
    {GMLP_ENGINE_WGMMA, "wgmma", NVIDIA, "sm_90", 0, 128, 64, 8, K16(16), KIB(48),
     {[GMLP_GEMM_FP16] = "wgmma m64nNk16", [GMLP_GEMM_BF16] = "wgmma m64nNk16"}, KIB(227)},
    /* one work-item's instruction: 16 sums of pairs; OpenCL's least local memory (the direct kernel takes none) */
    {GMLP_ENGINE_AVX512_BF16, "dpbf16", GMLP_VENDOR_ANY, "", 0, 1, 1, 16, {[GMLP_GEMM_BF16] = 2}, KIB(32),
     {[GMLP_GEMM_BF16] = "vdpbf16ps (AVX512_BF16)"}, 0},
};

const gmlp_engine *gmlp_engine_of(unsigned needs)
{
    for (size_t i = 0; needs && i < sizeof engines / sizeof *engines; i++)
        if (needs & engines[i].bit)
            return &engines[i];
    return NULL;
}

bool gmlp_engine_has_arch(const gmlp_engine *e, const char *arch)
{
    const size_t n = strlen(arch);
    for (const char *p = e->archs; n && (p = strstr(p, arch)) != NULL; p += n)
        if ((p == e->archs || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return true;
    return false;
}

const gmlp_engine *gmlp_engines(size_t *n)
{
    *n = sizeof engines / sizeof *engines;
    return engines;
}

const char *gmlp_gemm_precision_name(gmlp_gemm_precision p)
{
    static const char *const names[GMLP_GEMM_PRECISIONS] = {"fp32", "tf32", "fp16", "bf16"};
    return (unsigned)p < GMLP_GEMM_PRECISIONS ? names[p] : "?";
}

#define TILED .kernel = &gmlp_gemm_tiled, .vw = 4
#define DIRECT .kernel = &gmlp_gemm_direct, .tk = 1
#define CPU_ONLY .devices = CL_DEVICE_TYPE_CPU
#define NVIDIA_ONLY .vendor = GMLP_VENDOR_NVIDIA
/* NVIDIA's tensor cores through mma.sync (cl_kernels/gemm_mma.cl): any
 * device whose capability ladder proved the engine (tests: emulated) */
#define MMA_SYNC .kernel = &gmlp_gemm_mma, .vw = 4, .needs = GMLP_ENGINE_MMA_SYNC
/* Hopper's wgmma (gemm_mma.cl's GMLP_MMA_WGMMA): NT products of 16-bit operands, swizzled 64-deep slices */
#define WGMMA .kernel = &gmlp_gemm_mma, .vw = 8, .needs = GMLP_ENGINE_WGMMA, .tk = 64, .swizzle = 1, .wgmma = 1, LOW_16BIT
#define TF32 .precisions = GMLP_GEMM_PREC_SET(GMLP_GEMM_TF32)
#define PRECISIONS_16BIT (GMLP_GEMM_PREC_SET(GMLP_GEMM_FP16) | GMLP_GEMM_PREC_SET(GMLP_GEMM_BF16))
#define LOW_16BIT .precisions = PRECISIONS_16BIT
/* Intel's and AMD's engines (gemm_xmx.cl, gemm_mfma.cl on the part
 * gemm_engine.cl): scalar loads; built and emulated offline only so far */
#define XMX_KERNEL .kernel = &gmlp_gemm_xmx, .vw = 1
#define XMX(simd) XMX_KERNEL, .needs = GMLP_ENGINE_XMX##simd, .subgroup = simd, LOW_16BIT
#define MFMA .kernel = &gmlp_gemm_mfma, .vw = 1
/* x86's vdpbf16ps in the direct kernel (cl_kernels/gemm_direct.cl), 16 floats wide */
#define DPBF16                                                                                                        \
    DIRECT, .vw = 16, CPU_ONLY, .needs = GMLP_ENGINE_AVX512_BF16, .precisions = GMLP_GEMM_PREC_SET(GMLP_GEMM_BF16),  \
    .defines = "-DGMLP_DIRECT_DPBF16=1"

/* Names: tiled_TMxTNxTK_WMxWN, direct_TMxTN_WMxWN_vVW (test_gemm checks
 * each against its numbers). */
static const gmlp_tiling tilings[] = {
    /* GPUs' large products: 16 x 16 work-items of 8 x 8 outputs.  8-deep
     * slices hold in NVIDIA's 255 registers and spill elsewhere (RDNA3, dg2,
     * tgllp): 2-deep there. */
    {.name = "tiled_128x128x8_8x8", TILED, .tm = 128, .tn = 128, .tk = 8, .wm = 8, .wn = 8, NVIDIA_ONLY},
    {.name = "tiled_128x128x2_8x8", TILED, .tm = 128, .tn = 128, .tk = 2, .wm = 8, .wn = 8},
    /* every device's small tilings, in order of preference */
    {.name = "tiled_64x64x8_4x4", TILED, .tm = 64, .tn = 64, .tk = 8, .wm = 4, .wn = 4},
    {.name = "tiled_32x32x8_4x4", TILED, .tm = 32, .tn = 32, .tk = 8, .wm = 4, .wn = 4},
    {.name = "tiled_16x16x4_4x4", TILED, .tm = 16, .tn = 16, .tk = 4, .wm = 4, .wn = 4},
    {.name = "tiled_4x4x4_4x4", TILED, .tm = 4, .tn = 4, .tk = 4, .wm = 4, .wn = 4}, /* one work-item */
    /* few output tiles over a deep k: more, smaller work-groups */
    {.name = "tiled_16x16x16_2x2", TILED, .tm = 16, .tn = 16, .tk = 16, .wm = 2, .wn = 2},
    /* CPUs: the direct kernel's blocks */
    {.name = "direct_16x32_4x16_v8", DIRECT, .tm = 16, .tn = 32, .wm = 4, .wn = 16, .vw = 8, CPU_ONLY},
    {.name = "direct_24x32_6x16_v8", DIRECT, .tm = 24, .tn = 32, .wm = 6, .wn = 16, .vw = 8, CPU_ONLY},
    {.name = "direct_4x64_1x32_v8", DIRECT, .tm = 4, .tn = 64, .wm = 1, .wn = 32, .vw = 8, CPU_ONLY},
    /* AVX-512: 6 x 32 outputs a work-item, 12 zmm accumulators: twice the 8-wide block's FMAs for as many
     * instructions a k (PoCL's machine code: 31 a k against 32) */
    {.name = "direct_24x64_6x32_v16", DIRECT, .tm = 24, .tn = 64, .wm = 6, .wn = 32, .vw = 16, CPU_ONLY,
     .native_vw = true},
    /* The tuner's other candidates: neighbours of the defaults in depth,
     * shape and outputs per work-item, picked by hand.  64x64x16_4x4 and
     * 32x32x16_4x4 are left out: they spill on gfx1100. */
    {.name = "tiled_128x64x4_8x4", TILED, .tm = 128, .tn = 64, .tk = 4, .wm = 8, .wn = 4},
    {.name = "tiled_64x128x4_4x8", TILED, .tm = 64, .tn = 128, .tk = 4, .wm = 4, .wn = 8},
    {.name = "tiled_64x64x4_4x4", TILED, .tm = 64, .tn = 64, .tk = 4, .wm = 4, .wn = 4},
    {.name = "tiled_32x64x8_4x4", TILED, .tm = 32, .tn = 64, .tk = 8, .wm = 4, .wn = 4},
    {.name = "tiled_64x32x8_4x4", TILED, .tm = 64, .tn = 32, .tk = 8, .wm = 4, .wn = 4},
    {.name = "tiled_32x32x8_2x2", TILED, .tm = 32, .tn = 32, .tk = 8, .wm = 2, .wn = 2},
    {.name = "tiled_16x16x8_2x2", TILED, .tm = 16, .tn = 16, .tk = 8, .wm = 2, .wn = 2},
    {.name = "direct_4x64_1x4_v4", DIRECT, .tm = 4, .tn = 64, .wm = 1, .wn = 4, .vw = 4},
    {.name = "direct_8x64_2x8_v4", DIRECT, .tm = 8, .tn = 64, .wm = 2, .wn = 8, .vw = 4},
    /* spill on dg2, gfx1100 and tgllp */
    {.name = "tiled_128x128x4_8x8", TILED, .tm = 128, .tn = 128, .tk = 4, .wm = 8, .wn = 8, NVIDIA_ONLY},
    {.name = "tiled_64x64x8_8x8", TILED, .tm = 64, .tn = 64, .tk = 8, .wm = 8, .wn = 8, NVIDIA_ONLY},
    /* CPUs: other blocks of the direct kernel, and float4 for 128-bit vector units */
    {.name = "direct_12x32_3x16_v8", DIRECT, .tm = 12, .tn = 32, .wm = 3, .wn = 16, .vw = 8, CPU_ONLY},
    {.name = "direct_32x48_4x24_v8", DIRECT, .tm = 32, .tn = 48, .wm = 4, .wn = 24, .vw = 8, CPU_ONLY},
    {.name = "direct_24x16_6x8_v8", DIRECT, .tm = 24, .tn = 16, .wm = 6, .wn = 8, .vw = 8, CPU_ONLY},
    {.name = "direct_16x16_4x8_v4", DIRECT, .tm = 16, .tn = 16, .wm = 4, .wn = 8, .vw = 4, CPU_ONLY},
    /* CPUs with AVX512_BF16 under PoCL: BF16's products through vdpbf16ps, NT and NN blocks */
    {.name = "dpbf16_12x32_3x16_v16", DPBF16, .tm = 12, .tn = 32, .wm = 3, .wn = 16},
    {.name = "dpbf16_24x32_6x16_v16", DPBF16, .tm = 24, .tn = 32, .wm = 6, .wn = 16},
    /* NN on B's pairs along k (linear weights so packed): 6 x 32 outputs, 12 zmm accumulators, a vdpbf16ps per
     * A pair's broadcast and per 64-byte load of B (16 columns x 2 k) */
    {.name = "dpbf16_24x64_6x32_v16", DPBF16, .tm = 24, .tn = 64, .wm = 6, .wn = 32},
    /* Tensor cores: 8 warps of 64 x 32 (4 x 4 tiles of m16n8), or 4 warps
     * of 32 x 32.  32-deep slices of 16-bit pairs take as much local memory
     * as 16-deep ones of tf32 words: 40 KiB of the 48 a group may have. */
    {.name = "mma_128x128x32_8x8", MMA_SYNC, .tm = 128, .tn = 128, .tk = 32, .wm = 8, .wn = 8, LOW_16BIT},
    {.name = "mma_128x128x16_8x8", MMA_SYNC, .tm = 128, .tn = 128, .tk = 16, .wm = 8, .wn = 8,
     .precisions = GMLP_GEMM_LOW_PRECISIONS},
    {.name = "mma_64x64x32_4x8", MMA_SYNC, .tm = 64, .tn = 64, .tk = 32, .wm = 4, .wn = 8,
     .precisions = GMLP_GEMM_LOW_PRECISIONS},
    {.name = "mma_64x64x16_4x8", MMA_SYNC, .tm = 64, .tn = 64, .tk = 16, .wm = 4, .wn = 8,
     .precisions = GMLP_GEMM_LOW_PRECISIONS},
    /* 4 warps of 64 x 32 */
    {.name = "mma_128x64x16_8x8", MMA_SYNC, .tm = 128, .tn = 64, .tk = 16, .wm = 8, .wn = 8,
     .precisions = GMLP_GEMM_LOW_PRECISIONS},
    /* The 16-bit formats' fragments of operands stored along k (the linear
     * layers' both, the token mixing's weights) by ldmatrix: a quarter of
     * the loads from local memory (static: sm_90 SASS, 2026-11-26) */
    {.name = "mma_64x64x32_4x8_ldsm", MMA_SYNC, .tm = 64, .tn = 64, .tk = 32, .wm = 4, .wn = 8, .ldsm = 1, LOW_16BIT},
    {.name = "mma_64x64x16_4x8_ldsm", MMA_SYNC, .tm = 64, .tn = 64, .tk = 16, .wm = 4, .wn = 8, .ldsm = 1, LOW_16BIT},
    {.name = "mma_128x128x16_8x8_ldsm", MMA_SYNC, .tm = 128, .tn = 128, .tk = 16, .wm = 8, .wn = 8, .ldsm = 1,
     LOW_16BIT},
    /* The same through cp.async (S slices in flight, rounded as the
     * fragments load): no slice held in registers.  Local memory (48 KiB a
     * group on NVIDIA) bounds S x the slices: TF32 128 x 128 at 16-deep
     * 40 KiB for 2, 8-deep 36 KiB for 3; 128 x 64 (4 warps of 64 x 32)
     * 16-deep 36 KiB (16-bit pairs padded to 8) for 2, 45 KiB (TF32) for 3. */
    {.name = "mma_128x128x16_8x8_s2", MMA_SYNC, .tm = 128, .tn = 128, .tk = 16, .wm = 8, .wn = 8, .stages = 2, TF32},
    {.name = "mma_128x128x8_8x8_s3", MMA_SYNC, .tm = 128, .tn = 128, .tk = 8, .wm = 8, .wn = 8, .stages = 3, TF32},
    {.name = "mma_128x64x16_8x8_s2", MMA_SYNC, .tm = 128, .tn = 64, .tk = 16, .wm = 8, .wn = 8, .stages = 2,
     .precisions = GMLP_GEMM_LOW_PRECISIONS},
    {.name = "mma_128x64x16_8x8_s3", MMA_SYNC, .tm = 128, .tn = 64, .tk = 16, .wm = 8, .wn = 8, .stages = 3, TF32},
    {.name = "mma_64x64x16_4x8_s3", MMA_SYNC, .tm = 64, .tn = 64, .tk = 16, .wm = 4, .wn = 8, .stages = 3,
     .precisions = GMLP_GEMM_LOW_PRECISIONS},
    {.name = "mma_64x64x16_4x8_s4", MMA_SYNC, .tm = 64, .tn = 64, .tk = 16, .wm = 4, .wn = 8, .stages = 4, TF32},
    /* BF16 of bfloat16 operands, FP16 of half ones (a 16-bit model's
     * weights and LayerNorm outputs): slices copied by cp.async, fragments
     * by ldmatrix, nothing computed between but FP16's saturation; float
     * operands as in the rows above */
    {.name = "mma_64x64x16_4x8_s3_ldsm", MMA_SYNC, .tm = 64, .tn = 64, .tk = 16, .wm = 4, .wn = 8, .stages = 3,
     .ldsm = 1, LOW_16BIT},
    {.name = "mma_64x64x16_4x8_s4_ldsm", MMA_SYNC, .tm = 64, .tn = 64, .tk = 16, .wm = 4, .wn = 8, .stages = 4,
     .ldsm = 1, LOW_16BIT},
    /* 4 warps of 64 x 64 (CUTLASS's shape for mma.sync: half the fragment
     * loads an mma of 32 x 32; the epilogue called, gemm_mma.cl), through
     * cp.async, as many slices in flight as 48 KiB hold of float operands,
     * or (s3_ldsm) of 16-bit ones, which 16-bit models' linear layers are:
     * 211-255 registers in clang's sm_90 build, no spill (static, 2026-11-27) */
    {.name = "mma_128x128x16_8x16_s2_ldsm", MMA_SYNC, .tm = 128, .tn = 128, .tk = 16, .wm = 8, .wn = 16, .stages = 2,
     .ldsm = 1, LOW_16BIT},
    {.name = "mma_128x128x16_8x16_s3_ldsm", MMA_SYNC, .tm = 128, .tn = 128, .tk = 16, .wm = 8, .wn = 16, .stages = 3,
     .ldsm = 1, LOW_16BIT},
    {.name = "mma_128x128x8_8x16_s3", MMA_SYNC, .tm = 128, .tn = 128, .tk = 8, .wm = 8, .wn = 16, .stages = 3, TF32},
    /* Issue #52's: 16-bit operands' slices swizzled (no pad: 3 slices 32
     * deep fill the 48 KiB), their fragments by ldmatrix either way they are
     * stored, double-buffered in registers, the slice loop pipelined
     * (gemm_mma.cl: GMLP_MMA_SWIZZLE, GMLP_MMA_FRAG2); 8 warps of 64 x 32: of
     * 64 x 64 the accumulators and two k-steps' fragments spilled (255
     * registers, sm_90, 2026-12-03); their blocks in bands of 8 block rows
     * (GMLP_MMA_RASTER: L2 reuse over 1,024 rows of A).  Candidates until a
     * GPU measures them. */
    {.name = "mma_128x128x32_8x8_s3_ldsm_swz_f2_r8", MMA_SYNC, .tm = 128, .tn = 128, .tk = 32, .wm = 8, .wn = 8,
     .stages = 3, .ldsm = 1, .swizzle = 1, .frag2 = 1, .raster = 8, LOW_16BIT},
    {.name = "mma_128x128x32_8x8_s2_ldsm_swz_f2_r8", MMA_SYNC, .tm = 128, .tn = 128, .tk = 32, .wm = 8, .wn = 8,
     .stages = 2, .ldsm = 1, .swizzle = 1, .frag2 = 1, .raster = 8, LOW_16BIT},
    {.name = "mma_128x128x16_8x8_s4_ldsm_swz_f2_r8", MMA_SYNC, .tm = 128, .tn = 128, .tk = 16, .wm = 8, .wn = 8,
     .stages = 4, .ldsm = 1, .swizzle = 1, .frag2 = 1, .raster = 8, LOW_16BIT},
    /* Issue #53's: Hopper's wgmma, a warp group of 4 warps per 64 rows of C, its operands read by descriptor
     * from 64-deep slices in the 128-byte swizzle (K-major, or MN-major where stored across k), every
     * transpose; two slices in flight in NVIDIA's reported 48 KiB: 2 warp
     * groups of 64 x 64 (m64n64k16), or one of 64 x 128 (m64n128k16).  Candidates until a GPU measures them
     * (offline: bench/NOTES.md, "wgmma rows"). */
    {.name = "wgmma_128x64x64_8x4_s2_swz_r8", WGMMA, .tm = 128, .tn = 64, .wm = 8, .wn = 4, .stages = 2, .raster = 8},
    {.name = "wgmma_64x128x64_8x8_s2_swz_r8", WGMMA, .tm = 64, .tn = 128, .wm = 8, .wn = 8, .stages = 2, .raster = 8},
    /* two warp groups of 64 x 128, three or four slices in flight: 96 or 128 KiB, past what NVIDIA's OpenCL
     * reports (the ladder's self-test is its probe) */
    {.name = "wgmma_128x128x64_8x8_s3_swz_r8", WGMMA, .tm = 128, .tn = 128, .wm = 8, .wn = 8, .stages = 3, .raster = 8},
    {.name = "wgmma_128x128x64_8x8_s4_swz_r8", WGMMA, .tm = 128, .tn = 128, .wm = 8, .wn = 8, .stages = 4, .raster = 8},
    /* Intel XMX: 4 sub-groups of 32 x 8 (DG2's 128 registers allow 4 dpas a
     * k-step); on SIMD16 16 of 16 x 16, 16 work-items along n (a sub-group
     * one row of the group: Intel's CPU runtime forms them along dimension 0) */
    {.name = "xmx8_64x64x16_4x8", XMX(8), .tm = 64, .tn = 64, .tk = 16, .wm = 4, .wn = 8,
     .defines = "-DGMLP_XMX_SIMD=8"},
    {.name = "xmx16_32x128x16_2x8", XMX(16), .tm = 32, .tn = 128, .tk = 16, .wm = 2, .wn = 8,
     .defines = "-DGMLP_XMX_SIMD=16"},
    /* the same in TF32: 16 k a slice are two dpas steps of 8 */
    {.name = "xmx16tf32_32x128x16_2x8", XMX_KERNEL, .needs = GMLP_ENGINE_XMX16_TF32, .subgroup = 16, TF32, .tm = 32,
     .tn = 128, .tk = 16, .wm = 2, .wn = 8, .defines = "-DGMLP_XMX_SIMD=16"},
    /* AMD: MFMA, 4 wavefronts of 64 x 64 (TF32 rounded, then fp32 MFMA);
     * WMMA, 32 x 32 a wave */
    {.name = "mfma_128x128x16_8x8", MFMA, .tm = 128, .tn = 128, .tk = 16, .wm = 8, .wn = 8,
     .needs = GMLP_ENGINE_MFMA, .precisions = GMLP_GEMM_PREC_SET(GMLP_GEMM_TF32) | GMLP_GEMM_PREC_SET(GMLP_GEMM_FP16)},
    {.name = "mfmabf16_128x128x16_8x8", MFMA, .tm = 128, .tn = 128, .tk = 16, .wm = 8, .wn = 8,
     .needs = GMLP_ENGINE_MFMA_BF16, .precisions = GMLP_GEMM_PREC_SET(GMLP_GEMM_BF16)},
    {.name = "wmma_64x64x16_4x8", MFMA, .tm = 64, .tn = 64, .tk = 16, .wm = 4, .wn = 8, .needs = GMLP_ENGINE_WMMA32,
     LOW_16BIT, .defines = "-DGMLP_MFMA_WMMA=1"},
    {.name = "wmma64_64x64x16_4x4", MFMA, .tm = 64, .tn = 64, .tk = 16, .wm = 4, .wn = 4, .needs = GMLP_ENGINE_WMMA64,
     LOW_16BIT, .defines = "-DGMLP_MFMA_WMMA=1 -DGMLP_MFMA_WAVE=64"},
};

/* The entry of bench/NOTES.md's "GEMM tilings by name" that chose a row. */
#define NOTES(name) "bench/NOTES.md, GEMM tilings by name: " name

static const gmlp_gemm_sizes sizes[] = {
    /* a core runs one work-group at a time; on PoCL large tiles beat small ones even at one per core */
    {.devices = CL_DEVICE_TYPE_CPU, .narrow = 16, .large_tile = 128, .large_groups_per_cu = 1, .small_tile = 64,
     .deep_k = 0, .measured = NOTES("Size classes")},
    /* a few work-groups per compute unit to switch between while others wait on memory: a guess */
    {.devices = 0, .narrow = 16, .large_tile = 128, .large_groups_per_cu = 4, .small_tile = 64, .deep_k = 256,
     .measured = NOTES("Size classes")},
};

static const gmlp_gemm_split_row splits[] = {
    /* CPUs: never.  PoCL runs a work-group per core on a few cores, which
     * any product's tiles already outnumber: the partial sums' round trip
     * through memory would only add time. */
    {.devices = CL_DEVICE_TYPE_CPU, .max_parts = 0, .measured = "none needed: cores are few"},
    /* GPUs (NVIDIA, AMD, Intel): a first guess, not measured (no GPU ran it
     * yet); to be tuned on one.  The aim: gmlp_s16_224 at batch 1 on an H100,
     * whose fc2 and stem (196 x 256 over k = 768) are 16 tiles of 64 x 64
     * for 132 SMs: 8 parts of 96.  Parts under 64 deep would spend more on
     * the partial sums than they save. */
    {.devices = CL_DEVICE_TYPE_GPU, .min_k = 256, .part_k = 64, .max_parts = 16,
     .measured = "a first guess: to be tuned on a GPU"},
    /* other devices (accelerators): never, until one is measured */
    {.max_parts = 0, .measured = "none measured"},
};

static const gmlp_gemm_forms_row forms[] = {
    /* CPUs: not fused.  The LayerNorms are 3% of gmlp_ti16_224's forward on PoCL, and the direct kernel's
     * prologues cost more: norm(A) normalises and broadcasts each A element as a scalar in the outer
     * products, norm(B) merges each k row's parts again in every work-item (the spatial GEMM 11x its plain
     * time); whole forwards 0.10-0.92x unfused (2-core EPYC, Zen 5, 2026-12-03).  The linear weights packed
     * in x out: the linear layers on the outer products; BF16's, where vdpbf16ps runs, as pairs along k: one
     * load of B a vdpbf16ps, 1.3-2.6x the file's layout's NT dot products (2026-12-03, the machine shared) */
    {.devices = CL_DEVICE_TYPE_CPU, .norm_a = false, .norm_b = false, .linear_kn = true,
     .pairs_precisions = GMLP_GEMM_PREC_SET(GMLP_GEMM_BF16), .pairs_needs = GMLP_ENGINE_AVX512_BF16,
     .measured = "bench/NOTES.md, The fused LayerNorm's second half; Linear weights packed at load; BF16's linear "
                 "weights as pairs along k"},
    /* GPUs and others: unfused until measured on one (the portable tiled
     * kernel has both prologues; the tensor-core rows stage operands
     * untouched and have none); the file's layout, which the tuned tilings
     * were chosen on */
    {.norm_a = false, .norm_b = false, .linear_kn = false, .measured = "none measured"},
};

static const gmlp_gemm_default defaults[] = {
    /* NVIDIA in TF32, FP16 and BF16: the tensor cores where the capability
     * ladder passes, else the later rows' portable tilings (any device type:
     * tests pretend with an emulated engine).  The H100's tuning run: 64 x 64
     * tiles of 4 warps, slices staged through registers, for every product
     * but TF32's large NT (128 x 128, 8 warps); deep TF32 products (k >= 256
     * over few tiles) on the cp.async staging.  Narrow products stay portable.
     * The 16-bit formats' winners with their fragments by ldmatrix first:
     * chosen from their SASS, not yet timed (each falls back to the next
     * if its capability ladder fails). */
    {.vendor = GMLP_VENDOR_NVIDIA, .size = GMLP_GEMM_LARGE, .form = GMLP_FORM_NT, .precisions = PRECISIONS_16BIT,
     .tilings = {"mma_64x64x32_4x8_ldsm", "mma_64x64x32_4x8", "mma_64x64x16_4x8"}, .measured = NOTES("mma_64x64x32_4x8")},
    {.vendor = GMLP_VENDOR_NVIDIA, .size = GMLP_GEMM_LARGE, .form = GMLP_FORM_NT, .precisions = GMLP_GEMM_LOW_PRECISIONS,
     .tilings = {"mma_128x128x16_8x8", "mma_64x64x16_4x8"}, .measured = NOTES("mma_128x128x16_8x8")},
    {.vendor = GMLP_VENDOR_NVIDIA, .size = GMLP_GEMM_DEEP, .form = GMLP_FORM_ANY, .precisions = PRECISIONS_16BIT,
     .tilings = {"mma_64x64x32_4x8_ldsm", "mma_64x64x32_4x8", "mma_64x64x16_4x8"}, .measured = NOTES("mma_64x64x32_4x8")},
    {.vendor = GMLP_VENDOR_NVIDIA, .size = GMLP_GEMM_DEEP, .form = GMLP_FORM_ANY, .precisions = GMLP_GEMM_LOW_PRECISIONS,
     .tilings = {"mma_64x64x16_4x8_s3", "mma_64x64x16_4x8"}, .measured = NOTES("mma_64x64x16_4x8_s3")},
    {.vendor = GMLP_VENDOR_NVIDIA, .size = GMLP_GEMM_LARGE, .form = GMLP_FORM_ANY, .precisions = PRECISIONS_16BIT,
     .tilings = {"mma_64x64x16_4x8_ldsm", "mma_64x64x16_4x8", "mma_64x64x32_4x8"}, .measured = NOTES("mma_64x64x16_4x8")},
    {.vendor = GMLP_VENDOR_NVIDIA, .size = GMLP_GEMM_LARGE, .form = GMLP_FORM_ANY, .precisions = GMLP_GEMM_LOW_PRECISIONS,
     .tilings = {"mma_64x64x16_4x8", "mma_64x64x32_4x8"}, .measured = NOTES("mma_64x64x16_4x8")},
    {.vendor = GMLP_VENDOR_NVIDIA, .size = GMLP_GEMM_SMALL, .form = GMLP_FORM_ANY, .precisions = PRECISIONS_16BIT,
     .tilings = {"mma_64x64x16_4x8_ldsm", "mma_64x64x16_4x8", "mma_64x64x32_4x8"}, .measured = NOTES("mma_64x64x16_4x8")},
    {.vendor = GMLP_VENDOR_NVIDIA, .size = GMLP_GEMM_SMALL, .form = GMLP_FORM_ANY, .precisions = GMLP_GEMM_LOW_PRECISIONS,
     .tilings = {"mma_64x64x16_4x8", "mma_64x64x32_4x8"}, .measured = NOTES("mma_64x64x16_4x8")},
    /* Intel's and AMD's engines for every product but the narrow ones, by
     * design (no such GPU has run them) */
    {.vendor = GMLP_VENDOR_INTEL, .size = GMLP_GEMM_LARGE, .form = GMLP_FORM_ANY, .precisions = GMLP_GEMM_LOW_PRECISIONS,
     .tilings = {"xmx16_32x128x16_2x8", "xmx16tf32_32x128x16_2x8", "xmx8_64x64x16_4x8"}, .measured = NOTES("xmx8_64x64x16_4x8")},
    {.vendor = GMLP_VENDOR_INTEL, .size = GMLP_GEMM_SMALL, .form = GMLP_FORM_ANY, .precisions = GMLP_GEMM_LOW_PRECISIONS,
     .tilings = {"xmx16_32x128x16_2x8", "xmx16tf32_32x128x16_2x8", "xmx8_64x64x16_4x8"}, .measured = NOTES("xmx8_64x64x16_4x8")},
    {.vendor = GMLP_VENDOR_AMD, .size = GMLP_GEMM_LARGE, .form = GMLP_FORM_ANY, .precisions = GMLP_GEMM_LOW_PRECISIONS,
     .tilings = {"mfma_128x128x16_8x8", "mfmabf16_128x128x16_8x8", "wmma_64x64x16_4x8", "wmma64_64x64x16_4x4"},
     .measured = NOTES("mfma_128x128x16_8x8")},
    {.vendor = GMLP_VENDOR_AMD, .size = GMLP_GEMM_SMALL, .form = GMLP_FORM_ANY, .precisions = GMLP_GEMM_LOW_PRECISIONS,
     .tilings = {"wmma_64x64x16_4x8", "wmma64_64x64x16_4x4"}, .measured = NOTES("mfma_128x128x16_8x8")},
    /* NVIDIA GPUs where a tuning run on an H100 beat the rows below */
    {.devices = CL_DEVICE_TYPE_GPU, .vendor = GMLP_VENDOR_NVIDIA, .size = GMLP_GEMM_LARGE, .form = GMLP_FORM_NN,
     .tilings = {"tiled_32x64x8_4x4", "tiled_128x128x8_8x8", "tiled_128x128x2_8x8"},
     .measured = NOTES("tiled_32x64x8_4x4")},
    {.devices = CL_DEVICE_TYPE_GPU, .vendor = GMLP_VENDOR_NVIDIA, .size = GMLP_GEMM_SMALL, .form = GMLP_FORM_NN,
     .tilings = {"tiled_16x16x16_2x2"}, .measured = NOTES("tiled_16x16x16_2x2")},
    {.devices = CL_DEVICE_TYPE_GPU, .vendor = GMLP_VENDOR_NVIDIA, .size = GMLP_GEMM_NARROW, .form = GMLP_FORM_NT,
     .tilings = {"tiled_16x16x16_2x2", "tiled_16x16x4_4x4", "tiled_4x4x4_4x4"},
     .measured = NOTES("tiled_16x16x16_2x2")},
    /* CPUs: the direct kernel for every product; BF16's linear layers (not narrow) through vdpbf16ps where
     * there is one */
    {.devices = CL_DEVICE_TYPE_CPU, .size = GMLP_GEMM_NARROW, .form = GMLP_FORM_ANY,
     .tilings = {"direct_4x64_1x32_v8"}, .measured = NOTES("direct_4x64_1x32_v8")},
    {.devices = CL_DEVICE_TYPE_CPU, .size = GMLP_GEMM_ANY_SIZE, .form = GMLP_FORM_NT,
     .precisions = GMLP_GEMM_PREC_SET(GMLP_GEMM_BF16), .tilings = {"dpbf16_12x32_3x16_v16", "direct_16x32_4x16_v8"},
     .measured = NOTES("dpbf16_12x32_3x16_v16")},
    {.devices = CL_DEVICE_TYPE_CPU, .size = GMLP_GEMM_ANY_SIZE, .form = GMLP_FORM_NT,
     .tilings = {"direct_16x32_4x16_v8"}, .measured = NOTES("direct_16x32_4x16_v8")},
    {.devices = CL_DEVICE_TYPE_CPU, .size = GMLP_GEMM_ANY_SIZE, .form = GMLP_FORM_ANY,
     .precisions = GMLP_GEMM_PREC_SET(GMLP_GEMM_BF16),
     .tilings = {"dpbf16_24x64_6x32_v16", "dpbf16_24x32_6x16_v16", "direct_24x32_6x16_v8"},
     .measured = NOTES("dpbf16_24x64_6x32_v16")},
    {.devices = CL_DEVICE_TYPE_CPU, .size = GMLP_GEMM_ANY_SIZE, .form = GMLP_FORM_ANY,
     .tilings = {"direct_24x64_6x32_v16", "direct_24x32_6x16_v8"}, .measured = NOTES("direct_24x64_6x32_v16")},
    /* GPUs: the large tiles, unspilled first (8-deep where they hold) */
    {.devices = CL_DEVICE_TYPE_GPU, .size = GMLP_GEMM_LARGE, .form = GMLP_FORM_ANY,
     .tilings = {"tiled_128x128x8_8x8", "tiled_128x128x2_8x8"}, .measured = NOTES("tiled_128x128x8_8x8")},
    {.devices = CL_DEVICE_TYPE_GPU, .size = GMLP_GEMM_DEEP, .form = GMLP_FORM_ANY, .tilings = {"tiled_16x16x16_2x2"},
     .measured = NOTES("tiled_16x16x16_2x2")},
    /* narrow products: tiles of which little is padding */
    {.devices = CL_DEVICE_TYPE_GPU, .size = GMLP_GEMM_NARROW, .form = GMLP_FORM_ANY,
     .tilings = {"tiled_16x16x4_4x4", "tiled_4x4x4_4x4"}, .measured = NOTES("tiled_16x16x4_4x4")},
    /* the fallback of every product, last */
    {.size = GMLP_GEMM_ANY_SIZE, .form = GMLP_FORM_ANY,
     .tilings = {"tiled_64x64x8_4x4", "tiled_32x32x8_4x4", "tiled_16x16x4_4x4", "tiled_4x4x4_4x4"},
     .measured = NOTES("tiled_64x64x8_4x4")},
};
#define N_DEFAULTS (sizeof defaults / sizeof *defaults)

const gmlp_tiling *gmlp_gemm_tilings(size_t *n)
{
    *n = sizeof tilings / sizeof *tilings;
    return tilings;
}

const gmlp_tiling *gmlp_gemm_tiling_named(const char *name)
{
    for (size_t i = 0; name && i < sizeof tilings / sizeof *tilings; i++)
        if (!strcmp(tilings[i].name, name))
            return &tilings[i];
    return NULL;
}

/* gemm_mma.cl's words of one operand's slice, W wide: stored along k (W
 * rows of TK / PK words, padded by 4) or across it (TK / PK rows of W,
 * padded by 8), whichever is larger; PK elements per word, 1 for tf32. */
static size_t mma_slice_words(size_t w, size_t tk, size_t pk)
{
    const size_t along = w * (tk / pk + 4), across = tk / pk * (w + 8);
    return along > across ? along : across;
}

/* The cp.async staging's bytes of one operand's slice, W wide, stored as e
 * (the slices hold the stored elements): along k (W rows of TK, padded by 4
 * for tf32, by 8 for 16-bit pairs) or across it (TK rows of W, padded by 8,
 * by 4); unpadded where swizzled (the instruction's 16-bit bits); gemm_mma.cl's
 * MMA_RAW_LD and MMA_RAW_SIZE. */
/* whether storage e holds precision p's 16-bit operand bits */
static bool native16(gmlp_elem e, gmlp_gemm_precision p)
{
    return (e == GMLP_ELEM_BF16 && p == GMLP_GEMM_BF16) || (e == GMLP_ELEM_F16 && p == GMLP_GEMM_FP16);
}

static size_t mma_raw_bytes(const gmlp_tiling *t, size_t w, gmlp_elem e, bool along_k, gmlp_gemm_precision p)
{
    const size_t tk = (size_t)t->tk, tf32 = p == GMLP_GEMM_TF32;
    if (t->swizzle && native16(e, p))
        return w * tk * gmlp_elem_size(e);
    return (along_k ? w * (tk + (tf32 ? 4 : 8)) : tk * (w + (tf32 ? 8 : 4))) * gmlp_elem_size(e);
}

bool gmlp_gemm_tiling_takes(const gmlp_tiling *t, const gmlp_gemm_operands *o)
{
    return !t->wgmma || (native16(o->a, o->precision) && native16(o->b, o->precision));
}

size_t gmlp_gemm_tiling_form_bytes(const gmlp_tiling *t, const gmlp_gemm_operands *o)
{
    if (t->kernel != &gmlp_gemm_mma || !t->stages)
        return gmlp_gemm_tiling_local_bytes(t);
    return (size_t)t->stages * (mma_raw_bytes(t, (size_t)t->tm, o->a, o->a_along_k, o->precision) +
                                mma_raw_bytes(t, (size_t)t->tn, o->b, o->b_along_k, o->precision));
}

size_t gmlp_gemm_tiling_local_bytes(const gmlp_tiling *t)
{
    if (gmlp_tiling_direct(t))
        return 0;
    if (t->kernel == &gmlp_gemm_xmx || t->kernel == &gmlp_gemm_mfma) { /* gemm_engine.cl: rows of words padded by 1 */
        const size_t pk = gmlp_gemm_tiling_runs(t, GMLP_GEMM_TF32) ? 1 : 2;
        return 2 * sizeof(uint32_t) * ((size_t)t->tk / pk) * (size_t)(t->tm + 1 + t->tn + 1);
    }
    if (t->kernel == &gmlp_gemm_mma && t->stages) { /* cp.async: the least a product stages (_form_bytes) */
        size_t least = SIZE_MAX;
        for (int p = GMLP_GEMM_TF32; p < GMLP_GEMM_PRECISIONS; p++)
            for (int along = 0; gmlp_gemm_tiling_runs(t, (gmlp_gemm_precision)p) && along < 4; along++) {
                /* 16-bit storage, in any precision: the least */
                const gmlp_gemm_operands o = {GMLP_ELEM_F16, GMLP_ELEM_F16, along & 1, along >> 1,
                                              (gmlp_gemm_precision)p};
                const size_t bytes = gmlp_gemm_tiling_form_bytes(t, &o);
                least = bytes < least ? bytes : least;
            }
        return least;
    }
    if (t->kernel == &gmlp_gemm_mma) { /* two slices of each operand, in its widest format */
        const size_t pk = gmlp_gemm_tiling_runs(t, GMLP_GEMM_TF32) ? 1 : 2, tk = (size_t)t->tk;
        return 2 * sizeof(uint32_t) * (mma_slice_words((size_t)t->tm, tk, pk) + mma_slice_words((size_t)t->tn, tk, pk));
    }
    /* gemm_tiled.cl: two slices of each operand, rows padded by 4 */
    return 2 * sizeof(float) * (size_t)t->tk * (size_t)(t->tm + 4 + t->tn + 4);
}

static bool device_matches(const gmlp_devinfo *d, cl_device_type devices, gmlp_vendor vendor)
{
    return (!devices || (d->type & devices)) && (vendor == GMLP_VENDOR_ANY || vendor == d->vendor_id);
}

size_t gmlp_gemm_tiling_local_limit(const gmlp_devinfo *d, const gmlp_tiling *t)
{
    const gmlp_engine *e = gmlp_engine_of(t->needs);
    return e && e->probed_local_mem > d->local_mem ? e->probed_local_mem : d->local_mem;
}

bool gmlp_gemm_tiling_fits(const gmlp_devinfo *d, const gmlp_tiling *t)
{
    size_t rx = (size_t)(t->tn / t->wn), ry = (size_t)(t->tm / t->wm);
    return device_matches(d, t->devices, t->vendor) && !(t->needs & ~d->engines) && rx * ry <= d->max_wg &&
           rx <= d->max_wi[0] && ry <= d->max_wi[1] &&
           gmlp_gemm_tiling_local_bytes(t) <= gmlp_gemm_tiling_local_limit(d, t) &&
           (!t->native_vw || d->native_floats >= (cl_uint)t->vw);
}

static bool in_set(unsigned set, gmlp_gemm_precision p)
{
    return !set || (set & GMLP_GEMM_PREC_SET(p));
}

bool gmlp_gemm_tiling_runs(const gmlp_tiling *t, gmlp_gemm_precision p)
{
    return in_set(t->precisions, p);
}

/* The outputs a work-item past which a kernel applies the epilogue in a
 * second sweep over C (EPILOGUE_SWEEP in gemm_tiled.cl and gemm_engine.cl);
 * the others apply it to the accumulators always. */
static const struct {
    const gmlp_kernel_spec *kernel;
    int sweep_past;
} sweeping[] = {{&gmlp_gemm_tiled, 16}, {&gmlp_gemm_xmx, 16}, {&gmlp_gemm_mfma, 16}};

bool gmlp_gemm_tiling_stores(const gmlp_tiling *t, gmlp_elem c)
{
    for (size_t i = 0; c != GMLP_ELEM_F32 && i < sizeof sweeping / sizeof *sweeping; i++)
        if (t->kernel == sweeping[i].kernel && t->wm * t->wn > sweeping[i].sweep_past)
            return false;
    return true;
}

const char *gmlp_gemm_tiling_engine(const gmlp_tiling *t, gmlp_gemm_precision p)
{
    const gmlp_engine *e = gmlp_engine_of(t->needs);
    return e && e->op[p] && gmlp_gemm_tiling_runs(t, p) ? e->op[p] : "portable";
}

bool gmlp_gemm_tiling_is_default(const gmlp_tiling *t)
{
    for (size_t i = 0; i < N_DEFAULTS; i++)
        for (size_t j = 0; j < GMLP_GEMM_ROW_TILINGS && defaults[i].tilings[j]; j++)
            if (!strcmp(defaults[i].tilings[j], t->name))
                return true;
    return false;
}

const gmlp_gemm_sizes *gmlp_gemm_sizes_for(const gmlp_devinfo *d)
{
    size_t i = 0;
    while (!device_matches(d, sizes[i].devices, GMLP_VENDOR_ANY)) /* the last row matches any device */
        i++;
    return &sizes[i];
}

const gmlp_gemm_split_row *gmlp_gemm_split_for(const gmlp_devinfo *d)
{
    size_t i = 0;
    while (!device_matches(d, splits[i].devices, splits[i].vendor)) /* the last row matches any device */
        i++;
    return &splits[i];
}

const gmlp_gemm_forms_row *gmlp_gemm_forms_for(const gmlp_devinfo *d)
{
    size_t i = 0;
    while (!device_matches(d, forms[i].devices, forms[i].vendor)) /* the last row matches any device */
        i++;
    return &forms[i];
}

size_t gmlp_gemm_split_parts(const gmlp_devinfo *d, size_t tiles, size_t k)
{
    const gmlp_gemm_split_row *r = gmlp_gemm_split_for(d);
    const size_t cus = d->compute_units;
    if (!r->max_parts || !tiles || tiles >= cus || k < r->min_k)
        return 1;
    size_t parts = (cus + tiles - 1) / tiles; /* the tiles of all parts cover the compute units */
    if (parts > r->max_parts)
        parts = r->max_parts;
    if (r->part_k && parts > k / r->part_k)
        parts = k / r->part_k;
    return parts > 1 ? parts : 1;
}

const gmlp_gemm_default *gmlp_gemm_default_next(const gmlp_devinfo *d, gmlp_gemm_size size, gmlp_gemm_form form,
                                                gmlp_gemm_precision precision, const gmlp_gemm_default *prev)
{
    for (size_t i = prev ? (size_t)(prev - defaults) + 1 : 0; i < N_DEFAULTS; i++) {
        const gmlp_gemm_default *r = &defaults[i];
        if (device_matches(d, r->devices, r->vendor) && (!r->arch || !strncmp(d->arch, r->arch, strlen(r->arch))) &&
            (r->size == GMLP_GEMM_ANY_SIZE || r->size == size) && (r->form == GMLP_FORM_ANY || r->form == form) &&
            in_set(r->precisions, precision))
            return r;
    }
    return NULL;
}

const gmlp_gemm_default *gmlp_gemm_default_for(const gmlp_devinfo *d, gmlp_gemm_size size, gmlp_gemm_form form,
                                               gmlp_gemm_precision precision, const gmlp_gemm_default **fallback)
{
    *fallback = &defaults[N_DEFAULTS - 1]; /* matches every product */
    return gmlp_gemm_default_next(d, size, form, precision, NULL);
}
