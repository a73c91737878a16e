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

/* The language models' gate: heads, positions p0.., an attention bias, each
 * gate activation (the vision models' is a GEMM epilogue: test_gemm.c). */
static void test_sgu_gate(int batch, int ntok, int half, int heads, int p0, int with_cb, int act)
{
    int rows = batch * ntok, bstride = p0 + ntok;
    size_t n = (size_t)rows * 2 * half;
    float *z = rnd(n), *bias = rnd((size_t)heads * bstride), *cb = rnd(half), *want = malloc(n * sizeof *want);
    memcpy(want, z, n * sizeof *z);
    cl_mem dz = up(z, n), db = up(bias, (size_t)heads * bstride), dcb = up(cb, half);
    ref_sgu_gate(want, rows, half, bias, bstride, half / heads, p0, ntok, with_cb ? cb : NULL, act);
    gmlp_gate g = {.bias = db, .cb = with_cb ? dcb : NULL, .bstride = bstride, .dh = half / heads, .p0 = p0,
                   .m = ntok, .act = act};
    gmlp_status st = gmlp_op_sgu_gate(ctx, dz, rows, half, &g);
    CHECK(st == GMLP_OK, "sgu_gate: %s", gmlp_last_error(ctx));
    char what[128];
    snprintf(what, sizeof what, "sgu_gate b=%d n=%d half=%d heads=%d p0=%d cb=%d act=%d", batch, ntok, half, heads, p0,
             with_cb, act);
    expect(what, dz, want, n, 1e-6);
    gmlp_buffer_release(ctx, &db);
    gmlp_buffer_release(ctx, &dcb);
    free(z), free(bias), free(cb), free(want);
}

static void test_embed(int rows, int vocab, int dim)
{
    int *tok = malloc((size_t)rows * sizeof *tok);
    for (int r = 0; r < rows; r++)
        tok[r] = (int)((check_rand(&seed) + 1.0f) * 0.5f * (float)vocab) % vocab; /* check_rand: [-1, 1) */
    tok[0] = vocab - 1;
    float *table = rnd((size_t)vocab * dim), *want = malloc((size_t)rows * dim * sizeof *want);
    ref_embed(tok, table, want, rows, dim);
    cl_mem dt, dtab = up(table, (size_t)vocab * dim), dx = up(want, (size_t)rows * dim);
    gmlp_buffer_create(ctx, (size_t)rows * sizeof(cl_int), tok, "test tokens", &dt);
    CHECK(gmlp_op_embed(ctx, dt, dtab, dx, rows, dim) == GMLP_OK, "embed: %s", gmlp_last_error(ctx));
    char what[96];
    snprintf(what, sizeof what, "embed rows=%d vocab=%d dim=%d", rows, vocab, dim);
    expect(what, dx, want, (size_t)rows * dim, 0);
    gmlp_buffer_release(ctx, &dt);
    gmlp_buffer_release(ctx, &dtab);
    free(tok), free(table), free(want);
}

/* causal shifts 0..s (first 0), bidirectional -s..s; p0 > 0 reads a cache */
static void test_shift(int batch, int hist_rows, int p0, int m, int dim, int segments, int first)
{
    int rows = batch * m;
    size_t nh = (size_t)batch * hist_rows * dim, no = (size_t)rows * dim;
    float *hist = rnd(nh), *want = malloc(no * sizeof *want);
    ref_shift_tokens(hist, hist_rows, p0, m, want, rows, dim, segments, first);
    cl_mem dh = up(hist, nh), dout = up(want, no);
    CHECK(gmlp_op_shift_tokens(ctx, dh, hist_rows, p0, m, dout, rows, dim, segments, first) == GMLP_OK, "shift: %s",
          gmlp_last_error(ctx));
    char what[128];
    snprintf(what, sizeof what, "shift b=%d hist=%d p0=%d m=%d dim=%d segments=%d first=%d", batch, hist_rows, p0, m,
             dim, segments, first);
    expect(what, dout, want, no, 0);
    gmlp_buffer_release(ctx, &dh);
    free(hist), free(want);
}

static void test_softmax(int batch, int p0, int m, int ld, int causal)
{
    int rows = batch * m, len = p0 + m;
    size_t n = (size_t)rows * ld;
    float *sim = rnd(n), *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++)
        sim[i] *= 20.0f; /* large logits: the max subtraction matters */
    memcpy(want, sim, n * sizeof *sim);
    ref_softmax_rows(want, rows, ld, len, p0, m, causal, 0.35f);
    cl_mem ds = up(sim, n);
    CHECK(gmlp_op_softmax_rows(ctx, ds, rows, ld, len, p0, m, causal, 0.35f) == GMLP_OK, "softmax: %s",
          gmlp_last_error(ctx));
    char what[96];
    snprintf(what, sizeof what, "softmax b=%d p0=%d m=%d ld=%d causal=%d", batch, p0, m, ld, causal);
    expect(what, ds, want, n, 1e-5);
    free(sim), free(want);
}

