/* GEMMs against the plain-C reference (ref_gemm + ref_epilogue, double
 * accumulation): CLBlast for float operands (then the epilogue kernel), and
 * the library's kernel (cl_kernels/gemm.cl) for float, half A, half B, both,
 * and bfloat16 (A, B, or beside half), on awkward sizes (1, 7, 33, 97, 130, k = 0), every transpose, batched
 * with strides (A shared or not), offsets and padded leading dimensions, beta
 * 1 and beta 0 (with NaN in C, which must not be read), each epilogue (bias
 * per column or per row, GELU, the SGU gate): the direct variant (CPUs; narrow or not),
 * the large and the small tiles, the narrow and the deep-k ones (GPUs);
 * again with the smaller tiles the host picks for GPUs with smaller
 * work-groups; and the wrapper's refusals.  The precision modes (TF32, FP16,
 * BF16): the host's pick and forced tilings against ref_gemm_prec (operands
 * rounded by the spec, tests/ref), the edge values bit for bit, and the
 * unrounded reference far off (test_gemm --precision: these, which the
 * plain run leaves to it, as meson's gemm-precision); a
 * BF16 product of bfloat16 operands equals, bit for bit, the same product of
 * their values as floats (what storing weights as bfloat16 relies on), and
 * a BF16 or FP16 product stored in its 16-bit format the float one rounded.
 * Split-K (test_gemm --split, gemm-split: these, likewise): forced and as a
 * GPU's table picks it, against the same references.  Three meson tests,
 * so that the two cores share what was one test's half hour. */
#include <string.h>

#include "core/half.h"
#include "ops/gemm_variant.h"
#include "gmlp_diag.h"
#include "ops/state.h"
#include "ops_check.h"
#include "ref/ref.h"

enum {
    A_HALF = 1,
    B_HALF = 2,
    KERNEL = 4,
    PADDED = 8,
    SHARED_A = 16,
    CLBLAST = 32,
    A_BF16 = 64,
    B_BF16 = 128,
    B_PAIRS = 256 /* B (not transposed) stored as pairs along k: as_pairs */
};

/* the storage flags give operand x (0: A, 1: B) */
static gmlp_elem elem_of(int flags, int x)
{
    return flags & (x ? B_HALF : A_HALF) ? GMLP_ELEM_F16 : flags & (x ? B_BF16 : A_BF16) ? GMLP_ELEM_BF16 : GMLP_ELEM_F32;
}

/* Epilogues: none; fc1 (bias per column + GELU); fc2 / stem (bias per column,
 * usually beta 1); the Mixer's token MLP (bias per row, with or without
 * GELU); the SGU gate fused into the spatial matmul (bias per row, the gate's
 * activation: timm's identity, an LM's tanh, then times u). */
enum { EPI_NONE, EPI_COLS_GELU, EPI_COLS, EPI_ROWS_GELU, EPI_ROWS, EPI_GATE, EPI_GATE_TANH, EPI_COUNT };

/* A stored rows x cols operand (batch of them), its host copy holding the
 * values the device sees (rounded when stored as half or bfloat16). */
typedef struct operand {
    float *host;
    size_t n; /* elements in the buffer */
    gmlp_view mat;
} operand;

static operand make(size_t rows, size_t cols, size_t batch, int flags, int shared, gmlp_elem elem, int trans, int nan)
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
    if (elem != GMLP_ELEM_F32) {
        uint16_t *h = malloc((o.n ? o.n : 1) * sizeof *h);
        gmlp_elem_pack(elem, o.host, o.n, h);
        for (size_t i = 0; i < o.n; i++)
            o.host[i] = gmlp_elem_value(elem, h[i]);
        buf = up_bytes(h, o.n * sizeof *h);
        free(h);
    } else {
        buf = up(o.host, o.n);
    }
    o.mat = (gmlp_view){.buf = buf, .off = off, .ld = ld, .stride = stride, .trans = trans, .elem = elem};
    return o;
}

/* o, a B of k x n per matrix as make() laid it out, stored again as pairs
 * along k (gmlp_view.pairs): the same values, pair rows of 2 ld elements,
 * an odd k's last pair padded with a zero */
static void as_pairs(operand *o, size_t k, size_t n, size_t batch)
{
    const gmlp_view v = o->mat;
    const size_t ld = 2 * v.ld, rows = (k + 1) / 2, stride = rows * ld + 2;
    const size_t count = v.off + (batch - 1) * stride + rows * ld;
    float *p = calloc(count ? count : 1, sizeof *p);
    for (size_t b = 0; b < batch; b++)
        for (size_t q = 0; q < k; q++)
            for (size_t j = 0; j < n; j++)
                p[v.off + b * stride + q / 2 * ld + 2 * j + q % 2] = o->host[v.off + b * v.stride + q * v.ld + j];
    cl_mem buf;
    if (v.elem != GMLP_ELEM_F32) {
        uint16_t *h = malloc((count ? count : 1) * sizeof *h);
        gmlp_elem_pack(v.elem, p, count, h);
        buf = up_bytes(h, count * sizeof *h);
        free(h);
    } else {
        buf = up(p, count);
    }
    free(p);
    gmlp_buffer_release(ctx, &o->mat.buf);
    o->mat = (gmlp_view){.buf = buf, .off = v.off, .ld = ld, .stride = stride, .elem = v.elem, .pairs = 1};
}

/* A tiling test_gemm runs instead of the host's pick (NULL: the pick). */
static const gmlp_tiling *forced;
/* The precision test_gemm runs in: the operands rounded to its format as
 * they load (cl_kernels/precision.cl), against ref_gemm_prec. */
static gmlp_gemm_precision precision = GMLP_GEMM_FP32;
_Static_assert(REF_TF32 == (int)GMLP_GEMM_TF32 && REF_FP16 == (int)GMLP_GEMM_FP16 && REF_BF16 == (int)GMLP_GEMM_BF16,
               "tests/ref's formats are the kernels'");
/* Over the precision cases: the smallest ratio of the error against the
 * unrounded reference to the tolerance, per precision (the rounding is
 * what the checks see, not noise). */
