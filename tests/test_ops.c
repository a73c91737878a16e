/* Every op of lib/ops declared once as a test case with named parameters.
 * By default each case runs against its plain-C reference (tests/ref/) on
 * random inputs of awkward sizes: odd token counts, widths that are no
 * multiple of the work-group size, batch 1 and batch > 1 (the GEMM's every
 * transpose, storage and tiling: test_gemm.c).  With --bench, each case is
 * timed instead, from queue profiling: microseconds per call on the device
 * ($GMLP_DEVICE or --device D).
 * With --oclgrind (tests/test_oclgrind.sh), the cases of awkward sizes
 * and the GELU sweep, not those of a real model's shapes.
 *   test_ops [--bench [--reps N] | --oclgrind] [--device D] [--only OP, or gelu: the sweep] */
#include <getopt.h>
#include <string.h>

#include "gmlp_diag.h"
#include "kernel_abi.h"
#include "ops_check.h"
#include "ref/ref.h"

/* The parameters an op case may name; unnamed ones are 0. */
#define PARAMS(X)                                                                                                 \
    X(batch) X(rows) X(cols) X(n) X(m) X(k) X(p0) X(dim) X(heads) X(act) X(split) X(causal) X(ld) X(width)      \
    X(hist) X(chans) X(h) X(w) X(ph) X(pw) X(vocab) X(segments) X(first) X(res) X(off) X(trans_b) X(bias) X(gate)
#define FIELD(name) int name;
typedef struct params {
    PARAMS(FIELD)
} params;

typedef struct op_case {
    const char *op;
    /* Runs the op on p's inputs reps times (0: once) and checks it against
     * the reference. */
    void (*run)(const params *p, int reps);
    params p;
    int model_shape; /* a real model's shape: left out under Oclgrind (--oclgrind), where the forwards run */
} op_case;

