/* The matrix engines' capability ladder (lib/ops/gemm_engines.c) and their
 * rows in the GEMM tables, on any OpenCL device, the engines' instructions
 * emulated (GMLP_ENGINE_EMULATED; tests/test_gemm_mma.c and
 * test_gemm_engines_emu.c check the kernels' numerics in every form):
 *  - the architecture: sm_80 and later have mma.sync; sm_75 and CPUs not;
 *    Intel XMX by its extensions and smallest sub-group size, never by the
 *    device's generation; AMD MFMA and WMMA by gfx name under AMD's runtime;
 *  - each engine's rows: a product in each precision it runs, on a
 *    pretended device of its vendor, runs its tiling (the report names its
 *    instruction) with the operand-rounding reference's result;
 *  - a BF16 product on a pretended NVIDIA device runs a tensor-core tiling
 *    once its self-test passed in the ladder's own context; the verdict is in
 *    the device's .engines file; the result is the operand-rounding
 *    reference's; gmlp_gemm_engine names mma.sync; FP32 stays portable;
 *  - a second context on the same cache takes the verdict from the file
 *    (no ladder context made);
 *  - with the verdicts turned to failures, the portable tilings run it: the
 *    same numbers within accumulation order, the engine "portable";
 *  - FP16 of half operands passes a self-test whose operands hold
 *    infinities (the kernel saturates stored halves it takes as bits).
 * argv[1]: a cache directory of the test's own (emptied of verdicts first). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cl/program.h"
#include "core/precision.h"
#include "ops/gemm_variant.h"
#include "ops/state.h"
#include "ops_check.h"

static void check_detect(void)
{
    static const gmlp_engine_facts none = {0}, dg2 = {.intel_mma = true, .min_subgroup = 8},
                                   pvc = {.intel_mma = true, .min_subgroup = 16}, tgllp = {.min_subgroup = 8},
                                   pvc_tf32 = {.intel_mma = true, .intel_tf32 = true, .min_subgroup = 16},
                                   dg2_tf32 = {.intel_mma = true, .intel_tf32 = true, .min_subgroup = 8},
                                   rocm = {.amd_runtime = true, .wavefront = 64},
                                   rocm32 = {.amd_runtime = true, .wavefront = 32};
    static const struct {
        gmlp_vendor vendor;
        const char *arch;
        const gmlp_engine_facts *facts;
        unsigned want;
    } cases[] = {{GMLP_VENDOR_NVIDIA, "sm_90", &none, GMLP_ENGINE_MMA_SYNC | GMLP_ENGINE_WGMMA}, /* Hopper */
                 {GMLP_VENDOR_NVIDIA, "sm_80", &none, GMLP_ENGINE_MMA_SYNC},
                 {GMLP_VENDOR_NVIDIA, "sm_89", &none, GMLP_ENGINE_MMA_SYNC},
                 {GMLP_VENDOR_NVIDIA, "sm_100", &none, GMLP_ENGINE_MMA_SYNC}, /* Blackwell: no wgmma */
                 {GMLP_VENDOR_NVIDIA, "sm_120", &none, GMLP_ENGINE_MMA_SYNC},
                 {GMLP_VENDOR_NVIDIA, "sm_75", &none, 0},
                 {GMLP_VENDOR_NVIDIA, "", &none, 0},
                 {GMLP_VENDOR_INTEL, "12.55.8", &dg2, GMLP_ENGINE_XMX8},
                 {GMLP_VENDOR_INTEL, "12.60.7", &pvc, GMLP_ENGINE_XMX16}, /* no _tf32 extension: no TF32 */
                 {GMLP_VENDOR_INTEL, "12.60.7", &pvc_tf32, GMLP_ENGINE_XMX16 | GMLP_ENGINE_XMX16_TF32},
                 {GMLP_VENDOR_INTEL, "12.55.8", &dg2_tf32, GMLP_ENGINE_XMX8}, /* the extension takes SIMD16 only */
                 {GMLP_VENDOR_INTEL, "12.0.0", &tgllp, 0},
                 {GMLP_VENDOR_AMD, "gfx908", &rocm, GMLP_ENGINE_MFMA}, /* no bf16_1k */
                 {GMLP_VENDOR_AMD, "gfx90a", &rocm, GMLP_ENGINE_MFMA | GMLP_ENGINE_MFMA_BF16},
                 {GMLP_VENDOR_AMD, "gfx942", &rocm, GMLP_ENGINE_MFMA | GMLP_ENGINE_MFMA_BF16},
                 {GMLP_VENDOR_AMD, "gfx90a", &none, 0}, /* Mesa: not AMD's compiler */
                 {GMLP_VENDOR_AMD, "gfx1100", &rocm32, GMLP_ENGINE_WMMA32},
                 {GMLP_VENDOR_AMD, "gfx1100", &rocm, GMLP_ENGINE_WMMA64},
                 {GMLP_VENDOR_AMD, "gfx1200", &rocm32, 0}, /* RDNA4's WMMA layout differs */
                 {GMLP_VENDOR_AMD, "gfx1030", &rocm32, 0},
                 {GMLP_VENDOR_ANY, "", &dg2, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gmlp_devinfo d = {.vendor_id = cases[i].vendor};
        snprintf(d.arch, sizeof d.arch, "%s", cases[i].arch);
        unsigned e = gmlp_engines_for(&d, cases[i].facts);
        CHECK(e == cases[i].want, "'%s' (vendor %d): engines %#x, not %#x", cases[i].arch, (int)cases[i].vendor, e,
              cases[i].want);
    }
    /* the refusals' log lines: why a GPU of such a vendor has no engine */
    static const struct {
        gmlp_vendor vendor;
        const char *arch;
        const gmlp_engine_facts *facts;
        const char *why;
    } refusals[] = {{GMLP_VENDOR_NVIDIA, "sm_75", &none, "architecture sm_75: mma.sync needs sm_80"},
                    {GMLP_VENDOR_INTEL, "12.0.0", &tgllp, "no cl_intel_subgroup_matrix_multiply_accumulate"},
                    {GMLP_VENDOR_AMD, "gfx90a", &none, "not AMD's own runtime"},
                    {GMLP_VENDOR_AMD, "gfx1030", &rocm32, "gfx1030 has neither MFMA nor a WMMA"},
                    {GMLP_VENDOR_NVIDIA, "sm_90", &none, NULL},
                    {GMLP_VENDOR_ANY, "", &none, NULL}};
    for (size_t i = 0; i < sizeof refusals / sizeof *refusals; i++) {
        gmlp_devinfo d = {.vendor_id = refusals[i].vendor, .type = CL_DEVICE_TYPE_GPU};
        snprintf(d.arch, sizeof d.arch, "%s", refusals[i].arch);
        char buf[160];
        const char *why = gmlp_engines_missing(&d, refusals[i].facts, buf, sizeof buf);
        CHECK(refusals[i].why ? why && strstr(why, refusals[i].why) : !why, "'%s': why none: %s", refusals[i].arch,
              why ? why : "(has one)");
    }
}

