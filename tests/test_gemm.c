/* GEMMs against the plain-C reference (ref_gemm + ref_epilogue, double
 * accumulation): CLBlast for float operands (then the epilogue kernel), and
 * the library's kernel (cl_kernels/gemm.cl) for float, half A, half B and
 * both, on awkward sizes (1, 7, 33, 97, 130, k = 0), every transpose, batched
 * with strides (A shared or not), offsets and padded leading dimensions, beta
 * 1 and beta 0 (with NaN in C, which must not be read), each epilogue (bias
 * per column or per row, GELU, the SGU gate): the direct variant (CPUs; narrow or not),
 * the large and the small tiles, the narrow and the deep-k ones (GPUs);
 * again with the smaller tiles the host picks for GPUs with smaller
 * work-groups; and the wrapper's refusals. */
#include <string.h>

#include "core/half.h"
#include "ops_check.h"
#include "ref/ref.h"

enum { A_HALF = 1, B_HALF = 2, KERNEL = 4, PADDED = 8, SHARED_A = 16, CLBLAST = 32 };

/* Epilogues: none; fc1 (bias per column + GELU); fc2 / stem (bias per column,
 * usually beta 1); the Mixer's token MLP (bias per row, with or without
 * GELU); the SGU gate fused into the spatial matmul (bias per row, the gate's
 * activation: timm's identity, an LM's tanh, then times u). */
enum { EPI_NONE, EPI_COLS_GELU, EPI_COLS, EPI_ROWS_GELU, EPI_ROWS, EPI_GATE, EPI_GATE_TANH, EPI_COUNT };

/* A stored rows x cols operand (batch of them), its host copy holding the
 * values the device sees (half-rounded when stored as half). */
typedef struct operand {
    float *host;
    size_t n; /* elements in the buffer */
    gmlp_view mat;
} operand;

static operand make(size_t rows, size_t cols, size_t batch, int flags, int shared, int half, int trans, int nan)
{
    operand o;
    size_t ld = cols + (flags & PADDED ? 3 : 0), off = flags & PADDED ? 5 : 0;
    size_t stride = shared ? 0 : rows * ld + (flags & PADDED ? 2 : 0);
    o.n = off + (batch - 1) * stride + rows * ld;
    o.host = rnd(o.n);
    for (size_t p = 0; nan && p < batch; p++) /* beta 0: C's old values must not matter */
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < cols; j++)
                o.host[off + p * stride + i * ld + j] = NAN;
    cl_mem buf;
    if (half) {
        uint16_t *h = malloc((o.n ? o.n : 1) * sizeof *h);
        for (size_t i = 0; i < o.n; i++) {
            h[i] = gmlp_float_to_half(o.host[i]);
            o.host[i] = gmlp_half_to_float(h[i]);
        }
        buf = up_bytes(h, o.n * sizeof *h);
        free(h);
    } else {
        buf = up(o.host, o.n);
    }
    o.mat = (gmlp_view){.buf = buf, .off = off, .ld = ld, .stride = stride, .trans = trans, .half = half};
    return o;
}

/* A tiling test_gemm runs instead of the host's pick (NULL: the pick). */
static const gmlp_tiling *forced;

/* ctx's device claims another type, number of compute units and vendor;
 * the variants planned for the old claims are forgotten. */
static void pretend(cl_device_type type, cl_uint cus, gmlp_vendor vendor)
{
    ctx->dev.type = type;
    ctx->dev.compute_units = cus;
    ctx->dev.vendor_id = vendor;
    gmlp_gemm_plan_clear(ctx);
}

