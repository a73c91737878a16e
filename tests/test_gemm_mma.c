/* The tensor-core GEMM (cl_kernels/gemm_mma.cl) on any OpenCL device: built
 * with GMLP_GEMM_ISSUE=1 (emulated), each mma.sync is the instruction's documented
 * semantics with the fragments through local memory, so that the kernel's
 * fragment indexing, staging (rounding, 16-bit packing, transposes), edges
 * and epilogue are checked here, the instruction itself on the GPU.  For
 * TF32, FP16 and BF16, NT (linear layers) and NN (token mixing) (and A
 * transposed: TN, TT), float, half and bfloat16 operands (BF16's stored bits used as they are), vector widths
 * 4 and 1 (offsets, padded leading dimensions),
 * batches, k not a multiple of the slice, beta 0 (NaN in C) and 1, each
 * epilogue, fragments by ldmatrix (its lane-to-row semantics emulated too);
 * against a float64 reference whose operands are rounded as the
 * mode says (core/precision.c), relative to the largest |reference| with no
 * floor (FP16's subnormal and saturated operands are checked at their own
 * scale; half operands' infinities, which FP16 saturates, where half
 * storage is the instruction's bits).  A kernel that forgot to round would fail: the BF16 result is
 * checked to be far from the unrounded reference.
 *   test_gemm_mma [--oclgrind]   (the latter: small tiles and sizes, for Oclgrind; GMLP_TEST_QUICK too) */
#include <string.h>

#include "cl/kernels.h"
#include "core/half.h"
#include "core/precision.h"
#include "kernel_abi.h"
#include "ops/gemm_variant.h"
#include "emu_check.h"

/* NN: B not transposed; TA: A transposed; C_BF16, C_HALF: C stored as bfloat16, half; B_SCALED: the
 * scale of A's values B's too */
enum { A_HALF = 1, B_HALF = 2, PADDED = 4, NN = 8, TA = 16, A_BF16 = 32, B_BF16 = 64, C_BF16 = 128, C_HALF = 256,
       B_SCALED = 512, V8 = 1024 }; /* V8: 16-bit operands copied 8 elements (16 bytes) at a time */

/* operand x's storage (0: A, 1: B) */
static gmlp_elem elem_of(int flags, int x)
{
    return flags & (x ? B_HALF : A_HALF) ? GMLP_ELEM_F16 : flags & (x ? B_BF16 : A_BF16) ? GMLP_ELEM_BF16 : GMLP_ELEM_F32;
}

typedef struct tiling {
    int tm, tn, tk, wm, wn, stages; /* stages: cp.async slices in flight, 0: staged through registers */
    int ldsm;                       /* 16-bit fragments of operands stored along k by ldmatrix */
    int swizzle, frag2;             /* cp.async: 16-bit slices swizzled (ldmatrix .trans across k); fragments
                                     * double-buffered, the slice loop pipelined */
    int raster;                     /* blocks of C in bands of this many block rows; 0: the launch's order */
    int wgmma;                      /* the products on Hopper's wgmma (a warp group per 64 rows, 64-deep slices) */
} tiling;

static const char *const prec_names[] = {"FP32", "TF32", "FP16", "BF16"};

/* The quick tier's sample (check_quick_tier): of the cases in order, one in sample_every, each a cold build of
 * an emulated kernel (of the quick set's 25, 4: TF32 on two warps, BF16 through cp.async, BF16 on one warp by
 * ldmatrix through cp.async, FP16 into a half C on a 64 x 32 warp by ldmatrix: every precision, the
 * one-warp, two-warp and large-warp blocks, the cp.async staging and ldmatrix still) */
static int sample_every = 1, cases_seen;

/* C = epilogue(op(A) . op(B) + beta C) on the emulated kernel of tiling t,
 * precision prec and form flags, against the rounding reference; a_scale
 * scales A's values (FP16's subnormals and saturation). */
