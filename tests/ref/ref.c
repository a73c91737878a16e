#include "ref.h"

#include <math.h>

void ref_layernorm(const float *x, int x_off, int x_stride, float *y, int y_off, int y_stride, const float *gamma,
                   const float *beta, int rows, int cols, float eps)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + x_off + (size_t)r * x_stride;
        float *yr = y + y_off + (size_t)r * y_stride;
        double mean = 0, var = 0;
        for (int c = 0; c < cols; c++)
            mean += xr[c];
        mean /= cols;
        for (int c = 0; c < cols; c++)
            var += (xr[c] - mean) * (xr[c] - mean);
        var /= cols;
        double rstd = 1.0 / sqrt(var + eps);
        for (int c = 0; c < cols; c++)
            yr[c] = (float)((xr[c] - mean) * rstd * gamma[c] + beta[c]);
    }
}

void ref_affine(const float *x, size_t ldx, float *y, size_t ldy, const float *alpha, const float *beta, int rows,
                int cols)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            y[(size_t)r * ldy + c] = (float)((double)x[(size_t)r * ldx + c] * alpha[c] + beta[c]);
}

static double activation(double v, int kind)
{
    return kind == 1   ? tanh(v)
           : kind == 2 ? 1.0 / (1.0 + exp(-v))
           : kind == 3 ? 0.5 * v * (1.0 + erf(v / sqrt(2.0)))
           : kind == 4 ? v / (1.0 + exp(-v))
           : kind == 5 ? (v < 0.0 ? 0.0 : v)
                       : v;
}

void ref_epilogue(float *c, size_t m, size_t n, size_t ldc, size_t sc, size_t batch, const ref_epi *e)
{
    for (size_t p = 0; p < batch; p++)
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                size_t at = p * sc + i * ldc + j;
                double v = activation(c[at] + (e->bias ? e->bias[e->bias_rows ? i : j] : 0.0), e->act);
                c[at] = (float)(e->gate ? v * e->gate[p * e->sg + i * e->ldg + j] : v);
            }
}

void ref_embed(const int *tokens, const float *table, float *x, int rows, int dim)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < dim; c++)
            x[(size_t)r * dim + c] = table[(size_t)tokens[r] * dim + c];
}

void ref_shift_tokens(const float *hist, int hist_rows, int p0, int m, float *out, int rows, int dim, int segments,
                      int first)
{
    int seg_w = dim / segments;
    for (int r = 0; r < rows; r++) {
        int b = r / m, i = p0 + r % m;
        for (int c = 0; c < dim; c++) {
            int src = c / seg_w < segments ? i - (first + c / seg_w) : i;
            out[(size_t)r * dim + c] = src >= 0 && src < p0 + m ? hist[((size_t)b * hist_rows + src) * dim + c] : 0.0f;
        }
    }
}

void ref_softmax_rows(float *sim, int rows, int ld, int len, int p0, int m, int causal, float scale)
{
    for (int r = 0; r < rows; r++) {
        float *row = sim + (size_t)r * ld;
        int last = causal ? p0 + r % m : len - 1;
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j <= last; j++)
            mx = fmax(mx, (double)row[j] * scale);
        for (int j = 0; j <= last; j++)
            sum += exp((double)row[j] * scale - mx);
        for (int j = 0; j < len; j++)
            row[j] = j <= last ? (float)(exp((double)row[j] * scale - mx) / sum) : 0.0f;
    }
}

void ref_patchify(const float *img, float *out, int batch, int chans, int height, int width, int ph, int pw)
{
    int gh = height / ph, gw = width / pw, k = chans * ph * pw;
    for (int b = 0; b < batch; b++)
        for (int ty = 0; ty < gh; ty++)
            for (int tx = 0; tx < gw; tx++) {
                float *row = out + ((size_t)b * gh * gw + (size_t)ty * gw + tx) * k;
                for (int c = 0; c < chans; c++)
                    for (int ky = 0; ky < ph; ky++)
                        for (int kx = 0; kx < pw; kx++)
                            *row++ = img[(((size_t)b * chans + c) * height + ty * ph + ky) * width + tx * pw + kx];
            }
}

void ref_mean_tokens(const float *x, float *out, int batch, int ntok, int dim)
{
    for (int b = 0; b < batch; b++)
        for (int c = 0; c < dim; c++) {
            double s = 0;
            for (int t = 0; t < ntok; t++)
                s += x[((size_t)b * ntok + t) * dim + c];
            out[(size_t)b * dim + c] = (float)(s / ntok);
        }
}

double ref_round_operand(double x, int prec)
{
    if (prec == REF_FP32 || isnan(x))
        return x;
    const int bits = prec == REF_BF16 ? 7 : 10, lowest = prec == REF_FP16 ? -14 : -126; /* smallest normal 2^lowest */
    if (prec == REF_FP16)
        x = fmin(fmax(x, -65504.0), 65504.0);
    else if (isinf(x))
        return x;
    int e;
    frexp(x, &e); /* x = f 2^e, 1/2 <= |f| < 1: the leading bit is 2^(e-1) */
    const double ulp = ldexp(1.0, (e - 1 > lowest ? e - 1 : lowest) - bits);
    const double r = nearbyint(x / ulp) * ulp; /* exact scalings; the default rounding: to nearest, ties to even */
    return prec != REF_FP16 && fabs(r) >= 0x1p128 ? copysign(INFINITY, r) : r;
}

