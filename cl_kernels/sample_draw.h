/* The draw of token sampling, shared by the host sampler (lib/sample) and
 * the device's (sample.cl): valid C and OpenCL C (with cl_khr_fp64), so
 * that both give the same token and generator state bit for bit.  Only
 * + - * / in double, no libm (an exp of its own: range reduction and a
 * polynomial), and no contraction into FMAs (the kernel's FP_CONTRACT OFF;
 * gcc with -std=c11 does not contract, clang is told below).  Candidates
 * come sorted by logit, descending, ties to the lower id: the order of
 * their weights (exp is monotonic), but for weights that underflow to 0,
 * which add nothing and which the walk never reaches. */
#ifndef GMLP_SAMPLE_DRAW_H
#define GMLP_SAMPLE_DRAW_H

#if defined(__OPENCL_C_VERSION__) || defined(__OPENCL_VERSION__)
typedef ulong gmlp_u64;
#define GMLP_U64(x) x##ul
#else
#include <stdint.h>
typedef uint64_t gmlp_u64;
#define GMLP_U64(x) UINT64_C(x)
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
#endif

/* Where the candidates live: __local in the kernel, nothing on the host. */
#ifndef GMLP_SAMPLE_SPACE
#define GMLP_SAMPLE_SPACE
#endif

/* splitmix64: a full-period 64-bit stream from any seed; the state advances
 * by GMLP_SAMPLE_GOLDEN a draw. */
#define GMLP_SAMPLE_GOLDEN GMLP_U64(0x9E3779B97F4A7C15)
static gmlp_u64 gmlp_sample_next(gmlp_u64 *s)
{
    gmlp_u64 z = (*s += GMLP_SAMPLE_GOLDEN);
    z = (z ^ (z >> 30)) * GMLP_U64(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * GMLP_U64(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* 2^-m for 0 <= m <= 540: a product of exact powers of two, all normal. */
static double gmlp_sample_pow2neg(int m)
{
    double r = 1, b = 0.5;
    for (; m; m >>= 1, b *= b)
        if (m & 1)
            r *= b;
    return r;
}

/* exp(x) for x <= 0 within an ulp or two of libm's: x = k ln2 + r (ln2 in
 * two parts, Cody and Waite), e^r by Taylor's series to r^13 / 13! in
 * Horner form (|r| <= ln2 / 2: truncation below 1e-17), times 2^k in two
 * exact halves (one rounding where the result is subnormal). */
static double gmlp_sample_exp(double x)
{
    if (!(x > -746.0))
        return 0; /* below the least subnormal; -inf too */
    const int k = -(int)(-x * 1.44269504088896338700e+00 + 0.5);
    const double r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
    double p = 1;
    for (int n = 13; n >= 1; n--)
        p = 1 + r / n * p;
    const int m1 = -k / 2, m2 = -k - m1;
    return p * gmlp_sample_pow2neg(m1) * gmlp_sample_pow2neg(m2);
}

/* A candidate's unnormalised weight under temperature t > 0, mx the maximum. */
static double gmlp_sample_weight(float logit, double mx, double t)
{
    return gmlp_sample_exp(((double)logit - mx) / t);
}

/* The token among n >= 1 candidates (logits l descending, ids id), as
 * Hugging Face orders the filters: top-p over the n kept by top-k, then a
 * draw of 53 bits from *rng scaled to the mass kept, and the walk. */
static int gmlp_sample_pick(const GMLP_SAMPLE_SPACE float *l, const GMLP_SAMPLE_SPACE int *id, int n, double t,
                            double top_p, gmlp_u64 *rng)
{
    const double mx = l[0];
    double kept = 0;
    for (int i = 0; i < n; i++)
        kept += gmlp_sample_weight(l[i], mx, t);
    int keep = n;
    if (top_p < 1) {
        double cum = 0;
        int i = 0;
        while (i < keep && cum < top_p * kept)
            cum += gmlp_sample_weight(l[i++], mx, t);
        keep = i > 0 ? i : 1;
        kept = cum > 0 ? cum : gmlp_sample_weight(l[0], mx, t);
    }
    const double u = (double)(gmlp_sample_next(rng) >> 11) * (1.0 / 9007199254740992.0) * kept;
    double cum = 0;
    int i = 0;
    while (i < keep - 1 && (cum += gmlp_sample_weight(l[i], mx, t)) <= u)
        i++;
    return id[i];
}

#endif
