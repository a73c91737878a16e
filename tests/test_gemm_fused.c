/* The fused LayerNorm's halves (ops.h's gmlp_gemm_norm; cl_kernels/gemm_direct.cl) against float64
 * references, on awkward sizes (1, 7, 33, 97, 130, k = 0), batched, in every precision, on the host's pick and
 * on each direct tiling forced:
 * - a producer (NT as fc2 and the stem, NN batched as the Mixer's token fc2; bias, beta 1) writes its rows'
 *   statistics from column col0 on: its C bit for bit the same product's without them, the parts merged in
 *   order (Chan's update, float64 here) giving each row's count exactly and its mean and variance as the
 *   stored values' float64 ones;
 * - a consumer (NT, as fc1: bias and GELU) normalises its A as it loads it, by those statistics (a
 *   LayerNorm) or by none (ResMLP's Affine): against the float64 normalisation, rounded to the precision
 *   after it (that the rounding follows the normalisation, bit for bit, test_e2e's rounding references
 *   check on whole models, in e2e-plain's fused forwards);
 * - a consumer of op(B) (NN batched, as the spatial GEMM and the token MLPs: bias per row and GELU)
 *   normalises the same statistics' rows across its n as it loads them, against the same float64 rows;
 * - the refusals: a transposed A (or B) under its prologue, an unknown operand, statistics too big for their buffer, a
 *   matrix engine's tiling (no halves: skipped, saying why), B's rows deeper than the tiled kernel holds; and that two
 *   runs write the same statistics bit for bit.
 * The quick tier (check_quick_tier): the host's pick alone, FP32 and BF16. */
#include <math.h>
#include <string.h>

#include "core/half.h"
#include "ops/gemm_variant.h"
#include "ops_check.h"
#include "ref/ref.h"

typedef struct fused_case {
    size_t m, n, k, n2, col0, batch;
    int nn;  /* the producer as the token fc2: W (m x k) . X (k x n), batched */
    int a16; /* the producer's activation operand in the precision's 16-bit storage (fc2's gated) */
} fused_case;

static const fused_case cases[] = {
    {1, 1, 1, 5, 0, 1, 0, 0},     {7, 33, 97, 9, 0, 1, 0, 1},  {33, 130, 7, 33, 0, 2, 1, 1},
    {130, 97, 33, 65, 0, 1, 0, 0}, {37, 68, 20, 17, 34, 1, 0, 1}, {5, 9, 0, 3, 0, 3, 1, 0},
};
#define N_CASES (sizeof cases / sizeof *cases)

static const float eps = 1e-5f;

/* A float buffer of n values, rounded to storage e first (its host copy the values the device sees). */
static cl_mem upload_as(gmlp_elem e, float *host, size_t n)
{
    if (e == GMLP_ELEM_F32)
        return up(host, n);
    uint16_t *h = malloc((n ? n : 1) * sizeof *h);
    gmlp_elem_pack(e, host, n, h);
    for (size_t i = 0; i < n; i++)
        host[i] = gmlp_elem_value(e, h[i]);
    cl_mem m = up_bytes(h, (n ? n : 1) * sizeof *h);
    free(h);
    return m;
}

/* Runs g (forced tiling t, or the host's pick); false, saying why, where t skipped it. */
static bool run(const gmlp_gemm *g, const gmlp_tiling *t, const char *what)
{
    const char *skipped = NULL;
    gmlp_status st = t ? gmlp_op_gemm_tiled(ctx, g, t, &skipped) : gmlp_op_gemm_kernel(ctx, g);
    if (st == GMLP_OK && skipped == gmlp_gemm_tiled_too_big) {
        if (cases_too_big++ < 3)
            printf("skip %s: %s\n", what, skipped);
        return false;
    }
    CHECK(st == GMLP_OK && !skipped, "%s: %s", what, skipped ? skipped : gmlp_last_error(ctx));
    return st == GMLP_OK && !skipped;
}

/* row r's (count, mean, M2) from its parts, merged in order in float64 */
static void merge(const float *s, size_t parts, double out[3])
{
    double n = 0, mean = 0, m2 = 0;
    for (size_t q = 0; q < parts; q++) {
        const double nb = s[3 * q], mb = s[3 * q + 1], m2b = s[3 * q + 2];
        if (nb == 0)
            continue;
        const double t = n + nb, d = mb - mean;
        mean += d * nb / t;
        m2 += m2b + d * d * n * nb / t;
        n = t;
    }
    out[0] = n, out[1] = mean, out[2] = m2;
}