/* "name=value" for each parameter the case names. */
static void describe(const op_case *c, char *buf, size_t size)
{
    int len = snprintf(buf, size, "%s", c->op);
#define PRINT(name)                                                                                               \
    if (c->p.name && len > 0 && (size_t)len < size)                                                               \
        len += snprintf(buf + len, size - (size_t)len, " " #name "=%d", c->p.name);
    PARAMS(PRINT)
#undef PRINT
}

/* call once, then with reps > 0 reps times more, timed by the profile.
 * Ops in place then no longer hold what their reference computed: they
 * compare only without reps (IN_PLACE). */
#define RUN(reps, call)                                                                                           \
    do {                                                                                                          \
        gmlp_status st_ = (call);                                                                                 \
        if ((reps) > 0)                                                                                           \
            gmlp_diag_profile_reset(ctx);                                                                         \
        for (int r_ = 0; r_ < (reps) && st_ == GMLP_OK; r_++)                                                     \
            st_ = (call);                                                                                         \
        CHECK(st_ == GMLP_OK, "%s: %s", #call, gmlp_last_error(ctx));                                             \
    } while (0)
#define IN_PLACE(reps, buf) ((reps) > 0 ? (gmlp_buffer_release(ctx, &(buf)), 0) : 1)

/* A float's bits as a model stores it as e: bfloat16 (the BF16 mode's
 * rounding), half (the FP16 mode's: saturated at +-65504, half's
 * subnormals). */
static uint16_t stored16(gmlp_elem e, float f)
{
    return e == GMLP_ELEM_BF16 ? gmlp_float_to_bf16(f) : gmlp_float_to_half(ref_round_operand(f, REF_FP16));
}

/* LayerNorm of x into 16-bit e (BF16 and FP16 models' outputs for GEMMs)
 * equals the float kernel's result on the same device rounded as stored16,
 * bit for bit; gamma scaled (FP16: past half's range, into its subnormals). */
static void layernorm_16(gmlp_rows x, const float *g, const float *b, float scale, const params *p, float eps,
                         gmlp_elem e)
{
    const size_t ny = (size_t)p->rows * p->cols;
    float *f = malloc(ny * sizeof *f), *gs = malloc(2 * (size_t)p->cols * sizeof *gs), *bs = gs + p->cols;
    uint16_t *got = malloc(ny * sizeof *got);
    for (int c = 0; c < p->cols; c++)
        gs[c] = g[c] * scale, bs[c] = b[c] * scale;
    cl_mem dg = up(gs, (size_t)p->cols), db = up(bs, (size_t)p->cols), df = up(NULL, ny);
    cl_mem dy = up_bytes(NULL, ny * sizeof *got);
    const gmlp_rows to = {.buf = dy, .ld = (size_t)p->cols, .elem = e};
    CHECK(gmlp_op_layernorm(ctx, x, (gmlp_rows){.buf = df, .ld = (size_t)p->cols}, dg, db, p->rows, p->cols, eps) ==
                  GMLP_OK &&
              gmlp_op_layernorm(ctx, x, to, dg, db, p->rows, p->cols, eps) == GMLP_OK,
          "layernorm to %s: %s", gmlp_elem_name(e), gmlp_last_error(ctx));
    down(df, f, ny);
    CHECK(clEnqueueReadBuffer(ctx->queue, dy, CL_TRUE, 0, ny * sizeof *got, got, 0, NULL, NULL) == CL_SUCCESS,
          "read %s", gmlp_elem_name(e));
    size_t differ = 0;
    for (size_t i = 0; i < ny; i++)
        differ += got[i] != stored16(e, f[i]);
    CHECK(differ == 0, "layernorm %dx%d to %s, gamma x %g (%s): %zu of %zu differ from the float result rounded",
          p->rows, p->cols, gmlp_elem_name(e), (double)scale,
          ctx->dev.type & CL_DEVICE_TYPE_CPU ? "a row a work-item" : "a row a group", differ, ny);
    CHECK(gmlp_op_layernorm(ctx, (gmlp_rows){.buf = x.buf, .ld = x.ld, .elem = GMLP_ELEMS}, to, dg, db, p->rows,
                            p->cols, eps) == GMLP_ERR_INVALID_ARGUMENT,
          "layernorm of an unknown storage refused");
    gmlp_buffer_release(ctx, &dg);
    gmlp_buffer_release(ctx, &db);
    gmlp_buffer_release(ctx, &df);
    gmlp_buffer_release(ctx, &dy);
    free(f), free(gs), free(got);
}

/* An element-wise op (norm: LayerNorm or Affine into y) reading x (nx
 * floats, rows from from.off, from.ld apart) stored as 16-bit e gives, bit
 * for bit, what it gives reading the same values stored as float. */
typedef gmlp_status (*norm_op)(gmlp_rows x, gmlp_rows y, cl_mem w, cl_mem b, const params *p, float eps);
static void from_16(norm_op norm, const char *what, const float *x, size_t nx, gmlp_rows from, cl_mem w, cl_mem b,
                    const params *p, float eps, gmlp_elem e)
{
    const size_t ny = (size_t)p->rows * p->cols;
    uint16_t *bits = malloc(nx * sizeof *bits);
    float *v = malloc(nx * sizeof *v), *want = malloc(ny * sizeof *want), *got = malloc(ny * sizeof *got);
    for (size_t i = 0; i < nx; i++)
        bits[i] = stored16(e, x[i]), v[i] = gmlp_elem_value(e, bits[i]);
    cl_mem dv = up(v, nx), d16 = up_bytes(bits, nx * sizeof *bits), ya = up(NULL, ny), yb = up(NULL, ny);
    gmlp_rows as_float = from, as16 = from;
    as_float.buf = dv, as_float.elem = GMLP_ELEM_F32, as16.buf = d16, as16.elem = e;
    CHECK(norm(as_float, (gmlp_rows){.buf = ya, .ld = (size_t)p->cols}, w, b, p, eps) == GMLP_OK &&
              norm(as16, (gmlp_rows){.buf = yb, .ld = (size_t)p->cols}, w, b, p, eps) == GMLP_OK,
          "%s from %s: %s", what, gmlp_elem_name(e), gmlp_last_error(ctx));
    down(ya, want, ny);
    down(yb, got, ny);
    size_t differ = 0;
    for (size_t i = 0; i < ny; i++)
        differ += memcmp(&want[i], &got[i], sizeof *got) != 0;
    CHECK(differ == 0, "%s %dx%d from %s: %zu of %zu differ from its values read as float", what, p->rows, p->cols,
          gmlp_elem_name(e), differ, ny);
    gmlp_buffer_release(ctx, &dv);
    gmlp_buffer_release(ctx, &d16);
    gmlp_buffer_release(ctx, &ya);
    gmlp_buffer_release(ctx, &yb);
    free(bits), free(v), free(want), free(got);
}
static gmlp_status layernorm_op(gmlp_rows x, gmlp_rows y, cl_mem w, cl_mem b, const params *p, float eps)
{
    return gmlp_op_layernorm(ctx, x, y, w, b, p->rows, p->cols, eps);
}
static gmlp_status affine_op(gmlp_rows x, gmlp_rows y, cl_mem w, cl_mem b, const params *p, float eps)
{
    (void)eps;
    return gmlp_op_affine(ctx, x, y, w, b, p->rows, p->cols, (gmlp_outer){0});
}

/* the 16-bit outputs: bfloat16; half, within its range, past it and in its subnormals */
static void layernorm_16s(gmlp_rows x, const float *g, const float *b, const params *p, float eps)
{
    layernorm_16(x, g, b, 1.0f, p, eps, GMLP_ELEM_BF16);
    layernorm_16(x, g, b, 1.0f, p, eps, GMLP_ELEM_F16);
    layernorm_16(x, g, b, 1e5f, p, eps, GMLP_ELEM_F16);
    layernorm_16(x, g, b, 1e-6f, p, eps, GMLP_ELEM_F16);
}

static void run_layernorm(const params *p, int reps)
{
    /* split: normalise the second half of rows 2*cols wide, as the SGU does */
    int ld = p->split ? 2 * p->cols : p->cols, off = p->split ? p->cols : 0;
    float eps = p->split ? 1e-5f : 1e-6f;
    size_t nx = (size_t)p->rows * ld, ny = (size_t)p->rows * p->cols;
    float *x = rnd(nx), *g = rnd(p->cols), *b = rnd(p->cols), *want = calloc(ny, sizeof *want);
    for (size_t i = 0; i < nx; i++)
        x[i] = x[i] * 3.0f + 5.0f; /* a large mean tests the two-pass variance */
    ref_layernorm(x, off, ld, want, 0, p->cols, g, b, p->rows, p->cols, eps);
    cl_mem dx = up(x, nx), dy = up(NULL, ny), dg = up(g, p->cols), db = up(b, p->cols);
    gmlp_rows from = {.buf = dx, .off = (size_t)off, .ld = (size_t)ld}, to = {.buf = dy, .ld = (size_t)p->cols};
    RUN(reps, gmlp_op_layernorm(ctx, from, to, dg, db, p->rows, p->cols, eps));
    if (!reps) { /* 16-bit out (BF16 and FP16 models', for GEMMs): the float result rounded, bit for bit */
        layernorm_16s(from, g, b, p, eps);
        for (gmlp_elem e = GMLP_ELEM_F16; e <= GMLP_ELEM_BF16; e++)
            from_16(layernorm_op, "layernorm", x, nx, from, dg, db, p, eps, e);
    }
    expect("layernorm", dy, want, ny, 2e-6);
    /* also the other kind's kernel: on a CPU the GPUs' work-group per row, elsewhere (Oclgrind's checks
     * too) the CPUs' work-item per row in groups of a few rows */
    const cl_device_type type = ctx->dev.type;
    if (!reps) {
        const int cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
        const char *other = cpu ? "layernorm as on a GPU" : "layernorm as on a CPU";
        ctx->dev.type = cpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU;
        to.buf = up(NULL, ny); /* expect released the first */
        CHECK(gmlp_op_layernorm(ctx, from, to, dg, db, p->rows, p->cols, eps) == GMLP_OK, "%s: %s", other,
              gmlp_last_error(ctx));
        layernorm_16s(from, g, b, p, eps);
        for (gmlp_elem e = GMLP_ELEM_F16; e <= GMLP_ELEM_BF16; e++)
            from_16(layernorm_op, other, x, nx, from, dg, db, p, eps, e);
        expect(other, to.buf, want, ny, 2e-6);
        ctx->dev.type = type;
    }
    gmlp_buffer_release(ctx, &dx);
    gmlp_buffer_release(ctx, &dg);
    gmlp_buffer_release(ctx, &db);
    free(x), free(g), free(b), free(want);
}

/* split: x read from, and y written into, the second half of rows 2*cols
 * wide; y's first half is left alone. */
static void run_affine(const params *p, int reps)
{
    const size_t ld = p->split ? 2 * (size_t)p->cols : (size_t)p->cols, off = p->split ? (size_t)p->cols : 0;
    const size_t n = (size_t)p->rows * ld;
    float *x = rnd(n), *y = rnd(n), *a = rnd(p->cols), *b = rnd(p->cols), *want = malloc(n * sizeof *want);
    memcpy(want, y, n * sizeof *want);
    ref_affine(x + off, ld, want + off, ld, a, b, p->rows, p->cols);
    cl_mem dx = up(x, n), dy = up(y, n), da = up(a, p->cols), db = up(b, p->cols);
    RUN(reps, gmlp_op_affine(ctx, (gmlp_rows){.buf = dx, .off = off, .ld = ld}, (gmlp_rows){.buf = dy, .off = off, .ld = ld}, da, db,
                                    p->rows, p->cols, (gmlp_outer){0}));
    for (gmlp_elem e = GMLP_ELEM_F16; !reps && e <= GMLP_ELEM_BF16; e++) {
        /* 16-bit out (a BF16 or FP16 ResMLP's, for GEMMs): the float result rounded, bit for bit */
        float *f = malloc(n * sizeof *f);
        uint16_t *got = calloc(n, sizeof *got);
        down(dy, f, n);
        cl_mem db16 = up_bytes(got, n * sizeof *got);
        CHECK(gmlp_op_affine(ctx, (gmlp_rows){.buf = dx, .off = off, .ld = ld},
                             (gmlp_rows){.buf = db16, .off = off, .ld = ld, .elem = e}, da, db, p->rows, p->cols,
                             (gmlp_outer){0}) ==
                      GMLP_OK &&
                  clEnqueueReadBuffer(ctx->queue, db16, CL_TRUE, 0, n * sizeof *got, got, 0, NULL, NULL) == CL_SUCCESS,
              "affine to %s: %s", gmlp_elem_name(e), gmlp_last_error(ctx));
        size_t differ = 0;
        for (size_t r = 0; r < (size_t)p->rows; r++)
            for (size_t c = 0; c < (size_t)p->cols; c++)
                differ += got[off + r * ld + c] != stored16(e, f[off + r * ld + c]);
        CHECK(differ == 0, "affine %dx%d to %s: %zu differ from the float result rounded", p->rows, p->cols,
              gmlp_elem_name(e), differ);
        gmlp_buffer_release(ctx, &db16);
        free(f), free(got);
        from_16(affine_op, "affine", x, n, (gmlp_rows){.off = off, .ld = ld}, da, db, p, 0.0f, e);
    }
    expect("affine", dy, want, n, 1e-6);
    if (!reps && p->rows) {
        /* ResMLP's rank-1 term: x += r[row % period] * s once x is read, y from x as it was */
        size_t period = p->rows > 1 ? 2 : 1; /* rows' least divisor past 1 */
        while ((size_t)p->rows % period)
            period++;
        float *r = rnd(period), *s = rnd(p->cols), *xw = malloc(n * sizeof *xw);
        memcpy(xw, x, n * sizeof *xw);
        for (size_t row = 0; row < (size_t)p->rows; row++)
            for (size_t c = 0; c < (size_t)p->cols; c++)
                xw[off + row * ld + c] += r[row % period] * s[c];
        cl_mem dx2 = up(x, n), dy2 = up(y, n), dr = up(r, period), ds = up(s, p->cols);
        const gmlp_rows xr = {.buf = dx2, .off = off, .ld = ld}, yr = {.buf = dy2, .off = off, .ld = ld};
        CHECK(gmlp_op_affine(ctx, xr, yr, da, db, p->rows, p->cols, (gmlp_outer){.r = dr, .s = ds, .period = period}) ==
                  GMLP_OK,
              "affine with an outer product: %s", gmlp_last_error(ctx));
        CHECK(gmlp_op_affine(ctx, xr, yr, da, db, p->rows, p->cols,
                             (gmlp_outer){.r = dr, .s = ds, .period = (size_t)p->rows + 1}) == GMLP_ERR_INVALID_ARGUMENT,
              "affine: an outer product whose period does not divide %d rows accepted", p->rows);
        expect("affine's y beside an outer product", dy2, want, n, 1e-6);
        expect("affine's x plus the outer product", dx2, xw, n, 1e-6);
        gmlp_buffer_release(ctx, &dr);
        gmlp_buffer_release(ctx, &ds);
        free(r), free(s), free(xw);
    }
    gmlp_buffer_release(ctx, &dx);
    gmlp_buffer_release(ctx, &da);
    gmlp_buffer_release(ctx, &db);
    free(x), free(y), free(a), free(b), free(want);
}

/* The spatial matmul with the SGU gate in its epilogue, as a block runs it:
 * z = [u | v] rows of ld floats (batch sequences of n positions p0..), per
 * head h (dh = cols / heads channels) and sequence
 *   v[i] = act(W_h[p0 + i, 0 .. L) . hist[0 .. L) + res v[i] + b[h, p0 + i]) * u[i]
 * with L = p0 + n positions of history (LN(v) of all positions so far),
 * res (an LM's tiny attention output already in v) beta 1.  Vision is one
 * head, p0 0, identity. */
static void run_sgu(const params *p, int reps)
{
    const size_t half = (size_t)p->cols, heads = p->heads ? (size_t)p->heads : 1, dh = half / heads;
    const size_t n = (size_t)p->n, S = (size_t)(p->p0 + p->n), batch = (size_t)p->batch;
    const size_t ld = p->ld ? (size_t)p->ld : 2 * half, nz = batch * n * ld, nh = batch * S * half;
    float *z = rnd(nz), *hist = rnd(nh), *w = rnd(heads * S * S), *bias = rnd(heads * S);
    float *want = malloc(nz * sizeof *want);
    memcpy(want, z, nz * sizeof *z);
    cl_mem dz = up(z, nz), dhist = up(hist, nh), dw = up(w, heads * S * S), db = up(bias, heads * S);
    for (size_t h = 0; h < heads; h++) {
        const float *wh = w + (h * S + (size_t)p->p0) * S;
        ref_gemm(n, dh, S, wh, S, 0, 0, hist + h * dh, half, S * half, 0, p->res ? 1.0f : 0.0f,
                 want + half + h * dh, ld, n * ld, batch);
        const ref_epi e = {bias + h * S + p->p0, 1, p->act, want + h * dh, ld, n * ld};
        ref_epilogue(want + half + h * dh, n, dh, ld, n * ld, batch, &e);
    }
    for (size_t h = 0; h < heads; h++) {
        const gmlp_gemm g = {.m = n, .n = dh, .k = S, .batch = batch,
                             .a = {.buf = dw, .off = (h * S + (size_t)p->p0) * S, .ld = S},
                             .b = {.buf = dhist, .off = h * dh, .ld = half, .stride = S * half},
                             .c = {.buf = dz, .off = half + h * dh, .ld = ld, .stride = n * ld},
                             .beta = p->res ? 1.0f : 0.0f, .bias = db, .bias_off = h * S + (size_t)p->p0,
                             .bias_rows = 1, .act = p->act,
                             .gate = {.buf = dz, .off = h * dh, .ld = ld, .stride = n * ld}};
        RUN(reps, gmlp_op_gemm(ctx, &g));
    }
    if (IN_PLACE(reps, dz))
        expect("sgu", dz, want, nz, p->act == GMLP_ACT_GELU ? 3e-5 : 1e-5);
    gmlp_buffer_release(ctx, &dhist);
    gmlp_buffer_release(ctx, &dw);
    gmlp_buffer_release(ctx, &db);
    free(z), free(hist), free(w), free(bias), free(want);
}

static void run_embed(const params *p, int reps)
{
    int *tok = malloc((size_t)p->rows * sizeof *tok);
    for (int r = 0; r < p->rows; r++)
        tok[r] = (int)((check_rand(&seed) + 1.0f) * 0.5f * (float)p->vocab) % p->vocab; /* check_rand: [-1, 1) */
    tok[0] = p->vocab - 1;
    size_t nt = (size_t)p->vocab * p->dim, nx = (size_t)p->rows * p->dim;
    float *table = rnd(nt), *want = malloc(nx * sizeof *want);
    ref_embed(tok, table, want, p->rows, p->dim);
    cl_mem dt = up_bytes(tok, (size_t)p->rows * sizeof(cl_int)), dtab = up(table, nt), dx = up(NULL, nx);
    RUN(reps, gmlp_op_embed(ctx, dt, dtab, dx, p->rows, p->dim));
    expect("embed", dx, want, nx, 0);
    gmlp_buffer_release(ctx, &dt);
    gmlp_buffer_release(ctx, &dtab);
    free(tok), free(table), free(want);
}

/* causal shifts 0..s (first 0), bidirectional -s..s; p0 > 0 reads a cache */
static void run_shift_tokens(const params *p, int reps)
{
    int rows = p->batch * p->n;
    size_t nh = (size_t)p->batch * p->hist * p->dim, no = (size_t)rows * p->dim;
    float *hist = rnd(nh), *want = malloc(no * sizeof *want);
    ref_shift_tokens(hist, p->hist, p->p0, p->n, want, rows, p->dim, p->segments, p->first);
    cl_mem dh = up(hist, nh), dout = up(NULL, no);
    RUN(reps, gmlp_op_shift_tokens(ctx, dh, p->hist, p->p0, p->n, dout, rows, p->dim, p->segments, p->first));
    expect("shift_tokens", dout, want, no, 0);
    gmlp_buffer_release(ctx, &dh);
    free(hist), free(want);
}

static void run_softmax_rows(const params *p, int reps)
{
    int rows = p->batch * p->n, len = p->p0 + p->n;
    size_t nsim = (size_t)rows * p->ld;
    float *sim = rnd(nsim), *want = malloc(nsim * sizeof *want);
    for (size_t i = 0; i < nsim; i++)
        sim[i] *= 20.0f; /* large logits: the max subtraction matters */
    memcpy(want, sim, nsim * sizeof *sim);
    ref_softmax_rows(want, rows, p->ld, len, p->p0, p->n, p->causal, 0.35f);
    cl_mem ds = up(sim, nsim);
    RUN(reps, gmlp_op_softmax_rows(ctx, ds, rows, (size_t)p->ld, len, p->p0, p->n, p->causal, 0.35f));
    if (IN_PLACE(reps, ds))
        expect("softmax_rows", ds, want, nsim, 1e-5);
    free(sim), free(want);
}

/* run_copy_rows' copy of half elements: their bits moved, nothing else
 * touched; a copy between storages refused */
static void copy_rows_16(const params *p, int col)
{
    size_t ns = (size_t)p->batch * p->n * p->ld, nd = (size_t)p->batch * p->hist * p->width;
    uint16_t *src = malloc(ns * sizeof *src), *got = malloc(nd * sizeof *got), *want = malloc(nd * sizeof *want);
    for (size_t i = 0; i < ns; i++)
        src[i] = (uint16_t)((i * 2654435761u) >> 16);
    for (size_t i = 0; i < nd; i++)
        want[i] = (uint16_t)~i;
    cl_mem ds = up_bytes(src, ns * sizeof *src), dd = up_bytes(want, nd * sizeof *want);
    for (int b = 0; b < p->batch; b++)
        for (int i = 0; i < p->n; i++)
            memcpy(want + ((size_t)b * p->hist + p->p0 + i) * p->width, src + ((size_t)b * p->n + i) * p->ld + col,
                   (size_t)p->width * sizeof *src);
    gmlp_seq_rows from = {ds, (size_t)col, (size_t)p->ld, (size_t)p->n * p->ld, GMLP_ELEM_F16};
    gmlp_seq_rows to = {dd, (size_t)p->p0 * p->width, (size_t)p->width, (size_t)p->hist * p->width, GMLP_ELEM_F16};
    CHECK(gmlp_op_copy_rows(ctx, from, to, (size_t)p->width, (size_t)p->n, (size_t)p->batch) == GMLP_OK &&
              clEnqueueReadBuffer(ctx->queue, dd, CL_TRUE, 0, nd * sizeof *got, got, 0, NULL, NULL) == CL_SUCCESS,
          "copy_rows of half: %s", gmlp_last_error(ctx));
    CHECK(memcmp(got, want, nd * sizeof *got) == 0, "copy_rows of half: the rows' bits, nothing else");
    to.elem = GMLP_ELEM_F32;
    CHECK(gmlp_op_copy_rows(ctx, from, to, (size_t)p->width, (size_t)p->n, (size_t)p->batch) ==
              GMLP_ERR_INVALID_ARGUMENT,
          "copy_rows from half to float refused");
    gmlp_buffer_release(ctx, &ds);
    gmlp_buffer_release(ctx, &dd);
    free(src), free(got), free(want);
}

/* the last width columns of each source row (ld wide) into a history of
 * hist rows per sequence, from position p0 */
static void run_copy_rows(const params *p, int reps)
{
    size_t ns = (size_t)p->batch * p->n * p->ld, nd = (size_t)p->batch * p->hist * p->width;
    float *src = rnd(ns), *dst = rnd(nd), *want = malloc(nd * sizeof *want);
    memcpy(want, dst, nd * sizeof *dst);
    int col = p->ld - p->width;
    for (int b = 0; b < p->batch; b++)
        for (int i = 0; i < p->n; i++)
            memcpy(want + ((size_t)b * p->hist + p->p0 + i) * p->width, src + ((size_t)b * p->n + i) * p->ld + col,
                   (size_t)p->width * sizeof *src);
    cl_mem ds = up(src, ns), dd = up(dst, nd);
    gmlp_seq_rows from = {ds, (size_t)col, (size_t)p->ld, (size_t)p->n * p->ld, GMLP_ELEM_F32};
    gmlp_seq_rows to = {dd, (size_t)p->p0 * p->width, (size_t)p->width, (size_t)p->hist * p->width, GMLP_ELEM_F32};
    RUN(reps, gmlp_op_copy_rows(ctx, from, to, (size_t)p->width, (size_t)p->n, (size_t)p->batch));
    expect("copy_rows", dd, want, nd, 0);
    gmlp_buffer_release(ctx, &ds);
    free(src), free(dst), free(want);
    if (!reps) /* 16-bit rows: offsets and pitches in their elements */
        copy_rows_16(p, col);
}

/* The images start at float off of their buffer (a caller's cl_mem chunk);
 * 16-bit patches (BF16 and FP16 models' stems), in rows of a wider pitch
 * from an odd element: each pixel rounded as the model stores it, bit for bit. */
static void run_patchify(const params *p, int reps)
{
    size_t off = (size_t)p->off, ni = (size_t)p->batch * p->chans * p->h * p->w;
    const size_t k = (size_t)p->chans * p->ph * p->pw, rows = (size_t)p->batch * (p->h / p->ph) * (p->w / p->pw);
    size_t np = rows * k;
    float *img = rnd(ni + off), *want = malloc(np * sizeof *want);
    ref_patchify(img + off, want, p->batch, p->chans, p->h, p->w, p->ph, p->pw);
    cl_mem di = up(img, ni + off), dp = up(NULL, np);
    RUN(reps, gmlp_op_patchify(ctx, di, off, (gmlp_rows){.buf = dp, .ld = k, .elem = GMLP_ELEM_F32}, p->batch,
                               p->chans, p->h, p->w, p->ph, p->pw));
    expect("patchify", dp, want, np, 0);
    for (gmlp_elem e = GMLP_ELEM_F16; !reps && e <= GMLP_ELEM_BF16; e++) {
        const size_t ld = k + 3, n16 = 1 + rows * ld;
        uint16_t *got = calloc(n16 + 1, sizeof *got); /* zeros, the pitch's gaps and element 0 kept so */
        cl_mem d16 = up_bytes(got, (n16 + 1) * sizeof *got);
        CHECK(gmlp_op_patchify(ctx, di, off, (gmlp_rows){.buf = d16, .off = 1, .ld = ld, .elem = e}, p->batch,
                               p->chans, p->h, p->w, p->ph, p->pw) == GMLP_OK &&
                  clEnqueueReadBuffer(ctx->queue, d16, CL_TRUE, 0, n16 * sizeof *got, got, 0, NULL, NULL) ==
                      CL_SUCCESS,
              "patchify to %s: %s", gmlp_elem_name(e), gmlp_last_error(ctx));
        size_t differ = 0;
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < ld; c++)
                differ += got[1 + r * ld + c] != (c < k ? stored16(e, want[r * k + c]) : 0);
        CHECK(differ == 0 && got[0] == 0, "patchify to %s: %zu of %zu elements differ", gmlp_elem_name(e), differ,
              rows * ld);
        gmlp_buffer_release(ctx, &d16);
        free(got);
    }
    gmlp_buffer_release(ctx, &di);
    free(img), free(want);
}

/* The final norm fused into the pooling (ResMLP's Affine; a LayerNorm by
 * row statistics as a GEMM writes them, 3 parts of uneven columns, some
 * empty where dim is small) against float64: the mean over tokens of the
 * norm of each row. */
static void mean_tokens_normed(const params *p, const float *x, cl_mem dx, const float *out)
{
    const size_t rows = (size_t)p->batch * p->n, dim = (size_t)p->dim, parts = 3, off = (size_t)p->off;
    const size_t no = (size_t)p->batch * dim + off;
    float *w = rnd(dim), *b = rnd(dim), *stats = calloc(rows * parts * 3, sizeof *stats);
    double *mean = calloc(rows, sizeof *mean), *rstd = calloc(rows, sizeof *rstd);
    const float eps = 1e-5f;
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * dim;
        double s = 0, q = 0;
        for (size_t c = 0; c < dim; c++)
            s += xr[c];
        mean[r] = s / (double)dim;
        for (size_t c = 0; c < dim; c++)
            q += (xr[c] - mean[r]) * (xr[c] - mean[r]);
        rstd[r] = 1.0 / sqrt(q / (double)dim + eps);
        for (size_t k = 0, c0 = 0; k < parts; k++) { /* parts of dim / 2, dim / 4 and the rest columns */
            const size_t c1 = k == parts - 1 ? dim : c0 + dim / (2u << k);
            double ps = 0, pq = 0;
            for (size_t c = c0; c < c1; c++)
                ps += xr[c];
            const double pm = c1 > c0 ? ps / (double)(c1 - c0) : 0;
            for (size_t c = c0; c < c1; c++)
                pq += (xr[c] - pm) * (xr[c] - pm);
            float *st = stats + (r * parts + k) * 3;
            st[0] = (float)(c1 - c0), st[1] = (float)pm, st[2] = (float)pq;
            c0 = c1;
        }
    }
    cl_mem dw = up(w, dim), db = up(b, dim), dstats = up(stats, rows * parts * 3);
    for (int ln = 0; ln < 2; ln++) {
        float *want = malloc(no * sizeof *want);
        memcpy(want, out, no * sizeof *want);
        for (size_t i = 0; i < (size_t)p->batch; i++)
            for (size_t c = 0; c < dim; c++) {
                double acc = 0;
                for (size_t t = 0; t < (size_t)p->n; t++) {
                    const size_t r = i * p->n + t;
                    acc += ln ? (x[r * dim + c] - mean[r]) * rstd[r] : x[r * dim + c];
                }
                want[off + i * dim + c] = (float)(w[c] * (acc / p->n) + b[c]);
            }
        const gmlp_gemm_norm norm = {.w = dw, .b = db, .stats = ln ? dstats : NULL, .parts = parts, .eps = eps};
        cl_mem dout = up(out, no);
        CHECK(gmlp_op_mean_tokens(ctx, dx, dout, off, p->batch, p->n, p->dim, &norm) == GMLP_OK, "mean_tokens, %s: %s",
              ln ? "LayerNorm" : "Affine", gmlp_last_error(ctx));
        expect(ln ? "mean_tokens of the LayerNorm by statistics" : "mean_tokens of the Affine", dout, want, no, 1e-5);
        free(want);
    }
    /* statistics of fewer rows than the pooling reads */
    const gmlp_gemm_norm short_stats = {.w = dw, .b = db, .stats = dstats, .parts = parts + 1, .eps = eps};
    cl_mem dout = up(out, no);
    CHECK(gmlp_op_mean_tokens(ctx, dx, dout, off, p->batch, p->n, p->dim, &short_stats) == GMLP_ERR_INVALID_ARGUMENT,
          "mean_tokens: statistics of %zu rows x %zu parts in a buffer of %zu parts accepted", rows, parts + 1, parts);
    gmlp_buffer_release(ctx, &dout);
    gmlp_buffer_release(ctx, &dw);
    gmlp_buffer_release(ctx, &db);
    gmlp_buffer_release(ctx, &dstats);
    free(w), free(b), free(stats), free(mean), free(rstd);
}