static double unrounded_ratio[GMLP_GEMM_PRECISIONS];

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
    operand a = make(ta ? k : m, ta ? m : k, batch, flags, flags & SHARED_A, elem_of(flags, 0), ta, 0);
    operand b = make(tb ? n : k, tb ? k : n, batch, flags, 0, elem_of(flags, 1), tb, 0);
    operand c = make(m, n, batch, flags, 0, GMLP_ELEM_F32, 0, beta == 0.0f && own_kernel);
    const int gated = epi == EPI_GATE || epi == EPI_GATE_TANH;
    const int rows = epi == EPI_ROWS_GELU || epi == EPI_ROWS || gated;
    const int act = epi == EPI_COLS_GELU || epi == EPI_ROWS_GELU ? GMLP_ACT_GELU
                    : epi == EPI_GATE_TANH                      ? GMLP_ACT_TANH
                                                                : GMLP_ACT_IDENTITY;
    int use_bias = epi != EPI_NONE;
    size_t nb = rows ? m : n;
    float *bias = rnd(nb ? nb : 1);
    cl_mem dbias = up(bias, nb ? nb : 1);
    operand u = gated ? make(m, n, batch, flags & PADDED, 0, gmlp_gemm_precision_inputs(precision), 0, 0)
                      : (operand){0}; /* the gate: the SGU's u, as the mode's activations hold it */
    float *want = malloc(c.n * sizeof *want);
    memcpy(want, c.host, c.n * sizeof *want);
    const gmlp_view *A = &a.mat, *B = &b.mat, *C = &c.mat, *U = &u.mat;
    ref_gemm_prec(m, n, k, a.host + A->off, A->ld, A->stride, ta, b.host + B->off, B->ld, B->stride, tb, beta,
                  want + C->off, C->ld, C->stride, batch, (int)precision);
    const ref_epi re = {use_bias ? bias : NULL, rows, act, gated ? u.host + U->off : NULL, U->ld, U->stride};
    ref_epilogue(want + C->off, m, n, C->ld, C->stride, batch, &re);
    float *unrounded = NULL; /* the same product without the rounding: what a variant that forgets it gives */
    if (precision != GMLP_GEMM_FP32) {
        unrounded = malloc(c.n * sizeof *unrounded);
        memcpy(unrounded, c.host, c.n * sizeof *unrounded);
        ref_gemm(m, n, k, a.host + A->off, A->ld, A->stride, ta, b.host + B->off, B->ld, B->stride, tb, beta,
                 unrounded + C->off, C->ld, C->stride, batch);
        ref_epilogue(unrounded + C->off, m, n, C->ld, C->stride, batch, &re);
    }
    if (flags & B_PAIRS) /* the reference read the rows: the kernel reads the pairs */
        as_pairs(&b, k, n, batch);
    const gmlp_gemm g = {.m = m, .n = n, .k = k, .batch = batch, .a = *A, .b = *B, .c = *C, .beta = beta,
                         .bias = use_bias ? dbias : NULL, .bias_rows = rows, .act = act,
                         .gate = *U, .precision = precision};
    ctx->set.gemm = flags & CLBLAST ? GMLP_GEMM_CLBLAST : GMLP_GEMM_KERNEL;
    const char *skipped = NULL;
    gmlp_status st = forced            ? gmlp_op_gemm_tiled(ctx, &g, forced, &skipped)
                     : flags & KERNEL ? gmlp_op_gemm_kernel(ctx, &g)
                                      : gmlp_op_gemm(ctx, &g);
    ctx->set.gemm = GMLP_GEMM_KERNEL;
    char what[260], tiling[48] = "";
    if (forced)
        snprintf(tiling, sizeof tiling, " tiling %s", forced->name);
    snprintf(what, sizeof what, "gemm %zux%zux%zu ta=%d tb=%d beta=%g batch=%zu epilogue=%d %s%sA:%s B:%s %s%s%s%s %s",
             m, n, k, ta, tb, (double)beta, batch, epi, flags & KERNEL ? "kernel " : "",
             flags & CLBLAST ? "clblast " : "", gmlp_elem_name(elem_of(flags, 0)), gmlp_elem_name(elem_of(flags, 1)),
             flags & PADDED ? "padded " : "", flags & B_PAIRS ? "B as pairs " : "",
             flags & SHARED_A ? "sharedA" : "", tiling, gmlp_gemm_precision_name(precision));
    if (st == GMLP_OK && skipped == gmlp_gemm_tiled_too_big) { /* rusticl: 32 work-items a group */
        if (cases_too_big++ < 3)
            printf("skip %s: %s\n", what, skipped);
        goto done;
    }
    cases_run++;
    CHECK(st == GMLP_OK && !skipped, "%s: %s", what, skipped ? skipped : gmlp_last_error(ctx));
    /* the whole buffer: padding untouched; erf in float costs a few ulp more; more than 256 products
     * summed in fp32, in another order than the float64 reference's, a little more again (1.01e-5 seen at
     * k = 301, TF32, TT; 1.34e-5 in fp32, batched with the tanh gate, on Intel's CPU runtime) */
    const double tol = (act == GMLP_ACT_GELU ? 3e-5 : 1e-5) * (k > 256 ? 1.5 : 1.0);
    /* enough products that the rounding shows, and an operand it changes (half holds 11-bit significands:
     * TF32 and FP16 keep both half operands as they are; BF16 keeps bfloat16 ones, TF32 too) */
    const int kept_a = (elem_of(flags, 0) == GMLP_ELEM_F16 && precision != GMLP_GEMM_BF16) ||
                       (elem_of(flags, 0) == GMLP_ELEM_BF16 && precision != GMLP_GEMM_FP16),
              kept_b = (elem_of(flags, 1) == GMLP_ELEM_F16 && precision != GMLP_GEMM_BF16) ||
                       (elem_of(flags, 1) == GMLP_ELEM_BF16 && precision != GMLP_GEMM_FP16);
    if (unrounded && k >= 7 && !(kept_a && kept_b)) {
        float *got = malloc(c.n * sizeof *got);
        double *w = malloc(c.n * sizeof *w);
        down(c.mat.buf, got, c.n);
        for (size_t i = 0; i < c.n; i++)
            w[i] = unrounded[i];
        const double ratio = rel_error(got, w, c.n, 1e-3) / tol;
        double *lowest = &unrounded_ratio[precision];
        *lowest = *lowest == 0 || ratio < *lowest ? ratio : *lowest;
        free(got), free(w);
    }
    expect(what, c.mat.buf, want, c.n, tol);
done:
    free(unrounded);
    gmlp_buffer_release(ctx, &a.mat.buf);
    gmlp_buffer_release(ctx, &b.mat.buf);
    gmlp_buffer_release(ctx, &u.mat.buf);
    gmlp_buffer_release(ctx, &dbias);
    free(a.host), free(b.host), free(c.host), free(u.host), free(bias), free(want);
}

static const size_t sizes[][3] = {{1, 1, 1}, {7, 33, 97}, {130, 7, 33}, {33, 130, 130}, {97, 1, 7}, {64, 64, 16},
                                  {5, 9, 0}};
#define N_SIZES (sizeof sizes / sizeof *sizes)

/* The quick tier (check_quick_tier): the sweeps sampled, each size, transpose and operand mode still met; the
 * cases run are the full tier's */
static bool sampled;

/* Every transpose and size for each operand-type mode, varying beta, batch,
 * padding and sharing from case to case (sampled: each transpose once, the
 * modes in turn, on four of the sizes; model_forms: of the transposes NN and
 * NT alone, as a GPU's pick walks its row's tilings, each a cold build on a
 * CPU's implementation, whose private memory reads as spilling: the tiled
 * kernel's TN and TT are the deep-k cases'). */
static void sweep(const int *modes, int n_modes, size_t n_sizes, bool model_forms)
{
    int i = 0;
    for (int md = 0; md < n_modes; md++)
        for (int t = 0; t < 4; t++)
            for (size_t s = 0; s < n_sizes; s++, i++) {
                const int turn = model_forms ? t >> 1 : t; /* of the transposes run */
                if (sampled && (md != turn % n_modes || s != (size_t)(2 * t + 1) % n_sizes ||
                                (model_forms && t & 1)))
                    continue;
                size_t batch = i % 3 == 0 ? 3 : 1;
                int flags = modes[md] | ((i / 2) % 2 ? PADDED : 0) | (batch > 1 && i % 2 ? SHARED_A : 0);
                test_gemm(sizes[s][0], sizes[s][1], sizes[s][2], t & 1, t >> 1, (float)(i % 2), batch, flags,
                          i % EPI_COUNT);
            }
}

/* The precision modes' GEMMs (TF32, FP16, BF16; every variant here is the
 * portable one, rounding as it loads): the host's pick for this device (on
 * a CPU the direct kernel) on every transpose, float and half operands, with
 * epilogues; then each of a few tilings forced (the defaults of GPUs' size
 * classes, a direct one) on every transpose, against ref_gemm_prec; the
 * edge values; and that the unrounded reference is far off (the rounding
 * is what the tolerance sees).  quick: one size per transpose, fewer
 * tilings and transposes. */
static void edge_values(const gmlp_tiling *t);

/* BF16 with the weights stored as bfloat16, as a BF16 model stores them
 * (NT: B; NN: A), and then the activations too (its LayerNorms' outputs),
 * against the same product of float weights (their values) and float
 * activations (unrounded: the kernel rounds them), on tiling t (NULL: the
 * host's pick): bit for bit, each form. */
static void bf16_storage_exact(const gmlp_tiling *t)
{
    const size_t m = 37, n = 45, k = 77; /* NT: X (m x k) . W^T (W n x k); NN: W (m x k) . X (k x n) */
    float *x = rnd(k * n), *w = rnd(k * n), *got[3];
    uint16_t *wb = malloc(k * n * sizeof *wb), *xb = malloc(k * n * sizeof *xb);
    gmlp_elem_pack(GMLP_ELEM_BF16, w, k * n, wb);
    gmlp_elem_pack(GMLP_ELEM_BF16, x, k * n, xb);
    for (size_t i = 0; i < k * n; i++)
        w[i] = gmlp_bf16_to_float(wb[i]); /* the same values */
    cl_mem dx = up(x, k * n), dxb = up_bytes(xb, k * n * sizeof *xb), dwf = up(w, k * n);
    cl_mem dwb = up_bytes(wb, k * n * sizeof *wb), dc = up(x, m * n);
    static const char *const what[3] = {"float weights and activations", "bfloat16 weights",
                                        "bfloat16 weights and activations"};
    for (int nt = 1; nt >= 0; nt--) {
        for (int stored = 0; stored < 3; stored++) {
            const gmlp_view wv = {.buf = stored ? dwb : dwf, .ld = k, .trans = nt,
                                  .elem = stored ? GMLP_ELEM_BF16 : GMLP_ELEM_F32};
            const gmlp_view xv = {.buf = stored == 2 ? dxb : dx, .ld = nt ? k : n,
                                  .elem = stored == 2 ? GMLP_ELEM_BF16 : GMLP_ELEM_F32};
            const gmlp_gemm g = {.m = m, .n = n, .k = k, .a = nt ? xv : wv, .b = nt ? wv : xv,
                                 .c = {.buf = dc, .ld = n}, .precision = GMLP_GEMM_BF16, .act = GMLP_ACT_GELU};
            const char *skipped = NULL;
            gmlp_status st = t ? gmlp_op_gemm_tiled(ctx, &g, t, &skipped) : gmlp_op_gemm_kernel(ctx, &g);
            CHECK(st == GMLP_OK, "BF16 %s, %s, on %s: %s", nt ? "NT" : "NN", what[stored], t ? t->name : "the pick",
                  gmlp_last_error(ctx));
            got[stored] = calloc(m * n, sizeof *got[stored]);
            if (!skipped) /* else too big for this device: all alike */
                down(dc, got[stored], m * n);
        }
        for (int stored = 1; stored < 3; stored++) {
            size_t differ = 0;
            for (size_t i = 0; i < m * n; i++)
                differ += memcmp(&got[0][i], &got[stored][i], sizeof(float)) != 0;
            CHECK(differ == 0, "BF16 %s on %s: %zu of %zu outputs differ between %s and %s", nt ? "NT" : "NN",
                  t ? t->name : "the host's pick", differ, m * n, what[stored], what[0]);
        }
        free(got[0]), free(got[1]), free(got[2]);
    }
    gmlp_buffer_release(ctx, &dx);
    gmlp_buffer_release(ctx, &dxb);
    gmlp_buffer_release(ctx, &dwf);
    gmlp_buffer_release(ctx, &dwb);
    gmlp_buffer_release(ctx, &dc);
    free(x), free(w), free(wb), free(xb);
}