static void test_gemm(size_t m, size_t n, size_t k, int ta, int tb, float beta, size_t batch, int flags, int epi)
{
    int own_kernel = !(flags & CLBLAST);
    operand a = make(ta ? k : m, ta ? m : k, batch, flags, flags & SHARED_A, flags & A_HALF, ta, 0);
    operand b = make(tb ? n : k, tb ? k : n, batch, flags, 0, (flags & B_HALF) != 0, tb, 0);
    operand c = make(m, n, batch, flags, 0, 0, 0, beta == 0.0f && own_kernel);
    const int gated = epi == EPI_GATE || epi == EPI_GATE_TANH;
    const int rows = epi == EPI_ROWS_GELU || epi == EPI_ROWS || gated;
    const int act = epi == EPI_COLS_GELU || epi == EPI_ROWS_GELU ? GMLP_ACT_GELU
                    : epi == EPI_GATE_TANH                      ? GMLP_ACT_TANH
                                                                : GMLP_ACT_IDENTITY;
    int use_bias = epi != EPI_NONE;
    size_t nb = rows ? m : n;
    float *bias = rnd(nb ? nb : 1);
    cl_mem dbias = up(bias, nb ? nb : 1);
    operand u = gated ? make(m, n, batch, flags & PADDED, 0, 0, 0, 0) : (operand){0}; /* the gate: the SGU's u */
    float *want = malloc(c.n * sizeof *want);
    memcpy(want, c.host, c.n * sizeof *want);
    const gmlp_view *A = &a.mat, *B = &b.mat, *C = &c.mat, *U = &u.mat;
    ref_gemm(m, n, k, a.host + A->off, A->ld, A->stride, ta, b.host + B->off, B->ld, B->stride, tb, beta,
             want + C->off, C->ld, C->stride, batch);
    const ref_epi re = {use_bias ? bias : NULL, rows, act, gated ? u.host + U->off : NULL, U->ld, U->stride};
    ref_epilogue(want + C->off, m, n, C->ld, C->stride, batch, &re);
    const gmlp_gemm g = {.m = m, .n = n, .k = k, .batch = batch, .a = *A, .b = *B, .c = *C, .beta = beta,
                         .bias = use_bias ? dbias : NULL, .bias_rows = rows, .act = act,
                         .gate = *U};
    ctx->set.gemm = flags & CLBLAST ? GMLP_GEMM_CLBLAST : GMLP_GEMM_KERNEL;
    int ran = 1;
    gmlp_status st = forced            ? gmlp_op_gemm_tiled(ctx, &g, forced, &ran)
                     : flags & KERNEL ? gmlp_op_gemm_kernel(ctx, &g)
                                      : gmlp_op_gemm(ctx, &g);
    ctx->set.gemm = GMLP_GEMM_KERNEL;
    char what[240], tiling[48] = "";
    if (forced)
        snprintf(tiling, sizeof tiling, " tiling %s", forced->name);
    snprintf(what, sizeof what, "gemm %zux%zux%zu ta=%d tb=%d beta=%g batch=%zu epilogue=%d %s%s%s%s%s%s%s", m, n, k,
             ta, tb, (double)beta, batch, epi, flags & KERNEL ? "kernel " : "", flags & CLBLAST ? "clblast " : "",
             flags & A_HALF ? "halfA " : "", flags & B_HALF ? "halfB " : "", flags & PADDED ? "padded " : "",
             flags & SHARED_A ? "sharedA" : "", tiling);
    CHECK(st == GMLP_OK && ran, "%s: %s", what, ran ? gmlp_last_error(ctx) : "the tiling did not run");
    /* the whole buffer: padding untouched; erf in float costs a few ulp more */
    expect(what, c.mat.buf, want, c.n, act == GMLP_ACT_GELU ? 3e-5 : 1e-5);
    gmlp_buffer_release(ctx, &a.mat.buf);
    gmlp_buffer_release(ctx, &b.mat.buf);
    gmlp_buffer_release(ctx, &u.mat.buf);
    gmlp_buffer_release(ctx, &dbias);
    free(a.host), free(b.host), free(c.host), free(u.host), free(bias), free(want);
}

static const size_t sizes[][3] = {{1, 1, 1}, {7, 33, 97}, {130, 7, 33}, {33, 130, 130}, {97, 1, 7}, {64, 64, 16},
                                  {5, 9, 0}};