/* Written from float off of the output, the rest left alone. */
static void run_mean_tokens(const params *p, int reps)
{
    size_t off = (size_t)p->off, nx = (size_t)p->batch * p->n * p->dim, no = (size_t)p->batch * p->dim + off;
    float *x = rnd(nx), *out = rnd(no), *want = malloc(no * sizeof *want);
    memcpy(want, out, no * sizeof *want);
    ref_mean_tokens(x, want + off, p->batch, p->n, p->dim);
    cl_mem dx = up(x, nx), dout = up(out, no);
    RUN(reps, gmlp_op_mean_tokens(ctx, dx, dout, off, p->batch, p->n, p->dim, NULL));
    expect("mean_tokens", dout, want, no, 2e-6);
    if (!reps)
        mean_tokens_normed(p, x, dx, out);
    gmlp_buffer_release(ctx, &dx);
    free(x), free(out), free(want);
}

/* C (m x n) = A (m x k) . B (k x n, or n x k used transposed) [+ bias per
 * column, the activation] on the context's backend: the shapes a model runs (every
 * transpose, storage and tiling: test_gemm.c). */
static void run_gemm(const params *p, int reps)
{
    size_t m = (size_t)p->m, n = (size_t)p->n, k = (size_t)p->k, batch = p->batch ? (size_t)p->batch : 1;
    size_t na = batch * m * k, nb = batch * k * n, nc = batch * m * n;
    float *a = rnd(na), *b = rnd(nb), *bias = rnd(n), *want = calloc(nc, sizeof *want);
    ref_gemm(m, n, k, a, k, m * k, 0, b, p->trans_b ? k : n, k * n, p->trans_b, 0.0f, want, n, m * n, batch);
    const ref_epi e = {p->act ? bias : NULL, 0, p->act, NULL, 0, 0};
    ref_epilogue(want, m, n, n, m * n, batch, &e);
    cl_mem da = up(a, na), db = up(b, nb), dbias = up(bias, n), dc = up(NULL, nc);
    const gmlp_gemm g = {.m = m, .n = n, .k = k, .batch = batch, .a = {.buf = da, .ld = k, .stride = m * k},
                         .b = {.buf = db, .ld = p->trans_b ? k : n, .stride = k * n, .trans = p->trans_b},
                         .c = {.buf = dc, .ld = n, .stride = m * n}, .bias = p->act ? dbias : NULL,
                         .act = p->act};
    RUN(reps, gmlp_op_gemm(ctx, &g));
    expect("gemm", dc, want, nc, p->act == GMLP_ACT_GELU ? 3e-5 : 1e-5);
    gmlp_buffer_release(ctx, &da);
    gmlp_buffer_release(ctx, &db);
    gmlp_buffer_release(ctx, &dbias);
    free(a), free(b), free(bias), free(want);
}

