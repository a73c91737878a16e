/* The Intel and AMD matrix-engine GEMMs (cl_kernels/gemm_xmx.cl,
 * gemm_mfma.cl) on any OpenCL device: the library's rows (lib/ops/gemm_tilings.c),
 * their tiles and defines, built with GMLP_GEMM_ISSUE=1 (emulated), each instruction is its documented semantics (Intel's
 * extension specification, AMD's matrix instruction calculator) with the
 * sub-group's or wave's fragments through local memory, so that fragment
 * indexing, staging (rounding, 16-bit packing, transposes), edges and the
 * epilogue are checked here, the instruction itself only by the portability
 * suite's machine code.  Per row (XMX SIMD8 and SIMD16, MFMA, WMMA in
 * wave32 and wave64; XMX's through sub-group shuffles too, GMLP_GEMM_ISSUE=2)
 * and precision it runs: NT (linear layers) and NN (token mixing), float and
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
#include "ops/gemm_variant.h"
#include "emu_check.h"

enum { A_HALF = 1, B_HALF = 2, PADDED = 4, NN = 8, C_BF16 = 16, C_HALF = 32 }; /* C stored as bfloat16, half */

/* The quick tier's sample (check_quick_tier): of each row's cases the first (row_limit), each a cold build of
 * an emulated kernel; every row and issue the quick set runs still */
static int row_limit, row_cases;

/* C = epilogue(op(A) . op(B) + beta C) on row t's kernel, its instruction
 * issued as issue says (emulated), in precision prec, form flags, against
 * the rounding reference */
static void run(const gmlp_tiling *t, gmlp_gemm_issue issue, int prec, int flags, size_t m, size_t n, size_t k,
                size_t batch, float beta, int epi)
{
    if (row_limit && row_cases++ >= row_limit)
        return;
    const int nn = (flags & NN) != 0, padded = (flags & PADDED) != 0;
    const gmlp_elem ea = flags & A_HALF ? GMLP_ELEM_F16 : GMLP_ELEM_F32, eb = flags & B_HALF ? GMLP_ELEM_F16 : GMLP_ELEM_F32;
    const gmlp_elem ec = flags & C_BF16 ? GMLP_ELEM_BF16 : flags & C_HALF ? GMLP_ELEM_F16 : GMLP_ELEM_F32;
    const gmlp_gemm_variant v = {.tb = (uint8_t)!nn, .vw = 1, .a = (uint8_t)ea, .b = (uint8_t)eb, .c = (uint8_t)ec,
                                 .precision = (uint8_t)prec, .issue = (uint8_t)issue};
    char defs[500], label[200], what[400];
    gmlp_gemm_variant_defines(&v, t, 0, defs, sizeof defs);
    gmlp_gemm_variant_label(&v, t, label, sizeof label);
    snprintf(what, sizeof what, "%s %dx%dx%d_%dx%d%s %zux%zux%zu batch %zu beta %g epilogue %d", label, t->tm, t->tn,
             t->tk, t->wm, t->wn, padded ? " padded" : "", m, n, k, batch, (double)beta, epi);
    const gmlp_kernel *kern;
    if (gmlp_kernel_get(ctx, t->kernel, defs, t->name, &kern) != GMLP_OK) {
        CHECK(0, "%s: build: %s", what, gmlp_last_error(ctx));
        return;
    }
    const emu_case x = {prec, 0, nn, padded, ea, eb, ec, 1.0f, 1.0f, m, n, k, batch, beta, epi,
                        prec == GMLP_GEMM_PREC_BF16};
    emu_check(kern, t->tm, t->tn, t->wm, t->wn, &x, what);
}

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

/* Oclgrind's tiles: one sub-group or two a group; the shuffles' a whole
 * sub-group along n (Intel's CPU runtime forms sub-groups along dimension 0) */
static const struct small {
    const char *prefix;
    gmlp_gemm_issue issue;
    int tm, tn, wm, wn;
} smalls[] = {
    {"xmx8", GMLP_ISSUE_EMULATED, 16, 16, 4, 4},     {"xmx16", GMLP_ISSUE_EMULATED, 16, 16, 2, 8},
    {"xmx16tf32", GMLP_ISSUE_EMULATED, 16, 16, 2, 8}, {"mfma", GMLP_ISSUE_EMULATED, 32, 32, 4, 4},
    {"mfmabf16", GMLP_ISSUE_EMULATED, 32, 32, 4, 4}, {"wmma", GMLP_ISSUE_EMULATED, 32, 16, 4, 4},
    {"wmma64", GMLP_ISSUE_EMULATED, 32, 32, 4, 4},   {"xmx8", GMLP_ISSUE_SHUFFLES, 16, 32, 4, 4},
    {"xmx16", GMLP_ISSUE_SHUFFLES, 16, 128, 2, 8},   {"xmx16tf32", GMLP_ISSUE_SHUFFLES, 16, 128, 2, 8},
};

