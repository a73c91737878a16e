/* The Intel and AMD matrix-engine GEMMs (cl_kernels/gemm_xmx.cl,
 * gemm_mfma.cl) on any OpenCL device: built with GMLP_XMX_EMULATE /
 * GMLP_MFMA_EMULATE=1, each instruction is its documented semantics (Intel's
 * extension specification, AMD's matrix instruction calculator) with the
 * sub-group's or wave's fragments through local memory, so that fragment
 * indexing, staging (rounding, 16-bit packing, transposes), edges and the
 * epilogue are checked here, the instruction itself only by the portability
 * suite's machine code.  Per engine (XMX SIMD8 and SIMD16, MFMA, WMMA in
 * wave32 and wave64) and
 * precision it runs: NT (linear layers) and NN (token mixing), float and
 * half operands, odd offsets and leading dimensions, batches, k not a
 * multiple of the slice, beta 0 (NaN in C) and 1, each epilogue; against a
 * float64 reference whose operands are rounded as the mode says
 * (core/precision.c), relative to the largest |reference|.  Not vacuous: in
 * BF16 the unrounded reference is checked to be far from the result. */
#include <stdlib.h>
#include <string.h>

#include "cl/kernels.h"
#include "core/half.h"
#include "core/precision.h"
#include "kernel_abi.h"
#include "emu_check.h"

enum { A_HALF = 1, B_HALF = 2, PADDED = 4, NN = 8, C_BF16 = 16, C_HALF = 32 }; /* C stored as bfloat16, half */

/* a kernel to run: its source, defines beyond the tiling, and the tiling */
typedef struct engine {
    const char *name;
    gmlp_kernel_spec spec;
    const char *defs;
    int lowest; /* the lowest precision it runs (they run every one above it) */
    int tm, tn, tk, wm, wn;
} engine;

static const char *const prec_names[] = {"FP32", "TF32", "FP16", "BF16"};

/* C = epilogue(op(A) . op(B) + beta C) on engine g's emulated kernel in
 * precision prec, form flags, against the rounding reference */
static void run(const engine *g, int prec, int flags, size_t m, size_t n, size_t k, size_t batch, float beta, int epi)
{
    const int nn = (flags & NN) != 0, padded = (flags & PADDED) != 0;
    char defs[500], what[300];
    snprintf(defs, sizeof defs,
             "%s -DGMLP_GEMM_PRECISION=%d -DGMLP_GEMM_UNROLL=0 -DGMLP_GEMM_A_HALF=%d -DGMLP_GEMM_B_HALF=%d "
             "-DGMLP_GEMM_TA=0 -DGMLP_GEMM_TB=%d -DGMLP_GEMM_VW=1 -DGMLP_GEMM_TM=%d -DGMLP_GEMM_TN=%d -DGMLP_GEMM_TK=%d "
             "-DGMLP_GEMM_WM=%d -DGMLP_GEMM_WN=%d -DGMLP_GEMM_C_BF16=%d -DGMLP_GEMM_C_HALF=%d",
             g->defs, prec, (flags & A_HALF) != 0, (flags & B_HALF) != 0, !nn, g->tm, g->tn, g->tk, g->wm, g->wn,
             (flags & C_BF16) != 0, (flags & C_HALF) != 0);
    const gmlp_elem ec = flags & C_BF16 ? GMLP_ELEM_BF16 : flags & C_HALF ? GMLP_ELEM_F16 : GMLP_ELEM_F32;
    snprintf(what, sizeof what, "%s %s %dx%dx%d_%dx%d %s%s A:%s B:%s C:%s %zux%zux%zu batch %zu beta %g epilogue %d",
             g->name, prec_names[prec], g->tm, g->tn, g->tk, g->wm, g->wn, nn ? "NN" : "NT", padded ? " padded" : "",
             flags & A_HALF ? "half" : "float", flags & B_HALF ? "half" : "float", gmlp_elem_name(ec), m, n, k, batch,
             (double)beta, epi);
    const gmlp_kernel *kern;
    if (gmlp_kernel_get(ctx, &g->spec, defs, g->name, &kern) != GMLP_OK) {
        CHECK(0, "%s: build: %s", what, gmlp_last_error(ctx));
        return;
    }
    const gmlp_elem ea = flags & A_HALF ? GMLP_ELEM_F16 : GMLP_ELEM_F32, eb = flags & B_HALF ? GMLP_ELEM_F16 : GMLP_ELEM_F32;
    const emu_case x = {prec, 0, nn, padded, ea, eb, ec, 1.0f, 1.0f, m, n, k, batch, beta, epi,
                        prec == GMLP_GEMM_PREC_BF16};
    emu_check(kern, g->tm, g->tn, g->wm, g->wn, &x, what);
}

#define XMX8 "xmx-simd8", {"gemm_xmx.cl", "gmlp_gemm_xmx"}, "-DGMLP_XMX_EMULATE=1 -DGMLP_XMX_SIMD=8", GMLP_GEMM_PREC_FP16
/* SIMD16 in TF32 too (the _tf32 extension's k8) */
#define XMX16 "xmx-simd16", {"gemm_xmx.cl", "gmlp_gemm_xmx"}, "-DGMLP_XMX_EMULATE=1 -DGMLP_XMX_SIMD=16", GMLP_GEMM_PREC_TF32
/* the same through the sub-group's shuffles, where the device offers the sub-group size (Intel's CPU runtime) */
#define XMX8_SHUFFLE "xmx-simd8-shuffle", {"gemm_xmx.cl", "gmlp_gemm_xmx"}, "-DGMLP_XMX_EMULATE=2 -DGMLP_XMX_SIMD=8", \
    GMLP_GEMM_PREC_FP16