/* c as one of vendor's devices of one compute unit with engine (emulated;
 * still a CPU: its stack is no spill) */
static void pretend(gmlp_context *c, gmlp_vendor vendor, unsigned engine)
{
    c->dev.vendor_id = vendor;
    c->dev.compute_units = 1;
    c->dev.engines = engine | GMLP_ENGINE_EMULATED;
    gmlp_gemm_plan_clear(c);
}
static void pretend_nvidia(gmlp_context *c)
{
    pretend(c, GMLP_VENDOR_NVIDIA, GMLP_ENGINE_MMA_SYNC);
}

static gmlp_context *open_in(const char *dir)
{
    gmlp_context_options o;
    gmlp_context_options_default(&o);
    o.cache_dir = dir;
    gmlp_context *c = check_context_ex(&o);
    pretend_nvidia(c);
    return c;
}

enum { M = 256, N = 136 }; /* a large product (4 tiles of 128 for one compute unit), ragged n and k */
/* K: 70, rows whose alignment allows 2-wide loads; the quick tier 72, 4-wide ones, the variant the ladder's
 * self-test builds, so that no product builds an emulated kernel of its own (each tens of seconds cold on a
 * CPU's implementation); still ragged against the 16- and 32-deep slices */
static size_t K = 70;

/* C = A . B^T in precision p on ctx, into got */
static void product_in(gmlp_gemm_precision p, const float *a, const float *b, float *got)
{
    cl_mem da = up(a, (size_t)M * K), db = up(b, (size_t)N * K), dc = up(got, (size_t)M * N);
    gmlp_gemm g = {.m = M, .n = N, .k = K, .a = {.buf = da, .ld = K}, .b = {.buf = db, .ld = K, .trans = 1},
                   .c = {.buf = dc, .ld = N}, .precision = p};
    CHECK(gmlp_op_gemm(ctx, &g) == GMLP_OK, "the %s product runs: %s", gmlp_gemm_precision_name(p),
          gmlp_last_error(ctx));
    CHECK(gmlp_gemm_class(ctx, &g) == GMLP_GEMM_LARGE, "a large product");
    down(dc, got, (size_t)M * N);
    gmlp_buffer_release(ctx, &da), gmlp_buffer_release(ctx, &db), gmlp_buffer_release(ctx, &dc);
}

