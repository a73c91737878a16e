/* Global average pool over tokens: out[b, c] = mean_t y[b, t, c], y the
 * tokens x, or their final norm where w is set (the model's LayerNorm
 * fused into the pooling: x's statistics from the product that wrote x):
 *   y[b, t, c] = (x[b, t, c] - mean_bt) rstd_bt w[c] + b[c]
 * so out[b, c] = w[c] mean_t ((x - mean_bt) rstd_bt) + b[c], mean_bt and
 * rstd_bt from the statistics' row b ntok + t (parts merged as the GEMMs'
 * prologues merge them; stats NULL: (0, 1), ResMLP's Affine).  A group
 * takes a run of columns of one image and works each token's (mean, rstd)
 * out once for all of them, as many tokens at a time as it has work-items
 * (GMLP_POOL_GROUP at most). */
__kernel void gmlp_mean_tokens(__global const float *x, __global float *out, ulong out_off, int ntok, int dim,
                               __global const float *stats, ulong parts, __global const float *w,
                               __global const float *bn, float eps)
{
    __local float mean[GMLP_POOL_GROUP], rstd[GMLP_POOL_GROUP]; /* apart: no 8-byte local vectors to align */
    out += out_off;
    const int c = get_global_id(0), lc = get_local_id(0), wg = get_local_size(0);
    const size_t b = get_global_id(1);
    __global const float *xb = x + b * (size_t)ntok * dim + c;
    float s = 0.0f;
    for (int t0 = 0; t0 < ntok; t0 += wg) {
        const int run = min(wg, ntok - t0);
        if (w) {
            barrier(CLK_LOCAL_MEM_FENCE); /* the last run's pairs read */
            if (lc < run) {
                const float2 nr = gmlp_stats_norm(stats, parts, b * (size_t)ntok + (size_t)(t0 + lc), eps);
                mean[lc] = nr.x, rstd[lc] = nr.y;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (c < dim)
            for (int t = 0; t < run; t++) {
                const float v = xb[(size_t)(t0 + t) * dim];
                s += w ? (v - mean[t]) * rstd[t] : v;
            }
    }
    if (c < dim)
        out[b * dim + c] = w ? mad(w[c], s / (float)ntok, bn[c]) : s / (float)ntok;
}