#define N_SIZES (sizeof sizes / sizeof *sizes)

/* Every transpose and size for each operand-type mode, varying beta, batch,
 * padding and sharing from case to case. */
static void sweep(const int *modes, int n_modes, size_t n_sizes)
{
    int i = 0;
    for (int md = 0; md < n_modes; md++)
        for (int t = 0; t < 4; t++)
            for (size_t s = 0; s < n_sizes; s++, i++) {
                size_t batch = i % 3 == 0 ? 3 : 1;
                int flags = modes[md] | ((i / 2) % 2 ? PADDED : 0) | (batch > 1 && i % 2 ? SHARED_A : 0);
                test_gemm(sizes[s][0], sizes[s][1], sizes[s][2], t & 1, t >> 1, (float)(i % 2), batch, flags,
                          i % EPI_COUNT);
            }
}

/* A GEMM of 8 x 8 float matrices in one buffer, changed by tweak. */
static gmlp_status refused_gemm(cl_mem buf, gmlp_gemm g)
{
    const gmlp_view ok = {.buf = buf, .ld = 8};
    if (!g.a.buf)
        g.a = ok;
    if (!g.b.buf)
        g.b = ok;
    if (!g.c.buf)
        g.c = ok;
    if (!g.m)
        g.m = g.n = g.k = 8;
    return gmlp_op_gemm(ctx, &g);
}

static void test_refusals(void)
{
    float x[64] = {0};
    cl_mem buf = up(x, 64), four = up(x, 4);
    const gmlp_view half = {.buf = buf, .ld = 8, .half = 1};
    CHECK(refused_gemm(buf, (gmlp_gemm){.a = half, .c = half}) == GMLP_ERR_INVALID_ARGUMENT, "half C refused");
    CHECK(refused_gemm(buf, (gmlp_gemm){.a = {.buf = buf, .off = 60, .ld = 8}, .b = half}) ==
                  GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "does not fit"),
          "operand past its buffer: %s", gmlp_last_error(ctx));
    CHECK(refused_gemm(buf, (gmlp_gemm){.a = {.buf = buf, .ld = 4}, .b = half}) == GMLP_ERR_INVALID_ARGUMENT,
          "leading dimension below the row length");
    CHECK(refused_gemm(buf, (gmlp_gemm){.m = 2, .n = 2, .k = 2, .batch = 40,
                                        .b = {.buf = buf, .ld = 8, .stride = 8, .half = 1}}) ==
              GMLP_ERR_INVALID_ARGUMENT,
          "a batch of B beyond its buffer");
    CHECK(refused_gemm(buf, (gmlp_gemm){.bias = four, .bias_rows = 1}) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "the bias"),
          "a bias shorter than C's rows: %s", gmlp_last_error(ctx));
    CHECK(refused_gemm(buf, (gmlp_gemm){.m = 4, .n = 1, .k = 1, .bias = four, .bias_off = 1, .bias_rows = 1}) ==
                  GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "the bias"),
          "a bias offset past its buffer: %s", gmlp_last_error(ctx));
    CHECK(refused_gemm(buf, (gmlp_gemm){.gate = {.buf = buf, .off = 1, .ld = 8}}) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "the gate"),
          "a gate past its buffer: %s", gmlp_last_error(ctx));
    CHECK(refused_gemm(buf, (gmlp_gemm){.gate = half}) == GMLP_ERR_INVALID_ARGUMENT, "a half gate refused");
    CHECK(refused_gemm(buf, (gmlp_gemm){.act = 7}) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "activation"),
          "an unknown activation: %s", gmlp_last_error(ctx));
    gmlp_buffer_release(ctx, &four);
    gmlp_buffer_release(ctx, &buf);
}

/* A fresh context whose device, a GPU of no vendor with defaults of its own,
 * claims at most max_wg work-items per group: the host must pick smaller
 * tiles (expect_tm), and they must compute alike. */