/* Products stored in the mode's 16-bit format (what a BF16 or FP16 model
 * stores of a product only GEMMs read: gMLP's gated one, the Mixer's and
 * ResMLP's fc1 outputs), of operands in that format, on tiling t (NULL: the
 * host's pick), NT and NN, with epilogues and beta (C's old values 16-bit in
 * both): each output the same product stored as float rounded by the
 * reference's operand rounding (to nearest even; half saturated at
 * +-65504, which a third of the columns pass with a bias of 1e5), bit for
 * bit, and the padding between C's rows untouched; batched too.  A tiling
 * whose kernel sweeps the epilogue over C says so and runs none.  The
 * host's pick with split-K forced runs whole (the same bits). */
static void output16_exact(const gmlp_tiling *t, gmlp_elem ce)
{
    static const int epis[] = {EPI_COLS_GELU, EPI_GATE, EPI_COLS, EPI_ROWS_GELU};
    const size_t m = 37, n = 45, k = 77, ldc = n + 3, off = 5;
    const int half = ce == GMLP_ELEM_F16;
    const gmlp_gemm_precision prec = half ? GMLP_GEMM_FP16 : GMLP_GEMM_BF16;
    const char *mode = gmlp_gemm_precision_name(prec), *fmt = gmlp_elem_name(ce);
    for (int nt = 1; nt >= 0; nt--)
        for (size_t e = 0; e < sizeof epis / sizeof *epis; e++) {
            const size_t batch = e == 3 ? 2 : 1, stride = m * ldc + 2, cn = off + (batch - 1) * stride + m * ldc;
            const float beta = e >= 2 ? 1.0f : 0.0f;
            operand a = make(m, k, batch, half ? A_HALF : A_BF16, 0, ce, 0, 0);
            operand b = make(nt ? n : k, nt ? k : n, batch, half ? B_HALF : B_BF16, 0, ce, nt, 0);
            operand u = make(m, n, batch, 0, 0, gmlp_gemm_precision_inputs(prec), 0, 0);
            float *c0 = rnd(cn), *bias = rnd(m > n ? m : n), *got = malloc(cn * sizeof *got);
            uint16_t *c0b = malloc(cn * sizeof *c0b), *gotb = malloc(cn * sizeof *gotb);
            for (size_t j = 0; epis[e] == EPI_COLS && j < n; j += 3)
                bias[j] *= 1e5f; /* past half's largest */
            gmlp_elem_pack(ce, c0, cn, c0b);
            for (size_t i = 0; i < cn; i++)
                c0[i] = gmlp_elem_value(ce, c0b[i]); /* the same old values in both */
            cl_mem dcf = up(c0, cn), dcb = up_bytes(c0b, cn * sizeof *c0b), db = up(bias, m > n ? m : n);
            cl_mem dcs = up_bytes(c0b, cn * sizeof *c0b);
            const int rows = epis[e] == EPI_ROWS_GELU || epis[e] == EPI_GATE;
            gmlp_gemm g = {.m = m, .n = n, .k = k, .batch = batch, .a = a.mat, .b = b.mat, .beta = beta, .bias = db,
                           .bias_rows = rows, .act = epis[e] == EPI_COLS ? GMLP_ACT_IDENTITY : GMLP_ACT_GELU,
                           .gate = epis[e] == EPI_GATE ? u.mat : (gmlp_view){0}, .precision = prec};
            const char *skipped[3] = {NULL, NULL, NULL};
            for (int out = 0; out < (t || batch > 1 ? 2 : 3); out++) { /* float, 16-bit, 16-bit split (one matrix) */
                g.c = (gmlp_view){.buf = out == 2 ? dcs : out ? dcb : dcf, .off = off, .ld = ldc, .stride = stride,
                                  .elem = out ? ce : GMLP_ELEM_F32};
                ctx->set.gemm_split = out == 2 ? 3 : 0;
                gmlp_status st = t ? gmlp_op_gemm_tiled(ctx, &g, t, &skipped[out]) : gmlp_op_gemm_kernel(ctx, &g);
                ctx->set.gemm_split = 0;
                CHECK(st == GMLP_OK, "%s %s, C %s, epilogue %d, on %s: %s", mode, nt ? "NT" : "NN",
                      out ? fmt : "float", epis[e], t ? t->name : "the pick", gmlp_last_error(ctx));
            }
            const char *name = t ? t->name : "the host's pick";
            if (skipped[0]) { /* too big for this device: both alike */
                CHECK(skipped[1] != NULL, "%s on %s: C %s ran where C float was skipped (%s)", mode, name, fmt,
                      skipped[0]);
            } else if (skipped[1]) {
                CHECK(t && !gmlp_gemm_tiling_stores(t, ce) && strstr(skipped[1], "sweep"), "%s on %s: C %s skipped: %s",
                      mode, name, fmt, skipped[1]);
            } else {
                down(dcf, got, cn);
                CHECK(clEnqueueReadBuffer(ctx->queue, dcb, CL_TRUE, 0, cn * sizeof *gotb, gotb, 0, NULL, NULL) ==
                          CL_SUCCESS, "reading C back");
                uint16_t *split = malloc(cn * sizeof *split);
                CHECK(clEnqueueReadBuffer(ctx->queue, dcs, CL_TRUE, 0, cn * sizeof *split, split, 0, NULL, NULL) ==
                          CL_SUCCESS, "reading C back");
                CHECK(t || batch > 1 || !memcmp(split, gotb, cn * sizeof *split),
                      "%s %s, epilogue %d, with split-K forced: not the unsplit product", mode, nt ? "NT" : "NN",
                      epis[e]);
                free(split);
                size_t differ = 0, rounded = 0, outside = 0, past = 0, saturated = 0;
                for (size_t i = 0; i < cn; i++) {
                    const size_t q = i < off ? 0 : (i - off) % stride;
                    const int inside = i >= off && q < m * ldc && q % ldc < n;
                    if (!inside) {
                        outside += gotb[i] != c0b[i];
                        continue;
                    }
                    const float want = (float)ref_round_operand(got[i], (int)prec);
                    uint16_t wb;
                    gmlp_elem_pack(ce, &want, 1, &wb);
                    differ += gotb[i] != wb;
                    rounded += gmlp_elem_value(ce, gotb[i]) != got[i];
                    past += fabsf(got[i]) > 65504.0f;
                    saturated += fabsf(got[i]) > 65504.0f && fabsf(gmlp_elem_value(ce, gotb[i])) == 65504.0f;
                }
                CHECK(differ == 0 && outside == 0 && rounded > m * n * batch / 2,
                      "%s %s, epilogue %d, on %s: %zu outputs differ from the float C's rounded, %zu outside C "
                      "written, %zu of %zu changed by the rounding",
                      mode, nt ? "NT" : "NN", epis[e], name, differ, outside, rounded, m * n * batch);
                CHECK(epis[e] != EPI_COLS || (past > m && (!half || saturated == past)),
                      "%s %s on %s: %zu outputs saturated at 65504 of the %zu past it", mode, nt ? "NT" : "NN", name,
                      saturated, past);
            }
            gmlp_buffer_release(ctx, &dcf);
            gmlp_buffer_release(ctx, &dcb);
            gmlp_buffer_release(ctx, &dcs);
            gmlp_buffer_release(ctx, &db);
            gmlp_buffer_release(ctx, &a.mat.buf);
            gmlp_buffer_release(ctx, &b.mat.buf);
            gmlp_buffer_release(ctx, &u.mat.buf);
            free(a.host), free(b.host), free(u.host), free(c0), free(c0b), free(bias), free(got), free(gotb);
        }
}

/* One test_gemm call's arguments, for the tables of cases. */
typedef struct gemm_case {
    size_t m, n, k;
    int ta, tb;
    float beta;
    size_t batch;
    int flags, epi;
} gemm_case;

/* x86's vdpbf16ps (the dpbf16 tilings) where the device has it (a PoCL CPU
 * device on a host with AVX512_BF16; the capability ladder's self-test
 * passed, or the tiling is skipped with its reason, a failure): BF16's
 * products, float and bfloat16 operands.  NT: k of whole 32-blocks and with
 * a tail, below one block; NN and TN: k even and odd, columns past the
 * vectors' (the gathered edge); each epilogue's kind.  The quick tier: one
 * NT and one NN case per tiling. */
