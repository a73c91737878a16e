/* Plain-C references for every kernel, accumulating in double. */
#ifndef GMLP_REF_H
#define GMLP_REF_H

#include <stddef.h>

void ref_layernorm(const float *x, int x_off, int x_stride, float *y, int y_off, int y_stride, const float *gamma,
                   const float *beta, int rows, int cols, float eps);
/* y rows (ldy apart) = x rows (ldx apart) * alpha + beta per column. */
void ref_affine(const float *x, size_t ldx, float *y, size_t ldy, const float *alpha, const float *beta, int rows,
                int cols);
void ref_embed(const int *tokens, const float *table, float *x, int rows, int dim);
/* out rows = m positions p0.. of each sequence, hist: hist_rows per sequence. */
void ref_shift_tokens(const float *hist, int hist_rows, int p0, int m, float *out, int rows, int dim, int segments,
                      int first);
void ref_softmax_rows(float *sim, int rows, int ld, int len, int p0, int m, int causal, float scale);
void ref_patchify(const float *img, float *out, int batch, int chans, int height, int width, int ph, int pw);
void ref_mean_tokens(const float *x, float *out, int batch, int ntok, int dim);
/* Row-major C[i] = op(A[i]) . op(B[i]) + beta C[i]. */
void ref_gemm(size_t m, size_t n, size_t k, const float *a, size_t lda, size_t sa, int ta, const float *b, size_t ldb,
              size_t sb, int tb, float beta, float *c, size_t ldc, size_t sc, size_t batch);
/* The GEMM epilogue in place on C (m x n, ld, stride, batch), as the kernels' gmlp_epilogue:
 * v = act(v + bias[j] (bias[i] with bias_rows)) * gate[i, j] (gate ldg, sg apart); bias and gate may be NULL;
 * act: 0 identity, 1 tanh, 2 sigmoid, 3 GELU (erf), 4 SiLU. */
typedef struct ref_epi {
    const float *bias;
    int bias_rows, act;
    const float *gate;
    size_t ldg, sg;
} ref_epi;
void ref_epilogue(float *c, size_t m, size_t n, size_t ldc, size_t sc, size_t batch, const ref_epi *e);

#endif