static void product(const float *a, const float *b, float *got)
{
    product_in(GMLP_GEMM_BF16, a, b, got);
}

/* max |got - (a . b^T with a's and b's elements rounded to p)| relative to its largest element */
static double error_in(gmlp_gemm_precision p, const float *a, const float *b, const float *got)
{
    double *want = malloc((size_t)M * N * sizeof *want);
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double s = 0;
            for (size_t q = 0; q < K; q++)
                s += (double)gmlp_round_operand(a[i * K + q], p) * gmlp_round_operand(b[j * K + q], p);
            want[i * N + j] = s;
        }
    double e = rel_error(got, want, (size_t)M * N, 0);
    free(want);
    return e;
}

static const char *engine(gmlp_gemm_precision p)
{
    const char *e = "?";
    CHECK(gmlp_gemm_engine(ctx, 0, p, false, &e) == GMLP_OK, "gmlp_gemm_engine: %s", gmlp_last_error(ctx));
    return e;
}

/* The verdicts file's text, "" when there is none. */
static void verdicts(char *path, size_t size, char *text, size_t text_size)
{
    CHECK(gmlp_cache_kernels_file(ctx, ".engines", path, size), "a cache directory");
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, text_size - 1, f) : 0;
    text[n] = 0;
    if (f)
        fclose(f);
}

/* Each engine's rows on a pretended device of its vendor: one product (the
 * wiring: the row, the kernel's defines, the emulation, the ladder; the
 * precisions' numerics are test_gemm_engines_emu's). */
static void check_engine_rows(const char *dir, const float *a, const float *b)
{
    static const struct {
        gmlp_vendor vendor;
        unsigned engine;
        gmlp_gemm_precision p;
    } rows[] = {{GMLP_VENDOR_INTEL, GMLP_ENGINE_XMX8, GMLP_GEMM_BF16},
                {GMLP_VENDOR_INTEL, GMLP_ENGINE_XMX16, GMLP_GEMM_FP16},
                {GMLP_VENDOR_INTEL, GMLP_ENGINE_XMX16_TF32, GMLP_GEMM_TF32},
                {GMLP_VENDOR_AMD, GMLP_ENGINE_MFMA, GMLP_GEMM_TF32},
                {GMLP_VENDOR_AMD, GMLP_ENGINE_MFMA_BF16, GMLP_GEMM_BF16},
                {GMLP_VENDOR_AMD, GMLP_ENGINE_WMMA32, GMLP_GEMM_BF16},
                {GMLP_VENDOR_AMD, GMLP_ENGINE_WMMA64, GMLP_GEMM_FP16}};
    gmlp_context *outer = ctx;
    ctx = open_in(dir);
    float *got = calloc((size_t)M * N, sizeof *got);
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const gmlp_engine *e = gmlp_engine_of(rows[i].engine);
        pretend(ctx, rows[i].vendor, rows[i].engine);
        product_in(rows[i].p, a, b, got);
        const char *name = engine(rows[i].p);
        double err = error_in(rows[i].p, a, b, got);
        CHECK(e && e->op[rows[i].p] && !strcmp(name, e->op[rows[i].p]) && err <= 1e-5, "%s %s: %s, %.3g from the reference",
              e ? e->prefix : "?", gmlp_gemm_precision_name(rows[i].p), name, err);
        CHECK(!strcmp(engine(GMLP_GEMM_FP32), "portable"), "%s: FP32 portable", e ? e->prefix : "?");
    }
    free(got);
    gmlp_context_destroy(ctx);
    ctx = outer;
}