/* The GEMM epilogue alone, as after CLBlast: C (batch of m x n, rows ld
 * apart, from element off) += bias per column or per row (bias:
 * GMLP_BIAS_*), then act, then times the gate (with gate: an m x n matrix
 * per batch, rows ld apart, in a buffer of its own, stored as gmlp_elem
 * gate - 1 in the precision whose activations that is); the padding
 * between rows and before off is checked untouched. */
static void run_epilogue(const params *p, int reps)
{
    size_t m = (size_t)p->m, n = (size_t)p->n, ld = (size_t)p->ld, batch = (size_t)p->batch, off = (size_t)p->off;
    size_t nc = off + batch * m * ld, nbias = p->bias == GMLP_BIAS_ROWS ? m : n;
    float *c = rnd(nc), *bias = rnd(nbias), *u = rnd(nc), *want = malloc(nc * sizeof *want);
    const gmlp_elem ge = p->gate ? (gmlp_elem)(p->gate - 1) : GMLP_ELEM_F32;
    uint16_t *u16 = malloc(nc * sizeof *u16);
    for (size_t i = 0; ge != GMLP_ELEM_F32 && i < nc; i++)
        u16[i] = stored16(ge, u[i]), u[i] = gmlp_elem_value(ge, u16[i]);
    memcpy(want, c, nc * sizeof *want);
    const ref_epi e = {p->bias ? bias : NULL, p->bias == GMLP_BIAS_ROWS, p->act, p->gate ? u + off : NULL, ld, m * ld};
    ref_epilogue(want + off, m, n, ld, m * ld, batch, &e);
    cl_mem dc = up(c, nc), dbias = up(bias, nbias), du = ge == GMLP_ELEM_F32 ? up(u, nc) : up_bytes(u16, nc * 2);
    const gmlp_gemm g = {.m = m, .n = n, .batch = batch, .c = {.buf = dc, .off = off, .ld = ld, .stride = m * ld},
                         .bias = p->bias ? dbias : NULL, .bias_rows = p->bias == GMLP_BIAS_ROWS, .act = p->act,
                         .gate = {.buf = p->gate ? du : NULL, .off = off, .ld = ld, .stride = m * ld, .elem = ge},
                         .precision = ge == GMLP_ELEM_BF16  ? GMLP_GEMM_BF16
                                      : ge == GMLP_ELEM_F16 ? GMLP_GEMM_FP16
                                                            : GMLP_GEMM_FP32};
    RUN(reps, gmlp_op_epilogue(ctx, &g));
    if (IN_PLACE(reps, dc))
        expect("epilogue", dc, want, nc, 2e-6);
    gmlp_buffer_release(ctx, &dbias);
    gmlp_buffer_release(ctx, &du);
    free(c), free(bias), free(u), free(u16), free(want);
}

