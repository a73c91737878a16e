/* Every element-wise and reduction kernel against its plain-C reference on
 * random inputs of awkward sizes: odd token counts, widths that are no
 * multiple of the work-group size, batch 1 and batch > 1 (GEMMs:
 * test_gemm.c). */
#include <string.h>

#include "ops_check.h"
#include "ref/ref.h"

static void test_layernorm(int rows, int cols, int split, float eps)
{
    /* split: normalise the second half of rows 2*cols wide, as the SGU does */
    int stride = split ? 2 * cols : cols, off = split ? cols : 0;
    size_t nx = (size_t)rows * stride, ny = (size_t)rows * cols;
    float *x = rnd(nx), *g = rnd(cols), *b = rnd(cols), *want = calloc(ny, sizeof *want);
    for (size_t i = 0; i < nx; i++)
        x[i] = x[i] * 3.0f + 5.0f; /* a large mean tests the two-pass variance */
    ref_layernorm(x, off, stride, want, 0, cols, g, b, rows, cols, eps);
    cl_mem dx = up(x, nx), dy = up(NULL, ny), dg = up(g, cols), db = up(b, cols);
    gmlp_status st = gmlp_op_layernorm(ctx, dx, off, stride, dy, 0, cols, dg, db, rows, cols, eps);
    CHECK(st == GMLP_OK, "layernorm: %s", gmlp_last_error(ctx));
    char what[96];
    snprintf(what, sizeof what, "layernorm %dx%d split=%d", rows, cols, split);
    expect(what, dy, want, ny, 2e-6);
    gmlp_buffer_release(ctx, &dx);
    gmlp_buffer_release(ctx, &dg);
    gmlp_buffer_release(ctx, &db);
    free(x), free(g), free(b), free(want);
}

static void test_bias_act(int rows, int cols, int period, int gelu)
{
    /* period 0: per-column bias; else per-row bias repeating every period rows */
    size_t n = (size_t)rows * cols;
    int nb = period ? period : cols;
    float *x = rnd(n), *bias = rnd(nb), *want = malloc(n * sizeof *want);
    memcpy(want, x, n * sizeof *x);
    if (period)
        ref_bias_act(want, bias, rows, cols, period, 1, 0, gelu);
    else
        ref_bias_act(want, bias, rows, cols, 1, 0, 1, gelu);
    cl_mem dx = up(x, n), db = up(bias, nb);
    gmlp_act act = gelu ? GMLP_ACT_GELU : GMLP_ACT_NONE;
    gmlp_status st = period ? gmlp_op_bias_act_rows(ctx, dx, db, rows, cols, period, act)
                            : gmlp_op_bias_act_cols(ctx, dx, db, rows, cols, act);
    CHECK(st == GMLP_OK, "bias_act: %s", gmlp_last_error(ctx));
    char what[96];
    snprintf(what, sizeof what, "bias_act %dx%d period=%d gelu=%d", rows, cols, period, gelu);
    expect(what, dx, want, n, 1e-6);
    gmlp_buffer_release(ctx, &db);
    free(x), free(bias), free(want);
}

static void test_sgu_gate(int batch, int ntok, int half)
{
    int rows = batch * ntok;
    size_t n = (size_t)rows * 2 * half;
    float *z = rnd(n), *bias = rnd(ntok), *want = malloc(n * sizeof *want);
    memcpy(want, z, n * sizeof *z);
    ref_sgu_gate(want, rows, half, bias, ntok);
    cl_mem dz = up(z, n), db = up(bias, ntok);
    CHECK(gmlp_op_sgu_gate(ctx, dz, rows, half, db, ntok) == GMLP_OK, "sgu_gate: %s", gmlp_last_error(ctx));
    char what[96];
    snprintf(what, sizeof what, "sgu_gate b=%d n=%d half=%d", batch, ntok, half);
    expect(what, dz, want, n, 1e-6);
    gmlp_buffer_release(ctx, &db);
    free(z), free(bias), free(want);
}

static void test_patchify(int batch, int chans, int h, int w, int ph, int pw)
{
    size_t ni = (size_t)batch * chans * h * w, np = (size_t)batch * (h / ph) * (w / pw) * chans * ph * pw;
    float *img = rnd(ni), *want = malloc(np * sizeof *want);
    ref_patchify(img, want, batch, chans, h, w, ph, pw);
    cl_mem di = up(img, ni), dp = up(NULL, np);
    CHECK(gmlp_op_patchify(ctx, di, dp, batch, chans, h, w, ph, pw) == GMLP_OK, "patchify: %s",
          gmlp_last_error(ctx));
    char what[96];
    snprintf(what, sizeof what, "patchify b=%d c=%d %dx%d patch %dx%d", batch, chans, h, w, ph, pw);
    expect(what, dp, want, np, 0);
    gmlp_buffer_release(ctx, &di);
    free(img), free(want);
}

static void test_mean_tokens(int batch, int ntok, int dim)
{
    size_t n = (size_t)batch * ntok * dim, no = (size_t)batch * dim;
    float *x = rnd(n), *want = malloc(no * sizeof *want);
    ref_mean_tokens(x, want, batch, ntok, dim);
    cl_mem dx = up(x, n), dout = up(NULL, no);
    CHECK(gmlp_op_mean_tokens(ctx, dx, dout, batch, ntok, dim) == GMLP_OK, "mean_tokens: %s", gmlp_last_error(ctx));
    char what[96];
    snprintf(what, sizeof what, "mean_tokens b=%d n=%d d=%d", batch, ntok, dim);
    expect(what, dout, want, no, 2e-6);
    gmlp_buffer_release(ctx, &dx);
    free(x), free(want);
}

int main(void)
{
    ctx = check_context();
    static const int ln[][2] = {{1, 1}, {3, 7}, {5, 64}, {7, 65}, {2, 300}, {4, 1000}};
    for (size_t i = 0; i < sizeof ln / sizeof *ln; i++) {
        test_layernorm(ln[i][0], ln[i][1], 0, 1e-6f);
        test_layernorm(ln[i][0], ln[i][1], 1, 1e-5f);
    }
    static const int ba[][3] = {{1, 1, 0}, {13, 37, 0}, {49, 130, 0}, {50, 37, 25}, {12, 9, 4}};
    for (size_t i = 0; i < sizeof ba / sizeof *ba; i++)
        for (int gelu = 0; gelu < 2; gelu++)
            test_bias_act(ba[i][0], ba[i][1], ba[i][2], gelu);
    test_sgu_gate(1, 1, 1);
    test_sgu_gate(3, 25, 36);
    test_sgu_gate(2, 49, 65);
    test_patchify(1, 1, 28, 28, 7, 7);
    test_patchify(2, 3, 20, 20, 4, 4);
    test_patchify(3, 3, 24, 40, 8, 8);
    test_patchify(1, 2, 9, 10, 3, 5);
    test_mean_tokens(1, 1, 1);
    test_mean_tokens(3, 25, 37);
    test_mean_tokens(2, 196, 65);
    gmlp_context_destroy(ctx);
    return check_summary("test_ops");
}