void ref_gemm(size_t m, size_t n, size_t k, const float *a, size_t lda, size_t sa, int ta, const float *b, size_t ldb,
              size_t sb, int tb, float beta, float *c, size_t ldc, size_t sc, size_t batch)
{
    ref_gemm_prec(m, n, k, a, lda, sa, ta, b, ldb, sb, tb, beta, c, ldc, sc, batch, REF_FP32);
}

void ref_gemm_prec(size_t m, size_t n, size_t k, const float *a, size_t lda, size_t sa, int ta, const float *b,
                   size_t ldb, size_t sb, int tb, float beta, float *c, size_t ldc, size_t sc, size_t batch, int prec)
{
    for (size_t p = 0; p < batch; p++)
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                double s = 0;
                for (size_t q = 0; q < k; q++) {
                    double av = ref_round_operand(ta ? a[p * sa + q * lda + i] : a[p * sa + i * lda + q], prec);
                    double bv = ref_round_operand(tb ? b[p * sb + j * ldb + q] : b[p * sb + q * ldb + j], prec);
                    s += av * bv;
                }
                float *cv = &c[p * sc + i * ldc + j];
                *cv = (float)(s + (beta != 0.0f ? (double)beta * *cv : 0.0));
            }
}

/* LN(x[0 .. n)) in double into y. */
static void layernorm_row(const float *x, int n, const float *gamma, const float *beta, float eps, double *y)
{
    double mean = 0, var = 0;
    for (int c = 0; c < n; c++)
        mean += x[c];
    mean /= n;
    for (int c = 0; c < n; c++)
        var += (x[c] - mean) * (x[c] - mean);
    const double rstd = 1.0 / sqrt(var / n + eps);
    for (int c = 0; c < n; c++)
        y[c] = (x[c] - mean) * rstd * gamma[c] + beta[c];
}

void ref_lm_step_in(int pos, int seq_len, const float *x, const float *gamma, const float *beta, int d, float eps,
                    float *hist, int segments, const float *w, const float *bias, int n_out, int act, float *out,
                    int rows, double *ys)
{
    const int seg = segments > 0 ? d / segments : d;
    for (int b = 0; b < rows; b++) {
        float *hb = hist ? hist + (size_t)b * seq_len * d : NULL;
        layernorm_row(x + (size_t)b * d, d, gamma, beta, eps, ys);
        for (int c = 0; c < d && segments > 0; c++) {
            hb[(size_t)pos * d + c] = (float)ys[c];
            const int s = c / seg;
            if (s > 0 && s < segments)
                ys[c] = pos - s >= 0 ? hb[(size_t)(pos - s) * d + c] : 0.0;
        }
        for (int j = 0; j < n_out; j++) {
            double acc = bias ? bias[j] : 0.0;
            for (int c = 0; c < d; c++)
                acc += ys[c] * w[(size_t)j * d + c];
            out[(size_t)b * n_out + j] = (float)activation(acc, act);
        }
    }
}

void ref_lm_step_sgu(int pos, int seq_len, const float *z, int h, const float *gamma, const float *beta, float eps,
                     float *hist, const float *w, const float *bias, int heads, int act, float *out, int rows,
                     double *lnv)
{
    const int g = h / 2, hw = g / heads;
    for (int b = 0; b < rows; b++) {
        const float *zb = z + (size_t)b * h;
        float *hb = hist + (size_t)b * seq_len * g;
        layernorm_row(zb + g, g, gamma, beta, eps, lnv);
        for (int c = 0; c < g; c++)
            hb[(size_t)pos * g + c] = (float)lnv[c];
        for (int c = 0; c < g; c++) {
            const int hd = c / hw;
            const float *wr = w + ((size_t)hd * seq_len + pos) * seq_len;
            double acc = (bias ? bias[(size_t)hd * seq_len + pos] : 0.0) + wr[pos] * lnv[c];
            for (int j = 0; j < pos; j++)
                acc += (double)wr[j] * hb[(size_t)j * g + c];
            out[(size_t)b * g + c] = (float)(activation(acc, act) * zb[c]);
        }
    }
}

void ref_lm_step_out(const float *v, int k, const float *w, const float *bias, int n, float *x, int rows)
{
    for (int b = 0; b < rows; b++)
        for (int j = 0; j < n; j++) {
            double acc = (double)x[(size_t)b * n + j] + (bias ? bias[j] : 0.0);
            for (int c = 0; c < k; c++)
                acc += (double)v[(size_t)b * k + c] * w[(size_t)j * k + c];
            x[(size_t)b * n + j] = (float)acc;
        }
}
