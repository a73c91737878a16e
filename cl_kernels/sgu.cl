/* Spatial Gating Unit epilogue, in place on the fc1 output z = [u | g]
 * (rows of 2 * gw): after the token-axis matmul has written W . LN(v) over
 * the second half, g = act(g + b[head, position] + cb) * u.  u is the first
 * half, the one both timm and g-mlp-pytorch leave un-normalised.
 * Rows are m consecutive positions p0 .. p0+m-1 of each sequence; head h owns
 * the contiguous channels [h * dh, (h+1) * dh) and its biases start at
 * h * bstride.  cb (the tiny attention's output bias) is added when has_cb. */
#define GMLP_GATE_IDENTITY 0
#define GMLP_GATE_TANH 1
#define GMLP_GATE_SIGMOID 2
#define GMLP_GATE_GELU 3

__kernel void gmlp_sgu_gate(__global float *z, int gw, __global const float *bias, int bstride, int dh, int p0,
                            int m, __global const float *cb, int has_cb, int act)
{
    const int c = get_global_id(0);
    const size_t r = get_global_id(1);
    __global float *row = z + r * (size_t)(2 * gw);
    float v = row[gw + c] + bias[(c / dh) * bstride + p0 + (int)(r % (size_t)m)];
    if (has_cb)
        v += cb[c];
    if (act == GMLP_GATE_TANH)
        v = tanh(v);
    else if (act == GMLP_GATE_SIGMOID)
        v = 1.0f / (1.0f + exp(-v));
    else if (act == GMLP_GATE_GELU)
        v = 0.5f * v * (1.0f + erf(v * 0.70710678118654752f));
    row[gw + c] = row[c] * v;
}