static void run(const tiling *t, int prec, int flags, size_t m, size_t n, size_t k, size_t batch, float beta, int epi,
                float a_scale)
{
    if (cases_seen++ % sample_every)
        return;
    const int nn = (flags & NN) != 0, ta = (flags & TA) != 0, padded = (flags & PADDED) != 0,
              vw = padded ? 1 : flags & V8 ? 8 : 4;
    char defs[400], what[300];
    const gmlp_elem ec = flags & C_BF16 ? GMLP_ELEM_BF16 : flags & C_HALF ? GMLP_ELEM_F16 : GMLP_ELEM_F32;
    /* the library's defines for this tiling and form, the instruction emulated, loops rolled as on CPUs */
    const gmlp_tiling row = {.name = "test", .kernel = &gmlp_gemm_mma, .tm = t->tm, .tn = t->tn, .tk = t->tk,
                             .wm = t->wm, .wn = t->wn, .vw = 4, .needs = GMLP_ENGINE_MMA_SYNC, .stages = t->stages,
                             .ldsm = t->ldsm, .swizzle = t->swizzle, .frag2 = t->frag2, .raster = t->raster,
                             .wgmma = t->wgmma};
    const gmlp_gemm_variant v = {.ta = (uint8_t)ta, .tb = (uint8_t)!nn, .vw = (uint8_t)vw,
                                 .a = (uint8_t)elem_of(flags, 0), .b = (uint8_t)elem_of(flags, 1), .c = (uint8_t)ec,
                                 .precision = (uint8_t)prec, .issue = GMLP_ISSUE_EMULATED};
    gmlp_gemm_variant_defines(&v, &row, 0, defs, sizeof defs);
    snprintf(what, sizeof what, "mma %s %dx%dx%d s%d%s%s%s%s r%d %s v%d A:%s B:%s C:%s %zux%zux%zu batch %zu beta %g epilogue %d scale %g%s",
             prec_names[prec], t->tm, t->tn, t->tk, t->stages, t->ldsm ? " ldmatrix" : "",
             t->swizzle ? " swizzled" : "", t->frag2 ? " frag2" : "", t->wgmma ? " wgmma" : "", t->raster, ta ? (nn ? "TN" : "TT") : nn ? "NN" : "NT", vw,
             gmlp_elem_name(elem_of(flags, 0)), gmlp_elem_name(elem_of(flags, 1)), gmlp_elem_name(ec), m, n, k, batch,
             (double)beta, epi, (double)a_scale, flags & B_SCALED ? " (B's too)" : "");
    const gmlp_kernel *kern;
    if (gmlp_kernel_get(ctx, &gmlp_gemm_mma, defs, "gmlp_gemm_mma (emulated)", &kern) != GMLP_OK) {
        CHECK(0, "%s: build: %s", what, gmlp_last_error(ctx));
        return;
    }
    const gmlp_elem ea = elem_of(flags, 0), eb = elem_of(flags, 1);
    /* bfloat16 operands are the same rounded or not */
    const int rounding_seen = prec == GMLP_GEMM_PREC_BF16 && k >= 32 && !(ea == GMLP_ELEM_BF16 && eb == GMLP_ELEM_BF16);
    const emu_case x = {prec, ta, nn, padded, ea, eb, ec, a_scale, flags & B_SCALED ? a_scale : 1.0f,
                        m, n, k, batch, beta, epi, rounding_seen};
    emu_check(kern, t->tm, t->tn, t->wm, t->wn, &x, what);
}

