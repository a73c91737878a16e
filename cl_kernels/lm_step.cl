/* The fused decoding step of a causal gMLP language model: one new token per
 * sequence (work-group row b of the range), at the position step[0] read
 * from device memory, so that one recording replays for every position.
 * Three kernels per layer:
 *   gmlp_lm_step_in   LayerNorm, token shift (the history written), proj_in, GELU
 *   gmlp_lm_step_sgu  LayerNorm of the gate half (into its history), the new
 *                     row of the causal spatial product, bias, gate
 *   gmlp_lm_step_out  proj_out and the residual
 * and gmlp_lm_step_in again for to_logits (no shift, no activation).  Each
 * work-group normalises its sequence's row into local memory (two passes, as
 * layernorm.cl), then each work-item makes one output. */
#define GMLP_STEP_MAX 2048 /* the widest row a step normalises (lib/ops: gmlp_lm_step_fits) */

/* Sum of one value per work-item of GMLP_WG; all get the result. */
static float step_sum(float v, __local float *red)
{
    int lid = get_local_id(0);
    red[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = GMLP_WG / 2; s > 0; s >>= 1) {
        if (lid < s)
            red[lid] += red[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float r = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

/* row[0 .. n) = LayerNorm(x[0 .. n)) * gamma + beta, by the work-group. */
static void step_layernorm(__global const float *x, __global const float *gamma, __global const float *beta, int n,
                           float eps, __local float *row, __local float *red)
{
    const int lid = get_local_id(0);
    float s = 0.0f;
    for (int c = lid; c < n; c += GMLP_WG)
        s += x[c];
    const float mean = step_sum(s, red) / (float)n;
    float v = 0.0f;
    for (int c = lid; c < n; c += GMLP_WG) {
        float d = x[c] - mean;
        v += d * d;
    }
    const float rstd = 1.0f / sqrt(step_sum(v, red) / (float)n + eps);
    for (int c = lid; c < n; c += GMLP_WG)
        row[c] = (x[c] - mean) * rstd * gamma[c] + beta[c];
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* out[b, j] = act(ys . W[j, :] + bias[j]) for j < n_out, where ys is
 * LN(x[b, :]) (d values) token-shifted: with segments > 0 the normalised row
 * goes into hist (seq_len x d per sequence) at position pos, and channel
 * segment s in 1 .. segments-1 (d / segments wide) takes position pos - s
 * from hist (zero before 0); segments 0: no shift. */
__kernel __attribute__((reqd_work_group_size(GMLP_WG, 1, 1)))
void gmlp_lm_step_in(__global const int *step, int seq_len, __global const float *x, __global const float *gamma,
                     __global const float *beta, int d, float eps, __global float *hist, int segments,
                     __global const float *w, __global const float *bias, int n_out, int act, __global float *out)
{
    __local float red[GMLP_WG];
    __local float row[GMLP_STEP_MAX];
    const int lid = get_local_id(0), pos = step[0];
    const size_t b = get_global_id(1);
    step_layernorm(x + b * d, gamma, beta, d, eps, row, red);
    if (segments > 0) {
        __global float *hb = hist + b * seq_len * d;
        const int seg = d / segments;
        for (int c = lid; c < d; c += GMLP_WG) {
            if (get_group_id(0) == 0)
                hb[(size_t)pos * d + c] = row[c];
            const int s = c / seg;
            if (s >= 1 && s < segments)
                row[c] = pos - s >= 0 ? hb[(size_t)(pos - s) * d + c] : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int j = get_global_id(0);
    if (j < n_out) {
        __global const float *wr = w + (size_t)j * d;
        float acc = 0.0f;
        for (int c = 0; c < d; c++)
            acc += row[c] * wr[c];
        out[b * n_out + j] = gmlp_act(bias ? acc + bias[j] : acc, act);
    }
}

/* The spatial gating unit's new row, z[b, :] = [u | v] (h values, g = h/2):
 * LN(v) goes into hist (seq_len x g per sequence) at position pos, and
 *   out[b, c] = act(sum_{j <= pos} W_hd[pos, j] hist[j, c] + b_sgu[hd, pos]) * u[c]
 * for channel c of head hd = c / (g / heads); W: heads x seq_len x seq_len,
 * the causal mask built in. */
__kernel __attribute__((reqd_work_group_size(GMLP_WG, 1, 1)))
void gmlp_lm_step_sgu(__global const int *step, int seq_len, __global const float *z, int h,
                      __global const float *gamma, __global const float *beta, float eps, __global float *hist,
                      __global const float *w, __global const float *bias, int heads, int act, __global float *out)
{
    __local float red[GMLP_WG];
    __local float row[GMLP_STEP_MAX];
    const int g = h / 2, pos = step[0];
    const size_t b = get_global_id(1);
    __global const float *zb = z + b * h;
    step_layernorm(zb + g, gamma, beta, g, eps, row, red);
    __global float *hb = hist + b * seq_len * g;
    if (get_group_id(0) == 0)
        for (int c = get_local_id(0); c < g; c += GMLP_WG)
            hb[(size_t)pos * g + c] = row[c];
    const int c = get_global_id(0);
    if (c < g) {
        const int hd = c / (g / heads);
        __global const float *wr = w + ((size_t)hd * seq_len + pos) * seq_len;
        float acc = 0.0f;
        for (int j = 0; j < pos; j++)
            acc += wr[j] * hb[(size_t)j * g + c];
        acc += wr[pos] * row[c];
        if (bias)
            acc += bias[hd * seq_len + pos];
        out[b * g + c] = gmlp_act(acc, act) * zb[c];
    }
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
    __global const float *vr = v + b * k, *wr = w + (size_t)j * k;
    float acc = 0.0f;
    for (int c = 0; c < k; c++)
        acc += vr[c] * wr[c];
    acc += x[b * n + j];
    x[b * n + j] = bias ? acc + bias[j] : acc;
}
