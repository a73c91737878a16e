/* The fused decoding step of a causal gMLP language model: one new token per
 * sequence (row b of the range), at the position step[0] read from device
 * memory, so that one recording replays for every position.  Three kernels
 * per layer:
 *   gmlp_lm_step_in   LayerNorm, token shift (the history written), proj_in, GELU
 *   gmlp_lm_step_sgu  LayerNorm of the gate half (into its history), the new
 *                     row of the causal spatial product, bias, gate
 *   gmlp_lm_step_out  proj_out and the residual
 * and gmlp_lm_step_in again for to_logits (no shift, no activation).
 * Each work-group normalises its row once: work-item 0 computes the mean and
 * 1/sqrt(variance + eps) (two passes, as layernorm.cl) into local memory,
 * one barrier, and the normalised row is shared through local memory.  Two
 * barriers at most a kernel: a CPU runs the code between barriers as a loop
 * over the work-group, which costs nothing here, while a reduction tree's
 * many barriers would (the first version of this file: 800 tokens/s). */

static float step_sum8(float8 s8)
{
    float4 s4 = s8.lo + s8.hi;
    return (s4.x + s4.y) + (s4.z + s4.w);
}

/* a[0 .. n) . W[o, 0 .. n) for the four rows o of W from w (rows ld apart),
 * of which `rows` exist (past them the last is read again): eight lanes at a
 * time, an accumulator a row (four chains a CPU runs side by side, a's
 * lanes loaded once for them), then the rest. */
#define STEP_DOT4(NAME, AS)                                                                                       \
    static float4 NAME(AS const float *a, __global const float *w, size_t ld, int rows, int n)                    \
    {                                                                                                             \
        __global const float *w0 = w, *w1 = w + min(1, rows - 1) * ld, *w2 = w + min(2, rows - 1) * ld,          \
                             *w3 = w + min(3, rows - 1) * ld;                                                     \
        float8 s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;                                                        \
        int c = 0;                                                                                                \
        for (; c + 8 <= n; c += 8) {                                                                              \
            const float8 a8 = vload8(0, a + c);                                                                   \
            s0 += a8 * vload8(0, w0 + c);                                                                         \
            s1 += a8 * vload8(0, w1 + c);                                                                         \
            s2 += a8 * vload8(0, w2 + c);                                                                         \
            s3 += a8 * vload8(0, w3 + c);                                                                         \
        }                                                                                                         \
        float4 s = (float4)(step_sum8(s0), step_sum8(s1), step_sum8(s2), step_sum8(s3));                          \
        for (; c < n; c++)                                                                                        \
            s += a[c] * (float4)(w0[c], w1[c], w2[c], w3[c]);                                                     \
        return s;                                                                                                 \
    }
STEP_DOT4(step_dot4, __global)
STEP_DOT4(step_dot4_local, __local)
GMLP_GELU_DEFINE(step_gelu4, float4)
GMLP_ACT_DEFINE(step_act4, float4, step_gelu4)
GMLP_GELU_DEFINE(step_gelu8, float8)
GMLP_ACT_DEFINE(step_act8, float8, step_gelu8)

/* The first row of W this work-item's four dot products read: its first
 * output's, but for the last work-item where n is no multiple of four the
 * last four rows within n (its outputs made twice, stored once). */
static int step_first_out(int n)
{
    const int j0 = get_global_id(0) * 4;
    return j0 + 4 <= n ? j0 : max(n - 4, 0);
}

/* bias[r0 + o] for the four outputs (the last again past n), or 0. */
static float4 step_bias4(__global const float *bias, int r0, int n)
{
    if (!bias)
        return 0.0f;
    return (float4)(bias[r0], bias[r0 + min(1, n - r0 - 1)], bias[r0 + min(2, n - r0 - 1)],
                    bias[r0 + min(3, n - r0 - 1)]);
}

/* out[r0 + o] = lane o of v for the outputs o from j0 - r0 within n (lanes
 * picked by selects: an array indexed by o would live on a GPU's stack). */
static void step_store4(__global float *out, float4 v, int j0, int r0, int n)
{
    for (int o = j0 - r0; o < 4 && r0 + o < n; o++)
        out[r0 + o] = o == 0 ? v.x : o == 1 ? v.y : o == 2 ? v.z : v.w;
}

/* The mean and 1 / sqrt(variance + eps) of x[0 .. n), two passes as
 * layernorm.cl. */
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

/* out[b, j] = act(ys . W[j, :] + bias[j]) for j < n_out, where ys is
 * LN(x[b, :]) (d values) token-shifted: with segments > 0 the normalised row
 * goes into hist (seq_len x d per sequence) at position pos (by work-group
 * 0), and channel segment s in 1 .. segments-1 (d / segments wide) takes
 * position pos - s from hist (zero before 0); channels of segment 0 and past
 * the last segment take this position; segments 0: no shift.  With embed
 * (the first layer) x is not read: its row is embed's row of the token
 * step[1 + b], which work-group 0 writes into x for the residual.  A
 * work-item per four outputs; ys once per work-group, in local memory. */
