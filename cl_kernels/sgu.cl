/* Spatial Gating Unit epilogue, in place on the fc1 output z = [u | g]
 * (rows of 2 * gw): after the token-axis matmul has written W . LN(v) over
 * the second half, g = u * (g + b_token).  u is the first half, the one timm
 * leaves un-normalised. */
__kernel void gmlp_sgu_gate(__global float *z, int gw, __global const float *bias, int ntok)
{
    const int c = get_global_id(0);
    const size_t r = get_global_id(1);
    __global float *row = z + r * (size_t)(2 * gw);
    row[gw + c] = row[c] * (row[gw + c] + bias[r % (size_t)ntok]);
}