static void fused_pair(const fused_case *fc, const gmlp_tiling *t, gmlp_gemm_precision prec, bool affine)
{
    const size_t m = fc->m, n = fc->n, k = fc->k, n2 = fc->n2, col0 = fc->col0, B = fc->batch, rows = B * m;
    const size_t kk = n - col0; /* the consumer's depth: X's columns from col0 on */
    const gmlp_elem in16 = gmlp_gemm_precision_inputs(prec), ae = fc->a16 ? in16 : GMLP_ELEM_F32;
    char what[200];
    snprintf(what, sizeof what, "%s %zux%zux%zu then x%zu from column %zu, batch %zu, %s%s, %s", fc->nn ? "NN" : "NT",
             m, n, k, n2, col0, B, affine ? "Affine" : "LayerNorm", fc->a16 ? ", 16-bit A" : "",
             gmlp_gemm_precision_name(prec));
    /* the producer: X[p] = A[p] . W^T + bias + X0 (NT), or W . A[p] + bias per row + X0 (NN) */
    float *act = rnd(B * (fc->nn ? k * n : m * k)), *w = rnd(fc->nn ? m * k : n * k), *bias = rnd(fc->nn ? m : n);
    float *x0 = rnd(rows * n);
    cl_mem dact = upload_as(ae, act, B * (fc->nn ? k * n : m * k)), dw = up(w, fc->nn ? m * k : n * k);
    cl_mem dbias = up(bias, fc->nn ? m : n), dx = up(x0, rows * n), dplain = up(x0, rows * n);
    const size_t parts_max = gmlp_gemm_stats_parts_max(n);
    cl_mem dstats = up_bytes(NULL, rows * parts_max * 3 * sizeof(float));
    const gmlp_view av = fc->nn ? (gmlp_view){.buf = dact, .ld = n, .stride = k * n, .elem = ae}
                                : (gmlp_view){.buf = dact, .ld = k, .stride = m * k, .elem = ae};
    const gmlp_view wv = fc->nn ? (gmlp_view){.buf = dw, .ld = k} : (gmlp_view){.buf = dw, .ld = k, .trans = 1};
    gmlp_gemm prod = {.m = m, .n = n, .k = k, .batch = B, .a = fc->nn ? wv : av, .b = fc->nn ? av : wv,
                      .c = {.buf = dplain, .ld = n, .stride = m * n}, .beta = 1.0f, .bias = dbias,
                      .bias_rows = fc->nn, .precision = prec};
    bool ok = run(&prod, t, what);
    prod.c.buf = dx;
    prod.stats = dstats;
    prod.stats_col0 = col0;
    ok = ok && run(&prod, t, what);
    size_t parts = 0; /* a forced tiling's: its work-items along n; else the host's pick's */
    if (t)
        parts = (n + (size_t)t->tn - 1) / (size_t)t->tn * (size_t)(t->tn / t->wn);
    else if (ok)
        CHECK(gmlp_gemm_stats_parts(ctx, &prod, &parts) == GMLP_OK, "%s: %s", what, gmlp_last_error(ctx));
    float *x = malloc(rows * n * sizeof *x), *plain = malloc(rows * n * sizeof *plain);
    float *stats = malloc((rows * parts_max * 3 + 1) * sizeof *stats);
    double *mean = calloc(rows + 1, sizeof *mean), *rstd = calloc(rows + 1, sizeof *rstd);
    if (ok) {
        down(dx, x, rows * n);
        down(dplain, plain, rows * n);
        CHECK(!memcmp(x, plain, rows * n * sizeof *x), "%s: the statistics changed C", what);
        CHECK(parts >= 1 && parts <= parts_max, "%s: %zu parts (at most %zu)", what, parts, parts_max);
        down(dstats, stats, rows * parts * 3);
        double worst = 0;
        for (size_t r = 0; r < rows; r++) {
            double s = 0, v = 0, got[3];
            for (size_t j = col0; j < n; j++)
                s += x[r * n + j];
            mean[r] = kk ? s / (double)kk : 0;
            for (size_t j = col0; j < n; j++)
                v += (x[r * n + j] - mean[r]) * (x[r * n + j] - mean[r]);
            rstd[r] = 1 / sqrt(v / (double)kk + eps);
            merge(stats + r * parts * 3, parts, got);
            CHECK(got[0] == (double)kk, "%s: row %zu counts %g values, not %zu", what, r, got[0], kk);
            const double sd = sqrt(v / (double)kk), e1 = fabs(got[1] - mean[r]) / (fabs(mean[r]) + sd + 1e-30);
            const double e2 = fabs(got[2] - v) / (v + 1e-30 * (1 + s * s));
            worst = fmax(worst, fmax(e1, e2));
        }
        CHECK(worst <= 2e-6, "%s: statistics off by %.3g (relative)", what, worst);
        /* the same product again (on x0 again, into statistics of their own): the same bits */
        float *again = malloc((rows * parts * 3 + 1) * sizeof *again);
        cl_mem dagain = up(x0, rows * n), dstats2 = up_bytes(NULL, rows * parts_max * 3 * sizeof(float));
        gmlp_gemm twin = prod;
        twin.c.buf = dagain, twin.stats = dstats2;
        if (run(&twin, t, what)) {
            down(dstats2, again, rows * parts * 3);
            CHECK(!memcmp(again, stats, rows * parts * 3 * sizeof *again), "%s: statistics differ run to run", what);
        }
        gmlp_buffer_release(ctx, &dagain);
        gmlp_buffer_release(ctx, &dstats2);
        free(again);
    }
    /* the consumer: Y = GELU(norm(X[:, col0 ..]) . V^T + bias2), X's rows normalised along k */
    float *v = rnd(n2 * kk), *b2 = rnd(n2), *gw = rnd(kk), *gb = rnd(kk);
    cl_mem dv = up(v, n2 * kk), db2 = up(b2, n2), dgw = up(gw, kk), dgb = up(gb, kk);
    float *y = calloc(rows * n2 + 1, sizeof *y), *normed = malloc((rows * kk + 1) * sizeof *normed);
    cl_mem dy = up(y, rows * n2);
    if (ok) {
        for (size_t r = 0; r < rows; r++)
            for (size_t q = 0; q < kk; q++) {
                const double xv = x[r * n + col0 + q];
                normed[r * kk + q] = (float)((affine ? xv : (xv - mean[r]) * rstd[r]) * gw[q] + gb[q]);
            }
        const gmlp_gemm cons = {.m = rows, .n = n2, .k = kk, .a = {.buf = dx, .off = col0, .ld = n},
                                .b = {.buf = dv, .ld = kk, .trans = 1}, .c = {.buf = dy, .ld = n2}, .bias = db2,
                                .act = GMLP_ACT_GELU, .precision = prec,
                                .norm = {.w = dgw, .b = dgb, .stats = affine ? NULL : dstats, .parts = parts,
                                         .eps = eps}};
        float *want = calloc(rows * n2 + 1, sizeof *want);
        const ref_epi re = {b2, 0, GMLP_ACT_GELU, NULL, 0, 0};
        ref_gemm_prec(rows, n2, kk, normed, kk, 0, 0, v, kk, 0, 1, 0.0f, want, n2, 0, 1, (int)prec);
        ref_epilogue(want, rows, n2, n2, 0, 1, &re);
        if (run(&cons, t, what)) {
            /* the reference normalises in float64, the kernel in float (with or without FMA contraction,
             * as its compiler chooses): an operand can land across a rounding boundary of the precision, one
             * ulp of it (2^-10 TF32 and FP16, 2^-7 BF16) on one product of the k summed, whose share of the
             * largest output is about 1/sqrt(k); two such steps allowed (one seen on rusticl, TF32, k 34) */
            const double ulp = prec == GMLP_GEMM_FP32 ? 0 : prec == GMLP_GEMM_BF16 ? 0x1p-7 : 0x1p-10;
            const double tol = 2e-5 + 2 * ulp / sqrt((double)(kk ? kk : 1));
            expect(what, dy, want, rows * n2, tol);
            dy = NULL;
            cases_run++;
        }
        free(want);
    }
    /* the consumer of op(B): Z[p] = GELU(V2 (n2 x m) . norm(X[p][:, col0 ..]) + bias per row), X[p]'s m rows
     * normalised across its kk columns (the spatial GEMM's LN(v), the token MLPs' LN(x)), batched */
    float *v2 = rnd(n2 * m), *b3 = rnd(n2), *z = calloc(B * n2 * kk + 1, sizeof *z);
    cl_mem dv2 = up(v2, n2 * m), db3 = up(b3, n2), dz = up(z, B * n2 * kk);
    if (ok) {
        const gmlp_gemm cons = {.m = n2, .n = kk, .k = m, .batch = B, .a = {.buf = dv2, .ld = m},
                                .b = {.buf = dx, .off = col0, .ld = n, .stride = m * n},
                                .c = {.buf = dz, .ld = kk, .stride = n2 * kk}, .bias = db3, .bias_rows = 1,
                                .act = GMLP_ACT_GELU, .precision = prec,
                                .norm = {.w = dgw, .b = dgb, .stats = affine ? NULL : dstats, .parts = parts,
                                         .eps = eps, .of = GMLP_NORM_OF_B}};
        float *want = calloc(B * n2 * kk + 1, sizeof *want);
        const ref_epi re = {b3, 1, GMLP_ACT_GELU, NULL, 0, 0};
        ref_gemm_prec(n2, kk, m, v2, m, 0, 0, normed, kk, m * kk, 0, 0.0f, want, kk, n2 * kk, B, (int)prec);
        ref_epilogue(want, n2, kk, kk, n2 * kk, B, &re);
        char whatb[230];
        snprintf(whatb, sizeof whatb, "%s, B normalised", what);
        if (run(&cons, t, whatb)) {
            const double ulp = prec == GMLP_GEMM_FP32 ? 0 : prec == GMLP_GEMM_BF16 ? 0x1p-7 : 0x1p-10;
            expect(whatb, dz, want, B * n2 * kk, 2e-5 + 2 * ulp / sqrt((double)(m ? m : 1)));
            dz = NULL;
            cases_run++;
        }
        free(want);
    }
    free(v2), free(b3), free(z);
    cl_mem bufs[] = {dact, dw, dbias, dx, dplain, dstats, dv, db2, dgw, dgb, dy, dv2, db3, dz};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (bufs[i])
            gmlp_buffer_release(ctx, &bufs[i]);
    free(act), free(w), free(bias), free(x0), free(x), free(plain), free(stats), free(mean), free(rstd);
    free(v), free(b2), free(gw), free(gb), free(y), free(normed);
}