static void test_copy_rows(int batch, int m, int width, int src_ld, int hist_rows, int p0)
{
    size_t ns = (size_t)batch * m * src_ld, nd = (size_t)batch * hist_rows * width;
    float *src = rnd(ns), *dst = rnd(nd), *want = malloc(nd * sizeof *want);
    memcpy(want, dst, nd * sizeof *dst);
    int col = src_ld - width; /* the last width columns of each source row */
    for (int b = 0; b < batch; b++)
        for (int i = 0; i < m; i++)
            memcpy(want + ((size_t)b * hist_rows + p0 + i) * width, src + ((size_t)b * m + i) * src_ld + col,
                   (size_t)width * sizeof *src);
    cl_mem ds = up(src, ns), dd = up(dst, nd);
    gmlp_rows from = {ds, (size_t)col, (size_t)src_ld, (size_t)m * src_ld};
    gmlp_rows to = {dd, (size_t)p0 * width, (size_t)width, (size_t)hist_rows * width};
    CHECK(gmlp_op_copy_rows(ctx, from, to, (size_t)width, (size_t)m, (size_t)batch) == GMLP_OK, "copy_rows: %s",
          gmlp_last_error(ctx));
    char what[96];
    snprintf(what, sizeof what, "copy_rows b=%d m=%d width=%d ld=%d p0=%d", batch, m, width, src_ld, p0);
    expect(what, dd, want, nd, 0);
    gmlp_buffer_release(ctx, &ds);
    free(src), free(dst), free(want);
}

/* The images start at float off of their buffer (a caller's cl_mem chunk). */
static void test_patchify(int batch, int chans, int h, int w, int ph, int pw, size_t off)
{
    size_t ni = (size_t)batch * chans * h * w, np = (size_t)batch * (h / ph) * (w / pw) * chans * ph * pw;
    float *img = rnd(ni + off), *want = malloc(np * sizeof *want);
    ref_patchify(img + off, want, batch, chans, h, w, ph, pw);
    cl_mem di = up(img, ni + off), dp = up(NULL, np);
    CHECK(gmlp_op_patchify(ctx, di, off, dp, batch, chans, h, w, ph, pw) == GMLP_OK, "patchify: %s",
          gmlp_last_error(ctx));
    char what[96];
    snprintf(what, sizeof what, "patchify b=%d c=%d %dx%d patch %dx%d offset %zu", batch, chans, h, w, ph, pw, off);
    expect(what, dp, want, np, 0);
    gmlp_buffer_release(ctx, &di);
    free(img), free(want);
}

/* Written from float off of the output, the rest left alone. */
static void test_mean_tokens(int batch, int ntok, int dim, size_t off)
{
    size_t n = (size_t)batch * ntok * dim, no = (size_t)batch * dim + off;
    float *x = rnd(n), *out = rnd(no), *want = malloc(no * sizeof *want);
    memcpy(want, out, no * sizeof *want);
    ref_mean_tokens(x, want + off, batch, ntok, dim);
    cl_mem dx = up(x, n), dout = up(out, no);
    CHECK(gmlp_op_mean_tokens(ctx, dx, dout, off, batch, ntok, dim) == GMLP_OK, "mean_tokens: %s",
          gmlp_last_error(ctx));
    char what[96];
    snprintf(what, sizeof what, "mean_tokens b=%d n=%d d=%d offset %zu", batch, ntok, dim, off);
    expect(what, dout, want, no, 2e-6);
    gmlp_buffer_release(ctx, &dx);
    free(x), free(out), free(want);
}

int main(void)
{
    ctx = check_context();
    static const int ln[][2] = {{1, 1}, {3, 7}, {5, 64}, {7, 65}, {2, 300}, {4, 1000}};
    for (size_t i = 0; i < sizeof ln / sizeof *ln; i++) {
        test_layernorm(ln[i][0], ln[i][1], 0, 1e-6f);
        test_layernorm(ln[i][0], ln[i][1], 1, 1e-5f);
    }
    test_sgu_gate(1, 1, 1, 1, 0, 0, 0);
    test_sgu_gate(3, 25, 36, 1, 0, 0, 0);
    test_sgu_gate(2, 49, 65, 1, 0, 0, 0);
    for (int act = 0; act < 4; act++)
        test_sgu_gate(2, 9, 36, 4, 0, act & 1, act);
    test_sgu_gate(3, 1, 30, 3, 7, 1, 1); /* one new position of a cached sequence */
    test_sgu_gate(1, 13, 7, 7, 2, 0, 3);
    test_embed(1, 1, 1);
    test_embed(37, 256, 65);
    test_embed(130, 50, 3);
    test_shift(2, 11, 0, 11, 16, 2, 0);   /* causal shift 1 */
    test_shift(3, 9, 0, 9, 30, 4, 0);     /* uneven: 4 segments of 7, 2 channels pass */
    test_shift(2, 12, 0, 12, 17, 3, -1);  /* bidirectional shift 1 */
    test_shift(2, 16, 5, 1, 33, 3, 0);    /* one new position reading the cache */
    test_shift(1, 16, 3, 4, 9, 9, 0);     /* every channel its own segment */
    test_softmax(1, 0, 1, 1, 1);
    test_softmax(2, 0, 13, 13, 1);
    test_softmax(3, 0, 9, 9, 0);
    test_softmax(2, 7, 1, 8, 1);
    test_softmax(2, 5, 3, 11, 1);          /* ld > len: columns past len untouched */
    test_copy_rows(1, 1, 1, 1, 1, 0);
    test_copy_rows(3, 5, 16, 48, 12, 4);
    test_copy_rows(2, 1, 33, 33, 9, 8);
    test_patchify(1, 1, 28, 28, 7, 7, 0);
    test_patchify(2, 3, 20, 20, 4, 4, 3 * 20 * 20);
    test_patchify(3, 3, 24, 40, 8, 8, 5);
    test_patchify(1, 2, 9, 10, 3, 5, 0);
    test_mean_tokens(1, 1, 1, 0);
    test_mean_tokens(3, 25, 37, 74);
    test_mean_tokens(2, 196, 65, 3);
    gmlp_context_destroy(ctx);
    return check_summary("test_ops");
}