static void dpbf16_sweep(void)
{
    static const gemm_case cases[] = {{37, 45, 101, 0, 1, 1.0f, 1, B_BF16, EPI_COLS_GELU},
                                      {13, 70, 64, 0, 1, 0.0f, 2, A_BF16 | B_BF16 | PADDED, EPI_GATE},
                                      {50, 33, 160, 0, 1, 1.0f, 1, A_BF16 | B_BF16, EPI_ROWS},
                                      {25, 17, 19, 0, 1, 0.0f, 1, B_BF16, EPI_NONE},
                                      {49, 70, 49, 0, 0, 0.0f, 2, A_BF16 | B_BF16, EPI_GATE},
                                      {30, 64, 36, 0, 0, 1.0f, 1, A_BF16 | PADDED, EPI_COLS},
                                      {26, 40, 77, 1, 0, 0.0f, 1, B_BF16, EPI_ROWS_GELU}};
    static const char *const names[] = {"dpbf16_12x32_3x16_v16", "dpbf16_24x32_6x16_v16"};
    precision = GMLP_GEMM_BF16;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        forced = gmlp_gemm_tiling_named(names[i]);
        CHECK(forced != NULL, "no %s tiling", names[i]);
        if (!forced || !gmlp_gemm_tiling_fits(&ctx->dev, forced)) {
            printf("skip %s: '%s' has no AVX512_BF16 that OpenCL C reaches (a CPU device of PoCL's, the host "
                   "having it)\n", names[i], ctx->dev.name);
            continue;
        }
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
            if (!sampled || c == 0 || c == 4)
                test_gemm(cases[c].m, cases[c].n, cases[c].k, cases[c].ta, cases[c].tb, cases[c].beta, cases[c].batch,
                          KERNEL | cases[c].flags, cases[c].epi);
    }
    forced = NULL;
    precision = GMLP_GEMM_FP32;
}

/* B stored as pairs along k (BF16's linear weights on a CPU with
 * AVX512_BF16), against the same references: the dpbf16 tilings (on a
 * device without the instruction their emulated form, the portable loop on
 * the pairs), the CPUs' 16-wide NN block and a direct one any device runs,
 * in BF16 and FP32; odd k (the last pair's zero), k = 1, m and n past the
 * blocks, batched, A transposed, each epilogue; the host's pick on a CPU;
 * and the refusals: pairs of a transposed B, of A, a tiling whose kernel
 * reads none.  sampled: two cases a tiling. */
static void pairs_sweep(void)
{
    static const gemm_case cases[] = {{37, 70, 101, 0, 0, 1.0f, 1, B_BF16, EPI_COLS_GELU},
                                      {13, 96, 64, 0, 0, 0.0f, 2, A_BF16 | B_BF16 | PADDED, EPI_GATE},
                                      {50, 33, 160, 0, 0, 1.0f, 1, A_BF16 | B_BF16, EPI_ROWS},
                                      {25, 130, 19, 0, 0, 0.0f, 3, B_BF16 | SHARED_A, EPI_NONE},
                                      {49, 64, 49, 0, 0, 0.0f, 2, A_BF16 | B_BF16, EPI_ROWS_GELU},
                                      {30, 64, 1, 0, 0, 1.0f, 1, A_BF16 | PADDED, EPI_COLS},
                                      {26, 40, 77, 1, 0, 0.0f, 1, B_BF16, EPI_GATE_TANH}};
    static const struct {
        const char *name;
        gmlp_gemm_precision precision;
    } runs[] = {{"dpbf16_24x64_6x32_v16", GMLP_GEMM_BF16}, {"dpbf16_24x32_6x16_v16", GMLP_GEMM_BF16},
                {"direct_24x64_6x32_v16", GMLP_GEMM_BF16}, {"direct_4x64_1x4_v4", GMLP_GEMM_BF16},
                {"direct_4x64_1x4_v4", GMLP_GEMM_FP32},    {NULL, GMLP_GEMM_BF16}};
    const unsigned engines = ctx->dev.engines;
    if (!(engines & GMLP_ENGINE_AVX512_BF16)) /* the dpbf16 tilings' emulated form */
        ctx->dev.engines |= GMLP_ENGINE_AVX512_BF16 | GMLP_ENGINE_EMULATED;
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        precision = runs[i].precision;
        forced = runs[i].name ? gmlp_gemm_tiling_named(runs[i].name) : NULL;
        CHECK(!runs[i].name || forced, "no %s tiling", runs[i].name);
        if (runs[i].name ? !forced || !gmlp_gemm_tiling_fits(&ctx->dev, forced)
                         : !(ctx->dev.type & CL_DEVICE_TYPE_CPU)) { /* a GPU's pick reads no pairs */
            printf("skip B as pairs on %s: not for '%s'\n", runs[i].name ? runs[i].name : "the pick", ctx->dev.name);
            continue;
        }
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
            if (!sampled || c == i % 3 || c == 4)
                test_gemm(cases[c].m, cases[c].n, cases[c].k, cases[c].ta, cases[c].tb, cases[c].beta, cases[c].batch,
                          KERNEL | B_PAIRS | cases[c].flags, cases[c].epi);
    }
    forced = NULL;
    precision = GMLP_GEMM_FP32;
    ctx->dev.engines = engines;
    gmlp_gemm_plan_clear(ctx);
    float zero[8] = {0};
    cl_mem d = up(zero, 8);
    gmlp_gemm g = {.m = 2, .n = 2, .k = 2, .a = {.buf = d, .ld = 2}, .b = {.buf = d, .ld = 4, .pairs = 1, .trans = 1},
                   .c = {.buf = d, .ld = 2}};
    CHECK(gmlp_op_gemm_kernel(ctx, &g) == GMLP_ERR_INVALID_ARGUMENT && strstr(gmlp_last_error(ctx), "pairs"),
          "pairs of a transposed B: %s", gmlp_last_error(ctx));
    g.b.trans = 0, g.a.pairs = 1;
    CHECK(gmlp_op_gemm_kernel(ctx, &g) == GMLP_ERR_INVALID_ARGUMENT && strstr(gmlp_last_error(ctx), "pairs"),
          "pairs of A: %s", gmlp_last_error(ctx));
    g.a.pairs = 0;
    const char *skipped = NULL;
    CHECK(gmlp_op_gemm_tiled(ctx, &g, gmlp_gemm_tiling_named("tiled_4x4x4_4x4"), &skipped) == GMLP_OK && skipped &&
              strstr(skipped, "pairs"),
          "the tiled kernel on pairs: %s", skipped ? skipped : "ran");
    gmlp_buffer_release(ctx, &d);
}