#define XMX16_SHUFFLE "xmx-simd16-shuffle", {"gemm_xmx.cl", "gmlp_gemm_xmx"}, \
    "-DGMLP_XMX_EMULATE=2 -DGMLP_XMX_SIMD=16", GMLP_GEMM_PREC_TF32
#define MFMA "mfma", {"gemm_mfma.cl", "gmlp_gemm_mfma"}, "-DGMLP_MFMA_EMULATE=1", GMLP_GEMM_PREC_FP32
#define WMMA "wmma", {"gemm_mfma.cl", "gmlp_gemm_mfma"}, "-DGMLP_MFMA_EMULATE=1 -DGMLP_MFMA_WMMA=1", GMLP_GEMM_PREC_FP16
#define WMMA64 "wmma-wave64", {"gemm_mfma.cl", "gmlp_gemm_mfma"}, "-DGMLP_MFMA_EMULATE=1 -DGMLP_MFMA_WMMA=1 -DGMLP_MFMA_WAVE=64", \
    GMLP_GEMM_PREC_FP16

/* Whether the device has cl_intel_subgroups and offers sub-groups of size simd. */
static int offers_subgroup(size_t simd)
{
    size_t sizes[16], n = 0;
    if (!gmlp_device_has_extension(ctx->dev.device, "cl_intel_subgroups") ||
        clGetDeviceInfo(ctx->dev.device, 0x4108 /* CL_DEVICE_SUB_GROUP_SIZES_INTEL */, sizeof sizes, sizes, &n) !=
            CL_SUCCESS)
        return 0;
    for (size_t i = 0; i < n / sizeof *sizes; i++)
        if (sizes[i] == simd)
            return 1;
    return 0;
}

/*   test_gemm_engines_emu [--oclgrind]   (the latter: one sub-group or two per group, small sizes, for Oclgrind) */
int main(int argc, char **argv)
{
    ctx = check_context();
    const int oclgrind = argc > 1 && !strcmp(argv[1], "--oclgrind");
    /* GMLP_TEST_QUICK (.ci/run's sanitizer passes, which look for host errors): BF16 alone, each variant a
     * cold compile of an emulated kernel */
    const int quick = getenv("GMLP_TEST_QUICK") != NULL;
    /* the tilings to report for the tables: the largest that compile without spilling (tests/test_portability.sh);
     * the shuffles' groups a whole sub-group along n (Intel's CPU runtime forms sub-groups along dimension 0) */
    static const engine engines[] = {
        {XMX8, 64, 64, 16, 4, 8}, {XMX16, 32, 128, 16, 2, 8}, {MFMA, 128, 128, 16, 8, 8}, {WMMA, 64, 64, 16, 4, 8},
        {WMMA64, 64, 64, 16, 4, 4}, {XMX8_SHUFFLE, 64, 64, 16, 4, 8}, {XMX16_SHUFFLE, 32, 128, 16, 2, 8}};
    static const engine small[] = {
        {XMX8, 16, 16, 16, 4, 4}, {XMX16, 16, 16, 16, 2, 8}, {MFMA, 32, 32, 16, 4, 4}, {WMMA, 32, 16, 16, 4, 4},
        {WMMA64, 32, 32, 16, 4, 4}, {XMX8_SHUFFLE, 16, 32, 16, 4, 4}, {XMX16_SHUFFLE, 16, 128, 16, 2, 8}};
    for (size_t i = 0; i < sizeof engines / sizeof *engines; i++) {
        const engine *g = oclgrind ? &small[i] : &engines[i];
        const int simd = strstr(g->defs, "XMX_EMULATE=2") ? strstr(g->defs, "SIMD=16") ? 16 : 8 : 0;
        if (simd && !offers_subgroup(simd)) {
            printf("skip %s: '%s' offers no sub-groups of %d (cl_intel_subgroups' sizes)\n", g->name, ctx->dev.name,
                   simd);
            continue;
        }
        for (int prec = quick ? GMLP_GEMM_PREC_BF16 : g->lowest; prec <= GMLP_GEMM_PREC_BF16; prec++) {
            /* NT (the linear layers) and NN (token mixing), half weights in every other precision */
            const int half = prec % 2;
            if (oclgrind) {
                run(g, prec, half ? NN | A_HALF | PADDED : B_HALF, 37, 21, 40, 2, 1.0f, half ? EPI_GATE : EPI_COLS_GELU);
                continue;
            }
            run(g, prec, (half ? B_HALF : 0) | (half ? 0 : PADDED), 150, 137, 75, 2, 0.0f, half ? EPI_NONE : EPI_COLS_GELU);
            run(g, prec, NN | (half ? A_HALF : 0) | (half ? PADDED : 0), 70, 90, 49, 2, 1.0f, half ? EPI_GATE : EPI_ROWS_GELU);
        }
        /* BF16 stored as bfloat16 and FP16 as half (a model's products that only GEMMs read), where the block
         * holds the epilogue in registers (gmlp_gemm_tiling_stores; the larger ones sweep it over a float C) */
        for (int prec = GMLP_GEMM_PREC_FP16; g->wm * g->wn <= 16 && prec <= GMLP_GEMM_PREC_BF16; prec++)
            if (prec >= g->lowest)
                run(g, prec, (prec == GMLP_GEMM_PREC_BF16 ? C_BF16 : C_HALF) | (oclgrind ? NN | PADDED : 0), 37, 21,
                    40, 2, oclgrind ? 0.0f : 1.0f, oclgrind ? EPI_GATE : EPI_COLS_GELU);
    }
    gmlp_context_destroy(ctx);
    return cases_summary(oclgrind ? "test_gemm_engines_emu --oclgrind" : "test_gemm_engines_emu");
}