__kernel void gmlp_lm_step_in(__global const int *step, int seq_len, __global const float *embed,
                              __global float *x, __global const float *gamma, __global const float *beta, int d,
                              float eps, __global float *hist, int segments, __global const float *w,
                              __global const float *bias, int n_out, int act, __global float *out)
{
    __local float st[2]; /* mean, rstd: scalars (a float2 in local memory is a vector access there) */
    __local float ys[GMLP_LM_STEP_MAX];
    const int lid = get_local_id(0), wg = get_local_size(0), pos = step[0];
    const size_t b = get_global_id(1);
    __global const float *xr = embed ? embed + (size_t)step[1 + b] * d : x + b * d;
    if (lid == 0) {
        const float2 m = step_stats(xr, d, eps);
        st[0] = m.x, st[1] = m.y;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const float mean = st[0], rstd = st[1];
    __global float *hb = segments > 0 ? hist + b * seq_len * d : hist; /* to_logits: no history */
    const int seg = segments > 0 ? d / segments : d, first = get_group_id(0) == 0, writer = segments > 0 && first;
    for (int c = lid; c < d; c += wg) {
        if (embed && first)
            x[b * d + c] = xr[c];
        float y = (xr[c] - mean) * rstd * gamma[c] + beta[c];
        if (writer)
            hb[(size_t)pos * d + c] = y;
        const int s = c / seg;
        if (segments > 0 && s > 0 && s < segments)
            y = pos - s >= 0 ? hb[(size_t)(pos - s) * d + c] : 0.0f;
        ys[c] = y;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int j0 = get_global_id(0) * 4;
    if (j0 >= n_out)
        return;
    const int r0 = step_first_out(n_out);
    const float4 acc = step_dot4_local(ys, w + (size_t)r0 * d, (size_t)d, n_out - r0, d);
    step_store4(out + b * n_out, step_act4(acc + step_bias4(bias, r0, n_out), act), j0, r0, n_out);
}

/* The spatial gating unit's new row, z[b, :] = [u | v] (h values, g = h/2):
 * LN(v) goes into hist (seq_len x g per sequence) at position pos, and
 *   out[b, c] = act(sum_{j <= pos} W_hd[pos, j] hist[j, c] + b_sgu[hd, pos]) * u[c]
 * for channel c of head hd = c / (g / heads); W: heads x seq_len x seq_len,
 * the causal mask built in.  A work-item per GMLP_LM_STEP_LANES channels
 * (vector loads over the history where they are of one head), the
 * statistics of v once per work-group. */
__kernel void gmlp_lm_step_sgu(__global const int *step, int seq_len, __global const float *z, int h,
                               __global const float *gamma, __global const float *beta, float eps,
                               __global float *hist, __global const float *w, __global const float *bias, int heads,
                               int act, __global float *out)
{
    __local float st[2]; /* mean, rstd */
    const int g = h / 2, pos = step[0], c0 = get_global_id(0) * GMLP_LM_STEP_LANES;
    const size_t b = get_global_id(1);
    __global const float *zb = z + b * h, *v = zb + g;
    if (get_local_id(0) == 0) {
        const float2 m = step_stats(v, g, eps);
        st[0] = m.x, st[1] = m.y;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (c0 >= g)
        return;
    const float mean = st[0], rstd = st[1];
    __global float *hb = hist + b * seq_len * g, *hp = hb + (size_t)pos * g;
    const int hw = g / heads, hd = c0 / hw;
    if (c0 + GMLP_LM_STEP_LANES <= g && (c0 + GMLP_LM_STEP_LANES - 1) / hw == hd) {
        const float8 lnv = (vload8(0, v + c0) - mean) * rstd * vload8(0, gamma + c0) + vload8(0, beta + c0);
        vstore8(lnv, 0, hp + c0);
        __global const float *wr = w + ((size_t)hd * seq_len + pos) * seq_len;
        float8 a0 = wr[pos] * lnv, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f; /* four chains side by side */
        int j = 0;
        for (; j + 4 <= pos; j += 4) {
            __global const float *hj = hb + (size_t)j * g + c0;
            a0 += wr[j] * vload8(0, hj);
            a1 += wr[j + 1] * vload8(0, hj + g);
            a2 += wr[j + 2] * vload8(0, hj + 2 * g);
            a3 += wr[j + 3] * vload8(0, hj + 3 * g);
        }
        for (; j < pos; j++)
            a0 += wr[j] * vload8(0, hb + (size_t)j * g + c0);
        float8 acc = (a0 + a1) + (a2 + a3);
        if (bias)
            acc += bias[hd * seq_len + pos];
        vstore8(step_act8(acc, act) * vload8(0, zb + c0), 0, out + b * g + c0);
        return;
    }
    for (int c = c0; c < min(c0 + GMLP_LM_STEP_LANES, g); c++) { /* the row's end, or heads narrower than 8 */
        const int hc = c / hw;
        const float lnv = (v[c] - mean) * rstd * gamma[c] + beta[c];
        hp[c] = lnv;
        __global const float *wr = w + ((size_t)hc * seq_len + pos) * seq_len;
        float acc = wr[pos] * lnv;
        for (int j = 0; j < pos; j++)
            acc += wr[j] * hb[(size_t)j * g + c];
        if (bias)
            acc += bias[hc * seq_len + pos];
        out[b * g + c] = gmlp_act(acc, act) * zb[c];
    }
}

/* x[b, j] += v[b, :] . W[j, :] + bias[j] (k inputs, n outputs): proj_out
 * with the residual, a work-item per four outputs. */
__kernel void gmlp_lm_step_out(__global const float *v, int k, __global const float *w, __global const float *bias,
                               int n, __global float *x)
{
    const int j0 = get_global_id(0) * 4;
    const size_t b = get_global_id(1);
    if (j0 >= n)
        return;
    const int r0 = step_first_out(n);
    __global float *xb = x + b * n;
    const float4 acc = step_dot4(v + b * k, w + (size_t)r0 * k, (size_t)k, n - r0, k);
    /* lanes before j0 (made twice) read this item's own first value: another writes theirs */
    const float4 res = (float4)(xb[clamp(r0, j0, n - 1)], xb[clamp(r0 + 1, j0, n - 1)],
                                xb[clamp(r0 + 2, j0, n - 1)], xb[clamp(r0 + 3, j0, n - 1)]);
    step_store4(xb, acc + res + step_bias4(bias, r0, n), j0, r0, n);
}