/* GELU itself, over more than its random cases reach: v swept densely over
 * [-12, 12] (erf's clamp at |v / sqrt 2| = 4 and the tail where 1 + erf
 * cancels), then values torch.nn.functional.gelu takes to: a huge v to
 * itself, a huge negative one to 0, +inf to +inf, -inf and NaN to NaN.
 * Every finite one within 1e-6 max(|v|, 1) of float64's 0.5 v (1 +
 * erf(v / sqrt 2)) (the rational erf: 2.5e-7), and no negative v's GELU
 * above 0 (an erf past -1 would make it so). */
static void run_gelu_sweep(void)
{
    enum { SWEEP = 240001, COLS = 4099 };
    static const float special[] = {1e30f, -1e30f, 0.0f, -0.0f, 1e-30f, -1e-30f, INFINITY, -INFINITY, NAN};
    const size_t nspecial = sizeof special / sizeof *special, n = SWEEP + nspecial;
    const size_t rows = (n + COLS - 1) / COLS, nc = rows * COLS;
    float *v = calloc(nc, sizeof *v), *got = malloc(nc * sizeof *got);
    for (size_t i = 0; i < SWEEP; i++)
        v[i] = -12.0f + 24.0f * (float)i / (SWEEP - 1);
    memcpy(v + SWEEP, special, sizeof special);
    cl_mem dc = up(v, nc);
    const gmlp_gemm g = {.m = rows, .n = COLS, .batch = 1, .c = {.buf = dc, .ld = COLS, .stride = nc},
                         .act = GMLP_ACT_GELU, .precision = GMLP_GEMM_FP32};
    CHECK(gmlp_op_epilogue(ctx, &g) == GMLP_OK, "gelu sweep: %s", gmlp_last_error(ctx));
    down(dc, got, nc);
    double worst = 0, worst_v = 0;
    int above = 0;
    for (size_t i = 0; i < n; i++) {
        const double x = v[i], want = 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
        if (!isfinite(x) || !isfinite(want)) {
            CHECK(isnan(want) ? isnan(got[i]) : got[i] == want, "gelu(%g) = %g, torch's %g", x, got[i], want);
            continue;
        }
        const double d = fabs(got[i] - want) / fmax(fabs(x), 1.0);
        if (!(d <= worst))
            worst = isnan(d) ? INFINITY : d, worst_v = x;
        above += x < 0 && got[i] > 0;
    }
    CHECK(worst <= 1e-6, "gelu: %.3g of max(|v|, 1) off float64 at v = %g", worst, worst_v);
    CHECK(!above, "gelu: %d negative v above 0", above);
    printf("gelu sweep: within %.2e max(|v|, 1) of float64 (worst at v = %g)\n", worst, worst_v);
    gmlp_buffer_release(ctx, &dc);
    free(v), free(got);
}