static void precision_sweep(int quick)
{
    static const gmlp_gemm_precision precs[] = {GMLP_GEMM_TF32, GMLP_GEMM_FP16, GMLP_GEMM_BF16};
    /* GPUs' deep and small defaults, the large one, a direct block any device runs, the CPUs' default */
    static const char *const names[] = {"tiled_16x16x16_2x2", "tiled_32x32x8_4x4", "tiled_128x128x2_8x8",
                                        "direct_4x64_1x4_v4", "direct_16x32_4x16_v8"};
    static const int storages[] = {KERNEL, B_HALF, A_HALF, A_HALF | B_HALF, B_BF16, A_BF16};
    enum { N_STORAGES = sizeof storages / sizeof *storages };
    for (size_t p = 0; p < sizeof precs / sizeof *precs; p++) {
        precision = precs[p];
        if (quick) { /* the model's forms on the host's pick (NN float, NT half weights), one tiling forced (TN) */
            test_gemm(33, 70, 29, 0, 0, 0.0f, 2, KERNEL | SHARED_A, EPI_GATE);
            test_gemm(33, 70, 29, 0, 1, 1.0f, 1, KERNEL | B_HALF | PADDED, EPI_COLS_GELU);
            forced = gmlp_gemm_tiling_named(names[0]);
            CHECK(forced != NULL, "tiling %s: none of that name", names[0]);
            if (forced)
                test_gemm(35, 70, 49, 1, 0, 1.0f, 1, KERNEL, EPI_ROWS);
            forced = NULL;
            if (precs[p] == GMLP_GEMM_BF16)
                test_gemm(33, 70, 29, 0, 1, 1.0f, 1, KERNEL | B_BF16 | PADDED, EPI_COLS_GELU);
            edge_values(NULL);
            continue;
        }
        for (int t = 0; t < 4; t++) { /* the host's pick: sizes of each class, every storage */
            const size_t *sz = sizes[(size_t)(t + 1) % N_SIZES]; /* 7x33x97, 130x7x33, 33x130x130, 97x1x7 */
            test_gemm(sz[0], sz[1], sz[2], t & 1, t >> 1, (float)(t % 2), t == 2 ? 3 : 1,
                      storages[(p + (size_t)t) % N_STORAGES] | (t == 1 ? PADDED : 0) | (t == 2 ? SHARED_A : 0),
                      (int)(p + (size_t)t) % EPI_COUNT);
            test_gemm(37, 45, 301, t & 1, t >> 1, 0.0f, 1, storages[(p + (size_t)t + 3) % N_STORAGES],
                      (int)(p + (size_t)t + 3) % EPI_COUNT);
        }
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            forced = gmlp_gemm_tiling_named(names[i]);
            CHECK(forced != NULL, "tiling %s: none of that name", names[i]);
            if (!forced || !gmlp_gemm_tiling_fits(&ctx->dev, forced)) {
                forced = NULL;
                continue; /* the CPUs' block on a GPU */
            }
            for (int t = 0; t < 4; t++)
                test_gemm(33 + (size_t)t, 70, 29 + 10 * (size_t)t, t & 1, t >> 1, (float)(t % 2), t == 3 ? 2 : 1,
                          KERNEL | storages[(i + (size_t)t) % N_STORAGES] | (t == 2 ? PADDED : 0),
                          (int)(i + (size_t)t) % EPI_COUNT);
            forced = NULL;
        }
        edge_values(NULL);
        edge_values(gmlp_gemm_tiling_named(names[0]));
    }
    precision = GMLP_GEMM_FP32;
    bf16_storage_exact(NULL);
    output16_exact(NULL, GMLP_ELEM_BF16);
    if (!quick) /* the sanitizer and other implementations' passes: one format (their e2e runs FP16's half outputs) */
        output16_exact(NULL, GMLP_ELEM_F16);
    /* C's elements: float, half or bf16 (CLBlast writes float only) */
    {
        float zero[4] = {0};
        cl_mem d = up(zero, 4);
        gmlp_gemm g = {.m = 1, .n = 1, .k = 1, .a = {.buf = d, .ld = 1}, .b = {.buf = d, .ld = 1},
                       .c = {.buf = d, .ld = 1, .elem = GMLP_ELEMS}};
        CHECK(gmlp_op_gemm_kernel(ctx, &g) == GMLP_ERR_INVALID_ARGUMENT &&
                  strstr(gmlp_last_error(ctx), "element type of C"),
              "an unknown C: %s", gmlp_last_error(ctx));
        for (gmlp_elem e = GMLP_ELEM_F16; e <= GMLP_ELEM_BF16; e++) {
            g.c.elem = e;
            CHECK(!GMLP_HAVE_CLBLAST || gmlp_op_gemm_clblast(ctx, &g) == GMLP_ERR_INVALID_ARGUMENT,
                  "CLBlast took a %s C", gmlp_elem_name(e));
        }
        gmlp_buffer_release(ctx, &d);
    }
    for (size_t i = 0; !quick && i < sizeof names / sizeof *names; i++) {
        const gmlp_tiling *t = gmlp_gemm_tiling_named(names[i]);
        if (t && gmlp_gemm_tiling_fits(&ctx->dev, t)) {
            bf16_storage_exact(t);
            output16_exact(t, GMLP_ELEM_BF16);
            output16_exact(t, GMLP_ELEM_F16);
        }
    }
    dpbf16_sweep();
    pairs_sweep();
    /* what the rounding does to these products (k >= 7) against the tolerance the checks allow: the unrounded
     * reference fails every one of them, BF16's by far */
    for (size_t p = 0; p < sizeof precs / sizeof *precs; p++) {
        const double ratio = unrounded_ratio[precs[p]], least = precs[p] == GMLP_GEMM_BF16 ? 20 : 2;
        printf("%s: the unrounded reference is off by %.1fx the tolerance or more\n",
               gmlp_gemm_precision_name(precs[p]), ratio);
        CHECK(ratio >= least, "%s: the unrounded reference is within %.3gx the tolerance (want %gx): the check cannot "
              "see the rounding", gmlp_gemm_precision_name(precs[p]), ratio, least);
    }
}

/* Products of single values (k = 1, C = A B with A a column, B a row, both
 * float), exact in fp32 once the operands are rounded: each must equal the
 * reference's bit for bit.  The column holds the spec's edge cases: ties to
 * even in 10 and 7 mantissa bits (and just past them), TF32's overflow and
 * FP16's saturation at 65504 (a product past 65504 too), half's
 * subnormals, infinities and NaN.  t: a tiling forced (NULL: the pick). */
static void edge_values(const gmlp_tiling *t)
{
    const float col[] = {1.0f + 0x1p-11f,         1.0f + 3 * 0x1p-11f,  -(1.0f + 3 * 0x1p-11f),
                         1.0f + 0x1p-11f + 0x1p-23f, 1.0f + 0x1p-8f,     1.0f + 3 * 0x1p-8f,
                         1.0f + 0x1p-8f - 0x1p-23f, 65504.0f,           65519.0f,
                         65520.0f,                  70000.0f,           -1e10f,
                         3.3f * 0x1p-24f,           0x1p-25f,           1023.5f * 0x1p-24f,
                         0x1.fffffep127f,           INFINITY,           -INFINITY,
                         NAN,                       0.0f,               -0.0f,
                         0.1f};
    /* B: 1, 2, a tie, -0.75, then 1 + j 2^-12 (ties and not, in 10 and 7 bits): 17 columns, past the narrow
     * products' 16, so that the host picks what the model's products run on */
    enum { N_ROW = 17 };
    float row[N_ROW] = {1.0f, 2.0f, 1.0f + 0x1p-11f, -0.75f};
    for (int j = 4; j < N_ROW; j++)
        row[j] = 1.0f + (float)(j - 3) * 0x1p-12f;
    const size_t m = sizeof col / sizeof *col, n = N_ROW;
    float *c = malloc(m * n * sizeof *c);
    for (size_t i = 0; i < m * n; i++)
        c[i] = NAN; /* C's old values: beta 0 must not read them */
    cl_mem da = up(col, m), db = up(row, n), dc = up(c, m * n);
    const gmlp_gemm g = {.m = m, .n = n, .k = 1, .a = {.buf = da, .ld = 1}, .b = {.buf = db, .ld = n},
                         .c = {.buf = dc, .ld = n}, .precision = precision};
    const char *skipped = NULL;
    gmlp_status st = t ? gmlp_op_gemm_tiled(ctx, &g, t, &skipped) : gmlp_op_gemm_kernel(ctx, &g);
    const char *pname = gmlp_gemm_precision_name(precision), *tname = t ? t->name : "the host's pick";
    if (st == GMLP_OK && skipped == gmlp_gemm_tiled_too_big) {
        printf("skip edge values %s %s: %s\n", pname, tname, skipped);
        cases_too_big++;
        gmlp_buffer_release(ctx, &da), gmlp_buffer_release(ctx, &db), gmlp_buffer_release(ctx, &dc);
        free(c);
        return;
    }
    cases_run++;
    CHECK(st == GMLP_OK && !skipped, "edge values %s %s: %s", pname, tname, skipped ? skipped : gmlp_last_error(ctx));
    down(dc, c, m * n);
    int bad = 0;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            const float want = (float)(ref_round_operand(col[i], (int)precision) *
                                       ref_round_operand(row[j], (int)precision)),
                        got = c[i * n + j];
            /* (the sign of a zero aside: the sum starts at +0, and +0 + -0 is +0) */
            const int same = isnan(want) ? isnan(got) : got == want;
            if (!same && bad++ < 4)
                printf("edge values %s %s: %a x %a gave %a, want %a\n", pname, tname, (double)col[i], (double)row[j],
                       (double)got, (double)want);
        }
    CHECK(!bad, "edge values %s %s: %d of %zu products differ from the rounded operands' (bit for bit)", pname, tname,
          bad, m * n);
    /* the spec itself, on the device's values: NaN stays NaN; FP16 saturates (1e10 x 2 = 65504 x 2); ties go
     * to even (1 + 2^-11 is a tie in 10 bits, 1 + 2^-8 in 7: both to 1) */
    CHECK(isnan(c[18 * n]) && isnan(c[18 * n + 1]), "edge values %s %s: NaN x 1 = %g", pname, tname, (double)c[18 * n]);
    if (precision == GMLP_GEMM_FP16)
        CHECK(c[11 * n + 1] == -131008.0f && c[16 * n] == 65504.0f && c[17 * n + 3] == 49128.0f,
              "edge values fp16 %s: -1e10 x 2 = %g, inf x 1 = %g, -inf x -0.75 = %g: not saturated at 65504", tname,
              (double)c[11 * n + 1], (double)c[16 * n], (double)c[17 * n + 3]);
    else
        CHECK(isinf(c[16 * n]) && isinf(c[15 * n]), "edge values %s %s: inf x 1 = %g, FLT_MAX x 1 = %g (past the "
              "format's largest: infinity)", pname, tname, (double)c[16 * n], (double)c[15 * n]);
    CHECK(c[0] == 1.0f && c[2] == 1.0f && (precision == GMLP_GEMM_BF16 ? c[4 * n] == 1.0f : c[4 * n] != 1.0f),
          "edge values %s %s: the ties 1 + 2^-11 = %a, (1 + 2^-11)^2 = %a, 1 + 2^-8 = %a", pname, tname, (double)c[0],
          (double)c[2], (double)c[4 * n]);
    gmlp_buffer_release(ctx, &da);
    gmlp_buffer_release(ctx, &db);
    gmlp_buffer_release(ctx, &dc);
    free(c);
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
    const gmlp_view half = {.buf = buf, .ld = 8, .elem = GMLP_ELEM_F16};
    const gmlp_view unknown = {.buf = buf, .ld = 8, .elem = GMLP_ELEMS};
    CHECK(refused_gemm(buf, (gmlp_gemm){.a = half, .c = unknown}) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "element type of C"),
          "a C of no known element type refused: %s", gmlp_last_error(ctx));
    CHECK(refused_gemm(buf, (gmlp_gemm){.a = {.buf = buf, .off = 60, .ld = 8}, .b = half}) ==
                  GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "does not fit"),
          "operand past its buffer: %s", gmlp_last_error(ctx));
    CHECK(refused_gemm(buf, (gmlp_gemm){.a = {.buf = buf, .ld = 4}, .b = half}) == GMLP_ERR_INVALID_ARGUMENT,
          "leading dimension below the row length");
    CHECK(refused_gemm(buf, (gmlp_gemm){.m = 2, .n = 2, .k = 2, .batch = 40,
                                        .b = {.buf = buf, .ld = 8, .stride = 8, .elem = GMLP_ELEM_BF16}}) ==
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
    CHECK(refused_gemm(buf, (gmlp_gemm){.gate = half}) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "the gate must be stored as float"),
          "a half gate in FP32 refused: %s", gmlp_last_error(ctx));
    CHECK(refused_gemm(buf, (gmlp_gemm){.gate = {.buf = buf, .ld = 8}, .precision = GMLP_GEMM_BF16}) ==
                  GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "the gate must be stored as bf16"),
          "a float gate in BF16 refused: %s", gmlp_last_error(ctx));
    CHECK(refused_gemm(buf, (gmlp_gemm){.b = {.buf = buf, .ld = 8, .elem = GMLP_ELEMS}}) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "element type"),
          "an unknown element type: %s", gmlp_last_error(ctx));
    CHECK(refused_gemm(buf, (gmlp_gemm){.act = GMLP_ACTS}) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "activation"),
          "an unknown activation: %s", gmlp_last_error(ctx));
    gmlp_buffer_release(ctx, &four);
    gmlp_buffer_release(ctx, &buf);
}

