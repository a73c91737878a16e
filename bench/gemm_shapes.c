/* Per-shape GEMM timing (bench/NOTES.md, "each model shape against 7b55eb2"):
 * gmlp_ti16_224's GEMMs at batch 8 (stem, fc1, spatial, fc2, head) and SGEMM
 * 1024^3, through the internal ops of this tree (the library's pick, then
 * CLBlast) or, built with -DOLD, of main at 7b55eb2 (its kernel): the old
 * internal API has no place in this tree's build, so it is built by hand
 * against each tree's build directory T, with this tree's timing helpers
 * (S: this checkout):
 *   cc -O2 -std=c11 -D_GNU_SOURCE -DCL_TARGET_OPENCL_VERSION=120 [-DOLD] \
 *      -I$S/bench -I$T/tests -I$T/include -I$T/build/include -I$T/lib -I$T/cl_kernels \
 *      $S/bench/gemm_shapes.c $S/bench/timing.c -o shapes -Wl,--start-group \
 *      $T/build/lib/libgmlp_internal.a -lOpenCL -lclblast -ljansson -pthread -lm -Wl,--end-group
 * Timer: host wall time of 10 calls and a clFinish, per call; the median of
 * 9 such after 2 warm-up calls.  Run the two builds in turn (A B A B). */
#include "ops_check.h"
#include "timing.h"

typedef struct shape {
    const char *name;
    size_t m, n, k, batch, lda, ldb, ldc, sa, sb, sc;
    int tb;
    float beta;
    int bias; /* 0 none, 1 cols, 2 rows */
    int gelu;
} shape;

#ifdef OLD
static gmlp_status call(int backend, const shape *s, cl_mem a, cl_mem b, cl_mem c, cl_mem bias)
{
    (void)backend;
    gmlp_mat A = {.buf = a, .ld = s->lda, .stride = s->sa};
    gmlp_mat B = {.buf = b, .ld = s->ldb, .stride = s->sb, .trans = s->tb};
    gmlp_mat C = {.buf = c, .ld = s->ldc, .stride = s->sc};
    gmlp_epilogue e = {.bias = s->bias ? bias : NULL, .bias_rows = s->bias == 2, .gelu = s->gelu};
    return gmlp_op_gemm_kernel(ctx, s->m, s->n, s->k, A, B, s->beta, C, s->batch, &e);
}
static const char *backends[] = {"7b55eb2-kernel"};
#else
static gmlp_status call(int backend, const shape *s, cl_mem a, cl_mem b, cl_mem c, cl_mem bias)
{
    gmlp_gemm g = {.m = s->m, .n = s->n, .k = s->k, .batch = s->batch,
                   .a = {.buf = a, .ld = s->lda, .stride = s->sa},
                   .b = {.buf = b, .ld = s->ldb, .stride = s->sb, .trans = s->tb},
                   .c = {.buf = c, .ld = s->ldc, .stride = s->sc}, .beta = s->beta,
                   .bias = s->bias ? bias : NULL, .bias_rows = s->bias == 2, .act = s->gelu ? GMLP_ACT_GELU : 0};
    return backend ? gmlp_op_gemm_clblast(ctx, &g) : gmlp_op_gemm(ctx, &g);
}
static const char *backends[] = {"now-default", "CLBlast"};
#endif

int main(void)
{
    const size_t R = 1568; /* 8 images x 196 tokens */
    const shape shapes[] = {
        {"stem 1568x128x768 NT +bias", R, 128, 768, 1, 768, 768, 128, 0, 0, 0, 1, 0.0f, 1, 0},
        {"fc1 1568x768x128 NT +bias+GELU", R, 768, 128, 1, 128, 128, 768, 0, 0, 0, 1, 0.0f, 1, 1},
        {"spatial 8x(196x384x196) NN +bias rows", 196, 384, 196, 8, 196, 384, 768, 0, 196 * 384, 196 * 768, 0, 0.0f, 2, 0},
        {"fc2 1568x128x384 NT beta1 +bias", R, 128, 384, 1, 768, 384, 128, 0, 0, 0, 1, 1.0f, 1, 0},
        {"head 8x1000x128 NT +bias", 8, 1000, 128, 1, 128, 128, 1000, 0, 0, 0, 1, 0.0f, 1, 0},
        {"SGEMM 1024^3 NN", 1024, 1024, 1024, 1, 1024, 1024, 1024, 0, 0, 0, 0, 0.0f, 0, 0},
    };
    ctx = check_context();
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        const shape *s = &shapes[i];
        size_t na = s->m * s->lda + (s->batch - 1) * s->sa, nb = (s->tb ? s->n : s->k) * s->ldb + (s->batch - 1) * s->sb;
        size_t nc = s->m * s->ldc + (s->batch - 1) * s->sc;
        float *ha = rnd(na), *hb = rnd(nb), *hc = rnd(nc), *hbias = rnd(1024);
        cl_mem a = up(ha, na), b = up(hb, nb), c = up(hc, nc), bias = up(hbias, 1024);
        for (size_t be = 0; be < sizeof backends / sizeof *backends; be++) {
            double t[9];
            for (int w = 0; w < 2; w++)
                CHECK(call((int)be, s, a, b, c, bias) == GMLP_OK, "%s", gmlp_last_error(ctx));
            clFinish(ctx->queue);
            for (int r = 0; r < 9; r++) {
                double t0 = bench_now();
                for (int q = 0; q < 10; q++)
                    call((int)be, s, a, b, c, bias);
                clFinish(ctx->queue);
                t[r] = (bench_now() - t0) / 10 * 1e6;
            }
            const double us = bench_median(t, 9, NULL), flops = 2.0 * s->m * s->n * s->k * s->batch;
            printf("%-40s %-15s %10.1f us  %6.1f GFLOP/s\n", s->name, backends[be], us, flops / us * 1e-3);
        }
        gmlp_buffer_release(ctx, &a), gmlp_buffer_release(ctx, &b), gmlp_buffer_release(ctx, &c),
            gmlp_buffer_release(ctx, &bias);
        free(ha), free(hb), free(hc), free(hbias);
    }
    gmlp_context_destroy(ctx);
    return 0;
}