/* The refusals, each with a clear status. */
static void refusals(void)
{
    float *h = rnd(64);
    cl_mem a = up(h, 64), s = up(h, 6);
    gmlp_gemm g = {.m = 4, .n = 4, .k = 4, .a = {.buf = a, .ld = 4}, .b = {.buf = a, .ld = 4, .trans = 1},
                   .c = {.buf = a, .off = 32, .ld = 4}, .norm = {.w = a, .b = a, .eps = eps}};
    g.a.trans = 1;
    CHECK(gmlp_op_gemm_kernel(ctx, &g) == GMLP_ERR_INVALID_ARGUMENT && strstr(gmlp_last_error(ctx), "transposed"),
          "a transposed A under the prologue: %s", gmlp_last_error(ctx));
    g.a.trans = 0;
    g.norm.of = GMLP_NORM_OF_B; /* B is transposed */
    CHECK(gmlp_op_gemm_kernel(ctx, &g) == GMLP_ERR_INVALID_ARGUMENT && strstr(gmlp_last_error(ctx), "B not transposed"),
          "a transposed B under the prologue of B: %s", gmlp_last_error(ctx));
    g.norm.of = (gmlp_gemm_norm_of)7;
    CHECK(gmlp_op_gemm_kernel(ctx, &g) == GMLP_ERR_INVALID_ARGUMENT && strstr(gmlp_last_error(ctx), "neither"),
          "the prologue of an unknown operand: %s", gmlp_last_error(ctx));
    g.norm.of = GMLP_NORM_OF_A;
    g.norm.stats = s, g.norm.parts = 1; /* 4 rows of 1 part need 12 floats, not 6 */
    CHECK(gmlp_op_gemm_kernel(ctx, &g) == GMLP_ERR_INVALID_ARGUMENT && strstr(gmlp_last_error(ctx), "statistics"),
          "the prologue's statistics past their buffer: %s", gmlp_last_error(ctx));
    g.norm = (gmlp_gemm_norm){0};
    g.stats = s;
    CHECK(gmlp_op_gemm_kernel(ctx, &g) == GMLP_ERR_INVALID_ARGUMENT && strstr(gmlp_last_error(ctx), "statistics"),
          "row statistics past their buffer: %s", gmlp_last_error(ctx));
    g.stats_col0 = 5;
    CHECK(gmlp_op_gemm_kernel(ctx, &g) == GMLP_ERR_INVALID_ARGUMENT, "statistics from past the last column");
    g.stats = NULL, g.stats_col0 = 0;
    g.norm = (gmlp_gemm_norm){.w = a, .b = a};
    /* a matrix engine's tiling (the engine pretended: the skip comes before any build) */
    const char *skipped = NULL;
    const gmlp_tiling *mma = gmlp_gemm_tiling_named("mma_64x64x16_4x8");
    CHECK(mma, "the tiling mma_64x64x16_4x8 exists");
    const gmlp_devinfo dev = ctx->dev;
    ctx->dev.vendor_id = GMLP_VENDOR_NVIDIA, ctx->dev.engines = GMLP_ENGINE_MMA_SYNC | GMLP_ENGINE_EMULATED;
    if (mma && gmlp_gemm_tiling_fits(&ctx->dev, mma))
        CHECK(gmlp_op_gemm_tiled(ctx, &g, mma, &skipped) == GMLP_OK && skipped && strstr(skipped, "prologue"),
              "a tiling without the halves skipped, saying why: %s", skipped ? skipped : "(ran)");
    else
        printf("skip: mma_64x64x16_4x8 does not fit this device's work-groups or local memory\n");
    ctx->dev = dev;
    /* op(B)'s rows deeper than the tiled kernel's local memory holds */
    const gmlp_tiling *tiled = gmlp_gemm_tiling_named("tiled_16x16x4_4x4");
    const size_t deep = GMLP_NORM_B_ROWS + 1;
    float *hd = rnd(4 * deep);
    cl_mem bd = up(hd, 4 * deep);
    const gmlp_gemm too_deep = {.m = 4, .n = 4, .k = deep, .a = {.buf = bd, .ld = deep}, .b = {.buf = bd, .ld = 4},
                                .c = {.buf = a, .ld = 4}, .norm = {.w = a, .b = a, .of = GMLP_NORM_OF_B}};
    CHECK(tiled, "the tiling tiled_16x16x4_4x4 exists");
    if (tiled && gmlp_gemm_tiling_fits(&ctx->dev, tiled))
        CHECK(gmlp_op_gemm_tiled(ctx, &too_deep, tiled, &skipped) == GMLP_ERR_INVALID_ARGUMENT &&
                  strstr(gmlp_last_error(ctx), "at most"),
              "a prologue of B deeper than the tiled kernel holds: %s", gmlp_last_error(ctx));
    gmlp_buffer_release(ctx, &bd);
    free(hd);
    gmlp_buffer_release(ctx, &a);
    gmlp_buffer_release(ctx, &s);
    free(h);
}