/* A fresh context whose device, a GPU of no vendor with defaults of its own,
 * claims at most max_wg work-items per group: the host must pick smaller
 * tiles (expect_tm), and they must compute alike (sampled: the picks alone,
 * some eight cold builds; the small tiles they name compute in main's small-tile sweep). */
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
    gmlp_status st = gmlp_gemm_describe(ctx, GMLP_ELEM_F16, GMLP_ELEM_F32, GMLP_GEMM_FP32, tiles, sizeof tiles);
    if (cases_too_big) { /* the compiler's own limit is lower still: the host's fallback, which the sweep checks */
        printf("skip the picks at max_wg %zu ('%s'): this device's compiler allows fewer work-items a group\n",
               max_wg, tiles);
    } else {
        CHECK(st == GMLP_OK && !strncmp(tiles, want, strlen(want)) && strstr(tiles, want_nn) &&
                  !strstr(tiles, "large"),
              "max_wg %zu: tiles '%s', want %s... %s..., no large ones: %s", max_wg, tiles, want, want_nn,
              gmlp_last_error(ctx));
        int narrow_tm = expect_tm < 16 ? expect_tm : 16;
        snprintf(want, sizeof want, "tiled_%dx%dx", narrow_tm, narrow_tm);
        CHECK(narrow_tm == expect_tm || strstr(tiles, want), "max_wg %zu: narrow tiles not %s: '%s'", max_wg, want,
              tiles);
    }
    static const int modes[] = {A_HALF, B_BF16};
    if (!sampled)
        sweep(modes, 2, 4, false);
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
    const gmlp_gemm g = {.m = 1, .n = 1, .k = 1, .a = {.buf = buf, .ld = 1, .elem = GMLP_ELEM_F16},
                         .b = {.buf = buf, .ld = 1, .elem = GMLP_ELEM_F16}, .c = {.buf = buf, .ld = 1}};
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
/* Whether this device's compiler allows a whole tile of each named tiling
 * (forced on a small product, NT or NN, float operands): rusticl's llvmpipe
 * allows 32 work-items a group, fewer than the tiles a GPU's table names,
 * and the host then falls back to tiles it allows. */
static bool compiler_allows(const char *const *names, size_t n_names, int tb)
{
    const int before = cases_too_big;
    for (size_t i = 0; i < n_names; i++) {
        forced = gmlp_gemm_tiling_named(names[i]);
        CHECK(forced != NULL, "no tiling named %s", names[i]);
        if (forced)
            test_gemm(19, 37, 13, 0, tb, 0.0f, 1, KERNEL, EPI_NONE);
    }
    forced = NULL;
    return cases_too_big == before;
}

/* NVIDIA GPUs (the vendor's name claimed): the large tiles the host picks
 * there (8-deep slices for NT, its own for NN) on every transpose of an
 * m x n x k product; then each NVIDIA-only tiling forced on every step-th
 * transpose (from one of its own; none where step is 0), on the device's own type (a CPU build's private
 * memory, which on a GPU means spilling, stops neither); operand forms from modes[0..n_modes).
 * Sampled: the products alone, NN and NT (the model's forms), which still build and run NVIDIA's large
 * tilings; not the picks of every size class by name (gmlp_gemm_describe builds each class's row, tiling by
 * tiling, as a CPU's private memory reads as spilling, and compiler_allows six more: 19 cold builds on PoCL),
 * which gemm-tables checks in the tables without a device. */