static void test_small_groups(size_t max_wg, int expect_tm)
{
    gmlp_context *big = ctx;
    ctx = check_context();
    ctx->dev.max_wg = max_wg;
    /* a GPU (CPUs take the direct variant's 8 work-items) of the generic
     * defaults (NVIDIA's own: nvidia_sweep) */
    pretend(CL_DEVICE_TYPE_GPU, ctx->dev.compute_units, GMLP_VENDOR_ANY);
    char tiles[512] = "", want[32], want_nn[32];
    snprintf(want, sizeof want, "NT: tiled_%dx%dx", expect_tm, expect_tm);
    snprintf(want_nn, sizeof want_nn, "; NN: tiled_%dx%dx", expect_tm, expect_tm);
    gmlp_status st = gmlp_gemm_describe(ctx, 1, 0, GMLP_GEMM_FP32, tiles, sizeof tiles);
    CHECK(st == GMLP_OK && !strncmp(tiles, want, strlen(want)) && strstr(tiles, want_nn) && !strstr(tiles, "large"),
          "max_wg %zu: tiles '%s', want %s... %s..., no large ones: %s", max_wg, tiles, want, want_nn,
          gmlp_last_error(ctx));
    int narrow_tm = expect_tm < 16 ? expect_tm : 16;
    snprintf(want, sizeof want, "tiled_%dx%dx", narrow_tm, narrow_tm);
    CHECK(narrow_tm == expect_tm || strstr(tiles, want), "max_wg %zu: narrow tiles not %s: '%s'", max_wg, want,
          tiles);
    static const int modes[] = {A_HALF, B_HALF};
    sweep(modes, 2, 4);
    gmlp_context_destroy(ctx);
    ctx = big;
}

static void test_build_failure(void)
{
    gmlp_context_options o;
    gmlp_context_options_default(&o);
    o.cl_options = "-Dgmlp_gemm=1 -Dgmlp_gemm_direct=1"; /* both GEMM kernels fail to build */
    gmlp_context *big = ctx;
    ctx = check_context_ex(&o);
    float x[4] = {0};
    cl_mem buf = up(x, 4);
    const gmlp_gemm g = {.m = 1, .n = 1, .k = 1, .a = {.buf = buf, .ld = 1, .half = 1},
                         .b = {.buf = buf, .ld = 1, .half = 1}, .c = {.buf = buf, .ld = 1}};
    gmlp_status st = gmlp_op_gemm(ctx, &g);
    CHECK(st == GMLP_ERR_BUILD && strstr(gmlp_last_error(ctx), "build log"), "forced build failure: %s: %.200s",
          gmlp_status_string(st), gmlp_last_error(ctx));
    gmlp_buffer_release(ctx, &buf);
    gmlp_context_destroy(ctx);
    ctx = big;
}

/* --oclgrind: each variant the host picks once, on one awkward shape per
 * transpose case, float and half weights (tests/test_oclgrind.sh runs this
 * under Oclgrind's race and bounds checks: small, as that is slow). */
/* NVIDIA GPUs (the vendor's name claimed): the large tiles the host picks
 * there (8-deep slices for NT, its own for NN) on every transpose of an
 * m x n x k product; then each NVIDIA-only tiling forced on every step-th
 * transpose (from one of its own), on the device's own type (a CPU build's private memory, which on a GPU
 * means spilling, stops neither); operand forms from modes[0..n_modes). */