/* --oclgrind (tests/test_oclgrind.sh): both halves on the host's pick and a tiled tiling, FP32 and BF16, on
 * two awkward cases (statistics from column 0, and past a column) */
static void oclgrind_sweep(void)
{
    static const char *const names[] = {NULL, "tiled_32x32x8_4x4"};
    for (size_t ti = 0; ti < sizeof names / sizeof *names; ti++) {
        const gmlp_tiling *t = names[ti] ? gmlp_gemm_tiling_named(names[ti]) : NULL;
        if (names[ti] && (!t || !gmlp_gemm_tiling_fits(&ctx->dev, t)))
            continue;
        for (int p = 0; p < GMLP_GEMM_PRECISIONS; p += 3) {
            fused_pair(&cases[1], t, (gmlp_gemm_precision)p, false);
            fused_pair(&cases[4], t, (gmlp_gemm_precision)p, p != 0);
        }
    }
}

int main(int argc, char **argv)
{
    const bool quick = check_quick_tier();
    ctx = check_context();
    if (argc > 1 && !strcmp(argv[1], "--oclgrind")) {
        oclgrind_sweep();
        gmlp_context_destroy(ctx);
        return cases_summary("test_gemm_fused --oclgrind");
    }
    refusals();
    /* after the host's pick, the direct tilings this device runs (the CPUs' defaults and a GPU-sized one) and
     * the tiled kernel's (the epilogue in registers; in a second sweep) */
    static const char *const names[] = {NULL,
                                        "direct_16x32_4x16_v8",
                                        "direct_24x32_6x16_v8",
                                        "direct_4x64_1x32_v8",
                                        "direct_4x64_1x4_v4",
                                        "tiled_32x32x8_4x4",
                                        "tiled_128x128x2_8x8"};
    for (size_t ti = 0; ti < (quick ? 1 : sizeof names / sizeof *names); ti++) {
        const gmlp_tiling *t = names[ti] ? gmlp_gemm_tiling_named(names[ti]) : NULL;
        CHECK(!names[ti] || t, "the tiling %s exists", names[ti]);
        if (names[ti] && (!t || !gmlp_gemm_tiling_fits(&ctx->dev, t)))
            continue;
        /* the tiled kernel's in FP32 and BF16: its rounding is the direct kernel's hook */
        const bool tiled = t && !gmlp_tiling_direct(t);
        for (int p = 0; p < GMLP_GEMM_PRECISIONS; p += quick || tiled ? 3 : 1)
            for (size_t c = 0; c < N_CASES; c++)
                fused_pair(&cases[c], t, (gmlp_gemm_precision)p, (c + ti) % 3 == 2);
    }
    gmlp_context_destroy(ctx);
    return cases_summary("test_gemm_fused");
}