/* How a BF16 or FP16 model stores the products only GEMMs read
 * (gmlp_gemm_prepare): in the mode's 16-bit format where those products
 * keep their tilings (the tensor cores' kernel applies the epilogue to the
 * accumulators), as floats where a 16-bit C would leave the engine (AMD's
 * MFMA blocks of 64 outputs a lane sweep the epilogue over C). */
static void check_outputs(const char *dir)
{
    static const struct {
        gmlp_vendor vendor;
        unsigned engine;
        gmlp_gemm_precision precision;
        gmlp_elem stored, want; /* weights and inputs stored as; outputs */
    } rows[] = {{GMLP_VENDOR_NVIDIA, GMLP_ENGINE_MMA_SYNC, GMLP_GEMM_BF16, GMLP_ELEM_BF16, GMLP_ELEM_BF16},
                {GMLP_VENDOR_NVIDIA, GMLP_ENGINE_MMA_SYNC, GMLP_GEMM_FP16, GMLP_ELEM_F16, GMLP_ELEM_F16},
                {GMLP_VENDOR_AMD, GMLP_ENGINE_MFMA | GMLP_ENGINE_MFMA_BF16, GMLP_GEMM_BF16, GMLP_ELEM_BF16,
                 GMLP_ELEM_F32},
                {GMLP_VENDOR_AMD, GMLP_ENGINE_MFMA | GMLP_ENGINE_MFMA_BF16, GMLP_GEMM_FP16, GMLP_ELEM_F16,
                 GMLP_ELEM_F32}};
    gmlp_context *outer = ctx;
    ctx = open_in(dir);
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        pretend(ctx, rows[i].vendor, rows[i].engine);
        gmlp_elem out = GMLP_ELEMS;
        CHECK(gmlp_gemm_prepare(ctx, rows[i].stored, rows[i].stored, rows[i].precision, false, &out) == GMLP_OK &&
                  out == rows[i].want,
              "a %s model's GEMM outputs on %s: %s (want %s): %s", gmlp_gemm_precision_name(rows[i].precision),
              gmlp_engine_of(rows[i].engine)->prefix, gmlp_elem_name(out), gmlp_elem_name(rows[i].want),
              gmlp_last_error(ctx));
    }
    gmlp_context_destroy(ctx);
    ctx = outer;
}

/* FP16 of half operands on the tensor cores, which take stored halves as
 * the instruction's bits and saturate them (gemm_mma.cl's gmlp_mma_sat):
 * the self-test's operands hold an infinity each, so a kernel that did not
 * saturate would fail it; the variant passes, and its product is the
 * operand-rounding reference's. */