static void nvidia_sweep(size_t m, size_t n, size_t k, const int *modes, int n_modes, int step)
{
    const cl_uint cus = ctx->dev.compute_units;
    const cl_device_type type = ctx->dev.type;
    const gmlp_vendor vendor = ctx->dev.vendor_id;
    /* on the device's own type: a CPU's private memory would count as spilling on a GPU */
    pretend(type, 0, GMLP_VENDOR_NVIDIA);
    static const char *const nt[] = {"tiled_64x64x8_4x4", "tiled_128x128x8_8x8", "tiled_16x16x16_2x2"};
    static const char *const nn[] = {"tiled_16x16x16_2x2", "tiled_32x64x8_4x4", "tiled_16x16x4_4x4"};
    const bool allowed = !sampled && compiler_allows(nt, 3, 1) && compiler_allows(nn, 3, 0); /* checked unsampled */
    pretend(CL_DEVICE_TYPE_GPU, 0, GMLP_VENDOR_NVIDIA);
    if (!sampled) {
        /* the large NT tiles with 8-deep slices; NN (the token mixing): NVIDIA's
         * own defaults (lib/ops/gemm_tilings.c) */
        char tiles[512];
        const gmlp_status described = gmlp_gemm_describe(ctx, 0, 0, GMLP_GEMM_FP32, tiles, sizeof tiles);
        if (!allowed) /* the host falls back to tiles the compiler allows (the sweep below checks them) */
            printf("skip NVIDIA's picks ('%s'): this device's compiler allows fewer work-items a group\n", tiles);
        else
            CHECK(described == GMLP_OK &&
                      strstr(tiles, "NT: tiled_64x64x8_4x4, tiled_128x128x8_8x8 for large products, "
                                    "tiled_16x16x16_2x2 for narrow ones, tiled_16x16x16_2x2 for deep ones") == tiles &&
                      strstr(tiles, "; NN: tiled_16x16x16_2x2, tiled_32x64x8_4x4 for large products, "
                                    "tiled_16x16x4_4x4 for narrow ones"),
                  "NVIDIA's tiles: %s", tiles);
    }
    for (int t = 0; t < 4; t += sampled ? 2 : 1) /* sampled: NN and NT, the model's forms */
        test_gemm(m, n, k, t & 1, t >> 1, (float)(t % 2), t == 3 ? 2 : 1, modes[t % n_modes] | (t == 1 ? PADDED : 0),
                  t % EPI_COUNT);
    pretend(type, 0, GMLP_VENDOR_NVIDIA);
    size_t n_tilings;
    const gmlp_tiling *all = gmlp_gemm_tilings(&n_tilings);
    for (size_t i = 0; i < n_tilings && step > 0; i++)
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

/* The CPUs' direct blocks in bands of a few block rows (gmlp_gemm_block), in
 * a context of its own whose builds set GMLP_DIRECT_BAND_BYTES to 4096: with
 * k = 13, bands of 3 block rows NN, of 4 NT, the last band fewer; small
 * enough for Oclgrind, where the model's bands need k in the thousands. */
static void oclgrind_bands(void)
{
    gmlp_context_options o;
    gmlp_context_options_default(&o);
    o.cl_options = "-DGMLP_DIRECT_BAND_BYTES=4096";
    gmlp_context *main_ctx = ctx;
    ctx = check_context_ex(&o);
    pretend(CL_DEVICE_TYPE_CPU, 0, ctx->dev.vendor_id);
    ctx->dev.native_floats = 16; /* AVX-512's NN block, 24 rows: 5 block rows of 100 */
    test_gemm(100, 70, 13, 0, 0, 1.0f, 2, PADDED, EPI_ROWS);
    test_gemm(100, 70, 13, 0, 1, 0.0f, 1, B_HALF, EPI_COLS_GELU); /* NT's 16 rows: 7 block rows */
    gmlp_context_destroy(ctx);
    ctx = main_ctx;
}

static void oclgrind_sweep(void)
{
    static const int modes[] = {KERNEL, B_HALF, A_HALF, B_BF16};
    const cl_uint cus = ctx->dev.compute_units;
    const cl_device_type type = ctx->dev.type;
    const cl_uint native = ctx->dev.native_floats;
    /* large, small, the CPU's direct (and its narrow one; again with
     * AVX-512's 16-wide vectors, whose NN block no other device here picks:
     * Oclgrind and rusticl say 1), narrow on GPUs (small tiles), deep k */
    const struct {
        cl_uint cus;
        cl_device_type type;
        size_t m, n, k;
        cl_uint native;
    } classes[] = {{0, CL_DEVICE_TYPE_GPU, 19, 37, 13, native}, {UINT32_MAX, CL_DEVICE_TYPE_GPU, 19, 37, 13, native},
                   {0, CL_DEVICE_TYPE_CPU, 19, 37, 13, native}, {0, CL_DEVICE_TYPE_CPU, 3, 37, 13, native},
                   {0, CL_DEVICE_TYPE_CPU, 19, 37, 13, 16},     {0, CL_DEVICE_TYPE_GPU, 3, 37, 13, native},
                   {UINT32_MAX, CL_DEVICE_TYPE_GPU, 19, 21, 259, native}};
    for (size_t c = 0; c < sizeof classes / sizeof *classes; c++)
        for (int t = 0; t < 4; t++) {
            pretend(classes[c].type, classes[c].cus, ctx->dev.vendor_id);
            ctx->dev.native_floats = classes[c].native;
            test_gemm(classes[c].m, classes[c].n, classes[c].k, t & 1, t >> 1, (float)(t % 2), t == 3 ? 2 : 1,
                      modes[(c + (size_t)t) % 4] | (t == 1 ? PADDED : 0), (int)(c + (size_t)t) % EPI_COUNT);
        }
    /* B as pairs along k: the dpbf16 NN block's emulated form (the portable loop on the pairs), odd k,
     * batched, the gate; and a direct block any device runs, in FP32 */
    const unsigned engines = ctx->dev.engines;
    pretend(CL_DEVICE_TYPE_CPU, 0, ctx->dev.vendor_id);
    ctx->dev.engines |= GMLP_ENGINE_AVX512_BF16 | GMLP_ENGINE_EMULATED;
    precision = GMLP_GEMM_BF16;
    forced = gmlp_gemm_tiling_named("dpbf16_24x64_6x32_v16");
    test_gemm(19, 37, 13, 0, 0, 0.0f, 2, A_BF16 | B_BF16 | B_PAIRS, EPI_GATE);
    precision = GMLP_GEMM_FP32;
    forced = gmlp_gemm_tiling_named("direct_4x64_1x4_v4");
    test_gemm(19, 37, 13, 0, 0, 1.0f, 1, B_PAIRS | PADDED, EPI_COLS_GELU);
    forced = NULL;
    ctx->dev.engines = engines;
    ctx->dev.native_floats = native;
    pretend(type, cus, ctx->dev.vendor_id);
    /* split-K forced: a shorter last part (NT, half B), parts of 4 (NN, the gate) */
    ctx->set.gemm_split = 3;
    test_gemm(19, 21, 37, 0, 1, 1.0f, 1, B_HALF, EPI_COLS_GELU);
    test_gemm(19, 21, 24, 0, 0, 0.0f, 1, KERNEL, EPI_GATE);
    ctx->set.gemm_split = 0;
    nvidia_sweep(19, 37, 13, modes, 4, 4);
    oclgrind_bands();
}

/* Split-K forced (ctx->set.gemm_split: GMLP_GEMM_SPLIT's setting) against
 * the reference on awkward sizes: k not divided by the parts (a shorter
 * last part of its own launch), more parts than k has 4-deep chunks, every
 * epilogue and transpose, float and half operands, beta 0 (NaN in C) and
 * 1, padded; the precision modes; tilings forced (the tiled kernel, the
 * CPUs' direct one); a batched product (never split); then on a made-up
 * GPU of many compute units, the split its table picks for a deep product,
 * profiled: the parts and their sum name themselves (sampled: of each size
 * one transpose in turn, of each precision one form). */
static void split_sweep(void)
{
    static const struct {
        size_t m, n, k;
        int parts;
    } cases[] = {{37, 45, 301, 4}, {33, 70, 96, 3}, {7, 33, 97, 8}, {130, 17, 33, 2},
                 {5, 9, 13, 16},   {64, 64, 256, 5}, {1, 1, 1, 2}};
    static const int modes[] = {KERNEL, A_HALF, B_HALF, A_BF16 | B_HALF};
    int i = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int t = 0; t < 4; t++, i++) {
            if (sampled && t != (int)(c % 4))
                continue;
            ctx->set.gemm_split = cases[c].parts;
            test_gemm(cases[c].m, cases[c].n, cases[c].k, t & 1, t >> 1, (float)(i % 2), 1,
                      modes[i % 4] | ((i / 2) % 2 ? PADDED : 0), i % EPI_COUNT);
        }
    CHECK(ctx->ops->split_scratch && ctx->ops->split_bytes >= 8 * 7 * 33 * sizeof(float),
          "split-K forced: partial sums of %zu bytes, not those of 8 parts of 7 x 33", ctx->ops->split_bytes);
    ctx->set.gemm_split = 3;
    static const gmlp_gemm_precision precs[] = {GMLP_GEMM_TF32, GMLP_GEMM_FP16, GMLP_GEMM_BF16};
    for (int p = 0; p < 3; p++) {
        precision = precs[p];
        if (!sampled || p % 2 == 0)
            test_gemm(37, 45, 301, 0, 1, 1.0f, 1, KERNEL | B_HALF, EPI_COLS_GELU);
        if (!sampled || p % 2 == 1)
            test_gemm(33, 70, 97, 0, 0, 0.0f, 1, KERNEL | A_HALF, EPI_GATE);
    }
    precision = GMLP_GEMM_FP32;
    static const char *const names[] = {"tiled_16x16x16_2x2", "tiled_64x64x8_4x4", "direct_16x32_4x16_v8"};
    for (size_t t = 0; t < sizeof names / sizeof *names; t++) {
        forced = gmlp_gemm_tiling_named(names[t]);
        if (forced && gmlp_gemm_tiling_fits(&ctx->dev, forced))
            test_gemm(35, 70, 149, (int)t & 1, 1, (float)(t % 2), 1, KERNEL | PADDED, (int)(t + 1) % EPI_COUNT);
    }
    forced = NULL;
    test_gemm(33, 47, 301, 0, 0, 1.0f, 3, SHARED_A, EPI_GATE_TANH); /* batched: unsplit */
    ctx->set.gemm_split = 0;

    gmlp_context_options o;
    gmlp_context_options_default(&o);
    o.profiling = 1;
    gmlp_context *plain = ctx;
    ctx = check_context_ex(&o);
    pretend(CL_DEVICE_TYPE_GPU, 132, GMLP_VENDOR_ANY);
    const int before = cases_too_big;
    test_gemm(33, 47, 256, 0, 1, 1.0f, 1, KERNEL, EPI_COLS_GELU); /* DEEP: 9 tiles of 16 x 16 for 132 units: 4 parts */
    gmlp_diag_kernel_time rows[16];
    size_t n = 0, parts = 0, sums = 0;
    double parts_bytes = 0, sum_bytes = 0;
    CHECK(gmlp_diag_profile(ctx, rows, 16, &n) == GMLP_OK, "profile: %s", gmlp_last_error(ctx));
    for (size_t r = 0; r < n && r < 16; r++) {
        if (!strcmp(rows[r].name, "gmlp_gemm split-K parts"))
            parts += rows[r].launches, parts_bytes += rows[r].bytes;
        if (!strcmp(rows[r].name, "gmlp_gemm_split_sum"))
            sums += rows[r].launches, sum_bytes += rows[r].bytes;
    }
    if (cases_too_big == before) {
        CHECK(parts == 1 && sums == 1 && ctx->ops->split_scratch, "a GPU's deep product: %zu launches of parts, "
              "%zu of their sum, in %zu profile rows (want one each)", parts, sums, n);
        /* what the operands move: the parts read A and B once and write P partial sums of C, which the sum
         * reads, with C (beta 1) and the bias, and writes C */
        const double mn = 33.0 * 47 * 4, written = parts_bytes - (33.0 * 256 + 256.0 * 47) * 4;
        CHECK(written > 0 && written == sum_bytes - 2 * mn - 47 * 4 && fmod(written, mn) == 0,
              "the bytes the split product moves: parts %.0f, sum %.0f", parts_bytes, sum_bytes);
    }
    gmlp_context_destroy(ctx);
    ctx = plain;
}

