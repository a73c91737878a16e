/* The Spatial Gating Unit's gate, in place on the fc1 output z = [u | v]
 * (rows of ld floats, the gate half gw wide from column gw): after the
 * token-axis matmul has written W . LN(v) over the second half,
 *   v = act(v + bias[head, position] + cb) * u
 * u is the first half, which both timm and g-mlp-pytorch leave
 * un-normalised.  Rows are m consecutive positions p0 .. p0+m-1 of each
 * sequence (image); head h owns the contiguous channels [h * dh, (h+1) * dh)
 * and its biases start at h * bstride.  cb (the tiny attention's output
 * bias) is added when has_cb.  timm's SpatialGatingUnit is heads 1,
 * positions 0 .. N-1, identity. */
__kernel void gmlp_sgu_gate(__global float *z, ulong ld, int gw, __global const float *bias, int bstride, int dh,
                            int p0, int m, __global const float *cb, int has_cb, int act)
{
    const int c = get_global_id(0);
    const size_t r = get_global_id(1);
    __global float *row = z + r * ld;
    float v = row[gw + c] + bias[(c / dh) * bstride + p0 + (int)(r % (size_t)m)];
    if (has_cb)
        v += cb[c];
    row[gw + c] = row[c] * gmlp_act(v, act);
}