static void check_half_operands(const char *dir, const float *a, const float *b)
{
    gmlp_context *outer = ctx;
    ctx = open_in(dir);
    char path[1100], text[8192];
    verdicts(path, sizeof path, text, sizeof text);
    unlink(path);
    uint16_t *ah = malloc((size_t)M * K * sizeof *ah), *bh = malloc((size_t)N * K * sizeof *bh);
    gmlp_elem_pack(GMLP_ELEM_F16, a, (size_t)M * K, ah);
    gmlp_elem_pack(GMLP_ELEM_F16, b, (size_t)N * K, bh);
    float *got = calloc((size_t)M * N, sizeof *got);
    cl_mem da = up_bytes(ah, (size_t)M * K * sizeof *ah), db = up_bytes(bh, (size_t)N * K * sizeof *bh),
           dc = up(got, (size_t)M * N);
    gmlp_gemm g = {.m = M, .n = N, .k = K, .a = {.buf = da, .ld = K, .elem = GMLP_ELEM_F16},
                   .b = {.buf = db, .ld = K, .trans = 1, .elem = GMLP_ELEM_F16}, .c = {.buf = dc, .ld = N},
                   .precision = GMLP_GEMM_FP16};
    CHECK(gmlp_op_gemm(ctx, &g) == GMLP_OK, "FP16 of half operands: %s", gmlp_last_error(ctx));
    down(dc, got, (size_t)M * N);
    const double err = error_in(GMLP_GEMM_FP16, a, b, got);
    verdicts(path, sizeof path, text, sizeof text);
    CHECK(strstr(text, "-DGMLP_GEMM_A=1 -DGMLP_GEMM_B=1") && strstr(text, "pass -D") &&
              strstr(text, "-DGMLP_GEMM_PRECISION=2") && !strstr(text, "fail") && err <= 1e-5,
          "FP16 of half operands on the tensor cores: %.3g from the reference, verdicts '%.300s'", err, text);
    gmlp_buffer_release(ctx, &da), gmlp_buffer_release(ctx, &db), gmlp_buffer_release(ctx, &dc);
    free(ah), free(bh), free(got);
    gmlp_context_destroy(ctx);
    ctx = outer;
}

/* A cp.async tiling whose slices of float operands overflow the device's
 * local memory (48 KiB) but not of bfloat16 ones: the planner checks the
 * product's storages before building (none is tried), refuses the float
 * product as too big and runs the bfloat16 one (4 warps of 64 x 64,
 * emulated). */
static void check_slice_bytes(const char *dir, const float *a, const float *b)
{
    gmlp_context *outer = ctx;
    ctx = open_in(dir);
    ctx->dev.local_mem = 48 * 1024;
    const gmlp_tiling *t = gmlp_gemm_tiling_named("mma_128x128x16_8x16_s3_ldsm");
    uint16_t *ab = malloc((size_t)M * K * sizeof *ab), *bb = malloc((size_t)N * K * sizeof *bb);
    gmlp_elem_pack(GMLP_ELEM_BF16, a, (size_t)M * K, ab);
    gmlp_elem_pack(GMLP_ELEM_BF16, b, (size_t)N * K, bb);
    float *got = calloc((size_t)M * N, sizeof *got);
    cl_mem da = up(a, (size_t)M * K), db = up(b, (size_t)N * K), dc = up(got, (size_t)M * N);
    cl_mem dab = up_bytes(ab, (size_t)M * K * sizeof *ab), dbb = up_bytes(bb, (size_t)N * K * sizeof *bb);
    gmlp_gemm g = {.m = M, .n = N, .k = K, .a = {.buf = da, .ld = K}, .b = {.buf = db, .ld = K, .trans = 1},
                   .c = {.buf = dc, .ld = N}, .precision = GMLP_GEMM_BF16};
    const char *skipped = NULL;
    setenv("GMLP_CL_OPTIONS", "-Dgmlp_gemm_mma=1", 1); /* a build would fail: none is tried */
    CHECK(t && gmlp_op_gemm_tiled(ctx, &g, t, &skipped) == GMLP_OK && skipped == gmlp_gemm_tiled_too_big,
          "float operands on %s: %s (%s)", t ? t->name : "?", skipped ? skipped : "ran", gmlp_last_error(ctx));
    unsetenv("GMLP_CL_OPTIONS");
    g.a = (gmlp_view){.buf = dab, .ld = K, .elem = GMLP_ELEM_BF16};
    g.b = (gmlp_view){.buf = dbb, .ld = K, .trans = 1, .elem = GMLP_ELEM_BF16};
    skipped = NULL;
    CHECK(t && gmlp_op_gemm_tiled(ctx, &g, t, &skipped) == GMLP_OK && !skipped, "bfloat16 operands on %s: %s %s",
          t ? t->name : "?", skipped ? skipped : "", gmlp_last_error(ctx));
    down(dc, got, (size_t)M * N);
    const double err = error_in(GMLP_GEMM_BF16, a, b, got);
    CHECK(err <= 1e-5, "bfloat16 operands on %s: %.3g from the reference", t ? t->name : "?", err);
    gmlp_buffer_release(ctx, &da), gmlp_buffer_release(ctx, &db), gmlp_buffer_release(ctx, &dc);
    gmlp_buffer_release(ctx, &dab), gmlp_buffer_release(ctx, &dbb);
    free(ab), free(bb), free(got);
    gmlp_context_destroy(ctx);
    ctx = outer;
}