int main(int argc, char **argv)
{
    ctx = check_context();
    /* GMLP_TEST_QUICK (.ci/run's PoCL passes: the full set runs on Intel's CPU runtime, whose compiler builds
     * these variants about ten times faster than PoCL's): the small set Oclgrind runs */
    const int oclgrind = argc > 1 && !strcmp(argv[1], "--oclgrind");
    if (check_quick_tier())
        sample_every = 7;
    if (oclgrind || getenv("GMLP_TEST_QUICK")) {
        /* two warps of 16 x 32; every precision, NT with half B, NN with half A */
        static const tiling small = {32, 32, 16, 4, 4, 0, 0, 0, 0, 0, 0};
        for (int prec = GMLP_GEMM_PREC_TF32; prec <= GMLP_GEMM_PREC_BF16; prec++) {
            run(&small, prec, B_HALF, 37, 21, 40, 2, 1.0f, EPI_COLS_GELU, 1.0f);
            run(&small, prec, NN | A_HALF | PADDED, 19, 35, 33, 1, 0.0f, EPI_GATE, 1.0f);
        }
        /* the cp.async staging: three slices in flight */
        static const tiling small_async = {32, 32, 16, 4, 4, 3, 0, 0, 0, 0, 0};
        run(&small_async, GMLP_GEMM_PREC_TF32, B_HALF, 37, 21, 70, 1, 1.0f, EPI_COLS_GELU, 1.0f);
        run(&small_async, GMLP_GEMM_PREC_BF16, NN | PADDED, 19, 35, 33, 1, 0.0f, EPI_GATE, 1.0f);
        run(&small, GMLP_GEMM_PREC_BF16, B_BF16, 37, 21, 40, 1, 1.0f, EPI_COLS_GELU, 1.0f);
        run(&small_async, GMLP_GEMM_PREC_BF16, NN | A_BF16, 19, 35, 33, 1, 0.0f, EPI_GATE, 1.0f);
        /* fragments by ldmatrix: the emulation's exchange of rows through local memory, race-free */
        static const tiling small_ldsm = {32, 32, 16, 4, 4, 0, 1, 0, 0, 0, 0};
        run(&small_ldsm, GMLP_GEMM_PREC_BF16, B_BF16, 37, 21, 40, 1, 1.0f, EPI_COLS_GELU, 1.0f);
        run(&small_ldsm, GMLP_GEMM_PREC_FP16, NN | A_HALF, 19, 35, 33, 1, 0.0f, EPI_GATE, 1.0f);
        static const tiling small_async_ldsm = {32, 32, 16, 4, 4, 3, 1, 0, 0, 0, 0};
        run(&small_async_ldsm, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16, 37, 21, 40, 1, 1.0f, EPI_COLS_GELU, 1.0f);
        /* one warp (32 work-items: what rusticl's compiled kernels allow) */
        static const tiling one_warp = {32, 32, 16, 4, 8, 0, 1, 0, 0, 0, 0}, one_warp_async = {32, 32, 16, 4, 8, 3, 1, 0, 0, 0, 0};
        run(&one_warp, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16, 37, 45, 40, 1, 1.0f, EPI_COLS_GELU, 1.0f);
        run(&one_warp_async, GMLP_GEMM_PREC_BF16, NN | A_BF16 | B_BF16, 19, 35, 33, 1, 0.0f, EPI_GATE, 1.0f);
        /* bfloat16 outputs (a BF16 model's products only GEMMs read): fc1's of the Mixer, the spatial matmul's */
        run(&one_warp, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16 | C_BF16, 37, 45, 40, 2, 1.0f, EPI_COLS_GELU, 1.0f);
        run(&one_warp_async, GMLP_GEMM_PREC_BF16, NN | A_BF16 | B_BF16 | C_BF16 | PADDED, 19, 35, 33, 1, 0.0f,
            EPI_GATE, 1.0f);
        /* the register staging across k of bfloat16 B (the spatial matmul's LN(v)): pairs along n as loaded,
         * four at a time, the edge's (n = 37) element by element */
        run(&one_warp, GMLP_GEMM_PREC_BF16, NN | A_BF16 | B_BF16 | C_BF16, 19, 37, 33, 1, 0.0f, EPI_GATE, 1.0f);
        run(&one_warp, GMLP_GEMM_PREC_FP16, B_HALF, 37, 21, 40, 1, 0.0f, EPI_NONE, 1.0f);
        /* a warp of 64 x 64 (32 mma tiles: the epilogue called), TF32 and BF16 by ldmatrix through cp.async */
        static const tiling warp64 = {64, 64, 16, 8, 16, 0, 0, 0, 0, 0, 0}, warp64_async = {64, 64, 16, 8, 16, 2, 1, 0, 0, 0, 0};
        run(&warp64, GMLP_GEMM_PREC_TF32, B_HALF, 70, 69, 40, 1, 1.0f, EPI_COLS_GELU, 1.0f);
        run(&warp64_async, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16 | C_BF16, 67, 70, 33, 1, 0.0f, EPI_GATE, 1.0f);
        /* a warp of 64 x 32 into a half C (called too) */
        static const tiling warp64x32 = {64, 32, 16, 8, 8, 0, 1, 0, 0, 0, 0};
        run(&warp64x32, GMLP_GEMM_PREC_FP16, A_HALF | B_HALF | C_HALF, 70, 37, 40, 1, 1.0f, EPI_COLS_GELU, 1.0f);
        /* half outputs (an FP16 model's): NT of half operands, NN at an n edge */
        run(&one_warp, GMLP_GEMM_PREC_FP16, A_HALF | B_HALF | C_HALF, 37, 45, 40, 2, 1.0f, EPI_COLS_GELU, 1.0f);
        run(&one_warp_async, GMLP_GEMM_PREC_FP16, NN | A_HALF | B_HALF | C_HALF | PADDED, 19, 37, 33, 1, 0.0f,
            EPI_GATE, 1.0f);
        /* FP16 of half operands holding infinities (saturated): ldmatrix of cp.async's slices (A and B) */
        run(&small_async_ldsm, GMLP_GEMM_PREC_FP16, A_HALF | B_HALF | B_SCALED, 37, 21, 40, 1, 0.0f, EPI_NONE,
            0x1p16f);
        /* swizzled slices, fragments double-buffered (issue #52): a block inside m and n over slices inside k
         * and the edges, ldmatrix .trans of NN's B and TN's A */
        static const tiling one_warp_swz = {32, 32, 16, 4, 8, 3, 1, 1, 1, 0, 0};
        /* the blocks in bands of 3 block rows: 5 rows and 5 columns of blocks, the last band of 2 */
        static const tiling small_raster = {32, 32, 16, 4, 4, 0, 0, 0, 0, 3, 0};
        run(&small_raster, GMLP_GEMM_PREC_TF32, B_HALF, 150, 137, 40, 2, 1.0f, EPI_COLS_GELU, 1.0f);
        run(&one_warp_swz, GMLP_GEMM_PREC_BF16, NN | A_BF16 | B_BF16, 37, 45, 70, 1, 1.0f, EPI_COLS_GELU, 1.0f);
        run(&one_warp_swz, GMLP_GEMM_PREC_FP16, TA | NN | A_HALF | B_HALF | B_SCALED, 45, 37, 70, 1, 0.0f, EPI_NONE,
            0x1p16f);
        /* wgmma (issue #53): one warp group's descriptors over 64-deep swizzled slices, edges in m, n and k */
        static const tiling one_group_wg = {64, 64, 64, 8, 4, 2, 0, 1, 0, 0, 1};
        run(&one_group_wg, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16, 70, 45, 150, 2, 1.0f, EPI_COLS_GELU, 1.0f);
        run(&one_group_wg, GMLP_GEMM_PREC_BF16, NN | A_BF16 | B_BF16 | V8, 45, 70, 99, 1, 0.0f, EPI_GATE, 1.0f);
        gmlp_context_destroy(ctx);
        return cases_summary(oclgrind ? "test_gemm_mma --oclgrind" : "test_gemm_mma (quick)");
    }
    /* lib/ops/gemm_tilings.c's: 128 x 128 blocks of 8 warps of 64 x 32, k-slices of 16 (TF32: 40 KiB of
     * double-buffered local memory, NVIDIA allows 48) and 32 (16-bit); 64 x 64 blocks of 4 warps of 32 x 32.
     * Each variant is a program of its own, its build most of the time here: a few forms each. */
    static const tiling tf32 = {128, 128, 16, 8, 8, 0, 0, 0, 0, 0, 0}, half16 = {128, 128, 32, 8, 8, 0, 0, 0, 0, 0, 0}, tf32_64 = {64, 64, 16, 4, 8, 0, 0, 0, 0, 0, 0},
                        half16_64 = {64, 64, 32, 4, 8, 0, 0, 0, 0, 0, 0};
    for (int prec = GMLP_GEMM_PREC_TF32; prec <= GMLP_GEMM_PREC_BF16; prec++) {
        const tiling *t = prec == GMLP_GEMM_PREC_TF32 ? &tf32 : &half16;
        run(t, prec, 0, 150, 137, 75, 2, 0.0f, EPI_COLS_GELU, 1.0f);          /* NT, the linear layers */
        run(t, prec, NN | A_HALF, 61, 130, 49, 2, 1.0f, EPI_ROWS_GELU, 1.0f); /* NN, token mixing, half weights */
        /* vector width 1: odd offsets and leading dimensions */
        if (prec == GMLP_GEMM_PREC_FP16)
            run(t, prec, NN | PADDED | B_HALF, 70, 9, 41, 1, 0.0f, EPI_NONE, 1.0f);
        else
            run(t, prec, PADDED | A_HALF | B_HALF, 33, 150, 37, 2, 1.0f, EPI_GATE_TANH, 1.0f);
    }
    run(&tf32, GMLP_GEMM_PREC_TF32, B_HALF, 129, 131, 64, 1, 1.0f, EPI_COLS, 1.0f); /* NT, half weights */
    /* fragments by ldmatrix (emulated through the warp's scratch: a lane's row, another lane's words): NT
     * (both operands), NN (A), A transposed (B), three n-tiles a warp (the odd one by words), bfloat16 and
     * half weights, vector width 1 */
    static const tiling ldsm64 = {64, 64, 32, 4, 8, 0, 1, 0, 0, 0, 0}, ldsm128 = {128, 128, 16, 8, 8, 0, 1, 0, 0, 0, 0},
                        ldsm_odd = {32, 48, 32, 4, 3, 0, 1, 0, 0, 0, 0};
    run(&ldsm64, GMLP_GEMM_PREC_BF16, B_BF16, 150, 137, 75, 2, 0.0f, EPI_COLS_GELU, 1.0f);
    run(&ldsm64, GMLP_GEMM_PREC_FP16, NN | A_HALF, 61, 130, 49, 1, 1.0f, EPI_ROWS_GELU, 1.0f);
    run(&ldsm128, GMLP_GEMM_PREC_BF16, PADDED, 133, 140, 45, 1, 1.0f, EPI_GATE_TANH, 1.0f);
    run(&ldsm128, GMLP_GEMM_PREC_FP16, TA | B_HALF, 70, 66, 50, 1, 0.0f, EPI_COLS, 1.0f);
    run(&ldsm_odd, GMLP_GEMM_PREC_BF16, A_BF16, 37, 100, 70, 2, 0.0f, EPI_GATE, 1.0f);
    run(&half16, GMLP_GEMM_PREC_FP16, NN, 196, 140, 196, 2, 0.0f, EPI_GATE, 1.0f); /* NN with the SGU's gate */
    run(&half16_64, GMLP_GEMM_PREC_BF16, NN | A_HALF, 196, 200, 196, 1, 0.0f, EPI_GATE, 1.0f);
    /* FP16's operand range: A's values among half's subnormals, and past 65504 (saturated) */
    run(&half16, GMLP_GEMM_PREC_FP16, 0, 40, 24, 70, 1, 0.0f, EPI_NONE, 0x1p-17f);
    run(&half16, GMLP_GEMM_PREC_FP16, 0, 40, 24, 70, 1, 0.0f, EPI_NONE, 0x1p16f);
    /* A transposed (not the model's forms; the staging is the NN B's) */
    run(&tf32_64, GMLP_GEMM_PREC_TF32, TA | NN, 77, 140, 50, 2, 1.0f, EPI_COLS, 1.0f);
    run(&half16, GMLP_GEMM_PREC_BF16, TA | A_HALF, 130, 66, 45, 1, 0.0f, EPI_ROWS_GELU, 1.0f);
    /* TF32 in 32-deep slices; 4 warps of 64 x 32 */
    static const tiling tf32_64_32 = {64, 64, 32, 4, 8, 0, 0, 0, 0, 0, 0}, reg_128x64 = {128, 64, 16, 8, 8, 0, 0, 0, 0, 0, 0};
    run(&tf32_64_32, GMLP_GEMM_PREC_TF32, B_HALF, 100, 70, 97, 1, 1.0f, EPI_COLS_GELU, 1.0f);
    run(&reg_128x64, GMLP_GEMM_PREC_BF16, NN | A_HALF, 150, 75, 66, 1, 0.0f, EPI_GATE, 1.0f);
    /* bfloat16 weights, as a BF16 model stores them (the stored bits packed as they are): NT's B, NN's A,
     * vector widths 4 and 1; and in the other modes, which round their values */
    run(&half16_64, GMLP_GEMM_PREC_BF16, B_BF16, 150, 137, 75, 2, 0.0f, EPI_COLS_GELU, 1.0f);
    run(&half16_64, GMLP_GEMM_PREC_BF16, NN | A_BF16 | PADDED, 61, 130, 49, 1, 1.0f, EPI_ROWS_GELU, 1.0f);
    run(&tf32_64, GMLP_GEMM_PREC_TF32, B_BF16 | PADDED, 37, 70, 41, 1, 1.0f, EPI_COLS, 1.0f);
    run(&half16_64, GMLP_GEMM_PREC_FP16, NN | A_BF16, 70, 66, 50, 1, 0.0f, EPI_GATE, 1.0f);
    /* the cp.async staging (its copies emulated by loads and stores; the rounding at the fragments is the
     * kernel's own): three slices in flight over more slices than that and fewer, both layouts, zero-filled
     * edges, half storage (FP16's bits used as they are) */
    static const tiling async_tf32 = {128, 128, 16, 8, 8, 2, 0, 0, 0, 0, 0}, async_tf32_3 = {128, 128, 8, 8, 8, 3, 0, 0, 0, 0, 0},
                        async16 = {128, 64, 16, 8, 8, 2, 0, 0, 0, 0, 0}, async16_64 = {64, 64, 16, 4, 8, 3, 0, 0, 0, 0, 0};
    run(&async_tf32, GMLP_GEMM_PREC_TF32, 0, 150, 137, 75, 2, 0.0f, EPI_COLS_GELU, 1.0f);
    run(&async_tf32_3, GMLP_GEMM_PREC_TF32, NN | A_HALF, 61, 130, 49, 1, 1.0f, EPI_ROWS_GELU, 1.0f);
    run(&async16, GMLP_GEMM_PREC_FP16, B_HALF, 130, 70, 83, 1, 1.0f, EPI_COLS, 1.0f);
    run(&async16, GMLP_GEMM_PREC_BF16, PADDED | A_HALF | B_HALF, 33, 150, 37, 2, 1.0f, EPI_GATE_TANH, 1.0f);
    run(&async16_64, GMLP_GEMM_PREC_BF16, NN, 196, 200, 196, 1, 0.0f, EPI_GATE, 1.0f);
    run(&async16, GMLP_GEMM_PREC_BF16, B_BF16, 130, 70, 83, 1, 1.0f, EPI_COLS, 1.0f);
    /* cp.async with ldmatrix: bfloat16 operands copied and loaded as they are (NT both, NN A, vector width 1
     * too); float ones as the rows above (A of NT) */
    static const tiling async_ldsm = {64, 64, 16, 4, 8, 3, 1, 0, 0, 0, 0}, async_ldsm4 = {64, 64, 16, 4, 8, 4, 1, 0, 0, 0, 0};
    run(&async_ldsm, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16, 150, 137, 75, 2, 0.0f, EPI_COLS_GELU, 1.0f);
    run(&async_ldsm, GMLP_GEMM_PREC_BF16, B_BF16, 61, 70, 49, 1, 1.0f, EPI_COLS, 1.0f);
    run(&async_ldsm4, GMLP_GEMM_PREC_BF16, NN | A_BF16 | B_BF16 | PADDED, 77, 140, 50, 1, 0.0f, EPI_GATE, 1.0f);
    /* bfloat16 outputs, as a BF16 model stores those only GEMMs read */
    run(&async_ldsm, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16 | C_BF16, 150, 137, 75, 2, 1.0f, EPI_COLS_GELU, 1.0f);
    run(&half16_64, GMLP_GEMM_PREC_BF16, NN | A_BF16 | B_BF16 | C_BF16 | PADDED, 61, 130, 49, 1, 0.0f, EPI_GATE, 1.0f);
    run(&async16_64, GMLP_GEMM_PREC_BF16, NN | A_BF16 | PADDED, 61, 77, 45, 1, 0.0f, EPI_ROWS_GELU, 1.0f);
    run(&async16_64, GMLP_GEMM_PREC_FP16, TA | NN | PADDED, 77, 140, 50, 1, 0.0f, EPI_NONE, 0x1p16f);
    /* FP16 of half operands holding infinities (2^16 times values in [-1, 1]: saturated), taken as the
     * instruction's bits: the register staging's words, cp.async's words (A transposed, B across k) and
     * ldmatrix fragments (NT both, NN A) */
    run(&ldsm64, GMLP_GEMM_PREC_FP16, A_HALF | B_HALF | B_SCALED, 150, 137, 75, 1, 0.0f, EPI_NONE, 0x1p16f);
    run(&async16, GMLP_GEMM_PREC_FP16, TA | NN | A_HALF | B_HALF | B_SCALED, 70, 66, 50, 1, 0.0f, EPI_NONE, 0x1p16f);
    run(&async_ldsm, GMLP_GEMM_PREC_FP16, A_HALF | B_HALF | B_SCALED | PADDED, 61, 70, 49, 1, 0.0f, EPI_NONE,
        0x1p16f);
    run(&async_ldsm4, GMLP_GEMM_PREC_FP16, NN | A_HALF | B_HALF | B_SCALED, 77, 140, 50, 1, 0.0f, EPI_NONE, 0x1p16f);
    /* 4 warps of 64 x 64 (the epilogue called): BF16 by ldmatrix through cp.async (two and three slices in
     * flight), TF32 three, FP16 of half operands */
    static const tiling w64_ldsm = {128, 128, 16, 8, 16, 2, 1, 0, 0, 0, 0}, w64_tf32 = {128, 128, 8, 8, 16, 3, 0, 0, 0, 0, 0},
                        w64_16 = {128, 128, 16, 8, 16, 2, 0, 0, 0, 0, 0}, w64_ldsm3 = {128, 128, 16, 8, 16, 3, 1, 0, 0, 0, 0};
    run(&w64_ldsm, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16, 150, 137, 75, 2, 1.0f, EPI_COLS_GELU, 1.0f);
    run(&w64_ldsm3, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16 | C_BF16 | PADDED, 131, 260, 70, 1, 0.0f, EPI_COLS_GELU, 1.0f);
    run(&w64_ldsm, GMLP_GEMM_PREC_BF16, NN | A_BF16 | PADDED, 196, 140, 77, 1, 0.0f, EPI_GATE, 1.0f);
    run(&w64_tf32, GMLP_GEMM_PREC_TF32, NN | A_HALF, 130, 150, 49, 1, 1.0f, EPI_ROWS_GELU, 1.0f);
    run(&w64_ldsm, GMLP_GEMM_PREC_FP16, A_HALF | B_HALF | C_HALF, 150, 137, 75, 1, 0.0f, EPI_GATE_TANH, 1.0f);
    run(&w64_16, GMLP_GEMM_PREC_FP16, A_HALF | B_HALF | B_SCALED, 150, 137, 75, 1, 0.0f, EPI_NONE, 0x1p16f);
    run(&half16, GMLP_GEMM_PREC_FP16, NN | A_HALF | B_HALF | C_HALF, 150, 137, 75, 1, 1.0f, EPI_ROWS_GELU, 1.0f);
    /* half outputs, as an FP16 model stores those only GEMMs read; sums past 65504 saturated */
    run(&ldsm64, GMLP_GEMM_PREC_FP16, A_HALF | B_HALF | C_HALF, 150, 137, 75, 2, 1.0f, EPI_COLS_GELU, 1.0f);
    run(&half16_64, GMLP_GEMM_PREC_FP16, NN | A_HALF | B_HALF | C_HALF | PADDED, 61, 130, 49, 1, 0.0f, EPI_NONE,
        0x1p14f);
    /* Issue #52's rows (swizzled slices, fragments double-buffered): blocks inside m and n over slices
     * inside k (the unchecked loop) and the edges after, in every transpose (ldmatrix .trans of NN's B, TN's
     * A), BF16 and FP16 (saturated), a float operand beside a swizzled one, element copies (vector width 1),
     * one k-step a slice (TK 16: the fragments moved) and fewer slices than stages, their blocks in bands of
     * 2 block rows (the last band short where m has 3); then each axis alone */
    static const tiling swz3 = {128, 128, 32, 8, 8, 3, 1, 1, 1, 2, 0}, swz2 = {128, 128, 32, 8, 8, 2, 1, 1, 1, 2, 0},
                        swz4 = {128, 128, 16, 8, 8, 4, 1, 1, 1, 2, 0}, swz_only = {64, 64, 32, 4, 8, 3, 1, 1, 0, 0, 0},
                        frag2_only = {64, 64, 16, 4, 8, 3, 1, 0, 1, 0, 0};
    run(&swz3, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16, 260, 137, 200, 1, 1.0f, EPI_COLS_GELU, 1.0f);
    run(&swz3, GMLP_GEMM_PREC_BF16, NN | A_BF16 | B_BF16, 150, 260, 170, 2, 0.0f, EPI_GATE, 1.0f);
    run(&swz3, GMLP_GEMM_PREC_BF16, TA | NN | A_BF16 | B_BF16 | C_BF16, 131, 140, 200, 1, 0.0f, EPI_ROWS_GELU, 1.0f);
    run(&swz2, GMLP_GEMM_PREC_BF16, TA | A_BF16 | B_BF16 | PADDED, 140, 131, 99, 1, 1.0f, EPI_COLS, 1.0f);
    run(&swz2, GMLP_GEMM_PREC_BF16, B_BF16, 256, 256, 128, 1, 0.0f, EPI_NONE, 1.0f);
    run(&swz2, GMLP_GEMM_PREC_FP16, A_HALF | B_HALF | B_SCALED, 260, 137, 200, 1, 0.0f, EPI_NONE, 0x1p16f);
    run(&swz4, GMLP_GEMM_PREC_FP16, NN | A_HALF | B_HALF | C_HALF | PADDED, 150, 140, 93, 1, 1.0f, EPI_COLS_GELU,
        1.0f);
    run(&swz4, GMLP_GEMM_PREC_BF16, NN | A_BF16 | B_BF16, 130, 140, 9, 1, 0.0f, EPI_GATE_TANH, 1.0f);
    run(&swz_only, GMLP_GEMM_PREC_BF16, NN | A_BF16 | B_BF16, 150, 137, 75, 1, 0.0f, EPI_COLS, 1.0f);
    run(&frag2_only, GMLP_GEMM_PREC_FP16, TA | A_HALF | B_HALF | B_SCALED, 150, 137, 75, 1, 0.0f, EPI_NONE, 0x1p16f);
    /* Issue #53's wgmma rows, NT (both K-major): two warp groups of 64 x 64 (m64n64k16), one of 64 x 128 (m64n128k16), three
     * slices in flight in bands of 2, four (392 deep: more slices than stages, twice); blocks inside and across m, n and k, fewer slices than stages, element
     * copies (vector width 1) and 16-byte ones (8), BF16 and FP16 (half operands saturated in local memory),
     * 16-bit C */
    static const tiling wg128x64 = {128, 64, 64, 8, 4, 2, 0, 1, 0, 0, 1}, wg64x128 = {64, 128, 64, 8, 8, 2, 0, 1, 0, 0, 1},
                        wg128x128 = {128, 128, 64, 8, 8, 3, 0, 1, 0, 2, 1}, wg128x128_4 = {128, 128, 64, 8, 8, 4, 0, 1, 0, 0, 1};
    run(&wg128x64, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16, 260, 137, 200, 1, 1.0f, EPI_COLS_GELU, 1.0f);
    run(&wg128x64, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16 | V8, 260, 137, 196, 2, 0.0f, EPI_COLS, 1.0f);
    run(&wg128x64, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16 | C_BF16 | PADDED, 131, 70, 99, 2, 0.0f, EPI_GATE, 1.0f);
    run(&wg64x128, GMLP_GEMM_PREC_FP16, A_HALF | B_HALF | B_SCALED, 150, 260, 130, 1, 0.0f, EPI_NONE, 0x1p16f);
    run(&wg64x128, GMLP_GEMM_PREC_FP16, A_HALF | B_HALF | C_HALF, 128, 256, 128, 1, 1.0f, EPI_ROWS_GELU, 1.0f);
    run(&wg128x128, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16, 300, 260, 9, 2, 0.0f, EPI_GATE_TANH, 1.0f);
    run(&wg128x128, GMLP_GEMM_PREC_BF16, A_BF16 | B_BF16 | C_BF16 | V8, 256, 256, 256, 1, 1.0f, EPI_COLS, 1.0f);
    /* operands stored across k: MN-major, the instruction's transposes (NN's B in one and two 64-column
     * blocks, TN's A in two warp groups' blocks, both) */
    run(&wg128x64, GMLP_GEMM_PREC_BF16, NN | A_BF16 | B_BF16, 196, 200, 196, 1, 0.0f, EPI_GATE, 1.0f);
    run(&wg64x128, GMLP_GEMM_PREC_FP16, NN | A_HALF | B_HALF | B_SCALED | V8, 150, 260, 130, 1, 0.0f, EPI_NONE,
        0x1p16f);
    run(&wg128x128, GMLP_GEMM_PREC_BF16, TA | A_BF16 | B_BF16 | PADDED, 260, 140, 99, 2, 1.0f, EPI_ROWS_GELU, 1.0f);
    run(&wg128x128_4, GMLP_GEMM_PREC_FP16, A_HALF | B_HALF | C_HALF | V8, 200, 260, 392, 1, 0.0f, EPI_GATE, 1.0f);
    run(&wg128x64, GMLP_GEMM_PREC_BF16, TA | NN | A_BF16 | B_BF16 | C_BF16, 131, 137, 70, 1, 0.0f, EPI_COLS, 1.0f);
    gmlp_context_destroy(ctx);
    return cases_summary("test_gemm_mma");
}