/* One product of the CPUs' 16-wide NN block, forced, for tests/test_cpu_loop.sh, which reads the machine
 * code PoCL made of it: form "fp32" (float operands, direct_24x64_6x32_v16), "pairs" (BF16, B as pairs
 * along k: dpbf16_24x64_6x32_v16 through vdpbf16ps) or "rows" (BF16, B's rows interleaved into pairs, the
 * token mixing's).  Exit 77 (skipped) where the device is not PoCL's or the tiling is not for it (an AVX2
 * host; no AVX512_BF16 for the BF16 forms); else the product against the reference, as every case. */
static int cpu_loop(const char *form)
{
    const int fp32 = !strcmp(form, "fp32"), pairs = !strcmp(form, "pairs");
    CHECK(fp32 || pairs || !strcmp(form, "rows"), "--cpu-loop %s: fp32, pairs or rows", form);
    forced = gmlp_gemm_tiling_named(fp32 ? "direct_24x64_6x32_v16" : "dpbf16_24x64_6x32_v16");
    CHECK(forced != NULL, "no 16-wide NN tiling");
    if (check_failures)
        return check_summary("test_gemm --cpu-loop");
    /* the object read back from PoCL's own cache (test_cpu_loop.sh) */
    const unsigned pocl_cpu = GMLP_RUNTIME_OWN_CACHE | GMLP_RUNTIME_CPU_CLANG;
    if ((gmlp_runtime_facts(&ctx->dev) & pocl_cpu) != pocl_cpu || !gmlp_gemm_tiling_fits(&ctx->dev, forced) ||
        (!fp32 && !(ctx->dev.engines & GMLP_ENGINE_AVX512_BF16))) {
        printf("SKIP: %s on '%s' (%s)\n", forced->name, ctx->dev.name, ctx->dev.platform_name);
        return 77;
    }
    precision = fp32 ? GMLP_GEMM_FP32 : GMLP_GEMM_BF16;
    /* m and k past the blocks, n two of them: the loop on whole blocks, and rows past m */
    test_gemm(50, 128, 77, 0, 0, 1.0f, 1, KERNEL | (fp32 ? 0 : A_BF16 | B_BF16) | (pairs ? B_PAIRS : 0),
              EPI_COLS_GELU);
    return check_summary("test_gemm --cpu-loop");
}

int main(int argc, char **argv)
{
    /* GMLP_TEST_QUICK (.ci/run's ASan pass, which looks for host memory
     * errors): float and half-B operands, not every storage pair, and of
     * the GPU tilings the small ones only; each variant is a program of its
     * own, and compiling ~200 of them is most of this test's time */
    const int quick = getenv("GMLP_TEST_QUICK") != NULL;
    sampled = check_quick_tier();
    ctx = check_context();
    if (argc > 1 && !strcmp(argv[1], "--precision")) { /* the precision modes' cases alone */
        precision_sweep(quick);
        gmlp_context_destroy(ctx);
        return check_summary("test_gemm --precision");
    }
    if (argc > 1 && !strcmp(argv[1], "--split")) { /* split-K's cases alone */
        split_sweep();
        gmlp_context_destroy(ctx);
        return cases_summary("test_gemm --split");
    }
    if (argc > 2 && !strcmp(argv[1], "--cpu-loop")) {
        const int rc = cpu_loop(argv[2]);
        gmlp_context_destroy(ctx);
        return rc;
    }
    if (argc > 1 && !strcmp(argv[1], "--oclgrind")) {
        oclgrind_sweep();
        gmlp_context_destroy(ctx);
        return check_summary("test_gemm --oclgrind");
    }
    /* CLBlast, then the epilogue kernel, as the model calls them with GMLP_GEMM=clblast; sampled: one in
     * three (NT, NN batched with a shared A), CLBlast's cold builds of its kernels being minutes on PoCL */
    static const gemm_case clblast_cases[] = {{1, 1, 1, 0, 0, 0.0f, 1, 0, EPI_NONE},
                                              {17, 33, 65, 0, 1, 0.0f, 1, 0, EPI_COLS_GELU},
                                              {37, 5, 130, 0, 1, 1.0f, 1, PADDED, EPI_COLS},
                                              {25, 36, 25, 0, 0, 0.0f, 3, SHARED_A, EPI_ROWS},
                                              {49, 65, 49, 0, 0, 1.0f, 2, SHARED_A | PADDED, EPI_ROWS_GELU},
                                              {9, 7, 11, 1, 0, 0.0f, 2, 0, EPI_NONE},
                                              {196, 65, 196, 0, 0, 0.0f, 2, SHARED_A | PADDED, EPI_GATE},
                                              {13, 36, 13, 0, 0, 1.0f, 3, SHARED_A, EPI_GATE_TANH}};
    if (GMLP_HAVE_CLBLAST) {
        for (size_t i = 0; i < sizeof clblast_cases / sizeof *clblast_cases; i++)
            if (!sampled || i % 3 == 1)
                test_gemm(clblast_cases[i].m, clblast_cases[i].n, clblast_cases[i].k, clblast_cases[i].ta,
                          clblast_cases[i].tb, clblast_cases[i].beta, clblast_cases[i].batch,
                          CLBLAST | clblast_cases[i].flags, clblast_cases[i].epi);
    } else {
        printf("SKIP: the CLBlast cases: built without CLBlast (meson setup -Dclblast)\n");
    }
    /* the model's calls through gmlp_op_gemm on the default backend */
    test_gemm(49, 65, 49, 0, 0, 0.0f, 3, SHARED_A | PADDED, EPI_NONE);
    test_gemm(98, 130, 37, 0, 1, 1.0f, 1, 0, EPI_COLS);
    /* C's blocks in bands of block rows (gemm_direct.cl's direct_band, a CPU's pick): k deep enough for
     * bands of 3 (NN) and 5 (NT) block rows, the last one fewer */
    test_gemm(170, 70, 2900, 0, 0, 1.0f, 2, PADDED, EPI_ROWS);
    test_gemm(170, 70, 2900, 0, 1, 0.0f, 1, 0, EPI_COLS_GELU);
    /* the kernel as the host picks it for this device (on a CPU the direct
     * variant, narrow or not), then the tiles it picks for a GPU: first the
     * large ones whatever the size (no compute unit to keep busy), then the
     * small ones (too many); products of at most 16 rows or columns take the
     * narrow tiles either way */
    static const int modes[] = {KERNEL, A_HALF, B_HALF, A_BF16 | B_HALF};
    cl_uint cus = ctx->dev.compute_units;
    cl_device_type type = ctx->dev.type;
    char tiles[512];
    if (gmlp_gemm_describe(ctx, GMLP_ELEM_F16, GMLP_ELEM_F16, GMLP_GEMM_FP32, tiles, sizeof tiles) == GMLP_OK)
        printf("tiles on '%s': %s\n", ctx->dev.name, tiles);
    static const int quick_modes[] = {KERNEL, B_HALF};
    if (type & CL_DEVICE_TYPE_CPU)
        sweep(quick ? quick_modes : modes, quick ? 2 : 4, N_SIZES, false);
    for (int large = !quick; large >= 0; large--) { /* quick: the small tiles only (one tiled sweep) */
        pretend(CL_DEVICE_TYPE_GPU, large ? 0 : UINT32_MAX, ctx->dev.vendor_id);
        sweep(quick ? quick_modes : modes, quick ? 2 : 4, N_SIZES, true);
    }
    /* the deep-k small tiles, which the host picks on GPUs for few output
     * tiles over k >= 256: every transpose, float and half operands (sampled: of each transpose one in turn) */
    pretend(CL_DEVICE_TYPE_GPU, UINT32_MAX, ctx->dev.vendor_id);
    for (int t = 0; t < 4; t++)
        for (int md = 0; md < 4; md += quick ? 3 : 1)
            if (!sampled || md == (quick ? 3 : 1) * (t % 2))
                test_gemm(33, 47, 301, t & 1, t >> 1, (float)(md % 2), md == 1 ? 2 : 1,
                          modes[md] | (t == 2 ? PADDED : 0), (t + md) % EPI_COUNT);
    pretend(type, cus, ctx->dev.vendor_id);
    /* quick: not the NVIDIA-only tilings forced (large tiles, each a long compile on a CPU's
     * implementation; the full run checks them on every transpose) */
    nvidia_sweep(133, 70, 29, modes, 4, quick ? 0 : 1);
    test_refusals();
    test_small_groups(64, 32);
    if (!quick) {
        test_small_groups(16, 16);
        test_small_groups(1, 4);
    }
    test_build_failure();
    gmlp_context_destroy(ctx);
    return cases_summary("test_gemm");
}
