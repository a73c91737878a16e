#!/usr/bin/env python3
"""The rational erf of GELU in cl_kernels/common.cl: erf(x) ~ x P(x^2) / Q(x^2)
on [-4, 4] (past it erf is +-1 in float), P of degree 6 and Q of degree 4 in
x^2, Q(0) = 1.  Fitted in float64 for the least maximum absolute error on a
Chebyshev grid: linearised least squares, each pass weighted by the last
pass's Q (Sanathanan and Koerner) and by its errors (Lawson), then the
coefficients rounded to float and the function evaluated in float32 as the
kernel does.  Prints the coefficients and both errors.
    python3 tools/erf_fit.py        (numpy; the tools venv has it)"""
import math

import numpy as np

CLAMP, NP, NQ = 4.0, 6, 4
erf = np.vectorize(math.erf)


def fit(passes=100):
    x = CLAMP * (0.5 + 0.5 * np.cos(np.linspace(0.0, math.pi, 6000)))
    y, s = erf(x), x * x
    w, q_prev = np.ones_like(x), np.ones_like(x)
    for _ in range(passes):
        # x P(s) - y (Q(s) - 1) = y: linear in p_0..p_NP, q_1..q_NQ
        a = np.hstack([x[:, None] * s[:, None] ** np.arange(NP + 1), -y[:, None] * s[:, None] ** np.arange(1, NQ + 1)])
        scale = np.sqrt(w) / q_prev
        sol = np.linalg.lstsq(a * scale[:, None], y * scale, rcond=None)[0]
        p, q = sol[: NP + 1], np.concatenate([[1.0], sol[NP + 1 :]])
        q_prev = np.polyval(q[::-1], s)
        err = x * np.polyval(p[::-1], s) / q_prev - y
        w = w * np.abs(err)
        w /= w.sum()
    return p, q, np.abs(err).max()


def erf32(p, q, x):
    """As the kernel: float32 throughout, Horner in x^2, erf clamped to [-1, 1]."""
    f = np.float32
    xc = np.clip(x, f(-CLAMP), f(CLAMP))
    s = xc * xc
    num, den = f(p[-1]), f(q[-1])
    for c in p[-2::-1]:
        num = num * s + f(c)
    for c in q[-2::-1]:
        den = den * s + f(c)
    return np.clip(xc * num / den, f(-1), f(1))


def main():
    p, q, err64 = fit()
    print("P:", ", ".join("%.9e" % np.float32(c) for c in p))
    print("Q:", ", ".join("%.9e" % np.float32(c) for c in q))
    x = np.linspace(-8.0, 8.0, 2000001).astype(np.float32)
    d = np.abs(erf32(p, q, x) - erf(x.astype(np.float64)))
    v = np.linspace(-12.0, 12.0, 2400001).astype(np.float32)
    vd = v.astype(np.float64)
    gelu = np.float32(0.5) * v * (np.float32(1) + erf32(p, q, v * np.float32(0.70710678118654752)))
    g = np.abs(gelu - 0.5 * vd * (1.0 + erf(vd / math.sqrt(2.0)))) / np.maximum(np.abs(vd), 1.0)
    print("erf: %.2e off in float64, %.2e in float32 (at x = %g)" % (err64, d.max(), x[d.argmax()]))
    print("GELU in float32: %.2e max(|v|, 1) off float64 (at v = %g)" % (g.max(), v[g.argmax()]))


if __name__ == "__main__":
    main()