static void nvidia_sweep(size_t m, size_t n, size_t k, const int *modes, int n_modes, int step)
{
    const cl_uint cus = ctx->dev.compute_units;
    const cl_device_type type = ctx->dev.type;
    const gmlp_vendor vendor = ctx->dev.vendor_id;
    char tiles[512];
    pretend(CL_DEVICE_TYPE_GPU, 0, GMLP_VENDOR_NVIDIA);
    /* the large NT tiles with 8-deep slices; NN (the token mixing): NVIDIA's
     * own defaults (lib/ops/gemm_tilings.c) */
    CHECK(gmlp_gemm_describe(ctx, 0, 0, GMLP_GEMM_FP32, tiles, sizeof tiles) == GMLP_OK &&
              strstr(tiles, "NT: tiled_64x64x8_4x4, tiled_128x128x8_8x8 for large products, tiled_16x16x16_2x2 for "
                            "narrow ones, tiled_16x16x16_2x2 for deep ones") == tiles &&
              strstr(tiles, "; NN: tiled_16x16x16_2x2, tiled_32x64x8_4x4 for large products, tiled_16x16x4_4x4 "
                            "for narrow ones"),
          "NVIDIA's tiles: %s", tiles);
    for (int t = 0; t < 4; t++)
        test_gemm(m, n, k, t & 1, t >> 1, (float)(t % 2), t == 3 ? 2 : 1, modes[t % n_modes] | (t == 1 ? PADDED : 0),
                  t % EPI_COUNT);
    pretend(type, 0, GMLP_VENDOR_NVIDIA);
    size_t n_tilings;
    const gmlp_tiling *all = gmlp_gemm_tilings(&n_tilings);
    for (size_t i = 0; i < n_tilings; i++)
        for (int s = 0; s < 4 && all[i].vendor == GMLP_VENDOR_NVIDIA; s += step) {
            const int t = (s + (int)i) % 4;
            forced = &all[i];
            test_gemm(m, n, k, t & 1, t >> 1, (float)(t % 2), t == 2 ? 2 : 1,
                      KERNEL | modes[(i + (size_t)t) % (size_t)n_modes] | (t == 3 ? PADDED : 0),
                      (int)(i + (size_t)t) % EPI_COUNT);
            forced = NULL;
        }
    pretend(type, cus, vendor);
}

static void oclgrind_sweep(void)
{
    static const int modes[] = {KERNEL, B_HALF, A_HALF};
    const cl_uint cus = ctx->dev.compute_units;
    const cl_device_type type = ctx->dev.type;
    /* large, small, the CPU's direct (and its narrow one), narrow on GPUs
     * (small tiles), deep k */
    const struct {
        cl_uint cus;
        cl_device_type type;
        size_t m, n, k;
    } classes[] = {{0, CL_DEVICE_TYPE_GPU, 19, 37, 13},   {UINT32_MAX, CL_DEVICE_TYPE_GPU, 19, 37, 13},
                   {0, CL_DEVICE_TYPE_CPU, 19, 37, 13},   {0, CL_DEVICE_TYPE_CPU, 3, 37, 13},
                   {0, CL_DEVICE_TYPE_GPU, 3, 37, 13},    {UINT32_MAX, CL_DEVICE_TYPE_GPU, 19, 21, 259}};
    for (size_t c = 0; c < sizeof classes / sizeof *classes; c++)
        for (int t = 0; t < 4; t++) {
            pretend(classes[c].type, classes[c].cus, ctx->dev.vendor_id);
            test_gemm(classes[c].m, classes[c].n, classes[c].k, t & 1, t >> 1, (float)(t % 2), t == 3 ? 2 : 1,
                      modes[(c + (size_t)t) % 3] | (t == 1 ? PADDED : 0), (int)(c + (size_t)t) % EPI_COUNT);
        }
    pretend(type, cus, ctx->dev.vendor_id);
    nvidia_sweep(19, 37, 13, modes, 3, 4);
}

