/* The fused decoding step of a causal gMLP language model: one new token per
 * sequence (work-group row b of the range), at the position step[0] read
 * from device memory, so that one recording replays for every position.
 * Three kernels per layer:
 *   gmlp_lm_step_in   LayerNorm, token shift (the history written), proj_in, GELU
 *   gmlp_lm_step_sgu  LayerNorm of the gate half (into its history), the new
 *                     row of the causal spatial product, bias, gate
 *   gmlp_lm_step_out  proj_out and the residual
 * and gmlp_lm_step_in again for to_logits (no shift, no activation).  Each
 * work-item makes one output and normalises the row it reads itself (two
 * passes, as layernorm.cl): no barriers, which CPUs run as loops over the
 * work-group (4x slower here), and no local memory. */

/* a[0 .. n) . b[0 .. n), eight lanes at a time (the vector loop CPUs run
 * well), then the rest. */
static float step_dot(__global const float *a, __global const float *b, int n)
{
    float8 s8 = 0.0f;
    int c = 0;
    for (; c + 8 <= n; c += 8)
        s8 += vload8(0, a + c) * vload8(0, b + c);
    float4 s4 = s8.lo + s8.hi;
    float s = (s4.x + s4.y) + (s4.z + s4.w);
    for (; c < n; c++)
        s += a[c] * b[c];
    return s;
}

/* The mean and 1 / sqrt(variance + eps) of x[0 .. n), two passes as
 * layernorm.cl; each work-item its own (no barriers: CPUs run those as loops). */
static float2 step_stats(__global const float *x, int n, float eps)
{
    float8 s8 = 0.0f;
    int c = 0;
    for (; c + 8 <= n; c += 8)
        s8 += vload8(0, x + c);
    float4 s4 = s8.lo + s8.hi;
    float s = (s4.x + s4.y) + (s4.z + s4.w);
    for (; c < n; c++)
        s += x[c];
    const float mean = s / (float)n;
    float8 v8 = 0.0f;
    for (c = 0; c + 8 <= n; c += 8) {
        float8 d = vload8(0, x + c) - mean;
        v8 += d * d;
    }
    float4 v4 = v8.lo + v8.hi;
    float v = (v4.x + v4.y) + (v4.z + v4.w);
    for (; c < n; c++) {
        float d = x[c] - mean;
        v += d * d;
    }
    return (float2)(mean, 1.0f / sqrt(v / (float)n + eps));
}

/* sum over c in [from, to) of LN(x)[c] w[c], LN(x) = (x - mean) rstd gamma + beta */
static float step_dot_ln(__global const float *x, float2 st, __global const float *gamma, __global const float *beta,
                         __global const float *w, int from, int to)
{
    float8 s8 = 0.0f;
    int c = from;
    for (; c + 8 <= to; c += 8)
        s8 += ((vload8(0, x + c) - st.x) * st.y * vload8(0, gamma + c) + vload8(0, beta + c)) * vload8(0, w + c);
    float4 s4 = s8.lo + s8.hi;
    float s = (s4.x + s4.y) + (s4.z + s4.w);
    for (; c < to; c++)
        s += ((x[c] - st.x) * st.y * gamma[c] + beta[c]) * w[c];
    return s;
}

/* out[b, j] = act(ys . W[j, :] + bias[j]) for j < n_out, where ys is
 * LN(x[b, :]) (d values) token-shifted: with segments > 0 the normalised row
 * goes into hist (seq_len x d per sequence) at position pos, and channel
 * segment s in 1 .. segments-1 (d / segments wide) takes position pos - s
 * from hist (zero before 0); segments 0: no shift.  A work-item per output,
 * each normalising the row itself. */
__kernel void gmlp_lm_step_in(__global const int *step, int seq_len, __global const float *x,
                              __global const float *gamma, __global const float *beta, int d, float eps,
                              __global float *hist, int segments, __global const float *w, __global const float *bias,
                              int n_out, int act, __global float *out)
{
    const int j = get_global_id(0), pos = step[0];
    const size_t b = get_global_id(1);
    if (j >= n_out)
        return;
    __global const float *xr = x + b * d, *wr = w + (size_t)j * d;
    const float2 st = step_stats(xr, d, eps);
    float acc;
    if (segments > 0) {
        __global float *hb = hist + b * seq_len * d;
        const int seg = d / segments;
        if (j == 0)
            for (int c = 0; c < d; c++)
                hb[(size_t)pos * d + c] = (xr[c] - st.x) * st.y * gamma[c] + beta[c];
        /* segment 0 and the channels past the last segment: this position */
        acc = step_dot_ln(xr, st, gamma, beta, wr, 0, seg) + step_dot_ln(xr, st, gamma, beta, wr, segments * seg, d);
        for (int s = 1; s < segments; s++)
            if (pos - s >= 0)
                acc += step_dot(hb + (size_t)(pos - s) * d + s * seg, wr + s * seg, seg);
    } else {
        acc = step_dot_ln(xr, st, gamma, beta, wr, 0, d);
    }
    out[b * n_out + j] = gmlp_act(bias ? acc + bias[j] : acc, act);
}

/* The spatial gating unit's new row, z[b, :] = [u | v] (h values, g = h/2):
 * LN(v) goes into hist (seq_len x g per sequence) at position pos, and
 *   out[b, c] = act(sum_{j <= pos} W_hd[pos, j] hist[j, c] + b_sgu[hd, pos]) * u[c]
 * for channel c of head hd = c / (g / heads); W: heads x seq_len x seq_len,
 * the causal mask built in.  A work-item per channel. */
__kernel void gmlp_lm_step_sgu(__global const int *step, int seq_len, __global const float *z, int h,
                               __global const float *gamma, __global const float *beta, float eps,
                               __global float *hist, __global const float *w, __global const float *bias, int heads,
                               int act, __global float *out)
{
    const int g = h / 2, pos = step[0], c = get_global_id(0);
    const size_t b = get_global_id(1);
    if (c >= g)
        return;
    __global const float *zb = z + b * h, *v = zb + g;
    const float2 st = step_stats(v, g, eps);
    __global float *hb = hist + b * seq_len * g;
    const float lnv = (v[c] - st.x) * st.y * gamma[c] + beta[c];
    hb[(size_t)pos * g + c] = lnv;
    const int hd = c / (g / heads);
    __global const float *wr = w + ((size_t)hd * seq_len + pos) * seq_len;
    float acc = 0.0f;
    for (int j = 0; j < pos; j++)
        acc += wr[j] * hb[(size_t)j * g + c];
    acc += wr[pos] * lnv;
    if (bias)
        acc += bias[hd * seq_len + pos];
    out[b * g + c] = gmlp_act(acc, act) * zb[c];
}

/* x[b, j] += v[b, :] . W[j, :] + bias[j] (k inputs, n outputs): proj_out
 * with the residual. */
__kernel void gmlp_lm_step_out(__global const float *v, int k, __global const float *w, __global const float *bias,
                               int n, __global float *x)
{
    const int j = get_global_id(0);
    const size_t b = get_global_id(1);
    if (j >= n)
        return;
    float acc = step_dot(v + b * k, w + (size_t)j * k, k);
    acc += x[b * n + j];
    x[b * n + j] = bias ? acc + bias[j] : acc;
}
