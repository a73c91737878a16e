/* LayerNorm over the last dimension: one work-group per row, two passes
 * (mean, then variance of the differences) for fp32 accuracy. */
#ifndef GMLP_WG
#define GMLP_WG 64 /* power of two; the host sets it from the device's limits */
#endif

/* Sum of one value per work-item; all work-items get the result. */
static float wg_sum(float v, __local float *red)
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
    barrier(CLK_LOCAL_MEM_FENCE); /* red is reused by the next call */
    return r;
}

/* y[row, :] = (x[row, :] - mean) / sqrt(var + eps) * gamma + beta, where
 * x rows start at x_off + row * ldx (lets the SGU normalise one half of a
 * wider row in place of a copy); x and y stored as xs and ys (GMLP_STORE_*:
 * gmlp_elem_get / _put), offsets in their elements. */
__kernel __attribute__((reqd_work_group_size(GMLP_WG, 1, 1))) void gmlp_layernorm(
    __global const void *x, ulong x_off, ulong ldx, int xs, __global void *y, ulong y_off, ulong ldy, int ys,
    __global const float *gamma, __global const float *beta, int cols, float eps)
{
    __local float red[GMLP_WG];
    const size_t row = get_group_id(0);
    const int lid = get_local_id(0);
    const size_t xr = x_off + row * ldx, yr = y_off + row * ldy;
    float s = 0.0f;
    for (int c = lid; c < cols; c += GMLP_WG)
        s += gmlp_elem_get(xs, x, xr + c);
    const float mean = wg_sum(s, red) / (float)cols;
    float v = 0.0f;
    for (int c = lid; c < cols; c += GMLP_WG) {
        float d = gmlp_elem_get(xs, x, xr + c) - mean;
        v += d * d;
    }
    const float rstd = 1.0f / sqrt(wg_sum(v, red) / (float)cols + eps);
    for (int c = lid; c < cols; c += GMLP_WG)
        gmlp_elem_put(ys, y, yr + c, (gmlp_elem_get(xs, x, xr + c) - mean) * rstd * gamma[c] + beta[c]);
}

static float sum8(float8 v)
{
    float4 s = v.lo + v.hi;
    return (s.x + s.y) + (s.z + s.w);
}

/* The sum over a row of (x - mean), or of its squares, in four float8
 * chains: one chain held PoCL at its add's latency (1568 rows of 128: 90 us,
 * now 66; bench/NOTES.md, "LayerNorm's rows in four chains").  mean 0:
 * the plain sum. */
static inline float row_sum(int xs, __global const void *x, size_t xr, int cols, float mean, bool squares)
{
    float8 a[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    int c = 0;
    for (; c + 32 <= cols; c += 32)
        _Pragma("unroll") for (int u = 0; u < 4; u++)
        {
            const float8 d = gmlp_elem_get8(xs, x, xr + c + 8 * u) - mean;
            a[u] = squares ? mad(d, d, a[u]) : a[u] + d;
        }
    for (; c + 8 <= cols; c += 8) {
        const float8 d = gmlp_elem_get8(xs, x, xr + c) - mean;
        a[0] = squares ? mad(d, d, a[0]) : a[0] + d;
    }
    float s = sum8((a[0] + a[1]) + (a[2] + a[3]));
    for (; c < cols; c++) {
        const float d = gmlp_elem_get(xs, x, xr + c) - mean;
        s += squares ? d * d : d;
    }
    return s;
}

/* The same on CPUs, one work-item per row: no barriers (PoCL runs each as a
 * loop over the work-group's items: 118 us for 196 rows of 256 through the
 * version above) and float8 arithmetic written out.  Same two passes; the
 * row is read three times, from cache after the first. */
__kernel void gmlp_layernorm_rows(__global const void *x, ulong x_off, ulong ldx, int xs, __global void *y,
                                  ulong y_off, ulong ldy, int ys, __global const float *gamma,
                                  __global const float *beta, int cols, float eps, int rows)
{
    const size_t row = get_global_id(0);
    if (row >= (size_t)rows)
        return;
    const size_t xr = x_off + row * ldx, yr = y_off + row * ldy;
    const float mean = row_sum(xs, x, xr, cols, 0.0f, false) / (float)cols;
    const float v = row_sum(xs, x, xr, cols, mean, true);
    const float rstd = 1.0f / sqrt(v / (float)cols + eps);
    const int vec = cols & ~7;
    for (int c = 0; c < vec; c += 8)
        gmlp_elem_put8(ys, y, yr + c,
                       mad((gmlp_elem_get8(xs, x, xr + c) - mean) * rstd, vload8(0, gamma + c), vload8(0, beta + c)));
    for (int c = vec; c < cols; c++)
        gmlp_elem_put(ys, y, yr + c, (gmlp_elem_get(xs, x, xr + c) - mean) * rstd * gamma[c] + beta[c]);
}