int main(int argc, char **argv)
{
    /* GMLP_TEST_QUICK (.ci/run's ASan pass, which looks for host memory
     * errors): float and half-B operands, not every storage pair, and of
     * the GPU tilings the small ones only; each variant is a program of its
     * own, and compiling ~200 of them is most of this test's time */
    const int quick = getenv("GMLP_TEST_QUICK") != NULL;
    ctx = check_context();
    if (argc > 1 && !strcmp(argv[1], "--oclgrind")) {
        oclgrind_sweep();
        gmlp_context_destroy(ctx);
        return check_summary("test_gemm --oclgrind");
    }
    /* CLBlast, then the epilogue kernel, as the model calls them with GMLP_GEMM=clblast */
    if (GMLP_HAVE_CLBLAST) {
        test_gemm(1, 1, 1, 0, 0, 0.0f, 1, CLBLAST, EPI_NONE);
        test_gemm(17, 33, 65, 0, 1, 0.0f, 1, CLBLAST, EPI_COLS_GELU);
        test_gemm(37, 5, 130, 0, 1, 1.0f, 1, CLBLAST | PADDED, EPI_COLS);
        test_gemm(25, 36, 25, 0, 0, 0.0f, 3, CLBLAST | SHARED_A, EPI_ROWS);
        test_gemm(49, 65, 49, 0, 0, 1.0f, 2, CLBLAST | SHARED_A | PADDED, EPI_ROWS_GELU);
        test_gemm(9, 7, 11, 1, 0, 0.0f, 2, CLBLAST, EPI_NONE);
        test_gemm(196, 65, 196, 0, 0, 0.0f, 2, CLBLAST | SHARED_A | PADDED, EPI_GATE);
        test_gemm(13, 36, 13, 0, 0, 1.0f, 3, CLBLAST | SHARED_A, EPI_GATE_TANH);
    } else {
        printf("SKIP: the CLBlast cases: built without CLBlast (meson setup -Dclblast)\n");
    }
    /* the model's calls through gmlp_op_gemm on the default backend */
    test_gemm(49, 65, 49, 0, 0, 0.0f, 3, SHARED_A | PADDED, EPI_NONE);
    test_gemm(98, 130, 37, 0, 1, 1.0f, 1, 0, EPI_COLS);
    /* the kernel as the host picks it for this device (on a CPU the direct
     * variant, narrow or not), then the tiles it picks for a GPU: first the
     * large ones whatever the size (no compute unit to keep busy), then the
     * small ones (too many); products of at most 16 rows or columns take the
     * narrow tiles either way */
    static const int modes[] = {KERNEL, A_HALF, B_HALF, A_HALF | B_HALF};
    cl_uint cus = ctx->dev.compute_units;
    cl_device_type type = ctx->dev.type;
    char tiles[512];
    if (gmlp_gemm_describe(ctx, 1, 1, GMLP_GEMM_FP32, tiles, sizeof tiles) == GMLP_OK)
        printf("tiles on '%s': %s\n", ctx->dev.name, tiles);
    static const int quick_modes[] = {KERNEL, B_HALF};
    if (type & CL_DEVICE_TYPE_CPU)
        sweep(quick ? quick_modes : modes, quick ? 2 : 4, N_SIZES);
    for (int large = !quick; large >= 0; large--) { /* quick: the small tiles only (one tiled sweep) */
        pretend(CL_DEVICE_TYPE_GPU, large ? 0 : UINT32_MAX, ctx->dev.vendor_id);
        sweep(quick ? quick_modes : modes, quick ? 2 : 4, N_SIZES);
    }
    /* the deep-k small tiles, which the host picks on GPUs for few output
     * tiles over k >= 256: every transpose, float and half operands */
    pretend(CL_DEVICE_TYPE_GPU, UINT32_MAX, ctx->dev.vendor_id);
    for (int t = 0; t < 4; t++)
        for (int md = 0; md < 4; md += quick ? 3 : 1)
            test_gemm(33, 47, 301, t & 1, t >> 1, (float)(md % 2), md == 1 ? 2 : 1, modes[md] | (t == 2 ? PADDED : 0),
                      (t + md) % EPI_COUNT);
    pretend(type, cus, ctx->dev.vendor_id);
    nvidia_sweep(133, 70, 29, modes, 4, quick ? 3 : 1);
    test_refusals();
    test_small_groups(64, 32);
    if (!quick) {
        test_small_groups(16, 16);
        test_small_groups(1, 4);
    }
    test_build_failure();
    gmlp_context_destroy(ctx);
    return check_summary("test_gemm");
}
