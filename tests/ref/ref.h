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
/* The precision modes' formats (cl_kernels/kernel_abi.h's GMLP_GEMM_PREC_*). */
enum { REF_FP32, REF_TF32, REF_FP16, REF_BF16 };
/* x rounded to prec's format, round to nearest even, in double from the
 * spec (README "Precision"), not from the kernels' bit manipulation: TF32 10
 * mantissa bits and BF16 7, both with fp32's exponent range (fp32's
 * subnormal grid below 2^-126; infinity past the largest); FP16 10 bits,
 * saturated at +-65504 (infinities too), multiples of 2^-24 below 2^-14;
 * NaN stays NaN; FP32 unchanged. */
double ref_round_operand(double x, int prec);
/* ref_gemm with both operands of every product rounded to prec's format
 * first (the precision modes; REF_FP32: ref_gemm). */
void ref_gemm_prec(size_t m, size_t n, size_t k, const float *a, size_t lda, size_t sa, int ta, const float *b,
                   size_t ldb, size_t sb, int tb, float beta, float *c, size_t ldc, size_t sc, size_t batch, int prec);
/* The GEMM epilogue in place on C (m x n, ld, stride, batch), as the kernels' gmlp_epilogue:
 * v = act(v + bias[j] (bias[i] with bias_rows)) * gate[i, j] (gate ldg, sg apart); bias and gate may be NULL;
 * act: 0 identity, 1 tanh, 2 sigmoid, 3 GELU (erf), 4 SiLU, 5 ReLU. */
typedef struct ref_epi {
    const float *bias;
    int bias_rows, act;
    const float *gate;
    size_t ldg, sg;
} ref_epi;
void ref_epilogue(float *c, size_t m, size_t n, size_t ldc, size_t sc, size_t batch, const ref_epi *e);

/* The fused decoding step (cl_kernels/lm_step.cl), one new token per row
 * (rows sequences) at position pos; act as ref_epilogue's.
 * ref_lm_step_in: out[b, :] (n_out) = act(ys . W^T + bias), ys = LN(x[b, :])
 * (d values) token-shifted: segments > 0 writes LN(x) into hist (seq_len x d
 * per sequence) at pos, and channel c of segment s = c / (d / segments) in
 * 1 .. segments-1 takes hist[pos - s, c] (0 before position 0); ys: d
 * doubles of scratch.
 * ref_lm_step_sgu: z[b, :] = [u | v] (h values, g = h/2): LN(v) into hist
 * (seq_len x g per sequence) at pos, out[b, c] = act(W_hd[pos, 0 .. pos] .
 * hist[0 .. pos, c] + bias[hd, pos]) * u[c], hd = c / (g / heads), W heads x
 * seq_len x seq_len; lnv: g doubles of scratch.
 * ref_lm_step_out: x[b, :] (n) += v[b, :] (k) . W^T + bias.
 * bias NULL: none. */
void ref_lm_step_in(int pos, int seq_len, const float *x, const float *gamma, const float *beta, int d, float eps,
                    float *hist, int segments, const float *w, const float *bias, int n_out, int act, float *out,
                    int rows, double *ys);
void ref_lm_step_sgu(int pos, int seq_len, const float *z, int h, const float *gamma, const float *beta, float eps,
                     float *hist, const float *w, const float *bias, int heads, int act, float *out, int rows,
                     double *lnv);
void ref_lm_step_out(const float *v, int k, const float *w, const float *bias, int n, float *x, int rows);

#endif