/* verdict (a line of the verdicts file: "pass" and a variant's -D options,
 * the form's then the tiling's: gemm_variant.c) as "fail" on tiling t
 * instead, in place; 0 when t does not run the variant's precision. */
static int retiled(char *verdict, const gmlp_tiling *t)
{
    char out[600], tiling[300];
    const char *un = strstr(verdict, "-DGMLP_GEMM_UNROLL="), *prec = strstr(verdict, "-DGMLP_GEMM_PRECISION=");
    if (!un || !prec || !strstr(verdict, "-DGMLP_GEMM_ISSUE=1 ") || un < verdict + 4)
        return 0;
    const int p = atoi(prec + strlen("-DGMLP_GEMM_PRECISION="));
    if (!gmlp_gemm_tiling_runs(t, (gmlp_gemm_precision)p))
        return 0;
    gmlp_gemm_tiling_defines(t, atoi(un + strlen("-DGMLP_GEMM_UNROLL=")), tiling, sizeof tiling);
    snprintf(out, sizeof out, "fail%.*s%s\n", (int)(un - verdict - 4), verdict + 4, tiling);
    snprintf(verdict, 600, "%s", out);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (check_quick_tier())
        K = 72;
    check_detect();
    char dir[512], path[1100], text[8192];
    snprintf(dir, sizeof dir, "%s/pass", argv[1]);
    ctx = open_in(dir);
    verdicts(path, sizeof path, text, sizeof text);
    unlink(path); /* a run before this one's */
    /* the ladder's self-test runs the rows' tilings, of 4 warps and more: a device whose compiler allows
     * fewer work-items a group (rusticl: 32) fails it for that reason alone, which gemm-tables and the
     * host-only checks above cover */
    const gmlp_kernel *probe;
    const gmlp_tiling *probe_t = gmlp_gemm_tiling_named("mma_64x64x16_4x8");
    const gmlp_gemm_variant probe_v = {.tb = 1, .vw = 4, .precision = GMLP_GEMM_BF16, .issue = GMLP_ISSUE_EMULATED};
    char probe_defs[400];
    gmlp_gemm_variant_defines(&probe_v, probe_t, 0, probe_defs, sizeof probe_defs);
    if (gmlp_kernel_get(ctx, &gmlp_gemm_mma, probe_defs, "gmlp_gemm_mma (emulated)", &probe) == GMLP_OK &&
        probe->wg_max < 128) {
        printf("SKIP: the capability ladder on '%s': its kernels allow %zu work-items a group, the tensor-core "
               "tilings need 128 or more\n", ctx->dev.name, probe->wg_max);
        gmlp_context_destroy(ctx);
        return check_failures ? check_summary("engines") : 77;
    }

    float *a = rnd((size_t)M * K), *b = rnd((size_t)N * K), *mma = calloc((size_t)M * N, sizeof *mma),
          *portable = calloc((size_t)M * N, sizeof *portable);
    double *want = malloc((size_t)M * N * sizeof *want), *raw = malloc((size_t)M * N * sizeof *raw);
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double s = 0, r = 0;
            for (size_t q = 0; q < K; q++) {
                s += (double)gmlp_round_operand(a[i * K + q], GMLP_GEMM_BF16) *
                     gmlp_round_operand(b[j * K + q], GMLP_GEMM_BF16);
                r += (double)a[i * K + q] * b[j * K + q];
            }
            want[i * N + j] = s, raw[i * N + j] = r;
        }

    CHECK(!strcmp(engine(GMLP_GEMM_FP32), "portable"), "FP32: portable");
    product(a, b, mma);
    CHECK(!strcmp(engine(GMLP_GEMM_BF16), "mma.sync m16n8k16") && !strcmp(engine(GMLP_GEMM_TF32), "mma.sync m16n8k8"),
          "BF16 and TF32 on the tensor cores: %s", engine(GMLP_GEMM_BF16));
    double e = rel_error(mma, want, (size_t)M * N, 0), e_raw = rel_error(mma, raw, (size_t)M * N, 0);
    CHECK(e <= 1e-5 && e_raw > 1e-4, "tensor cores: %.3g from the rounding reference, %.3g from the unrounded", e,
          e_raw);
    CHECK(ctx->ops->probe != NULL, "the ladder made its own context");
    verdicts(path, sizeof path, text, sizeof text);
    CHECK(strstr(text, "pass -D") && strstr(text, "GMLP_GEMM_ISSUE=1") && !strstr(text, "fail"),
          "passing verdicts kept: '%.200s'", text);

    /* a second context on the same cache: the verdicts from the file */
    gmlp_context *first = ctx;
    ctx = open_in(dir);
    CHECK(!strcmp(engine(GMLP_GEMM_BF16), "mma.sync m16n8k16") && !ctx->ops->probe,
          "a second context trusts the file: %s, %s", engine(GMLP_GEMM_BF16),
          ctx->ops->probe ? "tested again" : "no test");
    gmlp_context_destroy(ctx);

    /* the same variants failed, on every tensor-core tiling (the rows'
     * others): the portable tilings, the same numbers */
    char failed[65536] = "", line[600];
    size_t n_tilings;
    const gmlp_tiling *tilings = gmlp_gemm_tilings(&n_tilings);
    for (const char *p = text, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
        snprintf(line, sizeof line, "%.*s", (int)(nl - p), p);
        for (const gmlp_tiling *t = tilings; t < tilings + n_tilings; t++)
            if (t->needs == GMLP_ENGINE_MMA_SYNC && retiled(line, t))
                strncat(failed, line, sizeof failed - strlen(failed) - 1);
    }
    snprintf(dir, sizeof dir, "%s/fail", argv[1]);
    ctx = open_in(dir);
    verdicts(path, sizeof path, text, sizeof text);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(failed, f) >= 0 && fclose(f) == 0, "%s written", path);
    product(a, b, portable);
    CHECK(!strcmp(engine(GMLP_GEMM_BF16), "portable") && !ctx->ops->probe, "failed verdicts: %s",
          engine(GMLP_GEMM_BF16));
    e = rel_error(portable, want, (size_t)M * N, 0);
    double across = 0, top = 0;
    for (size_t i = 0; i < (size_t)M * N; i++) {
        across = fabs((double)portable[i] - mma[i]) > across ? fabs((double)portable[i] - mma[i]) : across;
        top = fabs(want[i]) > top ? fabs(want[i]) : top;
    }
    CHECK(e <= 1e-5 && across <= 1e-5 * top, "portable: %.3g from the reference, %.3g from the tensor cores'", e,
          across / top);
    gmlp_context_destroy(ctx);
    ctx = first;
    /* GMLP_TEST_QUICK (the sanitizer and other implementations' passes): not the
     * other engines' rows, each a long cold compile of an emulated kernel */
    snprintf(dir, sizeof dir, "%s/engines", argv[1]);
    if (!getenv("GMLP_TEST_QUICK"))
        check_engine_rows(dir, a, b);
    snprintf(dir, sizeof dir, "%s/outputs", argv[1]);
    if (!getenv("GMLP_TEST_QUICK"))
        check_outputs(dir);
    snprintf(dir, sizeof dir, "%s/half", argv[1]);
    check_half_operands(dir, a, b);
    snprintf(dir, sizeof dir, "%s/slices", argv[1]);
    if (!getenv("GMLP_TEST_QUICK"))
        check_slice_bytes(dir, a, b);
    gmlp_context_destroy(ctx);
    free(a), free(b), free(mma), free(portable), free(want), free(raw);
    return check_summary("engines");
}