/* The fused decoding step's kernels at position p0 of sequences hist
 * positions long (batch of them): the outputs and the histories written;
 * lm_step_in with vocab > 0 reads the tokens' rows of an embedding table and
 * writes them into x. */
static void run_lm_step_in(const params *p, int reps)
{
    const int d = p->dim, S = p->hist, B = p->batch;
    const size_t nx = (size_t)B * d, nh = (size_t)B * S * d, nw = (size_t)p->n * d, no = (size_t)B * p->n;
    const size_t nt = (size_t)p->vocab * d;
    float *x = rnd(nx), *g = rnd(d), *be = rnd(d), *hist = rnd(p->segments ? nh : 0), *w = rnd(nw);
    float *bias = p->bias ? rnd(p->n) : NULL, *want = malloc(no * sizeof *want), *table = rnd(nt);
    double *ys = malloc((size_t)d * sizeof *ys);
    int *step = malloc((1 + (size_t)B) * sizeof *step);
    step[0] = p->p0;
    for (int b = 0; b < B && p->vocab; b++)
        step[1 + b] = b ? (int)((check_rand(&seed) + 1.0f) * 0.5f * (float)p->vocab) % p->vocab : p->vocab - 1;
    for (size_t i = 0; i < nt; i++)
        table[i] = table[i] * 3.0f - 2.0f;
    for (size_t i = 0; i < nx; i++)
        x[i] = x[i] * 3.0f + 5.0f; /* a large mean tests the two-pass variance */
    cl_mem dtab = p->vocab ? up(table, nt) : NULL, dx = up(x, nx);
    if (p->vocab)
        ref_embed(step + 1, table, x, B, d);
    cl_mem dstep = up_bytes(step, (1 + (size_t)B) * sizeof(cl_int)), dg = up(g, d), db = up(be, d);
    cl_mem dh = p->segments ? up(hist, nh) : NULL, dw = up(w, nw), dbias = bias ? up(bias, p->n) : NULL;
    cl_mem dout = up(NULL, no);
    ref_lm_step_in(p->p0, S, x, g, be, d, 1e-5f, p->segments ? hist : NULL, p->segments, w, bias, p->n, p->act, want,
                   B, ys);
    RUN(reps, gmlp_op_lm_step_in(ctx, &(gmlp_lm_step_in_args){
        .step = dstep, .seq_len = S, .embed = dtab, .x = dx, .gamma = dg, .beta = db, .d = d, .eps = 1e-5f, .hist = dh,
        .segments = p->segments, .w = dw, .bias = dbias, .n_out = p->n, .act = p->act, .out = dout, .rows = B}));
    expect("lm_step_in", dout, want, no, 1e-5);
    if (dh)
        expect("lm_step_in's history", dh, hist, nh, 2e-6);
    if (p->vocab)
        expect("lm_step_in's embedding rows", dx, x, nx, 0);
    cl_mem done[] = {dstep, p->vocab ? NULL : dx, dg, db, dw, dbias, dtab};
    for (size_t i = 0; i < sizeof done / sizeof *done; i++)
        if (done[i])
            gmlp_buffer_release(ctx, &done[i]);
    free(x), free(g), free(be), free(hist), free(w), free(bias), free(want), free(ys), free(table), free(step);
}

static void run_lm_step_sgu(const params *p, int reps)
{
    const int h = p->h, g = h / 2, S = p->hist, B = p->batch, heads = p->heads;
    const size_t nz = (size_t)B * h, nh = (size_t)B * S * g, nw = (size_t)heads * S * S, no = (size_t)B * g;
    float *z = rnd(nz), *ga = rnd(g), *be = rnd(g), *hist = rnd(nh), *w = rnd(nw);
    float *bias = p->bias ? rnd((size_t)heads * S) : NULL, *want = malloc(no * sizeof *want);
    double *lnv = malloc((size_t)g * sizeof *lnv);
    for (size_t i = 0; i < nz; i++)
        z[i] = z[i] * 3.0f - 4.0f;
    cl_mem dstep = up_bytes(&p->p0, sizeof(cl_int)), dz = up(z, nz), dg = up(ga, g), db = up(be, g);
    cl_mem dh = up(hist, nh), dw = up(w, nw), dbias = bias ? up(bias, (size_t)heads * S) : NULL, dout = up(NULL, no);
    ref_lm_step_sgu(p->p0, S, z, h, ga, be, 1e-5f, hist, w, bias, heads, p->act, want, B, lnv);
    RUN(reps, gmlp_op_lm_step_sgu(ctx, &(gmlp_lm_step_sgu_args){
        .step = dstep, .seq_len = S, .z = dz, .h = h, .gamma = dg, .beta = db, .eps = 1e-5f, .hist = dh, .w = dw,
        .bias = dbias, .heads = heads, .act = p->act, .out = dout, .rows = B}));
    expect("lm_step_sgu", dout, want, no, p->act == GMLP_ACT_GELU ? 3e-5 : 1e-5);
    expect("lm_step_sgu's history", dh, hist, nh, 2e-6);
    cl_mem done[] = {dstep, dz, dg, db, dw, dbias};
    for (size_t i = 0; i < sizeof done / sizeof *done; i++)
        if (done[i])
            gmlp_buffer_release(ctx, &done[i]);
    free(z), free(ga), free(be), free(hist), free(w), free(bias), free(want), free(lnv);
}