/* Row t's cases, its instruction issued as issue says (oclgrind: on its small tiles). */
static void check_row(const gmlp_tiling *row, gmlp_gemm_issue issue, int oclgrind, int quick)
{
    gmlp_tiling t = *row;
    row_cases = 0;
    const char *prefix = gmlp_engine_of(t.needs)->prefix;
    for (size_t i = 0; oclgrind && i < sizeof smalls / sizeof *smalls; i++)
        if (!strcmp(smalls[i].prefix, prefix) && smalls[i].issue == issue)
            t.tm = smalls[i].tm, t.tn = smalls[i].tn, t.wm = smalls[i].wm, t.wn = smalls[i].wn;
    if (issue == GMLP_ISSUE_SHUFFLES && !offers_subgroup((size_t)t.subgroup)) {
        printf("skip %s by shuffles: '%s' offers no sub-groups of %d (cl_intel_subgroups' sizes)\n", t.name,
               ctx->dev.name, t.subgroup);
        return;
    }
    for (int prec = quick ? GMLP_GEMM_PREC_BF16 : GMLP_GEMM_PREC_TF32; prec <= GMLP_GEMM_PREC_BF16; prec++) {
        if (!gmlp_gemm_tiling_runs(&t, (gmlp_gemm_precision)prec))
            continue;
        /* NT (the linear layers) and NN (token mixing), half weights in every other precision */
        const int half = prec % 2;
        if (oclgrind) {
            run(&t, issue, prec, half ? NN | A_HALF | PADDED : B_HALF, 37, 21, 40, 2, 1.0f,
                half ? EPI_GATE : EPI_COLS_GELU);
            continue;
        }
        run(&t, issue, prec, (half ? B_HALF : 0) | (half ? 0 : PADDED), 150, 137, 75, 2, 0.0f,
            half ? EPI_NONE : EPI_COLS_GELU);
        run(&t, issue, prec, NN | (half ? A_HALF : 0) | (half ? PADDED : 0), 70, 90, 49, 2, 1.0f,
            half ? EPI_GATE : EPI_ROWS_GELU);
    }
    /* BF16 stored as bfloat16 and FP16 as half (a model's products that only GEMMs read), where the block
     * holds the epilogue in registers (gmlp_gemm_tiling_stores; the larger ones sweep it over a float C) */
    for (int prec = GMLP_GEMM_PREC_FP16; prec <= GMLP_GEMM_PREC_BF16; prec++) {
        const gmlp_elem c = prec == GMLP_GEMM_PREC_BF16 ? GMLP_ELEM_BF16 : GMLP_ELEM_F16;
        if (gmlp_gemm_tiling_runs(&t, (gmlp_gemm_precision)prec) && gmlp_gemm_tiling_stores(&t, c))
            run(&t, issue, prec, (c == GMLP_ELEM_BF16 ? C_BF16 : C_HALF) | (oclgrind ? NN | PADDED : 0), 37, 21, 40,
                2, oclgrind ? 0.0f : 1.0f, oclgrind ? EPI_GATE : EPI_COLS_GELU);
    }
}

/*   test_gemm_engines_emu [--oclgrind]   (the latter: small tiles and sizes, for Oclgrind) */
int main(int argc, char **argv)
{
    ctx = check_context();
    const int oclgrind = argc > 1 && !strcmp(argv[1], "--oclgrind");
    /* GMLP_TEST_QUICK (.ci/run's sanitizer passes, which look for host errors): BF16 alone, each variant a
     * cold compile of an emulated kernel */
    const int quick = getenv("GMLP_TEST_QUICK") != NULL;
    row_limit = check_quick_tier() ? 1 : 0;
    size_t n;
    const gmlp_tiling *rows = gmlp_gemm_tilings(&n);
    /* the Intel and AMD rows (tests/test_gemm_mma.c: NVIDIA's, mma.sync and wgmma), then XMX's through the sub-group's shuffles;
     * not the direct kernel's dpbf16 (its emulation is the direct kernel's own loop, which test_gemm checks,
     * and its instruction too, natively, where the host has it) */
    for (int issue = GMLP_ISSUE_EMULATED; issue <= GMLP_ISSUE_SHUFFLES; issue++)
        for (const gmlp_tiling *t = rows; t < rows + n; t++)
            if (t->needs && t->kernel != &gmlp_gemm_mma && !gmlp_tiling_direct(t) &&
                (issue == GMLP_ISSUE_EMULATED || t->subgroup))
                check_row(t, (gmlp_gemm_issue)issue, oclgrind, quick);
    gmlp_context_destroy(ctx);
    return cases_summary(oclgrind ? "test_gemm_engines_emu --oclgrind" : "test_gemm_engines_emu");
}