static void run_lm_step_out(const params *p, int reps)
{
    const size_t nv = (size_t)p->batch * p->k, nw = (size_t)p->n * p->k, nx = (size_t)p->batch * p->n;
    float *v = rnd(nv), *w = rnd(nw), *x = rnd(nx), *bias = p->bias ? rnd(p->n) : NULL;
    cl_mem dv = up(v, nv), dw = up(w, nw), dx = up(x, nx), db = bias ? up(bias, p->n) : NULL;
    ref_lm_step_out(v, p->k, w, bias, p->n, x, p->batch);
    RUN(reps, gmlp_op_lm_step_out(ctx, dv, p->k, dw, db, p->n, dx, p->batch));
    if (IN_PLACE(reps, dx))
        expect("lm_step_out", dx, x, nx, 1e-5);
    gmlp_buffer_release(ctx, &dv);
    gmlp_buffer_release(ctx, &dw);
    if (db)
        gmlp_buffer_release(ctx, &db);
    free(v), free(w), free(x), free(bias);
}

#define CASE(op, ...) {#op, run_##op, {__VA_ARGS__}, 0}
#define MODEL_CASE(op, ...) {#op, run_##op, {__VA_ARGS__}, 1}
static const op_case cases[] = {
    CASE(layernorm, .rows = 1, .cols = 1),
    CASE(layernorm, .rows = 3, .cols = 7),
    CASE(layernorm, .rows = 5, .cols = 64),
    CASE(layernorm, .rows = 7, .cols = 65, .split = 1),
    CASE(layernorm, .rows = 2, .cols = 300),
    CASE(layernorm, .rows = 4, .cols = 1000, .split = 1),
    MODEL_CASE(layernorm, .rows = 196, .cols = 256),            /* gmlp_s16: one image's block input */
    MODEL_CASE(layernorm, .rows = 196, .cols = 768, .split = 1), /* its SGU norm */
    CASE(affine, .rows = 1, .cols = 1),
    CASE(affine, .rows = 5, .cols = 37, .split = 1),
    MODEL_CASE(affine, .rows = 196, .cols = 384), /* resmlp_12: one image's block input */
    CASE(sgu, .batch = 1, .n = 1, .cols = 1),
    CASE(sgu, .batch = 3, .n = 25, .cols = 36),
    CASE(sgu, .batch = 2, .n = 49, .cols = 65, .ld = 140),
    CASE(sgu, .batch = 2, .n = 9, .cols = 36, .heads = 4, .act = GMLP_ACT_IDENTITY),
    CASE(sgu, .batch = 2, .n = 9, .cols = 36, .heads = 4, .act = GMLP_ACT_TANH, .res = 1),
    CASE(sgu, .batch = 2, .n = 9, .cols = 36, .heads = 4, .act = GMLP_ACT_SIGMOID),
    CASE(sgu, .batch = 2, .n = 9, .cols = 36, .heads = 4, .act = GMLP_ACT_GELU, .res = 1),
    CASE(sgu, .batch = 2, .n = 11, .cols = 30, .heads = 2, .act = GMLP_ACT_SILU, .res = 1),
    CASE(sgu, .batch = 2, .n = 10, .cols = 24, .heads = 3, .act = GMLP_ACT_RELU, .res = 1),
    CASE(sgu, .batch = 3, .n = 1, .cols = 30, .heads = 3, .p0 = 7, .res = 1, .act = GMLP_ACT_TANH), /* decoding */
    CASE(sgu, .batch = 1, .n = 13, .cols = 7, .heads = 7, .p0 = 2, .act = GMLP_ACT_GELU),
    MODEL_CASE(sgu, .batch = 8, .n = 196, .cols = 768), /* gmlp_s16 at batch 8 */
    CASE(embed, .rows = 1, .vocab = 1, .dim = 1),
    CASE(embed, .rows = 37, .vocab = 256, .dim = 65),
    CASE(embed, .rows = 130, .vocab = 50, .dim = 3),
    CASE(shift_tokens, .batch = 2, .hist = 11, .n = 11, .dim = 16, .segments = 2),           /* causal shift 1 */
    CASE(shift_tokens, .batch = 3, .hist = 9, .n = 9, .dim = 30, .segments = 4),            /* 4 segments of 7 */
    CASE(shift_tokens, .batch = 2, .hist = 12, .n = 12, .dim = 17, .segments = 3, .first = -1), /* bidirectional */
    CASE(shift_tokens, .batch = 2, .hist = 16, .p0 = 5, .n = 1, .dim = 33, .segments = 3),  /* one new position */
    CASE(shift_tokens, .batch = 1, .hist = 16, .p0 = 3, .n = 4, .dim = 9, .segments = 9),   /* a segment a channel */
    CASE(softmax_rows, .batch = 1, .n = 1, .ld = 1, .causal = 1),
    CASE(softmax_rows, .batch = 2, .n = 13, .ld = 13, .causal = 1),
    CASE(softmax_rows, .batch = 3, .n = 9, .ld = 9),
    CASE(softmax_rows, .batch = 2, .p0 = 7, .n = 1, .ld = 8, .causal = 1),
    CASE(softmax_rows, .batch = 2, .p0 = 5, .n = 3, .ld = 11, .causal = 1), /* ld > len: columns past len untouched */
    CASE(copy_rows, .batch = 1, .n = 1, .width = 1, .ld = 1, .hist = 1),
    CASE(copy_rows, .batch = 3, .n = 5, .width = 16, .ld = 48, .hist = 12, .p0 = 4),
    CASE(copy_rows, .batch = 2, .n = 1, .width = 33, .ld = 33, .hist = 9, .p0 = 8),
    CASE(patchify, .batch = 1, .chans = 1, .h = 28, .w = 28, .ph = 7, .pw = 7),
    CASE(patchify, .batch = 2, .chans = 3, .h = 20, .w = 20, .ph = 4, .pw = 4, .off = 3 * 20 * 20),
    CASE(patchify, .batch = 3, .chans = 3, .h = 24, .w = 40, .ph = 8, .pw = 8, .off = 5),
    CASE(patchify, .batch = 1, .chans = 2, .h = 9, .w = 10, .ph = 3, .pw = 5),
    MODEL_CASE(patchify, .batch = 8, .chans = 3, .h = 224, .w = 224, .ph = 16, .pw = 16), /* the 224-px stem */
    CASE(mean_tokens, .batch = 1, .n = 1, .dim = 1),
    CASE(mean_tokens, .batch = 3, .n = 25, .dim = 37, .off = 74),
    CASE(mean_tokens, .batch = 2, .n = 196, .dim = 65, .off = 3),
    CASE(epilogue, .batch = 1, .m = 1, .n = 1, .ld = 1, .bias = GMLP_BIAS_COLS),
    CASE(epilogue, .batch = 3, .m = 7, .n = 33, .ld = 37, .off = 5, .bias = GMLP_BIAS_COLS, .act = GMLP_ACT_GELU),
    CASE(epilogue, .batch = 2, .m = 13, .n = 65, .ld = 65, .off = 1, .bias = GMLP_BIAS_ROWS),
    CASE(epilogue, .batch = 2, .m = 196, .n = 129, .ld = 130, .act = GMLP_ACT_GELU), /* GELU alone */
    MODEL_CASE(epilogue, .batch = 8, .m = 196, .n = 768, .ld = 768, .bias = GMLP_BIAS_COLS,
               .act = GMLP_ACT_GELU), /* fc1 */
    CASE(epilogue, .batch = 2, .m = 196, .n = 384, .ld = 768, .off = 384, .bias = GMLP_BIAS_ROWS, .gate = 1),
    CASE(epilogue, .batch = 3, .m = 9, .n = 17, .ld = 20, .bias = GMLP_BIAS_ROWS, .act = GMLP_ACT_TANH, .gate = 1),
    CASE(epilogue, .batch = 1, .m = 5, .n = 7, .ld = 7, .act = GMLP_ACT_SIGMOID, .gate = 1),
    /* the gate as FP16's and BF16's [u | v] hold it (gmlp_elem + 1), odd offsets of 2-byte elements */
    CASE(epilogue, .batch = 2, .m = 9, .n = 17, .ld = 21, .off = 3, .bias = GMLP_BIAS_ROWS, .act = GMLP_ACT_GELU,
         .gate = 1 + GMLP_ELEM_F16),
    CASE(epilogue, .batch = 3, .m = 5, .n = 13, .ld = 13, .off = 1, .act = GMLP_ACT_SILU, .gate = 1 + GMLP_ELEM_BF16),
    CASE(epilogue, .batch = 2, .m = 11, .n = 19, .ld = 21, .off = 2, .bias = GMLP_BIAS_ROWS, .act = GMLP_ACT_RELU,
         .gate = 1),
    CASE(lm_step_in, .batch = 1, .hist = 1, .dim = 1, .n = 1),
    CASE(lm_step_in, .batch = 3, .p0 = 5, .hist = 9, .dim = 37, .segments = 2, .n = 13, .act = GMLP_ACT_GELU,
         .bias = 1),
    CASE(lm_step_in, .batch = 2, .p0 = 1, .hist = 7, .dim = 30, .segments = 4, .n = 67, .act = GMLP_ACT_GELU),
    /* fewer outputs than a work-item makes */
    CASE(lm_step_in, .batch = 2, .p0 = 3, .hist = 4, .dim = 200, .n = 3, .bias = 1),
    CASE(lm_step_in, .batch = 1, .p0 = 0, .hist = 5, .dim = 11, .segments = 3, .n = 70, .act = GMLP_ACT_TANH),
    CASE(lm_step_in, .batch = 1, .p0 = 4, .hist = 5, .dim = 9, .segments = 9, .n = 70, .act = GMLP_ACT_SIGMOID),
    CASE(lm_step_in, .batch = 2, .p0 = 3, .hist = 6, .dim = 24, .segments = 2, .n = 70, .act = GMLP_ACT_RELU,
         .bias = 1),
    CASE(lm_step_in, .batch = 1, .p0 = 2, .hist = 3, .dim = 2048, .segments = 2, .n = 5, .bias = 1), /* the widest */
    CASE(lm_step_in, .batch = 3, .p0 = 4, .hist = 6, .dim = 45, .segments = 3, .n = 21, .vocab = 50, .bias = 1),
    CASE(lm_step_in, .batch = 1, .hist = 2, .dim = 5, .n = 6, .vocab = 1, .act = GMLP_ACT_GELU),
    CASE(lm_step_in, .batch = 1, .p0 = 127, .hist = 128, .dim = 128, .segments = 2, .n = 512, .act = GMLP_ACT_GELU,
         .bias = 1), /* the bundled LM's proj_in at its last position */
    CASE(lm_step_in, .batch = 2, .p0 = 60, .hist = 128, .dim = 128, .n = 256, .bias = 1), /* its to_logits */
    CASE(lm_step_sgu, .batch = 1, .hist = 1, .h = 2, .heads = 1),
    CASE(lm_step_sgu, .batch = 3, .p0 = 6, .hist = 11, .h = 74, .heads = 1, .act = GMLP_ACT_TANH, .bias = 1),
    CASE(lm_step_sgu, .batch = 2, .p0 = 9, .hist = 10, .h = 60, .heads = 3, .act = GMLP_ACT_GELU), /* heads of 10 */
    CASE(lm_step_sgu, .batch = 2, .p0 = 4, .hist = 8, .h = 64, .heads = 4, .act = GMLP_ACT_SIGMOID, .bias = 1),
    CASE(lm_step_sgu, .batch = 2, .p0 = 2, .hist = 5, .h = 14, .heads = 7, .act = GMLP_ACT_SILU, .bias = 1),
    CASE(lm_step_sgu, .batch = 2, .p0 = 5, .hist = 8, .h = 48, .heads = 2, .act = GMLP_ACT_RELU, .bias = 1),
    CASE(lm_step_sgu, .batch = 1, .p0 = 100, .hist = 128, .h = 512, .heads = 1, .bias = 1), /* the bundled LM's */
    CASE(lm_step_out, .batch = 1, .k = 1, .n = 1),
    CASE(lm_step_out, .batch = 3, .k = 37, .n = 13, .bias = 1),
    CASE(lm_step_out, .batch = 2, .k = 9, .n = 3, .bias = 1),
    CASE(lm_step_out, .batch = 1, .k = 300, .n = 130),
    CASE(lm_step_out, .batch = 2, .k = 256, .n = 128, .bias = 1), /* the bundled LM's proj_out */
    CASE(gemm, .m = 7, .n = 33, .k = 97, .act = GMLP_ACT_GELU),
    CASE(gemm, .m = 45, .n = 70, .k = 33, .trans_b = 1, .act = GMLP_ACT_RELU),
    CASE(gemm, .m = 130, .n = 7, .k = 33, .trans_b = 1),
    MODEL_CASE(gemm, .m = 392, .n = 768, .k = 128, .trans_b = 1, .act = GMLP_ACT_GELU), /* gmlp_ti16 fc1, 2 images */
    MODEL_CASE(gemm, .m = 392, .n = 128, .k = 384, .trans_b = 1),            /* its fc2 */
    MODEL_CASE(gemm, .m = 196, .n = 384, .k = 196, .batch = 2),              /* its spatial matmul */
};
#define N_CASES (sizeof cases / sizeof *cases)

int main(int argc, char **argv)
{
    static const struct option lo[] = {{"bench", no_argument, 0, 'b'}, {"reps", required_argument, 0, 'r'},
                                       {"device", required_argument, 0, 'd'}, {"only", required_argument, 0, 'o'},
                                       {"oclgrind", no_argument, 0, 'g'}, {0, 0, 0, 0}};
    int bench = 0, reps = 20, simulated = 0;
    const char *device = NULL, *only = NULL;
    for (int c; (c = getopt_long(argc, argv, "", lo, NULL)) != -1;) {
        if (c == 'b')
            bench = 1;
        else if (c == 'r')
            reps = atoi(optarg);
        else if (c == 'd')
            device = optarg;
        else if (c == 'o')
            only = optarg;
        else if (c == 'g')
            simulated = 1;
        else
            return 2;
    }
    if (reps < 1) {
        fprintf(stderr, "test_ops: --reps takes a positive count\n");
        return 2;
    }
    gmlp_context_options o;
    gmlp_context_options_default(&o);
    o.device = device;
    o.profiling = bench;
    ctx = check_context_ex(&o);
    if (bench)
        printf("%-64s %10s  (%s, %d calls each)\n", "op and shape", "us/call", gmlp_context_device_name(ctx), reps);
    for (size_t i = 0; i < N_CASES; i++) {
        if ((only && strcmp(only, cases[i].op)) || (simulated && cases[i].model_shape))
            continue;
        char what[256];
        describe(&cases[i], what, sizeof what);
        int failed = check_failures;
        cases[i].run(&cases[i].p, bench ? reps : 0);
        if (check_failures > failed)
            printf("  in case: %s\n", what);
        if (!bench)
            continue;
        gmlp_diag_kernel_time rows[8];
        size_t n = 0;
        CHECK(gmlp_diag_profile(ctx, rows, 8, &n) == GMLP_OK, "profile: %s", gmlp_last_error(ctx));
        double us = 0;
        for (size_t r = 0; r < n && r < 8; r++)
            us += rows[r].total_us;
        printf("%-64s %10.2f\n", what, us / reps);
    }
    if (!bench && (!only || !strcmp(only, "gelu")))
        run_gelu_sweep();
    gmlp_context_destroy(ctx);
    return check_summary("test_ops");
}
